"""Late sends (core.pacing.PaceState.sent) against damaged pace records and against
the next turn already reserved: what the Redis script writes back, and when a page
held past its turn may go."""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import TYPE_CHECKING

import pytest

import robots_async as ra
from robots_async.checker.pacing import RECHECK_AFTER, Pacer, PaceSettings
from robots_async.contrib.redis import RedisStore
from robots_async.core.pacing import PaceRule

from .conftest import pace_store

if TYPE_CHECKING:
    from pathlib import Path

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


@pytest.mark.parametrize("kind", ["memory", "sqlite", "redis"])
async def test_a_held_page_overtaken_is_short_of_an_interval_after_the_reserved_turn(
    request: pytest.FixtureRequest, tmp_path: Path, prefix: str, kind: str
) -> None:
    """Our turn at 0 s, another worker's at 1 s (begun), a third reserved at 2 s; our
    page, held by its slot, asks at 1.85 s. Found: short 0.15 s, the time until the
    turn reserved at 2 s, so Scrapy's send-time check slept 0.15 s and sent it with
    that turn's page. Now it is short of an interval after the reserved turn (a new
    turn for the page: LateAtSendError)."""
    async with pace_store(kind, request, tmp_path, prefix) as store:
        start = time.monotonic()
        assert (await store.reserve(UNIT, RULE, 0.0)).wait == 0.0  # ours, at 0 s
        assert (await store.reserve(UNIT, RULE, 0.0)).reserved  # another's, at 1 s
        await asyncio.sleep(max(0.0, start + 1.05 - time.monotonic()))
        third = await store.reserve(UNIT, RULE, 0.0)  # queued at 1 s: reserved at 2 s
        assert third.reserved
        await asyncio.sleep(max(0.0, start + 1.85 - time.monotonic()))
        held = time.monotonic() - start
        pause, short = await store.left_at_send(UNIT, RULE, held, 0.0)
        assert pause == 0.0
        assert 3.0 - (time.monotonic() - start) - 0.02 <= short <= 3.0 - held + 0.02, short


@pytest.mark.parametrize("kind", ["memory", "sqlite", "redis"])
async def test_a_held_page_short_of_a_late_page_is_short_of_the_reserved_turn_after_it(
    request: pytest.FixtureRequest, tmp_path: Path, prefix: str, kind: str
) -> None:
    """Our turn at 0 s; another page sent late at 0.3 s; the next turn reserved at 1.1
    s for 1.3 s (an interval after that page). Our page, held, asks at 1.2 s: 0.1 s
    short of an interval after the late page would send it at 1.3 s, with the
    reserved turn's page; it is short of an interval after that turn instead."""
    async with pace_store(kind, request, tmp_path, prefix) as store:
        start = time.monotonic()
        assert (await store.reserve(UNIT, RULE, 0.0)).wait == 0.0  # ours, at 0 s
        await asyncio.sleep(0.3)
        await store.sent_late(UNIT, RULE)
        await asyncio.sleep(max(0.0, start + 1.1 - time.monotonic()))
        other = await store.reserve(UNIT, RULE, 0.0)
        assert other.reserved
        assert 0.1 < other.wait <= 0.25
        await asyncio.sleep(max(0.0, start + 1.2 - time.monotonic()))
        _, short = await store.left_at_send(UNIT, RULE, time.monotonic() - start, 0.0)
        assert other.wait + 0.85 <= short <= other.wait + 1.0, short


def _pacer(store: ra.MemoryStore) -> Pacer:
    """A worker pacing through ``store`` with min_delay 1 (no robots.txt needed)."""
    return Pacer(store, PaceSettings(min_delay=1.0), clock=time.monotonic, sleep=asyncio.sleep)


async def _send_held(held: Pacer, turn: float, sends: list[float]) -> None:
    """What Scrapy's send-time check does with a page held since ``turn`` (loop time):
    short of RECHECK_AFTER, sleep it out and send (recorded late); else a new turn."""
    loop = asyncio.get_running_loop()
    _, short = await held.left_at_send(UNIT, 1.0, loop.time() - turn)
    if short < RECHECK_AFTER:
        await asyncio.sleep(short)
        await held.sent(UNIT, 1.0, late=loop.time() - turn)
    else:
        await held.wait(UNIT, 1.0)
    sends.append(loop.time())


async def test_a_held_page_does_not_go_with_the_next_workers_page() -> None:
    """Found (MemoryStore, min_delay 1): page R's turn at 0 s, held; A sent at its turn
    (1 s); C asks at 1.8 s (its turn reserved at 2 s, too close to re-check). At 1.85
    s R's slot frees and R does what Scrapy's send-time check does (left_at_send;
    short of RECHECK_AFTER: sleep it out and send, else a new turn). R and C went at
    2.001 s both (0.000 s apart; sent at once R came 0.15 s before C). Now R takes a
    new turn, an interval after C's page."""
    store = ra.MemoryStore()
    loop = asyncio.get_running_loop()

    def pacer() -> Pacer:
        return _pacer(store)

    held, first, waiting = pacer(), pacer(), pacer()
    sends: list[float] = []

    async def send(worker: Pacer) -> None:
        await worker.wait(UNIT, 1.0)
        sends.append(loop.time())

    await held.wait(UNIT, 1.0)  # R's turn (0 s), held by its slot
    turn = loop.time()
    await send(first)  # A, at 1 s
    await asyncio.sleep(max(0.0, turn + 1.8 - loop.time()))
    task = asyncio.create_task(send(waiting))  # C: reserves 2 s (0.2 s ahead: no re-check)
    await asyncio.sleep(max(0.0, turn + 1.85 - loop.time()))
    await _send_held(held, turn, sends)
    await task
    gaps = [b - a for a, b in itertools.pairwise(sorted(sends))]
    assert min(gaps) >= 0.95, gaps


async def test_a_held_page_short_of_a_late_page_does_not_go_with_the_next_turn() -> None:
    """Found (MemoryStore, min_delay 1): X's turn at 0 s, its page sent 1.3 s late (a
    pool held it; recorded); R's turn at 1 s, held by its slot; C asks at 2.1 s and is
    given 2.3 s (an interval after X's page; too close to re-check). At 2.2 s R is
    0.1 s short of an interval after X's page: slept out, R went at 2.3 s with C
    (0.000 s apart). Now R takes a new turn, an interval after C's."""
    store = ra.MemoryStore()
    loop = asyncio.get_running_loop()

    def pacer() -> Pacer:
        return _pacer(store)

    late, held, waiting = pacer(), pacer(), pacer()
    start = loop.time()
    await late.wait(UNIT, 1.0)  # X's turn, 0 s
    await held.wait(UNIT, 1.0)  # R's turn, 1 s
    turn = loop.time()
    await asyncio.sleep(max(0.0, start + 1.3 - loop.time()))
    await late.sent(UNIT, 1.0, late=loop.time() - start)  # X's page, at 1.3 s
    sends = [loop.time()]
    await asyncio.sleep(max(0.0, start + 2.1 - loop.time()))

    async def send(worker: Pacer) -> None:
        await worker.wait(UNIT, 1.0)
        sends.append(loop.time())

    task = asyncio.create_task(send(waiting))  # C: given 2.3 s
    await asyncio.sleep(max(0.0, start + 2.2 - loop.time()))
    await _send_held(held, turn, sends)
    await task
    gaps = [b - a for a, b in itertools.pairwise(sorted(sends))]
    assert min(gaps) >= 0.95, gaps
