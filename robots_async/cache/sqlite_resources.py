"""SQLiteStore's resource tables: tdmrep.json records and their fetch leases.

Two tables of their own, made on first write (inside ``BEGIN IMMEDIATE``, so two
processes never race on them): a file of an earlier version gains them in place and
its layout version is unchanged (versions without them never read them). Until they
exist a read finds nothing. A record lives ``expires - fetched_at`` seconds on this
machine's clock; a lease is one atomic upsert, as robots.txt's are, and is renewed by
one UPDATE that checks its token. A read-only or full file fails the write with
:class:`StoreError`: the reader then fetches itself.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING

from .resources import decode_resource, encode_resource

if TYPE_CHECKING:
    import sqlite3

    from ..core.url import Origin
    from .resources import StoredResource
    from .store import ResourceLease

__all__ = ["ResourceTables", "store_key"]

#: Expired records and leases are deleted once every this many puts.
_PURGE_EVERY = 1000
_CREATE = (
    """CREATE TABLE IF NOT EXISTS resources (
    origin TEXT NOT NULL,
    kind TEXT NOT NULL,
    meta BLOB NOT NULL,
    body BLOB NOT NULL,
    expires_at REAL NOT NULL,
    PRIMARY KEY (origin, kind)
)""",
    """CREATE TABLE IF NOT EXISTS resource_leases (
    origin TEXT NOT NULL,
    kind TEXT NOT NULL,
    token TEXT NOT NULL,
    expires_at REAL NOT NULL,
    PRIMARY KEY (origin, kind)
)""",
)
_EXISTS = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'resources'"
_GET = "SELECT meta, body FROM resources WHERE origin = ? AND kind = ? AND expires_at > ?"
_PUT = "INSERT OR REPLACE INTO resources VALUES (?, ?, ?, ?, ?)"
# One statement, hence atomic across processes (as robots.txt's lease, which says why
# an expiry that is not a number is taken over).
_ACQUIRE = """
INSERT INTO resource_leases (origin, kind, token, expires_at) VALUES (?, ?, ?, ?)
ON CONFLICT (origin, kind) DO UPDATE
SET token = excluded.token, expires_at = excluded.expires_at
WHERE resource_leases.expires_at <= ?
    OR typeof(resource_leases.expires_at) NOT IN ('integer', 'real')
"""
_RELEASE = (
    "DELETE FROM resource_leases WHERE origin = ? AND kind = ? AND token = ? AND expires_at > ?"
)
_RENEW = """
UPDATE resource_leases SET expires_at = ?
WHERE origin = ? AND kind = ? AND token = ? AND expires_at > ?
"""


class ResourceTables:
    """The resource jobs of :class:`~robots_async.cache.sqlite.SQLiteStore`, each run
    on its thread with its connection (``job(conn, *args)``)."""

    def __init__(self) -> None:
        #: Set once the tables are known to exist (they are never dropped).
        self._ready = False
        self._puts = 0

    def get(self, conn: sqlite3.Connection, key: str, kind: str) -> StoredResource | None:
        """The record, or None (also before the tables exist).

        :raises InvalidRecordError: a record that does not conform (or a newer layout).
        """
        if not self._exist(conn):
            return None
        row = conn.execute(_GET, (key, kind, time.time())).fetchone()
        if row is None:
            return None
        return decode_resource({"meta": row[0], "body": row[1]})

    def put(self, conn: sqlite3.Connection, key: str, record: StoredResource) -> None:
        """Replace the record, kept ``expires - fetched_at`` from now on this clock."""
        self._ensure_tables(conn)
        fields = encode_resource(record)
        now = time.time()
        expires_at = now + (record.expires - record.fetched_at)
        conn.execute(_PUT, (key, record.kind, fields["meta"], fields["body"], expires_at))
        self._puts += 1
        if self._puts % _PURGE_EVERY == 0:
            conn.execute("DELETE FROM resources WHERE expires_at < ?", (now,))
            conn.execute("DELETE FROM resource_leases WHERE expires_at < ?", (now,))

    def acquire(
        self, conn: sqlite3.Connection, key: str, kind: str, token: str, ttl: float
    ) -> float | None:
        """When the lease taken for ``token`` expires, or None if another is held."""
        self._ensure_tables(conn)
        now = time.time()
        taken = conn.execute(_ACQUIRE, (key, kind, token, now + ttl, now)).rowcount == 1
        return now + ttl if taken else None

    def release(self, conn: sqlite3.Connection, key: str, kind: str, token: str) -> bool:
        """Delete the lease if ``token`` still holds it."""
        if not self._exist(conn):
            return False  # no lease was ever taken
        return conn.execute(_RELEASE, (key, kind, token, time.time())).rowcount == 1

    def renew(
        self, conn: sqlite3.Connection, lease: ResourceLease, ttl: float
    ) -> ResourceLease | None:
        """``lease`` extended to ``ttl`` seconds from now if its token still holds it,
        else None (it lapsed or was taken over); one UPDATE."""
        if not self._exist(conn):
            return None  # no lease was ever taken
        now = time.time()
        row = (now + ttl, store_key(lease.origin), lease.kind, lease.token, now)
        renewed = conn.execute(_RENEW, row).rowcount == 1
        return replace(lease, expires_at=now + ttl) if renewed else None

    def _exist(self, conn: sqlite3.Connection) -> bool:
        """Whether the tables exist (they may have been made by another process)."""
        if not self._ready:
            self._ready = conn.execute(_EXISTS).fetchone()[0] > 0
        return self._ready

    def _ensure_tables(self, conn: sqlite3.Connection) -> None:
        """Create the tables once, under the write lock."""
        if self._ready:
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in _CREATE:
                conn.execute(statement)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        self._ready = True


def store_key(origin: Origin) -> str:
    """An origin as the files' key column holds it (scheme, host and explicit port)."""
    return f"{origin.scheme}://{origin.host}:{origin.port}"
