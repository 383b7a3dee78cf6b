"""SQLiteStore: survives restarts, shares one fetch per origin across processes, and a
bad file (corrupt, locked, read-only, full) never stops a crawl; a newer layout is refused."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import sqlite3
import subprocess
import time
from collections import Counter
from typing import TYPE_CHECKING

import pytest

import robots_async as ra
from robots_async.cache import records as _records
from robots_async.cache import sqlite as _sqlite
from tests.helpers import tmpfs

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterator
    from pathlib import Path

    from .conftest import Server, StoreWorker

USER_AGENT = "StoreTestBot/1.0"
TOKEN = "StoreTestBot"
RULES = "User-agent: *\nDisallow: /private/\n"


async def check_all(checker: ra.RobotsChecker, urls: list[str]) -> list[bool]:
    """Check every URL at once."""
    return list(await asyncio.gather(*(checker.allowed(url) for url in urls)))


def private_urls(server: Server) -> list[str]:
    """A disallowed URL on every port of ``server``."""
    return [server.url("/private/x", index) for index in range(len(server.ports))]


async def test_restart_on_same_file_fetches_nothing(
    make_server: Callable[[int], Awaitable[Server]], tmp_path: Path
) -> None:
    """1,000 origins checked, the checker and store closed, a new one on the same file:
    0 robots.txt requests the second time, the same verdicts, all from the store."""
    server = await make_server(1000)
    server.text("/robots.txt", RULES)
    urls = private_urls(server)
    path = tmp_path / "robots.sqlite"
    async with ra.SQLiteStore(path) as store, ra.RobotsChecker(USER_AGENT, store=store) as first:
        before = await check_all(first, urls)
    assert server.count() == 1000
    assert before == [False] * 1000
    async with ra.SQLiteStore(path) as store, ra.RobotsChecker(USER_AGENT, store=store) as second:
        after = await check_all(second, urls)
        stats = second.stats.cache
    assert server.count() == 1000  # nothing fetched again
    assert after == before
    assert (stats.fetches, stats.store_hits, stats.store_errors) == (0, 1000, 0)


async def test_two_processes_fetch_each_origin_once(
    make_server: Callable[[int], Awaitable[Server]],
    start_worker: Callable[..., Awaitable[StoreWorker]],
    tmp_path: Path,
) -> None:
    """Two worker processes on one file, asked about the same 200 origins at the same
    moment: each robots.txt is requested exactly once in all."""
    server = await make_server(200)
    server.text("/robots.txt", RULES, delay=0.05)
    path = str(tmp_path / "shared.sqlite")
    workers = [await start_worker("sqlite_worker.py", path) for _ in range(2)]
    for worker in workers:
        assert await worker.read() == {"ready": True}
    urls = private_urls(server)
    for worker in workers:
        await worker.send({"urls": urls})
    reports = [await worker.read(90.0) for worker in workers]
    per_origin = Counter(hit.port for hit in server.hits if hit.path == "/robots.txt")
    assert len(per_origin) == 200
    assert set(per_origin.values()) == {1}
    assert all(report["verdicts"] == [False] * 200 for report in reports)
    assert sum(report["cache"]["fetches"] for report in reports) == 200
    assert sum(report["cache"]["store_errors"] for report in reports) == 0


@pytest.mark.scenario
async def test_a_fleet_opening_one_new_file_together(
    start_worker: Callable[..., Awaitable[StoreWorker]], tmp_path: Path
) -> None:
    """Four processes create a store on the same new file at the same moment, twelve
    times: every one opens it and writes (no "database is locked", no new file taken for
    another program's), and the file holds the four records."""
    workers = [await start_worker("sqlite_opener.py", f"worker-{n}") for n in range(4)]
    start = time.time() + 1.5  # after every worker has imported robots_async
    for round_ in range(12):
        path = str(tmp_path / f"fleet-{round_}.sqlite")
        for worker in workers:
            await worker.send({"path": path, "at": start + 0.25 * round_})
        reports = [await worker.read(30.0) for worker in workers]
        assert reports == [{"error": None}] * 4, f"round {round_}"
        with contextlib.closing(sqlite3.connect(path)) as conn:
            keys = sorted(key for (key,) in conn.execute("SELECT origin FROM records"))
        assert keys == [f"http://worker-{n}.test:80" for n in range(4)]


async def test_killed_writer_leaves_a_readable_file(
    start_worker: Callable[..., Awaitable[StoreWorker]], tmp_path: Path
) -> None:
    """A writer killed with SIGKILL in the middle of its writes: the file opens, passes
    SQLite's integrity check, and every record in it is valid."""
    path = tmp_path / "killed.sqlite"
    writer = await start_worker("sqlite_writer.py", str(path))
    assert await writer.read() == {"writing": 200}
    await asyncio.sleep(0.3)  # well inside a stream of writes
    writer.proc.send_signal(signal.SIGKILL)
    assert await writer.proc.wait() == -signal.SIGKILL
    with contextlib.closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        keys = [key for (key,) in conn.execute("SELECT origin FROM records")]
    assert len(keys) >= 200
    async with ra.SQLiteStore(path) as store:
        for key in keys:
            record = await store.get(ra.Origin.from_url(key))
            assert record is not None
            assert record.status == 200
            assert record.body.startswith(b"User-agent: *\n")


# --- bad files: checks fall back to fetching ----------------------------------------


def damage(path: Path, how: str) -> None:
    """Make ``path`` a corrupt database: garbage from the start, or pages overwritten."""
    if how == "garbage":
        path.write_bytes(b"not a database, really " * 2000)
        return
    data = bytearray(path.read_bytes())
    assert len(data) > 3 * 4096
    data[4096:] = b"\xa5" * (len(data) - 4096)  # every page but the first
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["garbage", "pages"])
async def test_corrupt_file_falls_back_to_fetching(
    make_server: Callable[[int], Awaitable[Server]],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    how: str,
) -> None:
    """A file that is not a database, or whose pages were overwritten: every check is
    answered from its own fetch (right verdicts), with a warning and a counted error."""
    server = await make_server(20)
    server.text("/robots.txt", RULES)
    urls = private_urls(server)
    path = tmp_path / "corrupt.sqlite"
    async with ra.SQLiteStore(path) as store, ra.RobotsChecker(USER_AGENT, store=store) as writer:
        await check_all(writer, urls)
    damage(path, how)
    caplog.set_level(logging.WARNING, logger="robots_async")
    async with ra.SQLiteStore(path) as store, ra.RobotsChecker(USER_AGENT, store=store) as checker:
        assert await check_all(checker, urls) == [False] * 20
        assert await checker.allowed(server.url("/public"))
        stats = checker.stats.cache
    assert stats.fetches == 20
    assert stats.store_errors + stats.store_invalid >= 20
    assert any(r.levelno == logging.WARNING for r in caplog.records)


