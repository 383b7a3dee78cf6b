"""SQLiteStore: robots.txt records and fetch leases in one SQLite file.

The single-machine store: the processes of one crawl share it (one fetch per origin
across them) and a restarted crawler finds what it fetched before. Records are the
same observations as in Redis (``_records``: JSON metadata with a schema version,
raw bodies; never a pickle), validated on every read. A lease is a row with an
expiry, taken by one atomic upsert, so exactly one process wins it.

Why the standard library's ``sqlite3`` rather than ``aiosqlite``: aiosqlite also runs
one connection in one thread, so it would add a dependency and nothing else, while a
thread of our own lets each job check its deadline before it starts (a job whose
caller gave up is dropped, so a locked file cannot build a queue) and give SQLite's
busy handler only the time left. One thread and one connection per store make this
process a single writer; across processes SQLite's file lock serialises writers.

Bad files never stop a crawl: a corrupt, locked, read-only or full file makes the
failing calls raise :class:`StoreError` (the cache fetches for itself, warns and counts
``store_errors``); a corrupt record is an :class:`InvalidRecordError` (a miss, counted
in ``store_invalid``). Only a file laid out by a newer robots_async (or by another
program) is refused, with :class:`StoreSchemaError` when the store is created.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import secrets
import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from ..core.errors import ConfigurationError, StoreError
from ..fetch.deadline import within
from .closing import AsyncClosing
from .records import decode, encode
from .sqlite_pacing import PacingTable
from .sqlite_resources import ResourceTables, store_key
from .store import Lease, ResourceLease, StoredRobots, StoreSchemaError

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..core.pacing import PaceRule
    from ..core.url import Origin
    from .pace_table import Reservation
    from .resources import ResourceKind, StoredResource

__all__ = ["SQLiteStore"]

logger = logging.getLogger("robots_async")

DAY = 86_400.0
#: Layout of the file (tables and columns), in ``PRAGMA user_version``; the records'
#: own schema version is inside each record (``_records.VERSION``).
LAYOUT_VERSION = 1
#: ``PRAGMA application_id`` of a robots_async store ("RbTx"): another program's
#: database is refused rather than written to.
APPLICATION_ID = 0x52625478
#: Seconds between attempts to open a file that could not be opened.
REOPEN_AFTER = 5.0
#: SQLITE_BUSY and SQLITE_LOCKED (primary result codes; the ``sqlite3`` names for them
#: are 3.11+ only).
_BUSY_CODES = (5, 6)
#: Records older than ``keep_for`` are deleted once every this many puts.
_PURGE_EVERY = 1000
_T = TypeVar("_T")

_CREATE = """
CREATE TABLE IF NOT EXISTS records (
    origin TEXT PRIMARY KEY,
    meta BLOB NOT NULL,
    body BLOB NOT NULL,
    last_good BLOB,
    written_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS leases (
    origin TEXT PRIMARY KEY,
    token TEXT NOT NULL,
    expires_at REAL NOT NULL
);
"""
# One statement, hence atomic across processes: insert the lease, or take over
# one that has expired; rowcount is 0 when an unexpired lease is held. An expiry that
# is not a number (an edited or damaged row) sorts above every number in SQLite: such
# a row would hold the origin for ever, so it is taken over too.
_ACQUIRE = """
INSERT INTO leases (origin, token, expires_at) VALUES (?, ?, ?)
ON CONFLICT (origin) DO UPDATE SET token = excluded.token, expires_at = excluded.expires_at
WHERE leases.expires_at <= ? OR typeof(leases.expires_at) NOT IN ('integer', 'real')
"""
_RELEASE = "DELETE FROM leases WHERE origin = ? AND token = ? AND expires_at > ?"
_RENEW = "UPDATE leases SET expires_at = ? WHERE origin = ? AND token = ? AND expires_at > ?"
_PUT = """
INSERT OR REPLACE INTO records (origin, meta, body, last_good, written_at)
VALUES (?, ?, ?, ?, ?)
"""
_GET = "SELECT meta, body, last_good FROM records WHERE origin = ? AND written_at >= ?"


class SQLiteStore(AsyncClosing):
    """:class:`robots_async.RobotsStore` in an SQLite file (WAL mode).

    The file is opened (created if missing) here, so a layout from a newer version
    is refused before any crawl starts; a file that cannot be opened for another
    reason (corrupt, locked) is only logged, and opening is tried again later.

    :param path: the database file; its directory must exist.
    :raises ConfigurationError: a path where no store file can be (its directory is
        missing or read-only, it is a directory, or ``''``/``':memory:'``, a database
        private to one connection): configuration, not a bad file to live with.
    :param keep_for: how long a record is kept after it was written, so that a later
        fetch can still fall back on its last good copy (RFC 9309 §2.3.1.4: 30 days).
    :param timeout: seconds one call may take, waits for a lock included.
    :raises StoreSchemaError: the file was laid out by a newer robots_async, or is
        another program's database.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        keep_for: float = 30 * DAY,
        timeout: float = 2.0,
    ) -> None:
        _check_positive("timeout", timeout)
        _check_positive("keep_for", keep_for)
        self._path = os.fspath(path)
        _check_path(self._path)
        self._keep_for = keep_for
        self._timeout = timeout
        self._puts = 0
        self._pacing = PacingTable()
        self._closed = False
        self._conn: sqlite3.Connection | None = None
        self._reopen_at = 0.0
        self._resources = ResourceTables()
        # One thread, one connection: every job runs there, one at a time.
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="robots_async-sqlite")
        try:
            self._conn = _connect(self._path, timeout)
        except sqlite3.Error as exc:
            self._open_failed(exc)

    @property
    def path(self) -> str:
        """The database file."""
        return self._path

    async def get(self, origin: Origin) -> StoredRobots | None:
        """The record for ``origin``, or None (also when older than ``keep_for``).

        :raises InvalidRecordError: for a record that does not conform to the schema.
        """
        return await self._run(self._get, store_key(origin))

    async def put(self, origin: Origin, record: StoredRobots) -> None:
        """Replace the record of ``origin``."""
        await self._run(self._put, store_key(origin), record)

    async def acquire(self, origin: Origin, ttl: float) -> Lease | None:
        """Take the fetch lease for ``origin``: None if another unexpired one is held."""
        token = secrets.token_hex(16)
        expires_at = await self._run(self._acquire, store_key(origin), token, ttl)
        return None if expires_at is None else Lease(origin, token, expires_at)

    async def release(self, lease: Lease) -> bool:
        """Release ``lease`` if it is still ours; False if it expired or was taken over."""
        released: bool = await self._run(self._release, store_key(lease.origin), lease.token)
        return released

    async def renew(self, lease: Lease, ttl: float) -> Lease | None:
        """Extend ``lease`` to ``ttl`` seconds from now if it is still ours (one UPDATE)."""
        _check_positive("ttl", ttl)
        until: float | None = await self._run(
            self._renew, store_key(lease.origin), lease.token, ttl
        )
        return None if until is None else Lease(lease.origin, lease.token, until)

    async def reserve(self, unit: str, rule: PaceRule, jitter: float) -> Reservation:
        """Reserve the next visit of ``unit`` under ``rule``: one transaction, so the
        processes sharing the file take turns (see :mod:`robots_async.core.pacing`)."""
        return await self._run(self._pacing.reserve, unit, rule, jitter)

    async def pause_left(self, unit: str, rule: PaceRule, jitter: float) -> float:
        """Seconds until the pauses ``unit`` asked for end."""
        return await self._run(self._pacing.pause_left, unit, rule, jitter)

    async def sent_late(self, unit: str, rule: PaceRule) -> None:
        """Record a page of ``unit`` sent now, after its turn (this machine's clock)."""
        await self._run(self._pacing.sent_late, unit, rule)

    async def left_at_send(
        self, unit: str, rule: PaceRule, held: float, jitter: float
    ) -> tuple[float, float]:
        """For a page of ``unit`` whose turn began ``held`` seconds ago: the pauses
        left, and the seconds short of an interval after another page."""
        return await self._run(self._pacing.left_at_send, unit, rule, held, jitter)

    async def observe(
        self,
        unit: str,
        rule: PaceRule,
        *,
        busy: bool,
        retry_after: float | None,
        elapsed: float | None = None,
    ) -> None:
        """Record a page response of ``unit``: 429/503 (``busy``) or a success,
        ``elapsed`` seconds after its request was sent (None: not known)."""
        observe = partial(self._pacing.observe, busy=busy, retry_after=retry_after, elapsed=elapsed)
        await self._run(observe, unit, rule)

    async def get_resource(self, origin: Origin, kind: ResourceKind) -> StoredResource | None:
        """The ``kind`` record of ``origin`` (tdmrep.json; ``sqlite_resources``), or None.

        :raises InvalidRecordError: a record that does not conform (or a newer layout).
        """
        return await self._run(self._resources.get, store_key(origin), kind)

    async def put_resource(self, origin: Origin, record: StoredResource) -> None:
        """Replace the ``record.kind`` record of ``origin``, kept for its lifetime."""
        await self._run(self._resources.put, store_key(origin), record)

    async def acquire_resource(
        self, origin: Origin, kind: ResourceKind, ttl: float
    ) -> ResourceLease | None:
        """Take the fetch lease of ``kind`` on ``origin``; None if another is held."""
        token = secrets.token_hex(16)
        until = await self._run(self._resources.acquire, store_key(origin), kind, token, ttl)
        return None if until is None else ResourceLease(origin, token, until, kind)

    async def release_resource(self, lease: ResourceLease) -> bool:
        """Release ``lease`` if it is still ours."""
        key = store_key(lease.origin)
        return await self._run(self._resources.release, key, lease.kind, lease.token)

    async def renew_resource(self, lease: ResourceLease, ttl: float) -> ResourceLease | None:
        """Extend ``lease`` to ``ttl`` seconds from now if it is still ours."""
        return await self._run(self._resources.renew, lease, ttl)

    async def aclose(self) -> None:
        """Close the file (idempotent); later calls raise :class:`StoreError`."""
        if self._closed:
            return
        self._closed = True
        loop = asyncio.get_running_loop()
        closing = loop.run_in_executor(self._executor, self._close)
        try:
            async with within(self._timeout):
                await closing
        except asyncio.TimeoutError:
            logger.warning(
                "robots store %s: closing took more than %g s", self._path, self._timeout
            )
        finally:
            self._executor.shutdown(wait=False)

    # --- on the store's thread ------------------------------------------------------

    async def _run(self, job: Callable[..., _T], *args: Any) -> _T:
        """Run ``job(connection, *args)`` on the store's thread within the timeout.

        :raises StoreError: the file failed, or the call did not finish in time.
        """
        if self._closed:
            raise StoreError(f"sqlite: store {self._path} is closed")
        deadline = time.monotonic() + self._timeout
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self._executor, self._in_thread, deadline, job, args)
        try:
            # A little grace: the job's own busy timeout (the time left) fires first.
            async with within(self._timeout + 0.5):
                return await future
        except asyncio.TimeoutError as exc:
            raise StoreError(f"sqlite: no answer within {self._timeout:g} s") from exc

    def _in_thread(self, deadline: float, job: Callable[..., _T], args: tuple[Any, ...]) -> _T:
        left = deadline - time.monotonic()
        if left <= 0:  # the caller has given up: do not make the queue longer
            raise StoreError(f"sqlite: queued for more than {self._timeout:g} s")
        conn = self._connection()
        try:
            conn.execute(f"PRAGMA busy_timeout = {max(1, int(left * 1000))}")
            return job(conn, *args)
        except sqlite3.Error as exc:
            raise StoreError(f"sqlite: {self._path}: {exc}") from exc

    def _connection(self) -> sqlite3.Connection:
        if self._conn is not None:
            return self._conn
        if time.monotonic() < self._reopen_at:
            raise StoreError(f"sqlite: {self._path} could not be opened; retrying later")
        try:
            self._conn = _connect(self._path, self._timeout)
        except sqlite3.Error as exc:
            self._open_failed(exc)
            raise StoreError(f"sqlite: {self._path}: {exc}") from exc
        logger.info("robots store %s opened", self._path)
        return self._conn

    def _open_failed(self, exc: sqlite3.Error) -> None:
        self._reopen_at = time.monotonic() + REOPEN_AFTER
        logger.warning(
            "robots store %s cannot be opened (%s): robots.txt is fetched without it",
            self._path,
            exc,
        )

    def _get(self, conn: sqlite3.Connection, key: str) -> StoredRobots | None:
        row = conn.execute(_GET, (key, time.time() - self._keep_for)).fetchone()
        if row is None:
            return None
        meta, body, last_good = row
        return decode({"meta": meta, "body": body, "last_good": last_good})

    def _put(self, conn: sqlite3.Connection, key: str, record: StoredRobots) -> None:
        fields = encode(record)
        now = time.time()
        row = (key, fields["meta"], fields["body"], fields.get("last_good"), now)
        conn.execute(_PUT, row)
        self._puts += 1
        if self._puts % _PURGE_EVERY == 0:
            conn.execute("DELETE FROM records WHERE written_at < ?", (now - self._keep_for,))
            conn.execute("DELETE FROM leases WHERE expires_at < ?", (now,))

    def _acquire(self, conn: sqlite3.Connection, key: str, token: str, ttl: float) -> float | None:
        now = time.time()
        expires_at = now + ttl
        taken = conn.execute(_ACQUIRE, (key, token, expires_at, now)).rowcount == 1
        return expires_at if taken else None

    def _release(self, conn: sqlite3.Connection, key: str, token: str) -> bool:
        return conn.execute(_RELEASE, (key, token, time.time())).rowcount == 1

    def _renew(self, conn: sqlite3.Connection, key: str, token: str, ttl: float) -> float | None:
        now = time.time()
        renewed = conn.execute(_RENEW, (now + ttl, key, token, now)).rowcount == 1
        return now + ttl if renewed else None

    def _close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()


