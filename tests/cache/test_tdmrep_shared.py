"""tdmrep.json shared through a RobotsStore: one request per origin across caches, the
reader's own error_ttl, and bad records or failing stores never an answer."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import signal
import sqlite3
import time
from typing import TYPE_CHECKING, Any

import pytest
from aiohttp import web

import robots_async as ra
from robots_async.cache import sqlite as _sqlite
from robots_async.cache.resources import StoredResource, decode_resource, encode_resource
from robots_async.cache.shared import LEASE_TTL
from robots_async.cache.store import ResourceLease
from robots_async.cache.tdmrep import TdmRepCache

from .test_sqlite_store import immutable, tiny_disk  # noqa: F401 (a fixture)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

    from robots_async.cache.store import RobotsStore

    from ..workers import JsonLinesWorker
    from .conftest import FakeClock, Server, StoreWorker

    StartTdmWorker = Callable[[], Awaitable[JsonLinesWorker]]

PATH = "/.well-known/tdmrep.json"
FILE = json.dumps([{"location": "/books/*", "tdm-reservation": 1, "tdm-policy": "/p.json"}])
JSON = {"Content-Type": "application/json"}


def tdm_caches(
    make_cache: Callable[..., ra.RobotsCache], *stores: RobotsStore | None, **options: Any
) -> list[TdmRepCache]:
    """One TdmRepCache per store, each over its own RobotsCache and fetcher (a worker)."""
    clock = options.pop("clock", time.time)
    caches = [make_cache(store=store, clock=clock, **options) for store in stores]
    return [TdmRepCache(cache, cache._fetcher, clock=clock) for cache in caches]


async def ask_all(tdms: list[TdmRepCache], urls: list[str]) -> list[str]:
    """Every URL asked of every cache at once; the statuses in that order."""
    asks = [tdm.lookup(url) for url in urls for tdm in tdms]
    return [answer.status for answer, _ in await asyncio.gather(*asks)]


# --- MemoryStore --------------------------------------------------------------------


async def test_two_caches_on_one_memory_store_fetch_once(
    server: Server, make_cache: Callable[..., ra.RobotsCache]
) -> None:
    """100 concurrent lookups over two caches sharing a MemoryStore: one request."""
    server.text(PATH, FILE, delay=0.2, headers=JSON)
    store = ra.MemoryStore()
    first, second = tdm_caches(make_cache, store, store)
    urls = [server.url(f"/books/{i}") for i in range(25)] + [
        server.url(f"/x/{i}") for i in range(25)
    ]
    statuses = await ask_all([first, second], urls)
    assert statuses == ["reserved"] * 50 + ["not-reserved"] * 50
    assert server.count(PATH) == 1
    assert first.fetches + second.fetches == 1
    sharing = [tdm.sharing for tdm in (first, second)]
    assert [s.hits for s in sharing if s is not None] in ([0, 1], [1, 0])


async def test_two_checkers_usage_fetch_tdmrep_once(
    server: Server, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """checker.usage() on two checkers sharing a MemoryStore: one tdmrep.json request,
    the reservation in both answers."""
    server.text("/robots.txt", "User-agent: *\nAllow: /\n")
    server.text(PATH, FILE, delay=0.2, headers=JSON)
    store = ra.MemoryStore()
    checkers = [make_checker(store=store) for _ in range(2)]
    urls = [server.url(f"/books/{i}") for i in range(20)]
    answers = await asyncio.gather(
        *(checker.usage(url, headers={}) for url in urls for checker in checkers)
    )
    assert {answer.get("train-ai") for answer in answers} == {"disallowed"}
    assert server.count(PATH) == 1
    assert server.count("/robots.txt") == 1


async def test_5xx_is_shared_only_for_error_ttl(
    server: Server, make_cache: Callable[..., ra.RobotsCache], clock: FakeClock
) -> None:
    """A 503 seen by one cache is the other's answer too, for error_ttl only; then one
    of them fetches again and the other reads that."""
    server.text(PATH, FILE, status=503)
    store = ra.MemoryStore(clock=clock)
    first, second = tdm_caches(make_cache, store, store, clock=clock)
    assert (await first.lookup(server.url("/books/1")))[0].status == "unknown"
    server.text(PATH, FILE)
    assert (await second.lookup(server.url("/books/1")))[0].status == "unknown"
    assert server.count(PATH) == 1
    clock.advance(ra.FetchPolicy().error_ttl - 1)
    assert (await second.lookup(server.url("/books/1")))[0].status == "unknown"
    clock.advance(2)
    assert (await second.lookup(server.url("/books/1")))[0].status == "reserved"
    assert (await first.lookup(server.url("/books/1")))[0].status == "reserved"
    assert server.count(PATH) == 2


async def test_reader_applies_its_own_shorter_error_ttl(
    server: Server, make_cache: Callable[..., ra.RobotsCache], clock: FakeClock
) -> None:
    """A writer keeping a 503 for an hour does not make a reader with a 60 s error_ttl
    keep it longer: the reader fetches again after its own 60 s."""
    server.text(PATH, FILE, status=503)
    store = ra.MemoryStore(clock=clock)
    [lax] = tdm_caches(make_cache, store, clock=clock, policy=ra.FetchPolicy(error_ttl=3600))
    [strict] = tdm_caches(make_cache, store, clock=clock, policy=ra.FetchPolicy(error_ttl=60))
    assert (await lax.lookup(server.url("/books/1")))[0].status == "unknown"
    server.text(PATH, FILE)
    clock.advance(61)
    assert (await strict.lookup(server.url("/books/1")))[0].status == "reserved"
    assert server.count(PATH) == 2


@pytest.mark.parametrize(
    "bad",
    [
        StoredResource("tdmrep", "", 200, None, 1.0, 2.0, body=b"[]"),  # no URL
        "not a record",
    ],
)
async def test_corrupt_memory_record_is_a_refetch(
    server: Server, make_cache: Callable[..., ra.RobotsCache], bad: object
) -> None:
    """Whatever a MemoryStore holds that does not conform is fetched over, never used."""
    server.text(PATH, FILE)
    store = ra.MemoryStore()
    store._resources[server.origin(), "tdmrep"] = (bad, time.time() + 3600)  # type: ignore[assignment]
    first, second = tdm_caches(make_cache, store, store)
    assert (await first.lookup(server.url("/books/1")))[0].status == "reserved"
    assert first.sharing is not None
    assert first.sharing.invalid == 1
    assert (await second.lookup(server.url("/books/1")))[0].status == "reserved"
    assert server.count(PATH) == 1  # the second read the first's record


async def test_record_of_another_origin_is_not_used(
    make_server: Callable[[int], Awaitable[Server]], make_cache: Callable[..., ra.RobotsCache]
) -> None:
    """A record whose URL is another origin's (a key pointing elsewhere) is refetched."""
    server = await make_server(2)
    server.text(PATH, FILE)
    store = ra.MemoryStore()
    [tdm] = tdm_caches(make_cache, store)
    await tdm.lookup(server.url("/books/1", 0))
    record = store._resources[server.origin(0), "tdmrep"]
    store._resources[server.origin(1), "tdmrep"] = record
    await tdm.lookup(server.url("/books/1", 1))
    assert server.count(PATH) == 2
    assert tdm.sharing is not None
    assert tdm.sharing.invalid == 1


