"""Pacing shared by every worker: the next visit of each origin reserved in the
shared store (or in this process), and the pauses that page responses ask for.

Each wait is one store call (Redis: one script; SQLite: one transaction), two when it
slept 0.25 s or more (a pause another worker saw meanwhile, or a page it sent late, is
slept through), one more when it wakes LATE_AFTER past its turn (the late page is
recorded for every worker), one more per turn of another worker it is queued behind
(only the next turn is reserved, so a dead worker holds an origin one interval at
most). A store that fails is left alone
for a while and this process paces by itself meanwhile, from the visits it has
reserved, so pacing never stops and a crawl never fails for it.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import math
import random
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..cache.pace_table import PaceTable, Reservation
from ..core.errors import InvalidRecordError, StoreError
from ..core.header_pairs import selected_headers
from ..core.pacing import PaceBy, PaceRule
from ..fetch.deadline import within
from ..fetch.http import retry_after as retry_after_of

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

    from ..cache.store import RobotsStore
    from ..core.robots import RobotsTxt
    from ..core.url import Origin

__all__ = [
    "BUSY_STATUSES",
    "LATE_AFTER",
    "PaceBy",
    "PaceSettings",
    "Pacer",
    "pace_unit",
    "robots_delay",
]

logger = logging.getLogger("robots_async")

#: Page statuses that ask a crawler to slow down (RFC 6585 §4, RFC 9110 §15.6.4).
BUSY_STATUSES = frozenset({429, 503})
#: First back-off after a 429/503 without Retry-After, doubled each time (seconds).
FIRST_BACKOFF = 2.0
#: Seconds one store call may take before this process paces by itself: a backstop
#: (each store bounds its calls, 2 s by default). A busy process's own event loop lag
#: must not pass for an unreachable store: pacing alone multiplies a site's load.
STORE_TIMEOUT = 5.0
#: After a store failure, seconds before the store is tried again (doubling to a minute).
RETRY_STORE_FIRST, RETRY_STORE_MAX = 1.0, 60.0
#: A wait that slept this long or longer asks the store again whether a pause began
#: meanwhile (one more round trip); a shorter one goes, as a request in flight would.
RECHECK_AFTER = 0.25
#: A page sent this many seconds or more after its turn is recorded in the store
#: (``core.pacing.PaceState.sent``), so that every worker's next turn keeps an interval
#: after it: one more store call, for late pages only. A sleep's usual lag is a few
#: ms (0-15 ms measured with the machine's two cores busy).
LATE_AFTER = 0.05
#: Waits re-checked for a pause begun while they slept, at most (a bound, not a rate).
_MAX_ROUNDS = 4
#: Times one wait asks a shared store for a turn, at most: each ask after the first
#: follows another worker's turn (an interval), so this bounds only a runaway loop.
_MAX_ASKS = 10_000


@dataclass(frozen=True, slots=True)
class PaceSettings:
    """How a checker paces (validated by ``cache.settings.check_pacing``)."""

    min_delay: float = 0.0
    max_delay: float = 30.0
    pace_by: PaceBy = "origin"
    max_retry_after: float = 3600.0
    max_backoff: float = 300.0

    def rule(self, delay: float) -> PaceRule:
        """The rule for an origin whose robots.txt asks ``delay`` seconds."""
        interval = min(max(delay, self.min_delay), self.max_delay)
        return PaceRule(interval, self.max_retry_after, FIRST_BACKOFF, self.max_backoff)


def robots_delay(robots: RobotsTxt, token: str) -> float:
    """The seconds ``robots`` asks between visits of ``token``'s crawler: the larger of
    its Crawl-delay and its Request-rate's delay (0 when it asks neither)."""
    delay = robots.crawl_delay(robots_token=token) or 0.0
    rate = robots.request_rate(robots_token=token)
    return max(delay, rate.delay) if rate is not None else delay


def pace_unit(origin: Origin, pace_by: PaceBy) -> str:
    """What is paced: the origin (scheme, host, port) or, as Scrapy's download slots,
    the host whatever its scheme and port."""
    if pace_by == "host":
        return origin.host
    return f"{origin.scheme}://{origin.host}:{origin.port}"


