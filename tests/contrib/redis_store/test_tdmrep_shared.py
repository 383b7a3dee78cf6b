"""tdmrep.json shared through a real redis-server (and a Redis Cluster): one request
per origin across workers, records expiring with their lifetime, bad records refetched."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import robots_async as ra
from robots_async.cache.shared import LEASE_TTL
from robots_async.cache.store import ResourceLease
from robots_async.cache.tdmrep import TdmRepCache
from robots_async.contrib.redis import RedisStore

from ...cache.test_tdmrep_shared import assert_slow_holder_keeps_its_lease, killed_holder_delay
from ...servers import FakeClock, make_server  # noqa: F401 (a fixture, found by name)
from ...workers import JsonLinesWorker

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

    import redis.asyncio as aioredis

    from ...cache.test_tdmrep_shared import StartTdmWorker
    from ...servers import Server
    from .conftest import LocalCluster, RedisServer

PATH = "/.well-known/tdmrep.json"
FILE = json.dumps([{"location": "/books/*", "tdm-reservation": 1}])
JSON = {"Content-Type": "application/json"}
#: The worker script of the SQLite tests, which takes a Redis URL and prefix too.
TDM_WORKER = Path(__file__).parents[2] / "cache" / "tdm_worker.py"


class Workers:
    """RobotsCache + TdmRepCache pairs, each on its own RedisStore (one per worker)."""

    def __init__(self) -> None:
        self.closing: list[Any] = []

    def add(self, url: str, prefix: str, **options: Any) -> TdmRepCache:
        """A new worker on ``url`` under ``prefix``."""
        clock = options.pop("clock", time.time)
        store = RedisStore(url, prefix=prefix)
        fetcher = ra.AiohttpFetcher(user_agent="RedisTdmBot/1.0", policy=options.get("policy"))
        cache = ra.RobotsCache(fetcher, store=store, clock=clock, **options)
        tdm = TdmRepCache(cache, fetcher, clock=clock)
        self.closing += [tdm, cache, fetcher, store]
        return tdm

    async def close(self) -> None:
        """Close everything made, in order."""
        for part in self.closing:
            await part.aclose()


@pytest.fixture
async def workers() -> AsyncIterator[Workers]:
    """Factory of workers, closed at teardown."""
    made = Workers()
    yield made
    await made.close()


@pytest.fixture
async def start_tdm_worker(
    redis_server: RedisServer, prefix: str, tmp_path: Path
) -> AsyncIterator[StartTdmWorker]:
    """Factory of tdm_worker.py processes on the shared redis-server under ``prefix``;
    every one is reaped at teardown."""
    started: list[JsonLinesWorker] = []

    async def start() -> JsonLinesWorker:
        log = tmp_path / f"tdm-worker-{len(started)}.log"
        worker = await JsonLinesWorker.spawn(log, TDM_WORKER, redis_server.url, prefix)
        started.append(worker)
        return worker

    yield start
    await asyncio.gather(*(worker.close() for worker in started))


def tdm_key(prefix: str, server: Server, index: int = 0) -> str:
    """The Redis key of ``server``'s tdmrep.json record."""
    return f"{prefix}:res:tdmrep:{{http://127.0.0.1:{server.ports[index]}}}"


def meta_of(server: Server, index: int, **changes: object) -> dict[str, object]:
    """A record's metadata as this version writes it, for origin ``index``, changed."""
    url = f"http://127.0.0.1:{server.ports[index]}{PATH}"
    meta: dict[str, object] = {"schema": "robots_async.resource", "v": 1, "kind": "tdmrep"}
    meta |= {"url": url, "status": 200, "error": None, "truncated": False}
    meta |= {"fetched_at": time.time(), "expires": time.time() + 3600}
    return meta | changes


