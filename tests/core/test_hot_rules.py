"""HotRules, the cache's index of fresh rules (core, sans-I/O): what it answers and
what it leaves to the cache."""

from __future__ import annotations

import pytest

from robots_async import parse
from robots_async.core.hot_rules import HotRules
from robots_async.fetch.wire import PLAIN_URL

RULES = parse(b"User-agent: *\nDisallow: /private\n")
ORIGIN = "https://example.com"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def index(clock: Clock, expiries: dict[str, float]) -> HotRules:
    hot = HotRules(clock, PLAIN_URL, expiries.get)
    for text, expires_at in expiries.items():
        hot.add(text, RULES, expires_at)
    return hot


def test_verdicts_for_urls_sent_as_written(clock: Clock) -> None:
    hot = index(clock, {ORIGIN: 2000.0})
    assert hot.verdict(f"{ORIGIN}/a", "bot") is True
    assert hot.verdict(f"{ORIGIN}/private/x", "bot") is False
    assert hot.hits == 2


@pytest.mark.parametrize(
    "url",
    [
        f"{ORIGIN}/a/../private",  # a dot segment: the client sends /private
        f"{ORIGIN}/%70rivate",  # an escape the client decodes
        f"{ORIGIN}/a b",  # a space the client escapes
        "https://EXAMPLE.com/a",  # not the origin's text
        "https://example.com:443/a",  # the default port spelled out
        "https://other.example/a",  # not cached
    ],
)
def test_other_urls_are_left_to_the_cache(clock: Clock, url: str) -> None:
    hot = index(clock, {ORIGIN: 2000.0})
    assert hot.verdict(url, "bot") is None
    assert hot.hits == 0


def test_nothing_is_served_at_or_after_its_expiry(clock: Clock) -> None:
    hot = index(clock, {ORIGIN: 2000.0})
    clock.now = 1999.999
    assert hot.verdict(f"{ORIGIN}/a", "bot") is True
    clock.now = 2000.0
    assert hot.verdict(f"{ORIGIN}/a", "bot") is None
    assert len(hot) == 0


def test_a_renewed_entry_outlives_its_old_expiry(clock: Clock) -> None:
    expiries = {ORIGIN: 2000.0}
    hot = index(clock, expiries)
    expiries[ORIGIN] = 3000.0
    hot.discard(ORIGIN)
    hot.add(ORIGIN, RULES, 3000.0)
    clock.now = 2500.0
    assert hot.rules(ORIGIN) is RULES  # the old heap item (2000) was skipped


def test_second_chance_only_for_a_hit(clock: Clock) -> None:
    hot = index(clock, {ORIGIN: 2000.0, "https://b.example": 2000.0})
    assert hot.rules(ORIGIN) is RULES
    assert hot.second_chance(ORIGIN) is True  # hit: unmarked, stays
    assert hot.second_chance(ORIGIN) is False  # not hit since
    assert hot.second_chance("https://b.example") is False
    assert hot.second_chance("https://absent.example") is False


def test_heap_is_rebuilt_without_gone_entries(clock: Clock) -> None:
    expiries: dict[str, float] = {}
    hot = index(clock, expiries)
    for i in range(200):
        expiries[ORIGIN] = 2000.0 + i
        hot.discard(ORIGIN)
        hot.add(ORIGIN, RULES, 2000.0 + i)
    assert len(hot._expiries) <= 2 * len(hot) + 64
    clock.now = 2150.0
    assert hot.rules(ORIGIN) is RULES  # the latest expiry (2199) counts
    hot.clear()
    assert hot.rules(ORIGIN) is None
