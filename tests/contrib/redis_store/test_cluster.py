"""RedisStore on a real local Redis Cluster: one slot per origin, one fetch per origin
across worker processes, and every check answered while a master is killed."""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

import pytest
import redis
from redis.asyncio.cluster import RedisCluster
from redis.crc import key_slot
from redis.exceptions import ConnectionError as RedisConnectionError

import robots_async as ra
from robots_async.contrib.redis import RedisStore

from .conftest import ROBOTS

# redis-py before 8.1 leaves the connections of a failed cluster node to the garbage
# collector after a failover (ResourceWarning "Unclosed ClusterNode", measured with
# 5.0.1, 5.2.1, 6.x, 7.0, 7.4 and 8.0 by .ci/lowest); checks are still answered.
_FAILOVER_CLEAN = tuple(int(part) for part in redis.__version__.split(".")[:2]) >= (8, 1)
failover = pytest.mark.skipif(
    not _FAILOVER_CLEAN,
    reason=f"redis-py {redis.__version__} leaks a failed node's connections (needs >= 8.1)",
)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from .conftest import LocalCluster, Site, Sites, Worker

    StartWorker = Callable[..., Awaitable[Worker]]


def record(origin: ra.Origin) -> ra.StoredRobots:
    """A 200 record for ``origin``."""
    url = origin.robots_url
    return ra.StoredRobots(url, url, 200, None, time.time(), body=ROBOTS)


def urls_for(sites: list[Site]) -> list[str]:
    """Two URLs per origin: one its robots.txt disallows, one it allows."""
    return [url for site in sites for url in (site.url("/private/x"), site.url("/a"))]


def wrong_verdicts(report: dict[str, Any]) -> dict[str, bool]:
    """URLs answered against robots.txt (it disallows /private/ only)."""
    verdicts: dict[str, bool] = report["verdicts"]
    return {url: ok for url, ok in verdicts.items() if ok == url.endswith("/private/x")}


async def test_cluster_url_gives_a_cluster_client_and_round_trips(
    redis_cluster: LocalCluster, prefix: str
) -> None:
    """A redis+cluster:// URL: get, put, acquire and release work across the masters."""
    records = {
        origin: record(origin)
        for origin in (ra.Origin.from_url(f"http://site-{i}.test/") for i in range(30))
    }
    async with RedisStore(redis_cluster.url, prefix=prefix) as store:
        assert isinstance(store._redis, RedisCluster)
        for origin, written in records.items():
            assert await store.get(origin) is None
            await store.put(origin, written)
            lease = await store.acquire(origin, 30.0)
            assert lease is not None
            assert await store.acquire(origin, 30.0) is None
            assert await store.release(lease)
        assert {origin: await store.get(origin) for origin in records} == records


async def test_keys_of_one_origin_share_a_slot(redis_cluster: LocalCluster, prefix: str) -> None:
    """Record and lease of an origin hash to one slot (hash tag); origins spread over
    the masters."""
    client = RedisCluster.from_url(redis_cluster.url.replace("redis+cluster", "redis"))
    origins = [ra.Origin.from_url(f"https://host-{i}.test:8{i % 10}") for i in range(60)]
    try:
        async with RedisStore(client, prefix=prefix) as store:
            for origin in origins:
                await store.put(origin, record(origin))
                assert await store.acquire(origin, 30.0) is not None
        keys = [key async for key in client.scan_iter(match=f"{prefix}:*")]
        assert len(keys) == 2 * len(origins)
        by_origin: dict[bytes, set[int]] = {}
        for key in keys:
            tag = key[key.index(b"{") + 1 : key.index(b"}")]
            by_origin.setdefault(tag, set()).add(key_slot(key))
        assert len(by_origin) == len(origins)
        assert all(len(slots) == 1 for slots in by_origin.values())
        masters = {client.get_node_from_key(key).port for key in keys}
        assert len(masters) == 3
    finally:
        await client.aclose()


def test_prefix_with_braces_is_refused() -> None:
    """A brace in the prefix would move the hash tag: refused at construction."""
    with pytest.raises(ValueError, match="prefix"):
        RedisStore("redis+cluster://127.0.0.1:1", prefix="crawl{1}")


async def test_four_workers_on_a_cluster_fetch_each_origin_once(
    redis_cluster: LocalCluster, prefix: str, sites: Sites, start_worker: StartWorker
) -> None:
    """4 processes x 200 origins through the cluster: one request per origin."""
    origins = await sites.add(200)
    args = ("--redis-url", redis_cluster.url, "--prefix", prefix)
    workers = await asyncio.gather(*(start_worker(*args) for _ in range(4)))
    urls = urls_for(origins)
    reports = await asyncio.gather(*(w.run(urls, seed=i) for i, w in enumerate(workers)))
    assert [wrong_verdicts(report) for report in reports] == [{}] * 4
    assert Counter(site.count() for site in origins) == {1: 200}
    assert sum(report["cache"]["store_errors"] for report in reports) == 0