class KeepsBody:
    """An AiohttpFetcher seen without ``fetch_into``, as the Scrapy engine's fetcher is:
    tdmrep.json then comes through ``fetch(keep_body=True)``, cut at max_bytes."""

    def __init__(self, fetcher: ra.AiohttpFetcher) -> None:
        self._fetcher = fetcher

    async def fetch(self, url: str, **options: Any) -> ra.FetchOutcome:
        return await self._fetcher.fetch(url, **options)


async def test_a_cut_at_our_max_bytes_is_not_shared_as_the_sites_file(
    server: Server, make_cache: Callable[..., ra.RobotsCache]
) -> None:
    """A fetcher keeping bodies to a robots.txt max_bytes below tdmrep.json's cap cuts
    a 30 KB file: unknown here, but our limit, not the site's size. It was shared as
    "over 512000 bytes" (truncated), so the fleet held the file unknown too."""
    entries = [{"location": f"/p{i}/", "tdm-reservation": 0} for i in range(600)]
    server.text(PATH, json.dumps([*entries, {"location": "/", "tdm-reservation": 1}]))
    store = ra.MemoryStore()
    small = make_cache(store=store, policy=ra.FetchPolicy(max_bytes=10_000))
    cutting = TdmRepCache(small, KeepsBody(small._fetcher))  # type: ignore[arg-type]
    answer, _ = await cutting.lookup(server.url("/books/1"))
    assert answer.status == "unknown"
    assert "cut at max_bytes=10000" in answer.reason
    assert await store.get_resource(server.origin(), "tdmrep") is None
    [peer] = tdm_caches(make_cache, store)
    assert (await peer.lookup(server.url("/books/1")))[0].status == "reserved"
    await cutting.aclose()