async def test_locked_file_falls_back_within_the_timeout(
    make_server: Callable[[int], Awaitable[Server]], tmp_path: Path
) -> None:
    """Another process holds the write lock: the check waits at most the store's
    timeout per call, then fetches for itself."""
    server = await make_server(1)
    server.text("/robots.txt", RULES)
    path = tmp_path / "locked.sqlite"
    async with ra.SQLiteStore(path):
        pass  # create the file
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as holder:
        holder.execute("BEGIN EXCLUSIVE")
        async with (
            ra.SQLiteStore(path, timeout=0.3) as store,
            ra.RobotsChecker(USER_AGENT, store=store) as checker,
        ):
            started = time.monotonic()
            assert not await checker.allowed(server.url("/private/x"))
            elapsed = time.monotonic() - started
            stats = checker.stats.cache
        holder.execute("ROLLBACK")
    assert stats.fetches == 1
    assert stats.store_errors >= 1
    assert elapsed < 5.0  # a 0.3 s timeout per call, generous for a loaded machine


@contextlib.contextmanager
def immutable(path: Path) -> Iterator[None]:
    """Make ``path`` unwritable even for root (``chattr +i``); skip where impossible."""
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", str(path)], check=False).returncode:
        pytest.skip("chattr +i is not available here (needs root and ext4-like files)")
    try:
        yield
    finally:
        subprocess.run([chattr, "-i", str(path)], check=True)


