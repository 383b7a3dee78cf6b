"""core.pacing.turn: only the first turn after an origin is free may be reserved, so a
dead worker's queued reservations cannot hold the fleet off it (issue 27)."""

from __future__ import annotations

from robots_async.core.pacing import PaceRule, PaceState, turn

RULE = PaceRule(interval=2.0, max_retry_after=3600.0, first_backoff=2.0, max_backoff=300.0)
NOW = 1_000.0


def test_a_free_origin_is_reserved_now_then_one_interval_on() -> None:
    assert turn(PaceState(), RULE, NOW, 0.0) == (NOW, True)
    assert turn(PaceState(last=NOW - 0.5), RULE, NOW, 0.0) == (NOW + 1.5, True)
    assert turn(PaceState(last=NOW), RULE, NOW, 0.0) == (NOW + 2.0, True)


def test_a_turn_held_ahead_is_not_reserved_past() -> None:
    """Someone holds the turn at NOW + 2: ask again then, reserve nothing now."""
    assert turn(PaceState(last=NOW + 2.0), RULE, NOW, 0.0) == (NOW + 2.0, False)


def test_after_a_pause_the_first_turn_is_reservable() -> None:
    """A Retry-After until NOW + 30: the turn reserved before it ends does not queue
    anyone behind it; the first turn after the pause is reserved."""
    paused = PaceState(last=NOW + 2.0, retry_at=NOW + 30.0, paused_at=NOW)
    assert turn(paused, RULE, NOW, 0.0) == (NOW + 30.0, True)