async def test_a_cut_at_our_max_bytes_is_counted_unknown(
    server: Server, make_cache: Callable[..., ra.RobotsCache]
) -> None:
    """TdmRepStats.unknown counts one of our own limits too (its docstring says so):
    the body-keeping fetcher's cut read unknown and counted 0."""
    entries = [{"location": f"/p{i}/", "tdm-reservation": 0} for i in range(600)]
    server.text(PATH, json.dumps(entries))
    small = make_cache(policy=ra.FetchPolicy(max_bytes=10_000))
    cutting = TdmRepCache(small, KeepsBody(small._fetcher))  # type: ignore[arg-type]
    assert (await cutting.lookup(server.url("/p1/a")))[0].status == "unknown"
    assert (cutting.stats.fetches, cutting.stats.unknown) == (1, 1)
    await cutting.aclose()


async def test_a_blank_start_cut_at_our_max_bytes_is_no_empty_body(
    server: Server, make_cache: Callable[..., ra.RobotsCache]
) -> None:
    """A file whose JSON follows 5,000 blanks, cut at a 1,000-byte max_bytes: what was
    kept is blank, but the body went on. It read "an empty body" (no file, reserving
    nothing), the reservation behind the blanks lost."""
    server.text(PATH, " " * 5000 + FILE)
    store = ra.MemoryStore()
    small = make_cache(store=store, policy=ra.FetchPolicy(max_bytes=1000))
    cutting = TdmRepCache(small, KeepsBody(small._fetcher))  # type: ignore[arg-type]
    answer, _ = await cutting.lookup(server.url("/books/1"))
    assert answer.status == "unknown"
    assert await store.get_resource(server.origin(), "tdmrep") is None  # our limit
    await cutting.aclose()


@pytest.mark.parametrize("keeps_body", [False, True], ids=["streaming", "keeps-body"])
async def test_a_page_served_as_the_file_is_shared_as_no_file(
    server: Server, make_cache: Callable[..., ra.RobotsCache], keeps_body: bool
) -> None:
    """A 700 KB HTML page at tdmrep.json (a soft 404), cut by the byte cap or by a
    body-keeping fetcher's robots.txt max_bytes: its first bytes tell it is a page, so
    the fleet shares "no file" (a record of them), and a peer reads no file too."""
    server.text(PATH, "<!DOCTYPE html>" + "<p>page</p>" * 64_000)
    store = ra.MemoryStore()
    if keeps_body:
        small = make_cache(store=store, policy=ra.FetchPolicy(max_bytes=10_000))
        first = TdmRepCache(small, KeepsBody(small._fetcher))  # type: ignore[arg-type]
    else:
        [first] = tdm_caches(make_cache, store)
    answer, _ = await first.lookup(server.url("/books/1"))
    assert (answer.status, answer.reason) == ("not-reserved", "no tdmrep.json (a page, not JSON)")
    stored = await store.get_resource(server.origin(), "tdmrep")
    assert stored is not None
    assert (stored.status, stored.truncated, len(stored.body)) == (200, False, 4096)
    [peer] = tdm_caches(make_cache, store)
    answer, record = await peer.lookup(server.url("/books/2"))
    assert (answer.status, answer.reason) == ("not-reserved", "no tdmrep.json (a page, not JSON)")
    assert record.expires - record.fetched_at == ra.FetchPolicy().ttl
    assert server.count(PATH) == 1
    await first.aclose()