async def test_read_only_file_serves_records_and_fetches_the_rest(
    make_server: Callable[[int], Awaitable[Server]], tmp_path: Path
) -> None:
    """A file that cannot be written: records in it are still used; origins not in it
    are fetched (the failed lease and write counted), with the right verdicts."""
    server = await make_server(4)
    server.text("/robots.txt", RULES)
    path = tmp_path / "readonly.sqlite"
    async with ra.SQLiteStore(path) as store, ra.RobotsChecker(USER_AGENT, store=store) as writer:
        await check_all(writer, [server.url("/private/x", 0), server.url("/private/x", 1)])
    with immutable(path):
        async with (
            ra.SQLiteStore(path) as store,
            ra.RobotsChecker(USER_AGENT, store=store) as checker,
        ):
            assert await check_all(checker, private_urls(server)) == [False] * 4
            stats = checker.stats.cache
    assert server.count() == 4  # 2 before, 2 not in the file
    assert (stats.store_hits, stats.fetches) == (2, 2)
    assert stats.store_errors >= 2


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 192 KiB tmpfs (a disk that fills up)."""
    with tmpfs(tmp_path / "tiny", "size=192k", "a small tmpfs") as mount:
        yield mount


async def test_full_disk_falls_back_to_fetching(
    make_server: Callable[[int], Awaitable[Server]], tiny_disk: Path
) -> None:
    """Records larger than the disk: writes fail, every check is still answered."""
    server = await make_server(12)
    big = RULES + "".join(f"Disallow: /{i}/\n" for i in range(4000))  # ~60 KB each
    server.text("/robots.txt", big)
    async with (
        ra.SQLiteStore(tiny_disk / "full.sqlite") as store,
        ra.RobotsChecker(USER_AGENT, store=store) as checker,
    ):
        assert await check_all(checker, private_urls(server)) == [False] * 12
        stats = checker.stats.cache
    assert stats.fetches == 12
    assert stats.store_errors >= 1


@pytest.mark.scenario
async def test_full_disk_never_stalls_a_peer_nor_changes_a_verdict(
    tiny_disk: Path,  # first: unmounted after the workers have exited
    make_server: Callable[[int], Awaitable[Server]],
    start_worker: Callable[..., Awaitable[StoreWorker]],
) -> None:
    """Two processes on one store whose disk fills up, asked about the same 16 origins
    at once: records and lease releases fail, so a peer waits at most for a short lease
    to lapse (3 s) and then fetches for itself. Every verdict is the site's, and both
    finish in seconds (a 36 s stall and 32 "disallowed" with leases as long as a fetch)."""
    server = await make_server(16)
    big = RULES + "".join(f"Disallow: /{i}/\n" for i in range(4000))  # ~60 KB each
    server.text("/robots.txt", big, delay=0.3)
    path = str(tiny_disk / "full.sqlite")
    workers = [await start_worker("sqlite_worker.py", path) for _ in range(2)]
    for worker in workers:
        assert await worker.read() == {"ready": True}
    started = time.monotonic()
    for worker in workers:
        await worker.send({"urls": private_urls(server)})
    reports = [await worker.read(60.0) for worker in workers]
    elapsed = time.monotonic() - started
    assert [report["verdicts"] for report in reports] == [[False] * 16] * 2
    assert sum(report["cache"]["store_errors"] for report in reports) >= 1  # it was full
    print(f"full disk, two workers: {elapsed:.2f} s")
    assert elapsed < 10.0, elapsed


# --- layouts ------------------------------------------------------------------------


async def test_newer_layout_is_refused_at_open(tmp_path: Path) -> None:
    """A file laid out by a newer version raises StoreSchemaError when the store is
    created (before any crawl), and the file is left as it was."""
    path = tmp_path / "newer.sqlite"
    async with ra.SQLiteStore(path):
        pass
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.execute(f"PRAGMA user_version = {_sqlite.LAYOUT_VERSION + 1}")
        conn.commit()
    before = path.read_bytes()
    with pytest.raises(ra.StoreSchemaError, match="newer robots_async"):
        ra.SQLiteStore(path)
    assert path.read_bytes() == before


def test_another_programs_database_is_refused(tmp_path: Path) -> None:
    """A database that is not a robots_async store is never written to (not even
    switched to WAL: its bytes are the same)."""
    path = tmp_path / "other.sqlite"
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.execute("CREATE TABLE accounts (id INTEGER)")
        conn.commit()
    before = path.read_bytes()
    with pytest.raises(ra.StoreSchemaError, match="not a robots_async store"):
        ra.SQLiteStore(path)
    assert path.read_bytes() == before


async def test_invalid_record_is_a_miss(server: Server, tmp_path: Path) -> None:
    """A record whose JSON was tampered with is refused (store_invalid), fetched and
    overwritten with a valid one."""
    server.text("/robots.txt", RULES)
    path = tmp_path / "tampered.sqlite"
    async with ra.SQLiteStore(path) as store, ra.RobotsChecker(USER_AGENT, store=store) as writer:
        await writer.allowed(server.url("/"))
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.execute(
            "UPDATE records SET meta = ?", (b'{"v": 99, "schema": "robots_async.record"}',)
        )
        conn.commit()
    async with ra.SQLiteStore(path) as store, ra.RobotsChecker(USER_AGENT, store=store) as reader:
        assert not await reader.allowed(server.url("/private/x"))
        stats = reader.stats.cache
        fixed = await store.get(server.origin())
    assert (stats.store_invalid, stats.fetches) == (1, 1)
    assert fixed is not None
    assert _records.validate(fixed).status == 200


async def test_lease_is_exclusive_until_released_or_expired(tmp_path: Path) -> None:
    """One lease per origin at a time, across two stores on the file; a released or
    expired lease can be taken again; only its holder can release it."""
    origin = ra.Origin.from_url("http://a.test/")
    async with (
        ra.SQLiteStore(tmp_path / "l.sqlite") as one,
        ra.SQLiteStore(tmp_path / "l.sqlite") as two,
    ):
        lease = await one.acquire(origin, 30.0)
        assert lease is not None
        assert await two.acquire(origin, 30.0) is None
        forged = ra.Lease(origin, "not-the-token", lease.expires_at)
        assert not await two.release(forged)
        assert await one.release(lease)
        short = await two.acquire(origin, 0.05)
        assert short is not None
        await asyncio.sleep(0.1)
        taken = await one.acquire(origin, 30.0)
        assert taken is not None
        assert not await two.release(short)  # expired, and taken over since


@pytest.mark.parametrize("expires", ["'never'", "x'00'"], ids=["text", "blob"])
async def test_a_lease_row_without_a_numeric_expiry_is_taken_over(
    tmp_path: Path, expires: str
) -> None:
    """Found: a lease row whose expires_at is text or a blob (an edited or damaged file)
    compares above every number in SQLite, so the upsert never took it over: every
    refresh of that origin waited a whole fetch's time and 5 s (35 s by default), on
    every process, then fetched without the lease. Such a row is taken over now, and
    tdmrep.json's likewise."""
    origin = ra.Origin.from_url("http://a.test/")
    path = tmp_path / "l.sqlite"
    async with ra.SQLiteStore(path) as store:
        lease = await store.acquire_resource(origin, "tdmrep", 30.0)  # makes its table
        assert lease is not None
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute(f"INSERT INTO leases VALUES ('http://a.test:80', 'someone', {expires})")
        conn.execute(f"UPDATE resource_leases SET token = 'someone', expires_at = {expires}")
    async with ra.SQLiteStore(path) as store:
        assert await store.acquire(origin, 30.0) is not None
        assert await store.acquire(origin, 30.0) is None  # held now
        assert await store.acquire_resource(origin, "tdmrep", 30.0) is not None
        assert await store.acquire_resource(origin, "tdmrep", 30.0) is None


