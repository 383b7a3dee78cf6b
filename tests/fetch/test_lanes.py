"""FetchLanes: a full slow lane queues a turning-slow fetch instead of cutting it; a
slot wait has no deadline of ours; a fetch ends by its answer or its own deadline."""

from __future__ import annotations

import asyncio

import pytest

from robots_async.fetch.lanes import SLOW_PER_FAST, FetchLanes, slow_lane_size


async def test_full_slow_lane_queues_instead_of_cutting() -> None:
    """Three 0.3 s fetches, one fast and one slow slot, 0.1 s threshold: all three
    answer; the one that found the slow lane full was queued and run again there."""
    lanes = FetchLanes(1, 1, slow_after=0.1)
    starts: list[str] = []

    def fetch(name: str) -> asyncio.Future[str]:
        async def run() -> str:
            starts.append(name)
            await asyncio.sleep(0.3)
            return name

        return asyncio.ensure_future(run())

    results = await asyncio.gather(
        *(lanes.run(lambda n=name: fetch(n), timeout=5.0) for name in ("a", "b", "c"))
    )
    assert sorted(results) == ["a", "b", "c"]
    assert lanes.overran == 0
    assert lanes.requeued >= 1
    assert lanes.peak <= lanes.capacity == 2
    assert len(starts) == 3 + lanes.requeued  # a queued fetch starts once more
    assert lanes.running == 0


async def test_slot_wait_is_bounded_by_the_caller_only() -> None:
    """A waiter for a slot waits past any deadline of ours; its caller's timeout ends
    it, and the slot it was about to get is passed on."""
    lanes = FetchLanes(1, 1, slow_after=10.0)
    release = asyncio.Event()

    async def hold() -> str:
        await release.wait()
        return "held"

    holder = asyncio.create_task(lanes.run(hold, timeout=30.0))
    await asyncio.sleep(0.01)
    waiting = asyncio.create_task(lanes.run(lambda: asyncio.sleep(0, "second"), timeout=0.05))
    await asyncio.sleep(0.3)  # far past the second fetch's own timeout: still waiting
    assert not waiting.done()
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    release.set()
    assert await holder == "held"
    assert await lanes.run(lambda: asyncio.sleep(0, "third"), timeout=1.0) == "third"
    assert lanes.running == 0


async def test_deadline_counts_from_the_start_of_the_fetch() -> None:
    """A fetch that never answers ends at its own deadline ("deadline"), which runs
    from its start, not from when it began to wait."""
    lanes = FetchLanes(1, 1, slow_after=0.05)
    loop = asyncio.get_running_loop()
    started = loop.time()
    assert await lanes.run(lambda: asyncio.sleep(10), timeout=0.2) == "deadline"
    assert 0.15 < loop.time() - started < 1.0
    assert lanes.overran == 1
    assert lanes.running == 0


def test_slow_lane_size_is_bounded_by_descriptors() -> None:
    """Eight slow slots per fast one, never past a quarter of the descriptor limit."""
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    expected = SLOW_PER_FAST * 64
    if soft != resource.RLIM_INFINITY:
        expected = max(1, min(expected, soft // 4))
    assert slow_lane_size(64) == expected
    assert slow_lane_size(1) >= 1