async def test_held_lease_without_record_waits_one_fetch_then_fetches(
    server: Server, make_cache: Callable[..., ra.RobotsCache]
) -> None:
    """A lease held by a worker that never shares (it died): the reader waits about one
    fetch's time (total_timeout 1 s + margins), then fetches for itself."""
    server.text(PATH, FILE)
    store = ra.MemoryStore()
    held = await store.acquire_resource(server.origin(), "tdmrep", 60.0)
    assert held is not None
    [tdm] = tdm_caches(make_cache, store, policy=ra.FetchPolicy(total_timeout=1.0))
    started = time.monotonic()
    answer, _ = await tdm.lookup(server.url("/books/1"))
    elapsed = time.monotonic() - started
    assert answer.status == "reserved"
    assert server.count(PATH) == 1
    assert 1.5 < elapsed < 10.0, elapsed


async def test_released_lease_without_record_is_taken_over(
    server: Server, make_cache: Callable[..., ra.RobotsCache]
) -> None:
    """A holder that gives its lease back without a record (cancelled): a waiter takes
    the lease at its next look and fetches, well before a whole fetch's time."""
    server.text(PATH, FILE)
    store = ra.MemoryStore()
    held = await store.acquire_resource(server.origin(), "tdmrep", 60.0)
    assert held is not None
    [tdm] = tdm_caches(make_cache, store)  # total_timeout 30 s: a wait of 31 s
    asking = asyncio.ensure_future(tdm.lookup(server.url("/books/1")))
    await asyncio.sleep(0.3)
    assert not asking.done()
    assert await store.release_resource(held)
    answer, _ = await asyncio.wait_for(asking, 5.0)
    assert answer.status == "reserved"
    assert server.count(PATH) == 1


async def test_memory_store_renews_a_resource_lease_only_for_its_holder(clock: FakeClock) -> None:
    """renew_resource extends the lease its token holds; a lapsed, released or
    taken-over lease is not renewed (None), and robots.txt's lease is another lease."""
    store = ra.MemoryStore(clock=clock)
    origin = ra.Origin.from_url("http://a.test")
    lease = await store.acquire_resource(origin, "tdmrep", 3.0)
    assert lease is not None
    clock.advance(2.0)
    renewed = await store.renew_resource(lease, 3.0)
    assert renewed is not None
    assert (renewed.expires_at, renewed.kind, renewed.token) == (
        clock() + 3.0,
        "tdmrep",
        lease.token,
    )
    clock.advance(2.0)  # past the first TTL, within the renewed one
    assert await store.acquire_resource(origin, "tdmrep", 3.0) is None
    assert await store.acquire(origin, 3.0) is not None  # robots.txt's lease is apart
    clock.advance(1.5)  # lapsed: taken over by another worker
    other = await store.acquire_resource(origin, "tdmrep", 3.0)
    assert other is not None
    assert await store.renew_resource(lease, 3.0) is None
    assert await store.release_resource(other)
    assert await store.renew_resource(other, 3.0) is None


@pytest.mark.scenario
async def test_resource_lease_is_short_only_with_a_store_that_renews(
    server: Server, make_cache: Callable[..., ra.RobotsCache]
) -> None:
    """While a slow tdmrep.json is fetched, its lease expires LEASE_TTL from now on a
    store with renew_resource (kept renewed), a whole fetch from now on one without."""
    server.text(PATH, FILE, delay=LEASE_TTL + 0.5)
    renewing = ra.MemoryStore()
    lasting = ResourcesOnlyStore()
    tdms = tdm_caches(make_cache, renewing, lasting)  # type: ignore[arg-type]
    asking = [asyncio.ensure_future(tdm.lookup(server.url("/books/1"))) for tdm in tdms]
    leases = [renewing._resource_leases, lasting._inner._resource_leases]
    key = (server.origin(), "tdmrep")
    left: list[list[float]] = [[], []]
    for _ in range(int((LEASE_TTL + 0.3) / 0.1)):  # past one TTL: renewed meanwhile
        await asyncio.sleep(0.1)
        for i, table in enumerate(leases):
            left[i].append(table[key].expires_at - time.time())
    assert [answer.status for answer, _ in await asyncio.gather(*asking)] == ["reserved"] * 2
    assert min(left[0]) > 0  # renewed before it lapsed
    assert max(left[0]) <= LEASE_TTL
    patience = ra.FetchPolicy().total_timeout  # and a margin
    assert min(left[1]) > patience - LEASE_TTL - 1.0