async def test_two_workers_fetch_each_origin_once(
    redis_server: RedisServer,
    prefix: str,
    make_server: Callable[[int], Awaitable[Server]],  # noqa: F811
    workers: Workers,
    raw: aioredis.Redis,
) -> None:
    """Two workers, 10 origins, each URL asked by both at once: one request per origin;
    the record is a hash under the origin's hash tag with a TTL of the policy's ttl."""
    server = await make_server(10)
    server.text(PATH, FILE, delay=0.2, headers=JSON)
    tdms = [workers.add(redis_server.url, prefix) for _ in range(2)]
    urls = [server.url(f"/books/{i}", port) for port in range(10) for i in range(5)]
    answers = await asyncio.gather(*(tdm.lookup(url) for url in urls for tdm in tdms))
    assert {answer.status for answer, _ in answers} == {"reserved"}
    assert [server.count(PATH, port) for port in range(10)] == [1] * 10
    assert sum(tdm.fetches for tdm in tdms) == 10
    ttl = await raw.pttl(tdm_key(prefix, server))
    assert ra.FetchPolicy().ttl * 1000 - 60_000 < ttl <= ra.FetchPolicy().ttl * 1000


async def test_5xx_is_shared_for_error_ttl_only(
    redis_server: RedisServer,
    prefix: str,
    make_server: Callable[[int], Awaitable[Server]],  # noqa: F811
    workers: Workers,
    raw: aioredis.Redis,
) -> None:
    """A 503 is shared (no request from the second worker), its key lives error_ttl,
    and after error_ttl (a fake clock) a worker fetches again."""
    server = await make_server(1)
    server.text(PATH, FILE, status=503)
    clock = FakeClock(time.time())
    first, second = (workers.add(redis_server.url, prefix, clock=clock) for _ in range(2))
    assert (await first.lookup(server.url("/books/1")))[0].status == "unknown"
    server.text(PATH, FILE)
    assert (await second.lookup(server.url("/books/1")))[0].status == "unknown"
    assert server.count(PATH) == 1
    assert 0 < await raw.pttl(tdm_key(prefix, server)) <= ra.FetchPolicy().error_ttl * 1000
    clock.advance(ra.FetchPolicy().error_ttl + 1)
    assert (await second.lookup(server.url("/books/1")))[0].status == "reserved"
    assert (await first.lookup(server.url("/books/1")))[0].status == "reserved"
    assert server.count(PATH) == 2


async def test_corrupt_and_newer_records_are_refetched(
    redis_server: RedisServer,
    prefix: str,
    make_server: Callable[[int], Awaitable[Server]],  # noqa: F811
    workers: Workers,
    raw: aioredis.Redis,
) -> None:
    """A record of a newer layout, one that is not JSON, and one whose body rides on a
    404: each is a miss (counted), fetched and overwritten; the answer is the site's."""
    server = await make_server(3)
    server.text(PATH, FILE)
    poisons = [
        {"meta": json.dumps(meta_of(server, 0, v=2)), "body": b""},
        {"meta": b"{not json", "body": b""},
        {"meta": json.dumps(meta_of(server, 2, status=404)), "body": b"[]"},
    ]
    for index, poison in enumerate(poisons):
        await raw.hset(tdm_key(prefix, server, index), mapping=poison)  # type: ignore[arg-type]
    tdm = workers.add(redis_server.url, prefix)
    statuses = [(await tdm.lookup(server.url("/x/books/1", i)))[0].status for i in range(3)]
    statuses += [(await tdm.lookup(server.url("/books/1", i)))[0].status for i in range(3)]
    assert statuses == ["not-reserved"] * 3 + ["reserved"] * 3
    assert tdm.sharing is not None
    assert tdm.sharing.invalid == 3
    assert [server.count(PATH, i) for i in range(3)] == [1, 1, 1]
    fresh = workers.add(redis_server.url, prefix)
    assert (await fresh.lookup(server.url("/books/1", 0)))[0].status == "reserved"
    assert fresh.fetches == 0  # the overwritten record is valid


async def test_dead_redis_means_local_fetch(
    private_redis: RedisServer,
    prefix: str,
    make_server: Callable[[int], Awaitable[Server]],  # noqa: F811
    workers: Workers,
) -> None:
    """Redis stopped: the lookup fetches by itself and answers the site's reservation."""
    server = await make_server(1)
    server.text(PATH, FILE)
    tdm = workers.add(private_redis.url, prefix)
    private_redis.stop()
    answer, _ = await asyncio.wait_for(tdm.lookup(server.url("/books/1")), 20.0)
    assert answer.status == "reserved"
    assert tdm.sharing is not None
    assert tdm.sharing.errors >= 1
    assert server.count(PATH) == 1


