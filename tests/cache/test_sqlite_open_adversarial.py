"""Adversarial checks of SQLiteStore's opening: fleets on one new file, files locked
by another process for longer than the timeout, another program creating its database
while ours opens, and odd files (empty, rollback journal, foreign application_id)."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from typing import TYPE_CHECKING

import pytest

import robots_async as ra
from robots_async.cache import sqlite as _sqlite

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

URL = "http://adv.test/robots.txt"

# Opens each path at its wall-clock moment and writes one record; prints a JSON line.
_OPENER = textwrap.dedent(
    """
    import asyncio, json, sys, time
    import robots_async as ra

    async def one(path, at, name):
        await asyncio.sleep(max(0.0, at - time.time()))
        url = f"http://{name}.test/robots.txt"
        record = ra.StoredRobots(url=url, final_url=url, status=200, error=None,
                                 fetched_at=time.time(), body=b"")
        try:
            async with ra.SQLiteStore(path, timeout=10.0) as store:
                await store.put(ra.Origin.from_url(url), record)
        except ra.RobotsError as exc:
            return repr(exc)
        return None

    async def main():
        name, orders = sys.argv[1], json.loads(sys.argv[2])
        errors = [await one(path, at, name) for path, at in orders]
        print(json.dumps(errors), flush=True)

    asyncio.run(main())
    """
)

# Holds a lock on a file (argv: path, SQL run before "ready") until stdin closes.
_HOLDER = textwrap.dedent(
    """
    import sqlite3, sys
    conn = sqlite3.connect(sys.argv[1], isolation_level=None)
    for statement in sys.argv[2:]:
        conn.execute(statement)
    print("ready", flush=True)
    sys.stdin.read()
    if conn.in_transaction:
        conn.execute("COMMIT")
    conn.close()
    """
)


def _record() -> ra.StoredRobots:
    return ra.StoredRobots(
        url=URL, final_url=URL, status=200, error=None, fetched_at=time.time(), body=b"x"
    )


@contextlib.contextmanager
def _holding(path: Path, *statements: str) -> Iterator[subprocess.Popen[str]]:
    """Another process that ran ``statements`` on ``path`` and keeps its lock."""
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(path), *statements],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "ready"
        yield holder
    finally:
        assert holder.stdin is not None
        if not holder.stdin.closed:
            holder.stdin.close()
        holder.wait(timeout=30)
        assert holder.stdout is not None
        holder.stdout.close()
        assert holder.returncode == 0


def _pragmas(path: Path) -> tuple[int, int, str]:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        application = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    return application, version, mode


@pytest.mark.scenario
def test_eight_processes_open_new_files_together(tmp_path: Path) -> None:
    """Eight processes create a store on the same new file at the same moment, three
    files in a row: every one opens it and writes its record, and the file is ours."""
    count, rounds = 8, 3
    start = time.time() + 3.0  # after every process has imported robots_async
    orders = [(str(tmp_path / f"fleet-{r}.sqlite"), start + 0.4 * r) for r in range(rounds)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _OPENER, f"w{n}", json.dumps(orders)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(count)
    ]
    reports = [json.loads(proc.communicate(timeout=60)[0]) for proc in procs]
    assert reports == [[None] * rounds] * count
    for path, _ in orders:
        with contextlib.closing(sqlite3.connect(path)) as conn:
            keys = sorted(key for (key,) in conn.execute("SELECT origin FROM records"))
        assert keys == sorted(f"http://w{n}.test:80" for n in range(count))
        assert _pragmas(tmp_path / path) == (_sqlite.APPLICATION_ID, 1, "wal")


@pytest.mark.parametrize("existing", ["new", "rollback-journal"])
async def test_exclusive_lock_longer_than_timeout_opens_within_it(
    tmp_path: Path, existing: str
) -> None:
    """Another process holds ``BEGIN EXCLUSIVE`` on a rollback-journal file (new, or a
    store of ours switched back from WAL) for longer than the timeout: the constructor
    neither hangs nor raises, returning within the timeout; calls raise StoreError."""
    path = tmp_path / "held.sqlite"
    if existing != "new":
        async with ra.SQLiteStore(path):
            pass
        with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as conn:
            assert conn.execute("PRAGMA journal_mode = DELETE").fetchone()[0] == "delete"
    with _holding(path, "BEGIN EXCLUSIVE", "CREATE TABLE IF NOT EXISTS t (x)"):
        started = time.monotonic()
        store = ra.SQLiteStore(path, timeout=0.5)
        elapsed = time.monotonic() - started
        try:
            with pytest.raises(ra.StoreError):
                await store.get(ra.Origin.from_url(URL))
        finally:
            await store.aclose()
    assert 0.4 <= elapsed < 2.0


async def test_exclusive_lock_on_a_wal_store_opens_and_calls_time_out(tmp_path: Path) -> None:
    """In WAL mode an exclusive writer leaves reads possible: the store opens at once,
    a write raises StoreError within the timeout, and works once the lock is gone."""
    path = tmp_path / "wal.sqlite"
    origin = ra.Origin.from_url(URL)
    async with ra.SQLiteStore(path) as store:
        await store.put(origin, _record())
    with _holding(path, "BEGIN EXCLUSIVE", "DELETE FROM leases"):
        started = time.monotonic()
        store = ra.SQLiteStore(path, timeout=0.5)
        opened = time.monotonic() - started
        started = time.monotonic()
        with pytest.raises(ra.StoreError):
            await store.put(origin, _record())
        failed = time.monotonic() - started
    try:
        await store.put(origin, _record())
        stored = await store.get(origin)
    finally:
        await store.aclose()
    assert opened < 0.5
    assert 0.4 <= failed < 2.5
    assert stored is not None
    assert stored.body == b"x"


async def test_foreign_database_created_while_ours_opens_is_refused_untouched(
    tmp_path: Path,
) -> None:
    """Another program is creating its database (write transaction open, tables made,
    not committed) when our store opens the file: refused with StoreSchemaError once it
    commits, and the other program's file is not written to (journal mode kept)."""
    path = tmp_path / "foreign.sqlite"
    with _holding(path, "BEGIN IMMEDIATE", "CREATE TABLE accounts (id INTEGER)") as holder:
        assert holder.stdin is not None
        # Commits 0.3 s after our store has started opening.
        threading.Timer(0.3, holder.stdin.close).start()
        with pytest.raises(ra.StoreSchemaError, match="not a robots_async store"):
            ra.SQLiteStore(path, timeout=5.0)
    application, version, mode = _pragmas(path)
    assert (application, version) == (0, 0)
    assert mode == "delete", "our store switched another program's database to WAL"