class RobotsOnlyStore:
    """A store with the robots.txt methods only (a third-party store of before)."""

    def __init__(self) -> None:
        self._inner = ra.MemoryStore()
        self.get = self._inner.get
        self.put = self._inner.put
        self.acquire = self._inner.acquire
        self.release = self._inner.release

    async def aclose(self) -> None:
        """Nothing to release."""


async def test_store_without_resource_methods_fetches_per_cache(
    server: Server, make_cache: Callable[..., ra.RobotsCache]
) -> None:
    """Without the resource methods each cache fetches once, as before."""
    server.text(PATH, FILE, delay=0.1)
    store = RobotsOnlyStore()
    tdms = tdm_caches(make_cache, store, store)  # type: ignore[arg-type]
    assert all(tdm.sharing is None for tdm in tdms)
    statuses = await ask_all(tdms, [server.url(f"/books/{i}") for i in range(10)])
    assert statuses == ["reserved"] * 20
    assert server.count(PATH) == 2


class ResourcesOnlyStore(RobotsOnlyStore):
    """A store with the resource methods but no renew_resource (a store of before)."""

    def __init__(self) -> None:
        super().__init__()
        self.get_resource = self._inner.get_resource
        self.put_resource = self._inner.put_resource
        self.acquire_resource = self._inner.acquire_resource
        self.release_resource = self._inner.release_resource


# --- SQLiteStore --------------------------------------------------------------------


async def test_two_stores_on_one_sqlite_file_fetch_once(
    make_server: Callable[[int], Awaitable[Server]],
    make_cache: Callable[..., ra.RobotsCache],
    tmp_path: Path,
) -> None:
    """Two SQLiteStores on one file, 10 origins asked 10 times by each: one tdmrep.json
    request per origin; the tables were made on first use, the layout version kept."""
    server = await make_server(10)
    server.text(PATH, FILE, delay=0.2, headers=JSON)
    path = tmp_path / "tdm.sqlite"
    async with ra.SQLiteStore(path) as one, ra.SQLiteStore(path) as two:
        tdms = tdm_caches(make_cache, one, two)
        urls = [server.url(f"/books/{i}", port) for port in range(10) for i in range(10)]
        assert await ask_all(tdms, urls) == ["reserved"] * 200
    assert [server.count(PATH, port) for port in range(10)] == [1] * 10
    with contextlib.closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == _sqlite.LAYOUT_VERSION
        rows = conn.execute("SELECT count(*) FROM resources WHERE kind = 'tdmrep'").fetchone()
    assert rows[0] == 10


async def test_two_processes_on_one_sqlite_file_fetch_once(
    make_server: Callable[[int], Awaitable[Server]],
    start_worker: Callable[..., Awaitable[StoreWorker]],
    tmp_path: Path,
) -> None:
    """Two worker processes asking checker.usage() about the same 20 origins at once:
    each tdmrep.json is requested exactly once in all."""
    server = await make_server(20)
    server.text("/robots.txt", "User-agent: *\nAllow: /\n")
    server.text(PATH, FILE, delay=0.2, headers=JSON)
    path = str(tmp_path / "shared.sqlite")
    workers = [await start_worker("tdm_worker.py", path) for _ in range(2)]
    for worker in workers:
        assert await worker.read(60.0) == {"ready": True}
    urls = [server.url(f"/books/{i}", port) for port in range(20) for i in range(3)]
    for worker in workers:
        await worker.send({"urls": urls})
    reports = [await worker.read(90.0) for worker in workers]
    assert [server.count(PATH, port) for port in range(20)] == [1] * 20
    assert all(report["train_ai"] == ["disallowed"] * 60 for report in reports)
    assert sum(report["fetches"] for report in reports) == 20


