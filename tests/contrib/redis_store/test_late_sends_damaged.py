"""Late sends (core.pacing.PaceState.sent) against damaged pace records and against
the next turn already reserved: what the Redis script writes back, and when a page
held past its turn may go."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from robots_async.contrib.redis import RedisStore
from robots_async.core.pacing import PaceRule

if TYPE_CHECKING:
    import redis.asyncio as aioredis

    from .conftest import RedisServer

RULE = PaceRule(interval=1.0, max_retry_after=60.0, first_backoff=2.0, max_backoff=30.0)
UNIT = "http://127.0.0.1:1"


@pytest.mark.parametrize(
    "damage", [{"sent": "inf"}, {"retry_at": "inf", "paused_at": "inf"}], ids=["sent", "retry"]
)
async def test_an_infinite_pace_time_is_not_written_back_for_centuries(
    redis_server: RedisServer, prefix: str, raw: aioredis.Redis, damage: dict[str, str]
) -> None:
    """Found: a pace hash whose 'sent' (or pause) time read 'inf' made the reserve
    script write 'last' = 'inf' and set the key to expire in 10^13 ms (~317 years,
    expire_after's cap): the record never expired, so every worker paced that unit
    by itself for good (its reservations all answer 'inf'). Now the damaged time is
    answered (a store failure for the pacer) and nothing is written: the key keeps
    its expiry and the unit is shared again once it is gone."""
    store = RedisStore(redis_server.url, prefix=prefix)
    try:
        assert (await store.reserve(UNIT, RULE, 0.0)).wait == 0.0
        [key] = [key async for key in raw.scan_iter(match=f"{prefix}:*pace*")]
        await raw.hset(key, mapping=damage)
        ttl = await raw.pttl(key)
        assert 0 < ttl <= 62_000
        reservation = await store.reserve(UNIT, RULE, 0.0)
        assert reservation.wait == float("inf")  # the pacer takes it as a failed call
        assert await raw.hget(key, "last") != b"inf"
        assert 0 < await raw.pttl(key) <= ttl
    finally:
        await store.aclose()
