"""SQLiteStore's resource methods: tdmrep.json records and their fetch leases.

Two tables of their own, made on first write (inside ``BEGIN IMMEDIATE``, so two
processes never race on them): a file of an earlier version gains them in place and
its layout version is unchanged (versions without them never read them). Until they
exist a read finds nothing. A record lives ``expires - fetched_at`` seconds on this
machine's clock; a lease is one atomic upsert, as robots.txt's are. A read-only or
full file fails the write with :class:`StoreError`: the reader then fetches itself.
"""

from __future__ import annotations

import secrets
import time
from typing import TYPE_CHECKING, Any, TypeVar

from .resources import decode_resource, encode_resource
from .store import ResourceLease

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable

    from ..core.url import Origin
    from .resources import ResourceKind, StoredResource

__all__ = ["SQLiteResources", "store_key"]

_T = TypeVar("_T")
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
# One statement, hence atomic across processes (as robots.txt's lease).
_ACQUIRE = """
INSERT INTO resource_leases (origin, kind, token, expires_at) VALUES (?, ?, ?, ?)
ON CONFLICT (origin, kind) DO UPDATE
SET token = excluded.token, expires_at = excluded.expires_at
WHERE resource_leases.expires_at <= ?
"""
_RELEASE = (
    "DELETE FROM resource_leases WHERE origin = ? AND kind = ? AND token = ? AND expires_at > ?"
)


class SQLiteResources:
    """The resource methods of :class:`~robots_async.cache.sqlite.SQLiteStore` (a base)."""

    #: Set once the tables are known to exist (they are never dropped).
    _resource_tables = False
    _resource_puts = 0

    if TYPE_CHECKING:

        async def _run(self, job: Callable[..., _T], *args: Any) -> _T: ...

    async def get_resource(self, origin: Origin, kind: ResourceKind) -> StoredResource | None:
        """The ``kind`` record of ``origin``, or None (also once its lifetime is over).

        :raises InvalidRecordError: a record that does not conform (or a newer layout).
        """
        return await self._run(self._get_resource, store_key(origin), kind)

    async def put_resource(self, origin: Origin, record: StoredResource) -> None:
        """Replace the ``record.kind`` record of ``origin``."""
        await self._run(self._put_resource, store_key(origin), record)

    async def acquire_resource(
        self, origin: Origin, kind: ResourceKind, ttl: float
    ) -> ResourceLease | None:
        """Take the fetch lease of ``kind`` on ``origin``; None if another is held."""
        token = secrets.token_hex(16)
        until: float | None = await self._run(
            self._acquire_resource, store_key(origin), kind, token, ttl
        )
        return None if until is None else ResourceLease(origin, token, until, kind)

    async def release_resource(self, lease: ResourceLease) -> bool:
        """Release ``lease`` if it is still ours."""
        key = store_key(lease.origin)
        released: bool = await self._run(self._release_resource, key, lease.kind, lease.token)
        return released

    # --- on the store's thread ------------------------------------------------------

    def _get_resource(self, conn: sqlite3.Connection, key: str, kind: str) -> StoredResource | None:
        if not self._resource_tables:
            if conn.execute(_EXISTS).fetchone()[0] == 0:
                return None
            self._resource_tables = True
        row = conn.execute(_GET, (key, kind, time.time())).fetchone()
        if row is None:
            return None
        return decode_resource({"meta": row[0], "body": row[1]})

    def _put_resource(self, conn: sqlite3.Connection, key: str, record: StoredResource) -> None:
        self._ensure_tables(conn)
        fields = encode_resource(record)
        now = time.time()
        expires_at = now + (record.expires - record.fetched_at)
        conn.execute(_PUT, (key, record.kind, fields["meta"], fields["body"], expires_at))
        self._resource_puts += 1
        if self._resource_puts % _PURGE_EVERY == 0:
            conn.execute("DELETE FROM resources WHERE expires_at < ?", (now,))
            conn.execute("DELETE FROM resource_leases WHERE expires_at < ?", (now,))

    def _acquire_resource(
        self, conn: sqlite3.Connection, key: str, kind: str, token: str, ttl: float
    ) -> float | None:
        self._ensure_tables(conn)
        now = time.time()
        taken = conn.execute(_ACQUIRE, (key, kind, token, now + ttl, now)).rowcount == 1
        return now + ttl if taken else None

    def _release_resource(self, conn: sqlite3.Connection, key: str, kind: str, token: str) -> bool:
        if not self._resource_tables:
            return False  # no lease was ever taken through this store
        return conn.execute(_RELEASE, (key, kind, token, time.time())).rowcount == 1

    def _ensure_tables(self, conn: sqlite3.Connection) -> None:
        """Create the tables once, under the write lock."""
        if self._resource_tables:
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
        self._resource_tables = True


def store_key(origin: Origin) -> str:
    """An origin as the files' key column holds it (scheme, host and explicit port)."""
    return f"{origin.scheme}://{origin.host}:{origin.port}"
