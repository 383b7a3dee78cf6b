"""Fleet pacing on a real Redis Cluster (issue 27): each unit's observations live in
one hash-tagged key, so the one-key script runs on whichever master owns the unit;
units spread over the masters; every key expires."""

from __future__ import annotations

from typing import TYPE_CHECKING

from redis.asyncio.cluster import RedisCluster
from redis.crc import key_slot

from robots_async.contrib.redis import RedisStore
from robots_async.core.pacing import MARGIN, PaceRule

if TYPE_CHECKING:
    from .conftest import LocalCluster

RULE = PaceRule(interval=1.0, max_retry_after=3600.0, first_backoff=2.0, max_backoff=300.0)
UNITS = [f"https://host-{i}.test:8{i % 10}" for i in range(30)]


async def test_reservations_on_a_cluster_take_turns_per_unit(
    redis_cluster: LocalCluster, prefix: str
) -> None:
    """Two reservations of a unit are one interval apart, whatever master holds it;
    a Retry-After on one unit pauses that unit only."""
    async with RedisStore(redis_cluster.url, prefix=prefix) as store:
        first = [await store.reserve(unit, RULE, 0.0) for unit in UNITS]
        second = [await store.reserve(unit, RULE, 0.0) for unit in UNITS]
        await store.observe(UNITS[0], RULE, busy=True, retry_after=30.0)
        paused = await store.pause_left(UNITS[0], RULE, 0.0)
        others = [await store.pause_left(unit, RULE, 0.0) for unit in UNITS[1:]]
    assert all(r.wait == 0.0 for r in first), first
    # The second turn follows the first by the interval, less the time spent since.
    assert all(0.5 < r.wait <= 1.0 for r in second), second
    assert 29.0 < paused <= 30.0
    assert others == [0.0] * len(others)


async def test_pace_keys_hash_by_unit_spread_over_masters_and_expire(
    redis_cluster: LocalCluster, prefix: str
) -> None:
    """One key per unit, its slot that of the unit in braces; the keys land on all
    three masters; each has a TTL no longer than its interval plus the margin."""
    client = RedisCluster.from_url(redis_cluster.url.replace("redis+cluster", "redis"))
    try:
        async with RedisStore(client, prefix=prefix) as store:
            for unit in UNITS:
                await store.reserve(unit, RULE, 0.0)
        keys = [key async for key in client.scan_iter(match=f"{prefix}:pace:*")]
        assert len(keys) == len(UNITS)
        for key in keys:
            tag = key[key.index(b"{") + 1 : key.rindex(b"}")]
            assert key_slot(key) == key_slot(b"{" + tag + b"}")
            ttl = await client.pttl(key)
            assert 0 < ttl <= (RULE.interval + MARGIN) * 1000 + 1, (key, ttl)
        assert {
            tag.decode() for tag in (k[k.index(b"{") + 1 : k.rindex(b"}")] for k in keys)
        } == set(UNITS)
        assert len({client.get_node_from_key(key).port for key in keys}) == 3
    finally:
        await client.aclose()