async def test_cluster_workers_fetch_each_origin_once(
    redis_cluster: LocalCluster,
    prefix: str,
    make_server: Callable[[int], Awaitable[Server]],  # noqa: F811
    workers: Workers,
) -> None:
    """On a Redis Cluster (keys of many slots): one request per origin for two workers."""
    server = await make_server(12)
    server.text(PATH, FILE, delay=0.1, headers=JSON)
    tdms = [workers.add(redis_cluster.url, prefix) for _ in range(2)]
    urls = [server.url(f"/books/{i}", port) for port in range(12) for i in range(3)]
    answers = await asyncio.gather(*(tdm.lookup(url) for url in urls for tdm in tdms))
    assert {answer.status for answer, _ in answers} == {"reserved"}
    assert [server.count(PATH, port) for port in range(12)] == [1] * 12
    assert sum(tdm.sharing.errors for tdm in tdms if tdm.sharing is not None) == 0


def lease_key(prefix: str, origin: ra.Origin) -> str:
    """The Redis key of ``origin``'s tdmrep.json lease."""
    return f"{prefix}:lease:tdmrep:{{{origin.scheme}://{origin.host}:{origin.port}}}"


async def assert_renew_resource_extends_only_the_holders_lease(url: str, prefix: str) -> None:
    """renew_resource sets the holder's lease key to live ``ttl`` from now; another
    token, a released or a lapsed lease: None."""
    origin = ra.Origin.from_url("http://a.test")
    async with RedisStore(url, prefix=prefix) as store, RedisStore(url, prefix=prefix) as peer:
        lease = await store.acquire_resource(origin, "tdmrep", 0.3)
        assert lease is not None
        renewed = await store.renew_resource(lease, LEASE_TTL)
        assert renewed is not None
        assert (renewed.token, renewed.kind) == (lease.token, "tdmrep")
        assert 2000 < await store._redis.pttl(lease_key(prefix, origin)) <= LEASE_TTL * 1000
        await asyncio.sleep(0.5)  # past the first TTL
        assert await peer.acquire_resource(origin, "tdmrep", 5.0) is None
        stranger = ResourceLease(origin, "not-the-token", 0.0, "tdmrep")
        assert await peer.renew_resource(stranger, 60.0) is None
        assert await peer.renew(lease, 60.0) is None  # robots.txt's lease is another key
        assert await store.release_resource(renewed)
        assert await store.renew_resource(renewed, 60.0) is None
        short = await peer.acquire_resource(origin, "tdmrep", 0.1)
        assert short is not None
        await asyncio.sleep(0.3)
        assert await peer.renew_resource(short, 60.0) is None
        assert await store.acquire_resource(origin, "tdmrep", 5.0) is not None


async def test_renew_resource_on_one_server(redis_server: RedisServer, prefix: str) -> None:
    """The resource lease is renewed on a single redis-server."""
    await assert_renew_resource_extends_only_the_holders_lease(redis_server.url, prefix)


async def test_renew_resource_on_a_cluster(redis_cluster: LocalCluster, prefix: str) -> None:
    """The resource lease is renewed on a Redis Cluster (one key, one slot)."""
    await assert_renew_resource_extends_only_the_holders_lease(redis_cluster.url, prefix)


@pytest.mark.scenario
async def test_worker_killed_mid_tdmrep_fetch_frees_the_origin_in_seconds(
    make_server: Callable[[int], Awaitable[Server]],  # noqa: F811
    start_tdm_worker: StartTdmWorker,
) -> None:
    """Two processes on one redis-server: the peer of a SIGKILLed lease holder answers
    within 5 s of the kill (~27 s when the lease lasted a whole fetch)."""
    elapsed = await killed_holder_delay(await make_server(1), start_tdm_worker)
    assert elapsed < 5.0, elapsed


@pytest.mark.scenario
async def test_slow_live_holder_keeps_its_tdmrep_lease(
    make_server: Callable[[int], Awaitable[Server]],  # noqa: F811
    start_tdm_worker: StartTdmWorker,
) -> None:
    """Two processes on one redis-server, an 8 s tdmrep.json: one request in all."""
    await assert_slow_holder_keeps_its_lease(await make_server(1), start_tdm_worker)
