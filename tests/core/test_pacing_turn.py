"""core.pacing.turn: only the first turn after an origin is free may be reserved, so a
dead worker's queued reservations cannot hold the fleet off it (issue 27); a page sent
late moves the next turn, and a page held past its turn keeps an interval after the
pages of the turns begun since (left_at_send)."""

from __future__ import annotations

from dataclasses import replace

from robots_async.core.pacing import (
    PaceRule,
    PaceState,
    keep_for,
    left_at_send,
    sent_late,
    turn,
)

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


def test_a_late_page_moves_the_next_turn() -> None:
    """Turn at NOW - 2 (the last reserved), its page sent at NOW - 1: the next turn is
    an interval after the page (NOW + 1), not after the turn (NOW)."""
    late = sent_late(PaceState(last=NOW - 2.0), NOW - 1.0)
    assert turn(late, RULE, NOW - 0.5, 0.0) == (NOW + 1.0, True)
    assert sent_late(late, NOW - 1.5) is late  # an earlier late page changes nothing
    assert keep_for(late, RULE, NOW - 1.0) >= 2.0


def test_a_held_page_is_short_only_of_the_pages_of_turns_begun_since_its_own() -> None:
    # Its own turn (NOW - 1) is the last reserved: nothing since.
    assert left_at_send(PaceState(last=NOW - 1.0), RULE, NOW, 1.0, 0.0) == (0.0, 0.0)
    # The turn after its own is reserved (NOW + 1) but has not begun.
    assert left_at_send(PaceState(last=NOW + 1.0), RULE, NOW, 1.0, 0.0) == (0.0, 0.0)
    # Held 3 s: another turn began at NOW - 0.5; when the one after it is reserved
    # (NOW + 1.5), an interval after that one (1.5 s went with its page).
    assert left_at_send(PaceState(last=NOW - 0.5), RULE, NOW, 3.0, 0.0) == (0.0, 1.5)
    assert left_at_send(PaceState(last=NOW + 1.5), RULE, NOW, 3.0, 0.0) == (0.0, 3.5)
    # A page sent late half a second ago, whatever the turns; and a pause.
    assert left_at_send(PaceState(sent=NOW - 0.5), RULE, NOW, 0.2, 0.0) == (0.0, 1.5)
    # A late page 1.5 s ago, the next turn reserved an interval after it (NOW + 0.5):
    # waited out, the page would go with that turn's, so an interval after it.
    late = PaceState(last=NOW + 0.5, sent=NOW - 1.5)
    assert left_at_send(late, RULE, NOW, 1.0, 0.0) == (0.0, 2.5)
    assert left_at_send(replace(late, last=NOW + 0.6), RULE, NOW, 1.0, 0.0) == (0.0, 0.5)
    paused = PaceState(retry_at=NOW + 30.0, paused_at=NOW - 1.0)
    assert left_at_send(paused, RULE, NOW, 1.0, 0.0) == (30.0, 0.0)
