"""RedisStore across worker processes: one fetch per origin, dead lease holders, restarts."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from typing import TYPE_CHECKING, Any

import pytest

from robots_async.contrib.redis import RedisStore

from .conftest import HOLD_LEASE_SCRIPT

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from .conftest import RedisServer, Site, Sites, Worker

    StartWorker = Callable[..., Awaitable[Worker]]

#: Lease TTL of the worker that dies while holding it.
DEAD_LEASE_TTL = 2.0
#: The waiting checkers poll the store with back-off capped at 1 s.
POLL_CAP = 1.0


def urls_for(sites: list[Site]) -> list[str]:
    """Two URLs per origin: one robots.txt disallows, one it allows."""
    return [url for site in sites for url in (site.url("/private/x"), site.url("/a"))]


def assert_verdicts(report: dict[str, Any], sites: list[Site]) -> None:
    """Every URL of ``sites`` was answered as robots.txt says."""
    verdicts = report["verdicts"]
    assert len(verdicts) == 2 * len(sites)
    wrong = {
        url: allowed for url, allowed in verdicts.items() if allowed == url.endswith("/private/x")
    }
    assert wrong == {}


def total(reports: list[dict[str, Any]], counter: str) -> int:
    """A cache counter summed over the workers' reports."""
    return sum(report["cache"][counter] for report in reports)


async def test_four_workers_fetch_each_of_500_origins_once(
    redis_server: RedisServer, prefix: str, sites: Sites, start_worker: StartWorker
) -> None:
    """4 processes checking 500 origins concurrently in random orders: one request per origin."""
    origins = await sites.add(500)
    workers = await asyncio.gather(
        *(start_worker("--redis-url", redis_server.url, "--prefix", prefix) for _ in range(4))
    )
    urls = urls_for(origins)
    reports = await asyncio.gather(*(w.run(urls, seed=i) for i, w in enumerate(workers)))
    for report in reports:
        assert_verdicts(report, origins)
    counts = {site.port: site.count() for site in origins}
    assert {port: n for port, n in counts.items() if n != 1} == {}
    assert sites.total() == 500
    assert total(reports, "fetches") == 500
    assert total(reports, "store_hits") == 3 * 500
    assert total(reports, "store_errors") == 0


