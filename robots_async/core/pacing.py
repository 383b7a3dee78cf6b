"""Politeness shared by workers: what is observed about a site's visits, and how one
reader turns it into the time of its next visit.

A store keeps observations only (the last visit reserved, the last page sent after
its turn, a ``Retry-After`` seen, a run of 429/503 responses without one); each
reader applies its own :class:`PaceRule` to them, so workers with different settings
can share one store. The stores
(``cache.pace_table``, ``cache.sqlite``) call these functions and Redis's script
repeats them in Lua; sans-I/O, no clock of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

__all__ = [
    "JITTER",
    "backoff",
    "PaceBy",
    "PaceRule",
    "PaceState",
    "keep_for",
    "left_at_send",
    "next_visit",
    "observed",
    "pause_end",
    "sent_late",
    "turn",
]

#: What is paced: an origin (scheme, host, port) or a host (as Scrapy's download slots).
PaceBy = Literal["origin", "host"]
#: Back-off is stretched by up to this fraction (times the reader's random draw in
#: [0, 1)), so that the workers backing off from one site do not return together.
JITTER = 0.25
#: Seconds an observation outlives what it can still decide, before a store forgets it.
MARGIN = 60.0


@dataclass(frozen=True, slots=True)
class PaceRule:
    """One reader's policy for an origin: the interval between its visits and the
    bounds it applies to what the site asked."""

    #: Seconds between visits: the largest of Crawl-delay, Request-rate and the
    #: crawler's min_delay, capped by its max_delay.
    interval: float
    #: Longest pause a ``Retry-After`` imposes (a longer one is cut to this).
    max_retry_after: float
    #: First back-off after a 429/503 without ``Retry-After``; doubles each time.
    first_backoff: float
    #: Longest such back-off.
    max_backoff: float


@dataclass(frozen=True, slots=True)
class PaceState:
    """What has been observed about one origin (or host); no conclusion."""

    #: Start of the last visit reserved (by any worker).
    last: float | None = None
    #: When the longest ``Retry-After`` seen (429 or 503) ends, and when it was seen.
    retry_at: float | None = None
    paused_at: float | None = None
    #: The last 429/503 without ``Retry-After``, and how many came in a row (until
    #: successes end the run: :func:`observed`).
    failed_at: float | None = None
    failures: int = 0
    #: The latest page sent after its turn (by any worker): the next visit keeps an
    #: interval after it too. A turn is reserved an interval after the turn before,
    #: so a page that went late (its process descheduled, its request held in a
    #: connection pool or a download slot) brought the next worker's page, sent on
    #: its own turn, closer than the interval (0.79 s at Crawl-delay: 1, in CI).
    sent: float | None = None


def backoff(state: PaceState, rule: PaceRule) -> float:
    """The back-off of ``state``'s run of failures under ``rule``, before jitter."""
    # The exponent is capped: 2.0 ** 1024 overflows a float.
    return min(rule.first_backoff * 2.0 ** min(state.failures - 1, 64), rule.max_backoff)


def pause_end(state: PaceState, rule: PaceRule, jitter: float) -> float:
    """When the pauses the site asked for end under ``rule`` (0.0: none)."""
    end = 0.0
    if state.retry_at is not None and state.paused_at is not None:
        end = min(state.retry_at, state.paused_at + rule.max_retry_after)
    if state.failures > 0 and state.failed_at is not None:
        end = max(end, state.failed_at + backoff(state, rule) * (1.0 + JITTER * jitter))
    return end


def next_visit(state: PaceState, rule: PaceRule, now: float, jitter: float) -> float:
    """The earliest time at or after ``now`` that ``rule`` allows a visit."""
    start = max(now, pause_end(state, rule, jitter))
    if state.last is not None:
        start = max(start, state.last + rule.interval)
    if state.sent is not None:
        start = max(start, state.sent + rule.interval)
    return start


def left_at_send(
    state: PaceState, rule: PaceRule, now: float, held: float, jitter: float
) -> tuple[float, float]:
    """For a page whose turn began ``held`` seconds before ``now`` and that is sent only
    now (a download slot held it): the seconds until the pauses end, and the seconds
    short of an interval since the latest other page of the unit. That is a page sent
    late (``state.sent``), or the page of a turn begun since its own: ``state.last``,
    or when the turn held for later is already reserved, the one before it (a turn
    is reserved as the one before it begins: ``turn``). Turns are an interval apart,
    so one begun more than half an interval after its own is another's. Sent as the
    slot freed, such a page went 0.48 s after another crawl's (Crawl-delay: 1).
    Once such a turn began, or when the page would wait until a turn reserved
    already, that turn's page is one too: the page is short of an interval after
    it. An interval after the turn begun (or after a late page) was the reserved
    turn itself, and a page that waited that out went with the next worker's page
    (0.000 s apart, where sent at once it was 0.15 s)."""
    pause = max(0.0, pause_end(state, rule, jitter) - now)
    short = 0.0
    if state.sent is not None:
        short = state.sent + rule.interval - now
    if state.last is not None:
        began = state.last if state.last <= now else state.last - rule.interval
        if began > now - held + rule.interval / 2:
            short = max(short, state.last + rule.interval - now)
    if state.last is not None and now < state.last <= now + short:
        # Waited out, it would go with (or after) the page of the turn reserved next.
        short = state.last + rule.interval - now
    return pause, max(0.0, short)