class Pacer:
    """Waits and observations for one checker, through ``store`` when it paces."""

    def __init__(
        self,
        store: RobotsStore | None,
        settings: PaceSettings,
        *,
        clock: Callable[[], float],
        sleep: Callable[[float], Awaitable[Any]],
        loop_time: Callable[[], float] | None = None,
    ) -> None:
        shared = store is not None and callable(getattr(store, "reserve", None))
        self._store: Any = store if shared else None
        #: Whether the store's observe() takes ``elapsed`` (added later to the
        #: protocol: a store written before it is called as it was).
        self._store_takes_elapsed = shared and _takes_keyword(store, "observe", "elapsed")
        #: Whether the store records late pages and checks a page held past its turn
        #: against them (added later to the protocol too).
        self._store_records_sends = shared and callable(getattr(store, "sent_late", None))
        self._store_checks_sends = shared and callable(getattr(store, "left_at_send", None))
        self.settings = settings
        self._local = PaceTable(clock)
        self._clock = clock
        self._sleep = sleep
        self._loop_time = loop_time
        self._store_back_at = 0.0
        self._store_retry = RETRY_STORE_FIRST
        self._logged_down = False
        self._logged_record = False  # an unreadable record was logged (once)
        #: Units whose last reservation was in a run of failures: a success there is
        #: sent to the store (the other successes cost no call).
        self._failing: set[str] = set()
        self.waits = 0
        self.waited = 0.0
        self.store_errors = 0
        self.pauses = 0
        self.backoffs = 0

    @property
    def shared(self) -> bool:
        """True when visits are reserved in a shared store."""
        return self._store is not None

    async def wait(self, unit: str, delay: float) -> float:
        """Sleep until ``unit`` may be visited again; the seconds slept."""
        rule = self.settings.rule(delay)
        slept = 0.0
        due = self._now()
        for _ in range(_MAX_ROUNDS):
            reservation = await self._reserve(unit, rule)
            due = self._now() + reservation.wait
            slept += reservation.queued
            if reservation.failures:
                self._failing.add(unit)
            if reservation.wait <= 0:
                break
            await self._sleep(reservation.wait)
            slept += reservation.wait
            if reservation.wait < RECHECK_AFTER:
                break  # as good as a request already on its way when a pause began
            # Another worker may have been told to pause while we slept, or sent its
            # page late: that holds for us too (our turn is given up; the next one
            # follows the pause, or an interval after that page).
            left = await self._pause_left(unit, rule)
            if left <= 0:
                break
            await self._sleep(left)
            slept += left
        self.waits += 1
        self.waited += slept
        # Woken past the turn (a busy loop, a descheduled process, or rounds run out):
        # the page goes late, and the next turn, an interval after this one, is closer.
        await self.sent(unit, delay, late=self._now() - due)
        return slept

    async def sent(self, unit: str, delay: float, *, late: float) -> None:
        """Note a page of ``unit`` sent ``late`` seconds after its turn: from
        :data:`LATE_AFTER` on, every worker's next turn keeps an interval after it
        (recorded now, in this process and in the shared store)."""
        rule = self.settings.rule(delay)
        if not late >= LATE_AFTER or rule.interval <= 0:
            return
        self._local.sent_late(unit, rule)
        store = self._usable_store()
        if store is not None and self._store_records_sends:
            await self._store_call(store.sent_late(unit, rule))

    # paused_here() and left_at_send() read a back-off's earliest end (no jitter): a turn
    # given after it was jittered already, and a fresh draw found such a turn paused
    # again (a Scrapy request then met its pause twice: held_at_send 2 where 1 was due).

    def paused_here(self, unit: str, delay: float) -> bool:
        """True if this process knows of a pause of ``unit`` now (no store call)."""
        return self._local.left_at_send(unit, self.settings.rule(delay), 0.0, 0.0)[0] > 0

    async def left_at_send(self, unit: str, delay: float, held: float) -> tuple[float, float]:
        """For a page of ``unit`` whose turn began ``held`` seconds ago and that was not
        sent meanwhile (a download slot held it): the seconds until the pauses any
        worker knows of end (a 429/503 back-off, a Retry-After), and the seconds
        short of an interval after another page of ``unit`` (of a turn begun since
        its own, or sent late: ``core.pacing.left_at_send``). No visit is reserved."""
        rule = self.settings.rule(delay)
        store = self._usable_store()
        if store is not None and self._store_checks_sends:
            left = await self._store_call(store.left_at_send(unit, rule, held, 0.0))
            if isinstance(left, tuple) and all(map(math.isfinite, left)):
                return left
            if left is not None:  # an edited or corrupt entry (Redis answers 'inf')
                self._record_failed(InvalidRecordError("pace", f"{left!r}"[:100]))
        elif store is not None:  # a store written before late sends: its pauses only
            return await self._pause_left(unit, rule, 0.0), 0.0
        return self._local.left_at_send(unit, rule, held, 0.0)

    async def observe(
        self,
        unit: str,
        delay: float,
        status: int,
        headers: object,
        *,
        elapsed: float | None = None,
    ) -> None:
        """Record a page response: 429/503 pause ``unit`` for every worker (until its
        Retry-After, else an exponential back-off); a success ends a back-off.
        ``elapsed``: seconds since its request was sent (None: not known), so a slow
        429 to a request sent before a back-off ended does not double it."""
        busy = status in BUSY_STATUSES
        if not busy and (status >= 500 or unit not in self._failing):
            return  # a 5xx other than 503 neither pauses nor ends a back-off
        seconds = retry_after_of(_retry_headers(headers)) if busy else None
        if busy:
            if seconds is None:
                self.backoffs += 1
            else:
                self.pauses += 1
        else:
            self._failing.discard(unit)
        rule = self.settings.rule(delay)
        self._local.observe(unit, rule, busy=busy, retry_after=seconds, elapsed=elapsed)
        store = self._usable_store()
        if store is not None:
            if elapsed is not None and self._store_takes_elapsed:
                call = store.observe(unit, rule, busy=busy, retry_after=seconds, elapsed=elapsed)
            else:
                call = store.observe(unit, rule, busy=busy, retry_after=seconds)
            await self._store_call(call)

    async def _reserve(self, unit: str, rule: PaceRule) -> Reservation:
        """A reserved turn; while the store holds another worker's turn first, sleep
        until it begins and ask again (``core.pacing.turn``)."""
        queued = 0.0
        for _ in range(_MAX_ASKS):
            jitter = random.random()
            store = self._usable_store()
            if store is None:
                break
            reservation = await self._store_call(store.reserve(unit, rule, jitter))
            if not isinstance(reservation, Reservation):
                break  # the store failed: this process paces by itself meanwhile
            if reservation.reserved:
                self._local.note_visit(unit, self._clock() + reservation.wait, rule)
                return replace(reservation, queued=queued)
            await self._sleep(reservation.wait)
            queued += reservation.wait
        return replace(self._local.reserve(unit, rule, random.random()), queued=queued)

    async def _pause_left(self, unit: str, rule: PaceRule, jitter: float | None = None) -> float:
        jitter = random.random() if jitter is None else jitter
        store = self._usable_store()
        if store is not None:
            left = await self._store_call(store.pause_left(unit, rule, jitter))
            if isinstance(left, float):
                return left
        return self._local.pause_left(unit, rule, jitter)

    def _usable_store(self) -> Any:
        if self._store is None or self._now() < self._store_back_at:
            return None
        return self._store

    async def _store_call(self, call: Awaitable[Any]) -> Any:
        """The call's result, or None after a failure (counted, logged once per
        outage; the store is then left alone for a while)."""
        try:
            async with within(STORE_TIMEOUT):
                result = await call
        except InvalidRecordError as exc:
            self._record_failed(exc)
            return None
        except (StoreError, asyncio.TimeoutError) as exc:
            self._store_failed(exc)
            return None
        wait = result.wait if isinstance(result, Reservation) else result
        if isinstance(wait, (int, float)) and not math.isfinite(wait):
            # An edited or corrupt entry: Redis's script answered a wait of 'inf'
            # seconds, which wait() slept forever.
            self._record_failed(InvalidRecordError("wait", f"{wait!r} s"))
            return None
        if self._logged_down:
            logger.info("pacing store answers again: pacing is shared again")
        self._logged_down = False
        self._store_retry = RETRY_STORE_FIRST
        return result

    def _record_failed(self, exc: InvalidRecordError) -> None:
        """Count a unit's unreadable record: that call is paced within this process;
        the store, which answered, stays in use for every unit (one damaged key took
        the whole process off the store, each time its unit was paced)."""
        self.store_errors += 1
        if not self._logged_record:
            self._logged_record = True
            logger.warning("pacing store: %s: that unit is paced within this process", exc)

    def _store_failed(self, exc: Exception) -> None:
        """Count a failed store call, log the outage once, leave the store alone a while."""
        self.store_errors += 1
        self._store_back_at = self._now() + self._store_retry
        self._store_retry = min(self._store_retry * 2, RETRY_STORE_MAX)
        if not self._logged_down:
            self._logged_down = True
            logger.warning(
                "pacing store failed (%s): pacing within this process until it answers",
                str(exc) or type(exc).__name__,
            )

    def _now(self) -> float:
        if self._loop_time is not None:
            return self._loop_time()
        return asyncio.get_running_loop().time()


def _takes_keyword(obj: object, method: str, name: str) -> bool:
    """True if ``obj.method`` accepts the keyword argument ``name``."""
    try:
        parameters = inspect.signature(getattr(obj, method)).parameters
    except (TypeError, ValueError):  # no signature to read (a C callable): assume not
        return False
    return name in parameters or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()
    )


def _retry_headers(headers: object) -> Mapping[str, str]:
    """Retry-After and Date (the first line of each) from any header container: a
    (multi-)dict of str or bytes (aiohttp, httpx, Scrapy's Headers, a plain dict) or
    an iterable of pairs.

    :raises PageInputTypeError: for something that is none of those.
    """
    found: dict[str, str] = {}
    for name, value in selected_headers(headers, ("retry-after", "date")):
        found.setdefault(_CANONICAL[name], value)
    return found


_CANONICAL = {"retry-after": "Retry-After", "date": "Date"}
