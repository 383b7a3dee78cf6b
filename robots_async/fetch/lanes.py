"""FetchLanes: admission of robots.txt fetches, so slow origins never hold up others,
and no limit of ours ever becomes a site's answer.

Every fetch starts in the fast lane. One still running after ``slow_after`` seconds
moves to the slow lane and frees its fast slot. With the slow lane full it is not cut
and answered for (a healthy robots.txt that takes 1.2 s was once "disallowed" that
way): it is stopped, and *queued* for a slow slot, where it starts again with its own
deadline; its waiters simply wait longer (back-pressure). So the fast lane only ever
holds fetches in their first ``slow_after`` seconds, whatever hangs, and a fetch ends
only by its own answer or its own deadline (``timeout`` from the moment it runs).

Waiting for a slot has no deadline of ours: the caller's own timeout or cancellation
bounds it. Under congestion (the oldest fast waiter has waited half the slow
threshold) the newest waiter is served first (adaptive LIFO), except one slot in
``FIFO_SHARE`` for the oldest: a burst of hung origins cannot make a later check of a
healthy one wait behind all of them, nor a lasting overload starve the oldest. The slow queue is
first come, first served. At most ``fast + slow`` fetches run at once: the cap on
robots.txt sockets (:func:`slow_lane_size` sizes the slow lane from the descriptor
limit).
"""

from __future__ import annotations

import asyncio
from collections import deque
from functools import partial
from typing import TYPE_CHECKING, Literal, TypeVar

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

__all__ = ["SLOW_AFTER", "FetchLanes", "Refusal", "slow_lane_size"]

T = TypeVar("T")

#: Seconds a fetch may hold a fast slot. Most robots.txt answers arrive well within
#: it; a slower one is not failed, it carries on in the slow lane.
SLOW_AFTER = 1.0
#: Slow slots per fast slot, at most: a slow fetch costs a socket and little else.
#: 8 x 64 = 512 holds the 200 hung + 100 slow-but-healthy origins of issue 26 with room.
SLOW_PER_FAST = 8

#: Under congestion one fast slot in this many goes to the longest-waiting fetch (the
#: others to the newest): newest-first keeps a burst of hung origins from delaying a
#: later healthy check, this share keeps the oldest from waiting out the whole burst.
FIFO_SHARE = 4

#: Why a fetch did not run to its end: it was still running at its own deadline
#: (the site's doing: the fetcher's own timeout normally fires first).
Refusal = Literal["deadline"]