async def test_closed_store_raises_store_error(tmp_path: Path) -> None:
    """After aclose(), calls raise StoreError (never hang); aclose is idempotent."""
    store = ra.SQLiteStore(tmp_path / "c.sqlite")
    await store.aclose()
    await store.aclose()
    with pytest.raises(ra.StoreError, match="closed"):
        await store.get(ra.Origin.from_url("http://a.test/"))


@pytest.mark.parametrize(
    ("name", "value"), [("timeout", 0), ("timeout", float("inf")), ("keep_for", -1.0)]
)
def test_bad_settings_raise_at_construction(tmp_path: Path, name: str, value: float) -> None:
    """A bad timeout or keep_for names itself and its value."""
    with pytest.raises(ValueError, match=name):
        ra.SQLiteStore(tmp_path / "x.sqlite", **{name: value})
    assert not os.path.exists(tmp_path / "x.sqlite")


@pytest.mark.scenario
async def test_a_worker_killed_mid_fetch_frees_the_origin_in_seconds(
    make_server: Callable[[int], Awaitable[Server]],
    start_worker: Callable[..., Awaitable[StoreWorker]],
    tmp_path: Path,
) -> None:
    """A worker process holding the lease of a slow robots.txt is SIGKILLed: its peer on
    the same file answers within 5 s of the kill (the lease is short and was renewed
    only while its holder lived; a whole fetch's 35 s before)."""
    server = await make_server(1)
    server.text("/robots.txt", RULES, delay=25.0)
    path = str(tmp_path / "shared.sqlite")
    doomed, peer = [await start_worker("sqlite_worker.py", path) for _ in range(2)]
    for worker in (doomed, peer):
        assert await worker.read() == {"ready": True}
    url = server.url("/private/x")
    await doomed.send({"urls": [url]})
    for _ in range(600):
        if server.count():
            break
        await asyncio.sleep(0.05)
    await asyncio.sleep(4.0)  # past one lease TTL: the live holder kept it renewed
    server.text("/robots.txt", RULES)
    os.kill(doomed.proc.pid, signal.SIGKILL)
    await doomed.proc.wait()
    killed_at = time.monotonic()
    await peer.send({"urls": [url]})
    report = await peer.read(30.0)
    assert time.monotonic() - killed_at < 5.0
    assert report["verdicts"] == [False]
    assert server.count() == 2  # the dead worker's request, then the peer's