def _connect(path: str, timeout: float) -> sqlite3.Connection:
    """Open ``path``, creating the tables in a new file; check a file made before.

    Processes of a fleet often open one new file at the same moment, so every step
    that needs a lock is retried while the file is busy, up to ``timeout``.

    :raises StoreSchemaError: a newer layout, or another program's database.
    :raises sqlite3.Error: the file cannot be used (corrupt, locked, read-only and new).
    """
    deadline = time.monotonic() + timeout
    # isolation_level=None: every statement is its own transaction (autocommit).
    conn = sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False)
    try:
        if _while_busy(conn, deadline, _check_layout, path, conn) == 0:
            _while_busy(conn, deadline, _create, path, conn)
        # Only once the file is known to be ours (checked again under the write lock
        # by _create): switching another program's database to WAL would change it.
        # WAL: readers never block the writer, and a commit survives a killed process
        # (synchronous=NORMAL only risks the last commits on power loss).
        _while_busy(conn, deadline, conn.execute, "PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
    except BaseException:
        conn.close()
        raise
    return conn


def _while_busy(
    conn: sqlite3.Connection, deadline: float, step: Callable[..., _T], *args: Any
) -> _T:
    """Run ``step(*args)``, again after a short pause while the file is locked; the
    busy handler of ``conn`` waits only the time left, so opening keeps to ``deadline``.

    SQLite's busy handler does not cover every lock: changing the journal mode, or a
    reader upgrading to writer while another process waits for the same lock, is
    refused at once (SQLITE_BUSY, to avoid a deadlock). Measured: 3 processes opening
    one new file together, one in three attempts failed so before this retry.
    """
    pause = 0.005
    while True:
        left = deadline - time.monotonic()
        conn.execute(f"PRAGMA busy_timeout = {max(1, int(left * 1000))}")
        try:
            return step(*args)
        except sqlite3.OperationalError as exc:
            if not _is_busy(exc) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.1)


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+
    if code is not None:
        return code & 0xFF in _BUSY_CODES
    return "locked" in str(exc) or "busy" in str(exc)