async def test_newer_sqlite_record_is_refetched_and_replaced(
    server: Server, make_cache: Callable[..., ra.RobotsCache], tmp_path: Path
) -> None:
    """A record of a newer layout (v 2) in the file: read as a miss (counted), fetched
    and overwritten with this version's record; never an answer, never a crash."""
    server.text(PATH, FILE)
    path = tmp_path / "newer.sqlite"
    async with ra.SQLiteStore(path) as store:
        [tdm] = tdm_caches(make_cache, store)
        await tdm.lookup(server.url("/books/1"))  # makes the tables and a record
        await tdm.aclose()
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as conn:
        meta = json.loads(conn.execute("SELECT meta FROM resources").fetchone()[0])
        meta.update(v=2, status=404)
        conn.execute("UPDATE resources SET meta = ?", (json.dumps(meta).encode(),))
    async with ra.SQLiteStore(path) as store:
        [tdm] = tdm_caches(make_cache, store)
        assert (await tdm.lookup(server.url("/books/1")))[0].status == "reserved"
        assert tdm.sharing is not None
        assert (tdm.sharing.invalid, tdm.fetches) == (1, 1)
        found = await store.get_resource(server.origin(), "tdmrep")
    assert found is not None
    assert found.status == 200
    assert server.count(PATH) == 2


async def test_deeply_nested_sqlite_record_is_a_refetch(
    server: Server, make_cache: Callable[..., ra.RobotsCache], tmp_path: Path
) -> None:
    """A record whose meta is 100,000 "[" (a corrupt or hostile file): a counted miss,
    fetched and overwritten. It raised RecursionError out of lookup() before."""
    server.text(PATH, FILE)
    path = tmp_path / "nested.sqlite"
    async with ra.SQLiteStore(path) as store:
        [tdm] = tdm_caches(make_cache, store)
        await tdm.lookup(server.url("/books/1"))
        await tdm.aclose()
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("UPDATE resources SET meta = ?", (b"[" * 100_000,))
    async with ra.SQLiteStore(path) as store:
        [tdm] = tdm_caches(make_cache, store)
        assert (await tdm.lookup(server.url("/books/1")))[0].status == "reserved"
        assert tdm.sharing is not None
        assert (tdm.sharing.invalid, tdm.fetches) == (1, 1)
    assert server.count(PATH) == 2


async def test_locked_sqlite_file_falls_back_to_fetching(
    server: Server, make_cache: Callable[..., ra.RobotsCache], tmp_path: Path
) -> None:
    """A file another process keeps locked: the lookup fetches by itself within the
    store's timeout and answers the site's reservation (store errors counted)."""
    server.text(PATH, FILE)
    path = tmp_path / "locked.sqlite"
    async with ra.SQLiteStore(path):
        pass
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as holder:
        holder.execute("BEGIN EXCLUSIVE")
        async with ra.SQLiteStore(path, timeout=0.3) as store:
            [tdm] = tdm_caches(make_cache, store)
            started = time.monotonic()
            answer, _ = await tdm.lookup(server.url("/books/1"))
            elapsed = time.monotonic() - started
        holder.execute("ROLLBACK")
    assert answer.status == "reserved"
    assert tdm.sharing is not None
    assert tdm.sharing.errors >= 1
    assert server.count(PATH) == 1
    assert elapsed < 5.0


async def test_read_only_sqlite_file_serves_records_and_fetches_the_rest(
    make_server: Callable[[int], Awaitable[Server]],
    make_cache: Callable[..., ra.RobotsCache],
    tmp_path: Path,
) -> None:
    """An unwritable file: its tdmrep.json record is used, another origin is fetched
    (the failed lease counted), both answers the site's."""
    server = await make_server(2)
    server.text(PATH, FILE)
    path = tmp_path / "readonly.sqlite"
    async with ra.SQLiteStore(path) as store:
        [writer] = tdm_caches(make_cache, store)
        await writer.lookup(server.url("/books/1", 0))
        await writer.aclose()
    with immutable(path):
        async with ra.SQLiteStore(path) as store:
            [tdm] = tdm_caches(make_cache, store)
            statuses = [(await tdm.lookup(server.url("/books/1", i)))[0].status for i in (0, 1)]
    assert statuses == ["reserved", "reserved"]
    assert [server.count(PATH, 0), server.count(PATH, 1)] == [1, 1]
    assert tdm.sharing is not None
    assert (tdm.sharing.hits, tdm.fetches) == (1, 1)
    assert tdm.sharing.errors >= 1


