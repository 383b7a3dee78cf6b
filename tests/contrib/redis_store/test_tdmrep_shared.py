"""tdmrep.json shared through a real redis-server (and a Redis Cluster): one request
per origin across workers, records expiring with their lifetime, bad records refetched."""

from __future__ import annotations

import asyncio
import json
import time
from typing import TYPE_CHECKING, Any

import pytest

import robots_async as ra
from robots_async.cache.tdmrep import TdmRepCache
from robots_async.contrib.redis import RedisStore

from ...servers import FakeClock, make_server  # noqa: F401 (a fixture, found by name)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

    import redis.asyncio as aioredis

    from ...servers import Server
    from .conftest import LocalCluster, RedisServer

PATH = "/.well-known/tdmrep.json"
FILE = json.dumps([{"location": "/books/*", "tdm-reservation": 1}])
JSON = {"Content-Type": "application/json"}


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
