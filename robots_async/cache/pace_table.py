"""PaceTable: the pacing observations of many origins in this process.

What :class:`MemoryStore` shares between the checkers of one process, and what a
checker falls back on while its shared store is unreachable. Each operation is one
synchronous step of the event loop (no lock, no await), so concurrent waits for one
origin queue one after another and waits for different origins never meet.
Observations that can no longer decide anything are forgotten through a heap of
expiry times, in O(log n) per operation (``wait()`` cost is flat from 1,000 to
100,000 paced origins: ``bench/isolation.py``).
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..core.pacing import (
    PaceRule,
    PaceState,
    keep_for,
    left_at_send,
    next_visit,
    observed,
    sent_late,
)

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["PaceTable", "Reservation"]


@dataclass(frozen=True, slots=True)
class Reservation:
    """A visit reserved: seconds to wait for it, and the run of 429/503 responses
    without ``Retry-After`` the origin is in (0: none). ``reserved`` is False when a
    shared store holds another worker's turn first (``core.pacing.turn``): ``wait``
    is then when to ask again. ``queued``: seconds already slept asking."""

    wait: float
    failures: int = 0
    reserved: bool = True
    queued: float = 0.0


class PaceTable:
    """Pacing state by unit (an origin or a host), on the given wall clock."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._states: dict[str, PaceState] = {}
        self._expiry: dict[str, float] = {}
        self._heap: list[tuple[float, int, str]] = []
        self._numbers = itertools.count()

    def __len__(self) -> int:
        return len(self._states)

    def reserve(self, unit: str, rule: PaceRule, jitter: float) -> Reservation:
        """Reserve ``unit``'s next visit under ``rule``; the seconds to wait for it."""
        now = self._clock()
        self._forget(now)
        state = self._states.get(unit, _EMPTY)
        start = next_visit(state, rule, now, jitter)
        self._keep(unit, replace(state, last=start), rule, now)
        return Reservation(start - now, state.failures)

    def pause_left(self, unit: str, rule: PaceRule, jitter: float) -> float:
        """Seconds until the pauses the site asked for end (no visit reserved)."""
        now = self._clock()
        state = self._states.get(unit)
        if state is None:
            return 0.0
        return max(0.0, next_visit(replace(state, last=None), rule, now, jitter) - now)

    def left_at_send(
        self, unit: str, rule: PaceRule, held: float, jitter: float
    ) -> tuple[float, float]:
        """For a page whose turn began ``held`` seconds ago: the pauses left, and the
        seconds short of an interval after another page (``core.pacing.left_at_send``)."""
        state = self._states.get(unit)
        if state is None:
            return 0.0, 0.0
        return left_at_send(state, rule, self._clock(), held, jitter)

    def observe(
        self,
        unit: str,
        rule: PaceRule,
        *,
        busy: bool,
        retry_after: float | None,
        elapsed: float | None = None,
    ) -> None:
        """Record a page response of ``unit`` (see :func:`core.pacing.observed`),
        ``elapsed`` seconds after its request was sent (None: not known)."""
        now = self._clock()
        state = self._states.get(unit, _EMPTY)
        after = observed(state, now, busy=busy, retry_after=retry_after, rule=rule, elapsed=elapsed)
        if after is not state:
            self._keep(unit, after, rule, now)

    def sent_late(self, unit: str, rule: PaceRule) -> None:
        """Record a page of ``unit`` sent now, after its turn: the next visit keeps an
        interval after it (``core.pacing.PaceState.sent``)."""
        now = self._clock()
        state = self._states.get(unit, _EMPTY)
        after = sent_late(state, now)
        if after is not state:
            self._keep(unit, after, rule, now)

    def note_visit(self, unit: str, at: float, rule: PaceRule) -> None:
        """Remember a visit reserved elsewhere (in the shared store), so that pacing
        carries on from it if the store becomes unreachable."""
        now = self._clock()
        state = self._states.get(unit, _EMPTY)
        if state.last is None or state.last < at:
            self._keep(unit, replace(state, last=at), rule, now)

    def _keep(self, unit: str, state: PaceState, rule: PaceRule, now: float) -> None:
        expires = now + keep_for(state, rule, now)
        self._states[unit] = state
        if self._expiry.get(unit, 0.0) < expires:
            self._expiry[unit] = expires
            heapq.heappush(self._heap, (expires, next(self._numbers), unit))

    def _forget(self, now: float) -> None:
        """Drop states whose expiry has passed (each heap item is popped once)."""
        heap, expiry = self._heap, self._expiry
        while heap and heap[0][0] <= now:
            at, _, unit = heapq.heappop(heap)
            if expiry.get(unit) == at:
                del expiry[unit]
                del self._states[unit]


_EMPTY = PaceState()
