"""FetchLanes: admission of robots.txt fetches, so slow origins never hold up others.

Every fetch starts in the fast lane. One still running after ``slow_after`` seconds
moves to the smaller slow lane and frees its fast slot; with the slow lane full it
is cut short (the caller retries it soon: our limit, not the site's fault). The wait
for a fast slot counts against the fetch's deadline. Under congestion (the oldest
waiter has waited half the slow threshold) the newest waiter is served first
(adaptive LIFO): the oldest are the likeliest to miss their deadline anyway, and a
burst of hung origins cannot make a later check of a healthy one wait behind all of
them. At most ``fast + slow`` fetches run at once: the cap on robots.txt sockets.
"""

from __future__ import annotations

import asyncio
from collections import deque
from functools import partial
from typing import TYPE_CHECKING, Literal, TypeVar

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

__all__ = ["SLOW_AFTER", "FetchLanes", "Refusal"]

T = TypeVar("T")

#: Seconds a fetch may hold a fast slot. Most robots.txt answers arrive well within
#: it; a slower one is not failed, it carries on in the slow lane (room permitting).
SLOW_AFTER = 1.0

#: Why a fetch did not run to its end: no fast slot before the deadline, turned slow
#: while the slow lane was full, or still running at the deadline.
Refusal = Literal["no-slot", "slow-lane-full", "deadline"]


class _Slot:
    """The lane a running fetch occupies (it changes once, fast to slow)."""

    __slots__ = ("lane",)

    def __init__(self) -> None:
        self.lane: Literal["fast", "slow"] = "fast"


class FetchLanes:
    """A fast lane of ``fast`` slots and a slow lane of ``slow`` slots for fetches.

    Deadlines are on the event loop's clock.
    """

    def __init__(self, fast: int, slow: int, slow_after: float = SLOW_AFTER) -> None:
        self._fast_free = fast
        self._slow_free = slow
        self._slow_after = slow_after
        self._capacity = fast + slow
        # (enqueued at, future set when a fast slot is handed over); cancelled or
        # timed-out waiters stay until they reach an end of the deque.
        self._waiters: deque[tuple[float, asyncio.Future[None]]] = deque()
        #: Fetches running now, and at most so far.
        self.running = 0
        self.peak = 0
        #: Fetches moved to the slow lane, and refusals by reason.
        self.moved = 0
        self.refused: dict[Refusal, int] = {"no-slot": 0, "slow-lane-full": 0, "deadline": 0}

    @property
    def capacity(self) -> int:
        """Fetches (hence sockets) running at most: fast plus slow lane."""
        return self._capacity

    async def run(self, fetch: Callable[[], Awaitable[T]], deadline: float) -> T | Refusal:
        """Run ``fetch()`` in a lane and return its result, or why it was not run out.

        A refused fetch is cancelled (its connection closed) before this returns.
        """
        loop = asyncio.get_running_loop()
        if not await self._enter(loop, deadline):
            return self._refuse("no-slot")
        slot = _Slot()
        self.running += 1
        self.peak = max(self.peak, self.running)
        task = loop.create_task(_call(fetch))
        task.add_done_callback(partial(self._leave, slot))
        try:
            if await _within(task, min(loop.time() + self._slow_after, deadline)):
                return task.result()
            if loop.time() >= deadline:
                return await self._cut(task, "deadline")
            if self._slow_free <= 0:
                return await self._cut(task, "slow-lane-full")
            self._slow_free -= 1
            slot.lane = "slow"
            self.moved += 1
            self._release_fast()
            if await _within(task, deadline):
                return task.result()
            return await self._cut(task, "deadline")
        except asyncio.CancelledError:
            task.cancel()
            await asyncio.wait({task})
            raise

    async def _enter(self, loop: asyncio.AbstractEventLoop, deadline: float) -> bool:
        """Take a fast slot, waiting until ``deadline`` at most; False if none came."""
        if self._fast_free > 0 and not self._live_waiters():
            self._fast_free -= 1
            return True
        waiter: asyncio.Future[None] = loop.create_future()
        self._waiters.append((loop.time(), waiter))
        try:
            await asyncio.wait({waiter}, timeout=max(deadline - loop.time(), 0.0))
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._release_fast()  # handed over just now: pass it on
            waiter.cancel()
            raise
        if waiter.done():
            return True
        waiter.cancel()
        return False

    def _live_waiters(self) -> bool:
        waiters = self._waiters
        while waiters and waiters[0][1].done():
            waiters.popleft()
        while waiters and waiters[-1][1].done():
            waiters.pop()
        return bool(waiters)

    def _release_fast(self) -> None:
        """Free a fast slot and hand it to a waiter: oldest first, newest if congested."""
        self._fast_free += 1
        waiters = self._waiters
        while self._fast_free > 0 and self._live_waiters():
            enqueued, oldest = waiters[0]
            congested = oldest.get_loop().time() - enqueued >= self._slow_after / 2
            _, waiter = waiters.pop() if congested else waiters.popleft()
            self._fast_free -= 1
            waiter.set_result(None)

    def _leave(self, slot: _Slot, _: asyncio.Task[object]) -> None:
        """Done callback of a fetch: its slot is free once its connection is closed."""
        self.running -= 1
        if slot.lane == "slow":
            self._slow_free += 1
        else:
            self._release_fast()

    async def _cut(self, task: asyncio.Task[T], why: Refusal) -> Refusal:
        task.cancel()
        await asyncio.wait({task})
        return self._refuse(why)

    def _refuse(self, why: Refusal) -> Refusal:
        self.refused[why] += 1
        return why


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