async def test_full_sqlite_disk_never_stops_a_lookup(
    tiny_disk: Path,  # noqa: F811
    make_server: Callable[[int], Awaitable[Server]],
    make_cache: Callable[..., ra.RobotsCache],
) -> None:
    """Files of 100 KB on a 192 KiB disk, two caches asking 4 origins at once: records
    fail to be written, yet every answer is the site's, each cache waiting at most one
    fetch's time (total_timeout 2 s) for a record that never comes."""
    server = await make_server(4)
    entry = {"location": "/books/*", "tdm-reservation": 1, "tdm-policy": "x" * 100_000}
    server.text(PATH, json.dumps([entry]), delay=0.1)
    policy = ra.FetchPolicy(total_timeout=2.0)
    async with (
        ra.SQLiteStore(tiny_disk / "full.sqlite") as one,
        ra.SQLiteStore(tiny_disk / "full.sqlite") as two,
    ):
        tdms = tdm_caches(make_cache, one, two, policy=policy)
        started = time.monotonic()
        urls = [server.url("/books/1", port) for port in range(4)]
        statuses = await ask_all(tdms, urls)
        elapsed = time.monotonic() - started
    assert statuses == ["reserved"] * 8
    assert sum(tdm.sharing.errors for tdm in tdms if tdm.sharing is not None) >= 1
    assert elapsed < 15.0, elapsed


async def test_sqlite_record_expires_with_its_lifetime(
    server: Server, make_cache: Callable[..., ra.RobotsCache], tmp_path: Path
) -> None:
    """The row holds the record for ``expires - fetched_at`` on the file's machine."""
    server.text(PATH, FILE, status=503)
    async with ra.SQLiteStore(tmp_path / "ttl.sqlite") as store:
        [tdm] = tdm_caches(make_cache, store, policy=ra.FetchPolicy(error_ttl=60))
        await tdm.lookup(server.url("/books/1"))
        with contextlib.closing(sqlite3.connect(tmp_path / "ttl.sqlite")) as conn:
            (expires_at,) = conn.execute("SELECT expires_at FROM resources").fetchone()
    assert 55 < expires_at - time.time() <= 60


async def test_sqlite_store_renews_a_resource_lease_only_for_its_holder(tmp_path: Path) -> None:
    """Two stores on one file: the holder's renew_resource keeps the lease past its
    first TTL, a renewal by another token or of a lapsed lease finds nothing."""
    path = tmp_path / "renew.sqlite"
    origin = ra.Origin.from_url("http://a.test")
    async with ra.SQLiteStore(path) as one, ra.SQLiteStore(path) as two:
        assert await two.renew_resource(ResourceLease(origin, "x", 1.0, "tdmrep"), 1) is None
        lease = await one.acquire_resource(origin, "tdmrep", 0.3)
        assert lease is not None
        renewed = await one.renew_resource(lease, 5.0)
        assert renewed is not None
        assert renewed.expires_at - time.time() > 4.0
        await asyncio.sleep(0.5)  # past the first TTL
        assert await two.acquire_resource(origin, "tdmrep", 5.0) is None
        stranger = ResourceLease(origin, "not-the-token", 0.0, "tdmrep")
        assert await two.renew_resource(stranger, 5.0) is None
        short = await two.acquire_resource(ra.Origin.from_url("http://b.test"), "tdmrep", 0.1)
        assert short is not None
        await asyncio.sleep(0.2)
        assert await two.renew_resource(short, 5.0) is None
        assert await two.renew_resource(renewed, 5.0) is not None  # another store: same file


# --- dead and slow lease holders (worker processes) ---------------------------------


def hang_first(server: Server, seconds: float) -> None:
    """tdmrep.json whose first request hangs ``seconds``; later ones are answered at once."""
    requests = itertools.count()

    async def handler(_: web.Request) -> web.StreamResponse:
        if next(requests) == 0:
            await asyncio.sleep(seconds)
        return web.Response(text=FILE, headers=JSON)

    server.route(PATH, handler)