@failover
@pytest.mark.scenario
async def test_master_killed_mid_run_every_check_answered(
    replicated_cluster: LocalCluster, prefix: str, sites: Sites, start_worker: StartWorker
) -> None:
    """A master is SIGKILLed while 4 workers check 300 slow origins: every check is
    answered, none fails open, and no origin is fetched more than twice in all (the
    workers keep trying the cluster through the failover, within the store patience,
    instead of each fetching for itself: measured {4: 300} before that, {1: 300} after)."""
    origins = await sites.add(300, delay=0.3)
    args = ("--redis-url", replicated_cluster.url, "--prefix", prefix, "--redis-timeout", "1")
    # A 5 s fetch deadline: a lease its dead holder never released lapses in 10 s.
    args += ("--concurrency", "400", "--total-timeout", "5")
    workers = await asyncio.gather(*(start_worker(*args) for _ in range(4)))
    victim = replicated_cluster.master_of(f"{prefix}:rec:{{http://127.0.0.1:{origins[0].port}}}")
    urls = urls_for(origins)
    for i, worker in enumerate(workers):
        await worker.send(urls, seed=i)
    await asyncio.wait_for(origins[0].requested.wait(), 30)
    os.kill(victim.pid, signal.SIGKILL)
    reports = [await worker.result(100.0) for worker in workers]
    assert all(len(report["verdicts"]) == len(urls) for report in reports)
    fail_open = [
        url
        for report in reports
        for url, allowed in report["verdicts"].items()
        if allowed and url.endswith("/private/x")
    ]
    assert fail_open == []
    denied = sum(len(wrong_verdicts(report)) for report in reports)
    during = Counter(site.count() for site in origins)
    print(f"fetches per origin while a master died: {dict(during)}; safe denials: {denied}")
    assert max(during) <= 2


@failover
async def test_store_serves_again_after_failover(
    replicated_cluster: LocalCluster, prefix: str
) -> None:
    """While a killed master's replica takes over, calls fail as StoreError within the
    timeout (nothing else escapes); once it has, a burst of 300 origins meets no error."""

    async def burst(store: RedisStore, tag: str) -> tuple[int, float]:
        failures = 0

        async def one(i: int) -> None:
            nonlocal failures
            origin = ra.Origin.from_url(f"http://{tag}-{i}.test/")
            try:
                await store.get(origin)
                await store.acquire(origin, 10.0)
                await store.put(origin, record(origin))
                assert await store.get(origin) is not None
            except ra.StoreError:
                failures += 1

        started = time.monotonic()
        await asyncio.gather(*(one(i) for i in range(300)))
        return failures, time.monotonic() - started

    # A call's timeout counts its wait for one of the client's connections: 300
    # origins at once on a loaded machine (eight busy processes on two cores) timed
    # out 196 calls at 1 s before any node died, and a full suite run 253 after the
    # failover. Long enough for the load, short enough to bound the failover's burst.
    patience = 5.0
    async with RedisStore(replicated_cluster.url, prefix=prefix, timeout=patience) as store:
        assert await burst(store, "before") == (0, pytest.approx(0, abs=30))
        victim = replicated_cluster.master_of(f"{prefix}:rec:{{http://before-0.test:80}}")
        os.kill(victim.pid, signal.SIGKILL)
        failed, elapsed = await burst(store, "during")
        assert elapsed < 4 * patience + 10  # four calls of at most the timeout each
        await asyncio.to_thread(replicated_cluster.wait_failover, victim)
        after, _ = await burst(store, "after")
    print(f"origins with a failed call: {failed} during the failover, {after} after")
    assert failed > 0  # the kill was felt
    assert after == 0


@pytest.mark.scenario
async def test_frozen_cluster_delays_checks_within_the_store_patience(
    replicated_cluster: LocalCluster, prefix: str, sites: Sites
) -> None:
    """Every node frozen (SIGSTOP: a black hole): the first checks wait at most the
    store patience (5 s) plus two store timeouts before fetching by themselves; once
    the store has failed for that long, a check costs one store timeout only."""
    warm, first, second = [await sites.add(n) for n in (1, 4, 4)]
    store = RedisStore(replicated_cluster.url, prefix=prefix, timeout=1.0)
    policy = ra.FetchPolicy.rfc9309(total_timeout=10.0)
    checker = ra.RobotsChecker("ClusterTestBot/1.0", store=store, fetch_policy=policy)

    async def timed(url: str, took: list[float]) -> bool:
        start = time.monotonic()
        allowed = await checker.allowed(url)
        took.append(time.monotonic() - start)
        return allowed

    async def wave(origins: list[Site]) -> list[float]:
        took: list[float] = []
        checks = [timed(site.url(path), took) for site in origins for path in ("/private/x", "/a")]
        assert await asyncio.wait_for(asyncio.gather(*checks), 60) == [False, True] * 4
        return took

    try:
        assert await checker.allowed(warm[0].url("/a"))
        for node in replicated_cluster.nodes:
            os.kill(node.pid, signal.SIGSTOP)
        try:
            patient, impatient = await wave(first), await wave(second)
        finally:
            for node in replicated_cluster.nodes:
                os.kill(node.pid, signal.SIGCONT)
        print(f"frozen cluster: first checks {max(patient):.1f} s, later {max(impatient):.1f} s")
        assert 3.0 < max(patient) < 5.0 + 2 * 1.0 + 4.0  # + margin for a loaded machine
        assert max(impatient) < 1.0 + 3.0
        assert [site.count() for site in first + second] == [1] * 8
        assert checker.stats.cache.store_errors == 8
    finally:
        await checker.aclose()
        await store.aclose()


async def test_command_failing_after_its_caller_was_cancelled_is_not_logged(
    redis_cluster: LocalCluster, prefix: str
) -> None:
    """A command that turns its cancellation into a RedisError (as redis-py's cluster
    client does during a failover) after the caller gave up: no "Task exception was
    never retrieved" from the event loop."""
    unseen: list[dict[str, Any]] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, context: unseen.append(context))
    started = asyncio.Event()

    async def stubborn() -> None:
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            raise RedisConnectionError("cluster is down") from None

    try:
        async with RedisStore(redis_cluster.url, prefix=prefix, timeout=5.0) as store:
            call = asyncio.ensure_future(store._call(stubborn))
            await started.wait()
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
        for _ in range(3):  # let the inner task finish and be collected
            await asyncio.sleep(0)
        gc.collect()
        await asyncio.sleep(0)
    finally:
        loop.set_exception_handler(None)
    assert [c.get("message") for c in unseen] == []