@pytest.mark.scenario
async def test_lease_of_killed_worker_expires_and_one_waiter_fetches(
    redis_server: RedisServer, prefix: str, sites: Sites, start_worker: StartWorker
) -> None:
    """A SIGKILLed lease holder delays the others about the lease TTL; then exactly one fetches."""
    [site] = await sites.add()
    waiters = await asyncio.gather(
        *(start_worker("--redis-url", redis_server.url, "--prefix", prefix) for _ in range(2))
    )
    holder = await asyncio.create_subprocess_exec(
        sys.executable,
        str(HOLD_LEASE_SCRIPT),
        redis_server.url,
        prefix,
        site.base,
        str(DEAD_LEASE_TTL),
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None
        taken = json.loads(await asyncio.wait_for(holder.stdout.readline(), 30))
        lease_until = time.monotonic() + (taken["expires_at"] - time.time())
        assert taken["token"] is not None
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        await holder.wait()
    assert holder.returncode == -signal.SIGKILL
    killed_at = time.monotonic()
    urls = urls_for([site])
    reports = await asyncio.gather(*(w.run(urls, seed=i) for i, w in enumerate(waiters)))
    answered_at = time.monotonic()
    for report in reports:
        assert_verdicts(report, [site])
    assert site.count() == 1
    [fetched_at] = site.hits
    assert fetched_at >= lease_until - 0.1, "fetched while the dead worker's lease was held"
    assert fetched_at > killed_at
    assert answered_at - killed_at < DEAD_LEASE_TTL + POLL_CAP + 3.0
    assert total(reports, "fetches") == 1
    assert total(reports, "store_hits") == 1
    assert total(reports, "store_errors") == 0
    # The fetching worker released its own lease and shared the record.
    store = RedisStore(redis_server.url, prefix=prefix)
    try:
        assert await store.get(site.origin) is not None
        lease = await store.acquire(site.origin, ttl=5)
        assert lease is not None
        assert await store.release(lease)
    finally:
        await store.aclose()


async def test_workers_survive_a_redis_restart(
    private_redis: RedisServer, prefix: str, sites: Sites, start_worker: StartWorker
) -> None:
    """Workers answer through a Redis outage (local fetches) and share again after a restart."""
    args = ("--redis-url", private_redis.url, "--prefix", prefix, "--redis-timeout", "1")
    workers = await asyncio.gather(*(start_worker(*args) for _ in range(3)))
    n, per_batch = len(workers), 40
    before, during, after = [await sites.add(per_batch) for _ in range(3)]

    async def run(batch: list[Site]) -> list[dict[str, Any]]:
        reports = await asyncio.gather(
            *(w.run(urls_for(batch), seed=i) for i, w in enumerate(workers))
        )
        for report in reports:
            assert_verdicts(report, batch)
        return list(reports)

    def shared(batch: list[Site], hits: int) -> None:
        # Each worker either fetched an origin or took it from the store. (Exactly one
        # fetch per origin is test_four_workers_fetch_each_of_500_origins_once's claim.)
        fetched = sum(site.count() for site in batch)
        assert all(site.count() >= 1 for site in batch)
        assert fetched + hits == n * per_batch
        assert hits > 0, "the store was not used"

    up = await run(before)
    shared(before, total(up, "store_hits"))
    assert total(up, "store_errors") == 0
    fetched_before = [site.count() for site in before]

    private_redis.stop()
    down = await run(during)
    assert [site.count() for site in during] == [n] * per_batch  # each fetched for itself
    assert all(report["cache"]["store_errors"] > 0 for report in down)
    assert total(down, "store_hits") == total(up, "store_hits")

    private_redis.restart()
    back = await run(after + before)
    shared(after, total(back, "store_hits") - total(down, "store_hits"))
    assert [site.count() for site in before] == fetched_before  # still in the local caches
    # Connections pooled before the outage may fail once more when first reused;
    # the store is in use again (checked by shared() above), not failing throughout.
    assert total(back, "store_errors") - total(down, "store_errors") < n * per_batch


async def test_yandex_worker_503s_do_not_open_origins_for_default_workers(
    redis_server: RedisServer, prefix: str, sites: Sites, start_worker: StartWorker
) -> None:
    """Two processes, one prefix: a yandex-preset worker checks 50 origins answering 503
    (it allows all); a default worker then reads every shared record and disallows."""
    origins = await sites.add(50, status=503, body=b"down")
    common = ("--redis-url", redis_server.url, "--prefix", prefix)
    lax = await start_worker(*common, "--fetch-policy", "yandex")
    strict = await start_worker(*common)
    urls = urls_for(origins)
    lax_report = await lax.run(urls, seed=1)
    assert set(lax_report["verdicts"].values()) == {True}
    strict_report = await strict.run(urls, seed=2)
    assert set(strict_report["verdicts"].values()) == {False}
    assert strict_report["cache"]["store_hits"] == 50
    assert strict_report["cache"]["fetches"] == 0
    assert sites.total() == 50


@pytest.mark.scenario
async def test_a_worker_killed_mid_fetch_delays_its_peers_under_5_s(
    redis_server: RedisServer, prefix: str, sites: Sites, start_worker: StartWorker
) -> None:
    """A real worker holding the lease of a slow robots.txt is SIGKILLed mid-fetch: its
    short lease (renewed only while it lives) lapses, and another worker answers within
    5 s of the kill (35 s when a lease lasted a whole fetch)."""
    [site] = await sites.add(delay=25.0)
    doomed, peer = await asyncio.gather(
        *(start_worker("--redis-url", redis_server.url, "--prefix", prefix) for _ in range(2))
    )
    await doomed.send(urls_for([site]), seed=0)
    await asyncio.wait_for(site.requested.wait(), 30)
    await asyncio.sleep(4.0)  # past one lease TTL: the live holder kept it renewed
    site.serve()  # answers at once from now on
    os.kill(doomed.proc.pid, signal.SIGKILL)
    await doomed.proc.wait()
    killed_at = time.monotonic()
    [report] = await asyncio.gather(peer.run(urls_for([site]), seed=1))
    answered_at = time.monotonic()
    assert_verdicts(report, [site])
    assert answered_at - killed_at < 5.0
    assert site.count() == 2  # the dead worker's request, then the peer's
    assert report["cache"]["fetches"] == 1


@pytest.mark.scenario
async def test_a_live_holder_keeps_its_lease_through_a_slow_fetch(
    redis_server: RedisServer, prefix: str, sites: Sites, start_worker: StartWorker
) -> None:
    """A robots.txt that takes 5 s (longer than the 3 s lease): the holder renews its
    lease, so its peers wait for its record and the site sees one request."""
    [site] = await sites.add(delay=5.0)
    workers = await asyncio.gather(
        *(start_worker("--redis-url", redis_server.url, "--prefix", prefix) for _ in range(3))
    )
    first = asyncio.create_task(workers[0].run(urls_for([site]), seed=0))
    await asyncio.wait_for(site.requested.wait(), 30)
    others = await asyncio.gather(
        *(w.run(urls_for([site]), seed=i) for i, w in enumerate(workers[1:]))
    )
    reports = [await first, *others]
    for report in reports:
        assert_verdicts(report, [site])
    assert site.count() == 1
    assert total(reports, "fetches") == 1
    assert total(reports, "store_hits") == 2
