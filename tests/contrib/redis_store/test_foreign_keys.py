"""A record key holding another Redis type than a hash (written by another program, or
a prefix shared by mistake) is a record that does not conform: a counted miss, fetched
and overwritten, as garbage inside a hash is (never a store failure that lasts)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest

import robots_async as ra
from robots_async.contrib.redis import RedisStore
from robots_async.core.pacing import PaceRule

from .conftest import USER_AGENT

if TYPE_CHECKING:
    import redis.asyncio as aioredis

    from .conftest import RedisServer, Sites


async def test_a_record_key_of_another_type_is_a_miss_that_heals(
    redis_server: RedisServer, prefix: str, raw: aioredis.Redis, sites: Sites
) -> None:
    """Found: a string under an origin's record key made every HGETALL fail with
    WRONGTYPE, a store error; the worker fetched alone and did not share (the store
    had 'failed'), so the key stayed and every worker of the fleet fetched that origin
    itself, every time. Now InvalidRecordError: the first worker fetches under the
    lease and its put replaces the key; the next is answered from the record."""
    [site] = await sites.add()
    key = f"{prefix}:rec:{{http://127.0.0.1:{site.port}}}"
    await raw.set(key, b"not a hash")
    stats = []
    for turn in range(2):
        store = RedisStore(redis_server.url, prefix=prefix)
        checker = ra.RobotsChecker(USER_AGENT, store=store)
        try:
            if turn == 0:
                with pytest.raises(ra.InvalidRecordError, match="record"):
                    await store.get(site.origin)
            assert not await checker.allowed(site.url("/private/x"))
            stats.append(checker.stats.cache)
        finally:
            await checker.aclose()
            await store.aclose()
    assert [(s.store_invalid, s.store_errors, s.fetches, s.store_hits) for s in stats] == [
        (1, 0, 1, 0),
        (0, 0, 0, 1),
    ]
    assert await raw.type(key) == b"hash"
    assert site.count() == 1


@pytest.mark.parametrize("kind", ["string", "hash"])
async def test_a_lease_key_without_expiry_is_taken_over(
    redis_server: RedisServer, prefix: str, raw: aioredis.Redis, sites: Sites, kind: str
) -> None:
    """Found: a key under an origin's lease name with no expiry (every lease of ours is
    set with PX) made SET NX fail for ever: each worker waited a whole fetch's time and
    5 s (7.6 s with total_timeout=2; 35 s by default) on every refresh of that origin,
    then fetched without the lease. Now acquire() takes such a key over at once;
    tdmrep.json's leases likewise."""
    [site] = await sites.add()
    origin = site.origin
    keys = [
        f"{prefix}:lease:{{http://127.0.0.1:{site.port}}}",
        f"{prefix}:lease:tdmrep:{{http://127.0.0.1:{site.port}}}",
    ]
    for key in keys:
        if kind == "string":
            await raw.set(key, b"someone")
        else:
            await raw.hset(key, "holder", b"someone")
    store = RedisStore(redis_server.url, prefix=prefix)
    policy = ra.FetchPolicy(total_timeout=2.0, connect_timeout=1.0)
    checker = ra.RobotsChecker(USER_AGENT, store=store, fetch_policy=policy)
    try:
        started = time.monotonic()
        assert not await checker.allowed(site.url("/private/x"))
        assert time.monotonic() - started < 2.0
        assert site.count() == 1
        assert await raw.exists(keys[0]) == 0  # taken over, then released
        lease = await store.acquire_resource(origin, "tdmrep", 5.0)
        assert lease is not None
        assert 0 < await raw.pttl(keys[1]) <= 5000
        assert await store.acquire_resource(origin, "tdmrep", 5.0) is None  # held now
    finally:
        await checker.aclose()
        await store.aclose()


async def test_a_pace_key_of_another_type_fails_its_unit_only(
    redis_server: RedisServer, prefix: str, raw: aioredis.Redis, sites: Sites
) -> None:
    """A string under one origin's pace key fails that origin's pacing calls
    (InvalidRecordError: paced within this process, counted); another origin is still
    reserved in Redis. The failure took the process off the store for every origin,
    and again each time the bad one was paced."""
    bad, good = await sites.add(2)
    store = RedisStore(redis_server.url, prefix=prefix)
    checker = ra.RobotsChecker(USER_AGENT, store=store, min_delay=0.2)
    try:
        await raw.set(f"{prefix}:pace:{{http://127.0.0.1:{bad.port}}}", b"not a hash")
        with pytest.raises(ra.InvalidRecordError, match="pace"):
            await store.pause_left(f"http://127.0.0.1:{bad.port}", _RULE, 0.0)
        await checker.wait(bad.url("/a"))
        assert checker.stats.pace_store_errors == 1
        await checker.wait(good.url("/a"))
        keys = [key async for key in raw.scan_iter(match=f"{prefix}:pace:*")]
        assert f"{prefix}:pace:{{http://127.0.0.1:{good.port}}}".encode() in keys
        assert checker.stats.pace_store_errors == 1
    finally:
        await checker.aclose()
        await store.aclose()


_RULE = PaceRule(interval=0.2, max_retry_after=60.0, first_backoff=2.0, max_backoff=30.0)
