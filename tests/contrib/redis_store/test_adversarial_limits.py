"""Huge but accepted limits reach Redis as expiries it takes (issue 10 §1: nothing raises
OverflowError later). ``int(seconds * 1000)`` of a finite 1e306 is ``int(inf)``; a
finite 1e17 s is more milliseconds than Redis allows in PX/PEXPIRE."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest

import robots_async as ra
from robots_async.contrib.redis import RedisStore

from .conftest import ROBOTS, USER_AGENT

if TYPE_CHECKING:
    import redis.asyncio as aioredis

    from .conftest import RedisServer, Sites

ORIGIN = ra.Origin.from_url("http://shop.example.test:8080/")


def record() -> ra.StoredRobots:
    """A valid 2xx record of ORIGIN fetched now."""
    url = ORIGIN.robots_url
    return ra.StoredRobots(
        url=url,
        final_url=url,
        status=200,
        error=None,
        fetched_at=time.time(),
        bytes_read=len(ROBOTS),
        body=ROBOTS,
    )


@pytest.mark.parametrize("seconds", [1e17, 1e306])
async def test_huge_keep_for_and_lease_ttl_are_capped_not_raised(
    redis_server: RedisServer, prefix: str, raw: aioredis.Redis, seconds: float
) -> None:
    """put() with keep_for=seconds and acquire(ttl=seconds) succeed; both keys expire
    (some day): a positive PTTL."""
    store = RedisStore(redis_server.url, prefix=prefix, keep_for=seconds)
    try:
        await store.put(ORIGIN, record())
        lease = await store.acquire(ORIGIN, seconds)
        assert lease is not None
        assert await store.acquire(ORIGIN, 1.0) is None  # held
        assert await store.release(lease)
    finally:
        await store.aclose()
    found = [key async for key in raw.scan_iter(match=f"{prefix}:rec:*")]
    assert len(found) == 1
    assert await raw.pttl(found[0]) > 0


async def test_checker_with_a_huge_total_timeout_shares_through_redis(
    redis_server: RedisServer, prefix: str, sites: Sites
) -> None:
    """FetchPolicy(total_timeout=1e306) is accepted (finite), so it must work: the lease
    TTL (total_timeout + 5) reaches Redis capped, the verdict is the site's, no store
    error, and a second checker is answered from the record."""
    [site] = await sites.add()
    policy = ra.FetchPolicy(total_timeout=1e306, connect_timeout=5.0)
    checkers = []
    for _ in range(2):
        store = RedisStore(redis_server.url, prefix=prefix)
        checkers.append((ra.RobotsChecker(USER_AGENT, store=store, fetch_policy=policy), store))
    try:
        for checker, _store in checkers:
            assert not await checker.allowed(site.url("/private/x"))
            assert await checker.allowed(site.url("/public"))
        stats = [checker.stats.cache for checker, _ in checkers]
        assert [s.store_errors for s in stats] == [0, 0]
        assert (stats[0].fetches, stats[1].fetches, stats[1].store_hits) == (1, 0, 1)
        assert site.count() == 1
    finally:
        for checker, store in checkers:
            await checker.aclose()
            await store.aclose()


@pytest.mark.parametrize(
    "limits",
    [
        {"max_backoff": 1e300},
        {"min_delay": 1e290, "max_delay": 1e300},
        {"min_delay": 1e14, "max_delay": 1e14},
    ],
    ids=["max_backoff", "delay", "delay-1e14"],
)
async def test_huge_pacing_limits_pace_through_redis(
    redis_server: RedisServer,
    prefix: str,
    raw: aioredis.Redis,
    sites: Sites,
    limits: dict[str, float],
) -> None:
    """Found: the pace scripts' PEXPIRE of ceil(keep * 1000) ms was "1e+303" (not an
    integer) for these accepted limits, so every turn or every 429 failed in Redis and
    each worker paced alone ("pacing within this process"). Now capped as put() is."""
    [site] = await sites.add()
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    store = RedisStore(redis_server.url, prefix=prefix)
    checker = ra.RobotsChecker(USER_AGENT, store=store, sleep=sleep, **limits)
    try:
        url = site.url("/page")
        await checker.wait(url)
        await checker.observe(url, 429)
        await checker.wait(url)
        assert checker.stats.pace_store_errors == 0
    finally:
        await checker.aclose()
        await store.aclose()
    [key] = [key async for key in raw.scan_iter(match=f"{prefix}:*pace*")]
    assert await raw.pttl(key) > 0


@pytest.mark.parametrize("field", ["last", "retry_at"])
async def test_an_infinite_pace_time_in_redis_is_a_store_failure_not_an_endless_sleep(
    redis_server: RedisServer, prefix: str, raw: aioredis.Redis, sites: Sites, field: str
) -> None:
    """Found: a pace hash whose time reads 'inf' (edited, or written by another
    program) made the script answer a wait of inf seconds, slept forever by wait().
    Now the pacer takes a wait that is not a finite number as a failed store call:
    paced here, from the visit reserved before, and counted."""
    [site] = await sites.add()
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    store = RedisStore(redis_server.url, prefix=prefix)
    checker = ra.RobotsChecker(USER_AGENT, store=store, sleep=sleep, min_delay=1.0)
    try:
        url = site.url("/page")
        assert await checker.wait(url) == 0.0
        [key] = [key async for key in raw.scan_iter(match=f"{prefix}:*pace*")]
        await raw.hset(key, mapping={field: "inf", "paused_at": "inf"})
        seconds = await checker.wait(url)
        assert 0.0 < seconds <= 1.0
        assert slept == [seconds]
        assert checker.stats.pace_store_errors >= 1  # (the reservation, the re-check)
    finally:
        await checker.aclose()
        await store.aclose()