async def ready(start: StartTdmWorker, count: int) -> list[JsonLinesWorker]:
    """``count`` tdm_worker.py processes, each ready to ask."""
    workers = [await start() for _ in range(count)]
    for worker in workers:
        assert await worker.read(60.0) == {"ready": True}
    return workers


async def requested(server: Server) -> None:
    """Return once tdmrep.json was requested (within 30 s)."""
    for _ in range(600):
        if server.count(PATH):
            return
        await asyncio.sleep(0.05)
    raise AssertionError("tdmrep.json was never requested")


async def killed_holder_delay(server: Server, start: StartTdmWorker) -> float:
    """Seconds from SIGKILL of a worker holding the tdmrep.json lease mid-fetch (4 s
    in, past one LEASE_TTL) to its peer's usage() answer, which is checked to be the
    site's, from the peer's own second request."""
    server.text("/robots.txt", "User-agent: *\nAllow: /\n")
    hang_first(server, 25.0)
    doomed, peer = await ready(start, 2)
    url = server.url("/books/1")
    await doomed.send_json({"urls": [url]})
    await requested(server)
    await asyncio.sleep(4.0)  # the live holder kept its lease renewed meanwhile
    os.kill(doomed.proc.pid, signal.SIGKILL)
    await doomed.proc.wait()
    killed_at = time.monotonic()
    await peer.send_json({"urls": [url]})
    report = await peer.read(60.0)  # room for a whole fetch's wait, to measure it
    elapsed = time.monotonic() - killed_at
    assert report == {"train_ai": ["disallowed"], "fetches": 1}
    assert server.count(PATH) == 2  # the dead worker's request, then the peer's
    return elapsed


async def assert_slow_holder_keeps_its_lease(server: Server, start: StartTdmWorker) -> None:
    """tdmrep.json answered after 8 s (over two lease TTLs): the live holder renews its
    lease, so its peer waits for the shared record and sends no request of its own."""
    server.text("/robots.txt", "User-agent: *\nAllow: /\n")
    server.text(PATH, FILE, delay=8.0, headers=JSON)
    holder, peer = await ready(start, 2)
    url = server.url("/books/1")
    await holder.send_json({"urls": [url]})
    await requested(server)
    await peer.send_json({"urls": [url]})
    reports = [await holder.read(60.0), await peer.read(60.0)]
    assert reports == [
        {"train_ai": ["disallowed"], "fetches": 1},
        {"train_ai": ["disallowed"], "fetches": 0},
    ]
    assert server.count(PATH) == 1


@pytest.mark.scenario
async def test_sqlite_worker_killed_mid_tdmrep_fetch_frees_the_origin_in_seconds(
    server: Server, start_worker: Callable[..., Awaitable[StoreWorker]], tmp_path: Path
) -> None:
    """Two processes on one SQLite file: the peer of a SIGKILLed lease holder answers
    within 5 s of the kill (~27 s when the lease lasted a whole fetch)."""
    path = str(tmp_path / "shared.sqlite")
    elapsed = await killed_holder_delay(server, lambda: start_worker("tdm_worker.py", path))
    assert elapsed < 5.0, elapsed


@pytest.mark.scenario
async def test_sqlite_slow_live_holder_keeps_its_tdmrep_lease(
    server: Server, start_worker: Callable[..., Awaitable[StoreWorker]], tmp_path: Path
) -> None:
    """Two processes on one SQLite file, an 8 s tdmrep.json: one request in all."""
    path = str(tmp_path / "shared.sqlite")
    await assert_slow_holder_keeps_its_lease(server, lambda: start_worker("tdm_worker.py", path))


def test_stored_resource_round_trip() -> None:
    """encode/decode keep every field; a body beside a 503 is refused."""
    record = StoredResource("tdmrep", "http://a.test:80" + PATH, 200, None, 5.0, 9.0, body=b"[]")
    fields = encode_resource(record)
    assert decode_resource(fields) == record
    bad = StoredResource("tdmrep", record.url, 503, None, 5.0, 9.0, body=b"[]")
    with pytest.raises(ra.InvalidRecordError, match="body"):
        decode_resource(encode_resource(bad))
