"""Pacing within one process: the next free visit of each origin, reserved before
sleeping so that concurrent callers for one origin queue one after another."""

from __future__ import annotations

import heapq
import itertools
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["VisitTimes"]

K = TypeVar("K")


class VisitTimes(Generic[K]):
    """Reservations by key (an origin): the next free visit time of each key with one
    in the future, and a heap of (time, n, key) that forgets past ones in O(log n)."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._next: dict[K, float] = {}
        self._heap: list[tuple[float, int, K]] = []
        self._numbers = itertools.count()

    def reserve(self, key: K, interval: float) -> float:
        """Reserve ``key``'s next visit ``interval`` after its previous one (or now);
        return the seconds to wait for it."""
        now = self._clock()
        self._forget(now)
        start = max(now, self._next.get(key, now))
        if interval > 0 or start > now:
            self._next[key] = start + interval
            heapq.heappush(self._heap, (start + interval, next(self._numbers), key))
        return start - now

    def _forget(self, now: float) -> None:
        """Drop reservations that have passed (each heap item is popped once)."""
        heap, next_visit = self._heap, self._next
        while heap and heap[0][0] <= now:
            at, _, key = heapq.heappop(heap)
            if next_visit.get(key) == at:
                del next_visit[key]