def slow_lane_size(fast: int) -> int:
    """Slow slots for a fast lane of ``fast``: ``SLOW_PER_FAST`` each, but never more
    than a quarter of the process's descriptor limit (the rest is the crawler's)."""
    wanted = SLOW_PER_FAST * fast
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):  # no resource module (Windows)
        return wanted
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(1, min(wanted, soft // 4))


class _Slot:
    """The lane a running fetch occupies (it changes once, fast to slow)."""

    __slots__ = ("lane",)

    def __init__(self, lane: Literal["fast", "slow"]) -> None:
        self.lane = lane


class FetchLanes:
    """A fast lane of ``fast`` slots and a slow lane of ``slow`` slots for fetches."""

    def __init__(self, fast: int, slow: int, slow_after: float = SLOW_AFTER) -> None:
        self._fast_free = fast
        self._congested_releases = 0
        self._slow_free = slow
        self._slow_after = slow_after
        self._capacity = fast + slow
        # (enqueued at, future set when a slot is handed over); cancelled waiters
        # stay until they reach an end of their deque.
        self._waiters: deque[tuple[float, asyncio.Future[None]]] = deque()
        self._slow_waiters: deque[tuple[float, asyncio.Future[None]]] = deque()
        #: Fetches running now, and at most so far.
        self.running = 0
        self.peak = 0
        #: Fetches moved to the slow lane, queued for it (stopped and started again
        #: there because it was full), and stopped at their own deadline.
        self.moved = 0
        self.requeued = 0
        self.overran = 0

    @property
    def capacity(self) -> int:
        """Fetches (hence sockets) running at most: fast plus slow lane."""
        return self._capacity

    async def run(self, fetch: Callable[[], Awaitable[T]], timeout: float) -> T | Refusal:
        """Run ``fetch()`` in a lane and return its result, or "deadline" if it was still
        running ``timeout`` seconds after it started (waits for a slot not included).

        A stopped fetch is cancelled (its connection closed) before this returns.
        """
        loop = asyncio.get_running_loop()
        await self._enter(loop, self._waiters, "fast")
        slot = _Slot("fast")
        task = self._start(loop, fetch, slot)
        deadline = loop.time() + timeout
        try:
            if await _within(task, min(loop.time() + self._slow_after, deadline)):
                return task.result()
            if loop.time() >= deadline:
                return await self._overrun(task)
            if self._slow_free > 0:
                self._slow_free -= 1
                slot.lane = "slow"
                self.moved += 1
                self._release_fast()
            else:
                # The slow lane is full: free the fast slot now, carry on later.
                await _cancel(task)
                self.requeued += 1
                await self._enter(loop, self._slow_waiters, "slow")
                task = self._start(loop, fetch, _Slot("slow"))
                deadline = loop.time() + timeout
            if await _within(task, deadline):
                return task.result()
            return await self._overrun(task)
        except asyncio.CancelledError:
            await _cancel(task)
            raise

    def _start(
        self, loop: asyncio.AbstractEventLoop, fetch: Callable[[], Awaitable[T]], slot: _Slot
    ) -> asyncio.Task[T]:
        self.running += 1
        self.peak = max(self.peak, self.running)
        task = loop.create_task(_call(fetch))
        task.add_done_callback(partial(self._leave, slot))
        return task

    async def _enter(
        self,
        loop: asyncio.AbstractEventLoop,
        waiters: deque[tuple[float, asyncio.Future[None]]],
        lane: Literal["fast", "slow"],
    ) -> None:
        """Take a slot of ``lane``, waiting as long as it takes (the caller bounds it)."""
        if lane == "fast" and self._fast_free > 0 and not _live(waiters):
            self._fast_free -= 1
            return
        if lane == "slow" and self._slow_free > 0 and not _live(waiters):
            self._slow_free -= 1
            return
        waiter: asyncio.Future[None] = loop.create_future()
        waiters.append((loop.time(), waiter))
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                # Handed a slot just now: pass it on.
                self._release_fast() if lane == "fast" else self._release_slow()
            waiter.cancel()
            raise

    def _release_fast(self) -> None:
        """Free a fast slot and hand it to a waiter: oldest first, newest if congested."""
        self._fast_free += 1
        waiters = self._waiters
        while self._fast_free > 0 and _live(waiters):
            enqueued, oldest = waiters[0]
            congested = oldest.get_loop().time() - enqueued >= self._slow_after / 2
            if congested:
                # Newest first, but one slot in FIFO_SHARE goes to the oldest: served
                # newest-only, a fetch queued in a lasting overload waited as long as
                # the overload (5.5 s behind 69 later arrivals, where first come,
                # first served took 0.3 s), and every check of its origin with it.
                self._congested_releases += 1
                newest = self._congested_releases % FIFO_SHARE != 0
                _, waiter = waiters.pop() if newest else waiters.popleft()
            else:
                _, waiter = waiters.popleft()
            self._fast_free -= 1
            waiter.set_result(None)

    def _release_slow(self) -> None:
        """Free a slow slot and hand it to the longest-queued fetch."""
        self._slow_free += 1
        while self._slow_free > 0 and _live(self._slow_waiters):
            _, waiter = self._slow_waiters.popleft()
            self._slow_free -= 1
            waiter.set_result(None)

    def _leave(self, slot: _Slot, _: asyncio.Task[object]) -> None:
        """Done callback of a fetch: its slot is free once its connection is closed."""
        self.running -= 1
        if slot.lane == "slow":
            self._release_slow()
        else:
            self._release_fast()

    async def _overrun(self, task: asyncio.Task[T]) -> Refusal:
        await _cancel(task)
        self.overran += 1
        return "deadline"


def _live(waiters: deque[tuple[float, asyncio.Future[None]]]) -> bool:
    """True if a waiter not yet cancelled is queued (dropping done ones at the ends)."""
    while waiters and waiters[0][1].done():
        waiters.popleft()
    while waiters and waiters[-1][1].done():
        waiters.pop()
    return bool(waiters)


async def _cancel(task: asyncio.Task[T]) -> None:
    """Cancel ``task`` and wait until it has ended (its connection closed)."""
    task.cancel()
    await asyncio.wait({task})


async def _call(fetch: Callable[[], Awaitable[T]]) -> T:
    try:
        return await fetch()
    finally:
        # A closed transport releases its socket in a callback on the next loop
        # iteration; waiting for it makes a free slot mean a closed socket (without
        # it, 99 sockets were seen open against a cap of 96).
        await asyncio.sleep(0)


async def _within(task: asyncio.Future[T], deadline: float) -> bool:
    """Wait for ``task`` until ``deadline`` (loop time); True if it is done."""
    timeout = deadline - asyncio.get_running_loop().time()
    if timeout > 0 and not task.done():
        await asyncio.wait({task}, timeout=timeout)
    return task.done()