def _layout(conn: sqlite3.Connection) -> tuple[int, int, bool]:
    """``application_id``, ``user_version`` and whether any table exists, read in one
    transaction: read one by one, another process creating the tables in between made a
    new file look like another program's."""
    began = not conn.in_transaction
    if began:
        conn.execute("BEGIN")
    try:
        application = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] > 0
    finally:
        # Only read: ended by a rollback, which (unlike a COMMIT after a failed read)
        # cannot raise over the error that a retry must see.
        if began and conn.in_transaction:
            conn.rollback()
    return application, version, tables


def _check_layout(path: str, conn: sqlite3.Connection) -> int:
    """The layout version of ``path`` (0 for a new file) if this version can use it."""
    application, version, tables = _layout(conn)
    # A file of ours has both set (in the transaction that made its tables); one
    # with neither is new only while it holds nothing.
    foreign = application not in (0, APPLICATION_ID) or (application == 0 and version != 0)
    if application == 0 and version == 0:
        foreign = tables
    if foreign:
        raise StoreSchemaError(
            f"{path} is not a robots_async store (application_id {application:#x}, "
            f"user_version {version}): give SQLiteStore a file of its own"
        )
    if version > LAYOUT_VERSION:
        raise StoreSchemaError(
            f"{path} was written by a newer robots_async (store layout {version}; this "
            f"version reads layout {LAYOUT_VERSION}): upgrade, or give it another file"
        )
    return version