def sent_late(state: PaceState, at: float) -> PaceState:
    """``state`` after a page went at ``at``, after its turn (see ``PaceState.sent``)."""
    if state.sent is not None and state.sent >= at:
        return state
    return replace(state, sent=at)


def turn(state: PaceState, rule: PaceRule, now: float, jitter: float) -> tuple[float, bool]:
    """The next visit's start and whether it may be reserved now. Only the first turn
    after the origin is free (now, or when its pauses end) may be: a later one is
    asked for again when the turn before it begins. So a worker that dies holding a
    reservation keeps the fleet off the origin for one interval at most, however
    many of its requests were queued (reserving every turn ahead, a worker killed
    with 4 queued on a Crawl-delay: 2 site held it 8 s, Scrapy's 128 parked
    requests on a Crawl-delay: 10 one, 21 minutes)."""
    free = max(now, pause_end(state, rule, jitter))
    if state.last is not None and state.last > free:
        return state.last, False
    return next_visit(state, rule, now, jitter), True


def observed(
    state: PaceState,
    now: float,
    *,
    busy: bool,
    retry_after: float | None,
    rule: PaceRule | None = None,
    elapsed: float | None = None,
) -> PaceState:
    """``state`` after a page response: ``busy`` for 429/503 (RFC 6585 §4, RFC 9110
    §15.6.4), with its ``Retry-After`` in seconds if it had one; ``elapsed``, when
    known, the seconds since its request was sent (a duration: each store applies it
    to its own clock). A pause is never shortened by a
    later, shorter one; under ``rule``, a 429 to a request sent within the back-off
    (or before it) does not double it, and a success ends a run of failures
    (:func:`_after_success` says when)."""
    if not busy:
        if state.failures == 0:
            return state
        if rule is None or state.failed_at is None:
            return replace(state, failures=0, failed_at=None)
        return _after_success(state, state.failed_at, rule, now)
    if retry_after is not None:
        until = now + max(0.0, retry_after)
        if state.retry_at is not None and state.retry_at >= until:
            return state
        return replace(state, retry_at=until, paused_at=now)
    failed_at = state.failed_at
    # Visits wait a back-off out (pause_end), but for a turn due within
    # checker.pacing.RECHECK_AFTER of its start (sent as if already on its way): a
    # 429 to a request sent before the back-off ended answers the same overload as
    # the one that began it. Counted once, as TCP halves its window once per loss:
    # eight requests in flight that all answered 429 doubled a 2 s back-off eight
    # times, to the cap. Without its send time, a 429 that arrives within the
    # back-off was sent within it or before; a slow one (an overloaded server answers
    # slowly) arrives after it and doubled it.
    sent = now if elapsed is None else now - max(0.0, elapsed)
    if rule is not None and failed_at is not None and sent < failed_at + backoff(state, rule):
        return state
    return replace(state, failures=state.failures + 1, failed_at=now)


def _after_success(state: PaceState, failed_at: float, rule: PaceRule, now: float) -> PaceState:
    """``state`` after a success during its run of failures, whose responses across a
    fleet come back in any order:

    - within the run's back-off, the request was sent before the failure: nothing ends;
    - after it, the back-off ends for every worker at once, but the run is kept for
      one more back-off: the requests sent when it ended may still answer 429, and a
      429 there must double the back-off, not start a new one. Ending the run on the
      first success let a 429 of the same moment, recorded 1 ms after it, start again
      at 2 s (the fleet back-off test failed so, 2 of 32 runs under load);
    - a success after that ends the run.
    """
    span = backoff(state, rule)
    longest = span * (1.0 + JITTER)
    if now < failed_at + span:
        return state
    if now < failed_at + longest + span:
        # Dated back so that no reader's jittered back-off outlasts ``now``.
        ended = min(failed_at, now - longest)
        return state if ended == failed_at else replace(state, failed_at=ended)
    return replace(state, failures=0, failed_at=None)


def keep_for(state: PaceState, rule: PaceRule, now: float) -> float:
    """Seconds from ``now`` a store keeps ``state``: while it can still delay a visit
    under ``rule``, plus a margin. A failure run is kept for its longest back-off and
    the one more back-off after it in which a 429 still doubles (_after_success):
    with only the first, a run of back-offs over ~190 s (the 5 min default cap)
    was forgotten within that window, and its next 429 started again at 2 s."""
    until = now
    if state.last is not None:
        until = max(until, state.last + rule.interval)
    if state.sent is not None:
        until = max(until, state.sent + rule.interval)
    if state.retry_at is not None and state.paused_at is not None:
        until = max(until, min(state.retry_at, state.paused_at + rule.max_retry_after))
    if state.failed_at is not None:
        until = max(until, state.failed_at + rule.max_backoff * (2.0 + JITTER))
    return until - now + MARGIN