@pytest.mark.parametrize(
    ("application", "version", "match"),
    [
        (0x12345678, 0, "not a robots_async store"),
        (0x12345678, 1, "not a robots_async store"),
        (0, 1, "not a robots_async store"),
        (_sqlite.APPLICATION_ID, 99, "newer robots_async"),
    ],
)
def test_foreign_or_newer_pragmas_without_tables_are_refused(
    tmp_path: Path, application: int, version: int, match: str
) -> None:
    """application_id or user_version of another program (or a newer layout) are
    refused even on a file holding no table, and nothing is written to it."""
    path = tmp_path / "ids.sqlite"
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.execute(f"PRAGMA application_id = {application}")
        conn.execute(f"PRAGMA user_version = {version}")
        conn.commit()
    before = path.read_bytes()
    with pytest.raises(ra.StoreSchemaError, match=match):
        ra.SQLiteStore(path)
    assert path.read_bytes() == before


async def test_empty_file_becomes_a_store(tmp_path: Path) -> None:
    """A 0-byte file (``touch``) is a new database: laid out as ours and usable."""
    path = tmp_path / "empty.sqlite"
    path.touch()
    origin = ra.Origin.from_url(URL)
    async with ra.SQLiteStore(path) as store:
        await store.put(origin, _record())
        assert await store.get(origin) is not None
    assert _pragmas(path) == (_sqlite.APPLICATION_ID, _sqlite.LAYOUT_VERSION, "wal")


async def test_rollback_journal_store_is_reopened_as_wal(tmp_path: Path) -> None:
    """A store of ours in rollback-journal mode (copied, or switched by a tool) opens,
    keeps its records, and is switched back to WAL."""
    path = tmp_path / "delete.sqlite"
    origin = ra.Origin.from_url(URL)
    async with ra.SQLiteStore(path) as store:
        await store.put(origin, _record())
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("PRAGMA journal_mode = DELETE")
    async with ra.SQLiteStore(path) as store:
        stored = await store.get(origin)
    assert stored is not None
    assert stored.body == b"x"
    assert _pragmas(path)[2] == "wal"


@pytest.mark.parametrize("garbage", [b"SQLite format 3\x00" + b"\xff" * 84, b"\x00" * 4096])
async def test_garbage_file_is_only_logged(tmp_path: Path, garbage: bytes) -> None:
    """A truncated header or a page of zeros: the constructor returns, calls raise
    StoreError, and the file is left as it was."""
    path = tmp_path / "garbage.sqlite"
    path.write_bytes(garbage)
    started = time.monotonic()
    store = ra.SQLiteStore(path, timeout=0.5)
    elapsed = time.monotonic() - started
    try:
        with pytest.raises(ra.StoreError):
            await store.put(ra.Origin.from_url(URL), _record())
    finally:
        await store.aclose()
    assert elapsed < 2.0
    assert path.read_bytes() == garbage