def _create(path: str, conn: sqlite3.Connection) -> None:
    """Create the tables once, whichever process gets there first; the layout is checked
    again under the write lock, as another program may have written in between."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        if _check_layout(path, conn) == 0:
            for statement in _CREATE.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {LAYOUT_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _check_path(path: str) -> None:
    """Refuse a path where no store file can be: the crawl would otherwise run with
    one warning and no store (a fleet sharing nothing: every process fetching and
    pacing alone), or on a database no other process sees."""
    accepted = "the path of a database file in an existing, writable directory"
    if path in ("", ":memory:"):
        why = "private to one connection: MemoryStore shares within one process"
        raise ConfigurationError("SQLiteStore(path=)", path, f"{accepted} ({path!r} is {why})")
    if os.path.isdir(path):
        raise ConfigurationError("SQLiteStore(path=)", path, f"{accepted} (this is a directory)")
    if not os.path.exists(path):
        try:  # make the empty file, as SQLite would: a new file is a new database
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o644))
        except OSError as exc:
            raise ConfigurationError(
                "SQLiteStore(path=)", path, f"{accepted} ({exc.strerror or exc})"
            ) from None


def _check_positive(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"SQLiteStore {name} must be a positive number of seconds, not {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"SQLiteStore {name} must be finite, not {value!r}")
