"""Adaptive LIFO in the fast lane under sustained congestion: the oldest waiter was
never served while newer fetches kept arriving (5.5 s behind 69 later arrivals). The
cache's single-flight task of an origin is that waiter, and every later check of the
origin joins it. One slot in FIFO_SHARE now goes to the oldest."""

from __future__ import annotations

import asyncio

import pytest

from robots_async.fetch.lanes import FetchLanes


async def _healthy() -> str:
    await asyncio.sleep(0.15)  # well within slow_after: never leaves the fast lane
    return "ok"


@pytest.mark.scenario
async def test_oldest_waiter_is_served_while_arrivals_continue() -> None:
    """Two fast slots serve ~13 fetches/s; 20/s arrive for 4 s. A fetch queued at
    0.5 s would be served in well under a second first come, first served; it must
    not wait for the arrivals to stop (2 s is a generous bound)."""
    lanes = FetchLanes(2, 16, slow_after=0.4)
    loop = asyncio.get_running_loop()
    arrivals: list[asyncio.Task[object]] = []
    served_at: list[float] = []

    async def victim() -> None:
        await lanes.run(_healthy, timeout=10.0)
        served_at.append(loop.time())

    started = loop.time()
    victim_task: asyncio.Task[None] | None = None
    for n in range(80):  # 80 arrivals, one per 0.05 s: 4 s of overload
        arrivals.append(asyncio.ensure_future(lanes.run(_healthy, timeout=10.0)))
        if n == 10:
            victim_task = asyncio.ensure_future(victim())
            queued_at = loop.time()
        await asyncio.sleep(0.05)
    assert victim_task is not None
    await asyncio.wait_for(asyncio.gather(victim_task, *arrivals), timeout=30)
    assert served_at
    assert served_at[0] - queued_at < 2.0, (served_at[0] - queued_at, loop.time() - started)
