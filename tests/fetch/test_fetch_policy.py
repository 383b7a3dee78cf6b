"""FetchPolicy.resolve is pure: drive the presets with hand-made FetchOutcome objects."""

from __future__ import annotations

import dataclasses

import pytest

import robots_async as ra

URL = "https://example.com/robots.txt"
HOUR = 3600.0
DAY = 86_400.0
TOKEN = "PipelineBot"

GOOD_RULES = ra.parse("User-agent: *\nDisallow: /private\n")
GOOD = ra.FetchOutcome(URL, URL, 200, robots=GOOD_RULES)
DOWN_OUTCOMES = [
    ra.FetchOutcome(URL, URL, 503),
    ra.FetchOutcome(URL, URL, 429),
    ra.FetchOutcome(URL, URL, None, error="timeout"),
    ra.FetchOutcome(URL, URL, None, error="dns"),
]
DOWN_IDS = ["503", "429", "timeout", "dns"]


def verdict(resolution: ra.Resolution, path: str) -> bool:
    """Whether ``path`` is allowed under the resolution's rules."""
    return resolution.robots.allowed(path, robots_token=TOKEN)


def is_allow_all(resolution: ra.Resolution) -> bool:
    """The synthetic allow-all file."""
    return resolution.robots.synthetic == "allow-all"


def is_disallow_all(resolution: ra.Resolution) -> bool:
    """The synthetic disallow-all file."""
    return resolution.robots.synthetic == "disallow-all"


@pytest.mark.parametrize(
    ("outcome", "category"),
    [
        (ra.FetchOutcome(URL, URL, 200), "ok"),
        (ra.FetchOutcome(URL, URL, 204), "ok"),
        (ra.FetchOutcome(URL, URL, 299), "ok"),
        (ra.FetchOutcome(URL, URL, 206), "unreachable"),  # an unasked part of the file
        (ra.FetchOutcome(URL, URL, 400), "unavailable"),
        (ra.FetchOutcome(URL, URL, 404), "unavailable"),
        (ra.FetchOutcome(URL, URL, 451), "unavailable"),
        (ra.FetchOutcome(URL, URL, 429), "unreachable"),
        (ra.FetchOutcome(URL, URL, 500), "unreachable"),
        (ra.FetchOutcome(URL, URL, 599), "unreachable"),
        (ra.FetchOutcome(URL, URL, 100), "unreachable"),
        (ra.FetchOutcome(URL, URL, 304), "unavailable"),
        (ra.FetchOutcome(URL, URL, 600), "unreachable"),
        (ra.FetchOutcome(URL, URL, 302, error="redirect-limit"), "unavailable"),
        (ra.FetchOutcome(URL, URL, 302, error="redirect-loop"), "unavailable"),
        (ra.FetchOutcome(URL, URL, 302, error="bad-redirect"), "unavailable"),
        (ra.FetchOutcome(URL, URL, 302, error="blocked-redirect"), "unreachable"),
        (ra.FetchOutcome(URL, URL, None, error="reset"), "unreachable"),
        (ra.FetchOutcome(URL, URL, 200, error="reset"), "unreachable"),
        (ra.FetchOutcome(URL, URL, None, error="protocol"), "unreachable"),
        (ra.FetchOutcome(URL, URL, None, error="tls"), "unreachable"),
    ],
)
def test_outcome_category(outcome: ra.FetchOutcome, category: str) -> None:
    """2xx ok; 3xx/4xx but 429 and redirect trouble unavailable; the rest unreachable."""
    assert outcome.category == category


def test_presets_and_overrides() -> None:
    """Presets are frozen and take keyword overrides."""
    default = ra.FetchPolicy()
    assert ra.FetchPolicy.rfc9309() == default
    assert (default.max_hops, default.max_bytes, default.total_timeout) == (5, 512_000, 30.0)
    custom = ra.FetchPolicy.rfc9309(forbidden="disallow", total_timeout=1.0)
    assert (custom.forbidden, custom.total_timeout, custom.name) == ("disallow", 1.0, "rfc9309")
    google = ra.FetchPolicy.googlebot(total_timeout=2.0)
    assert (google.name, google.total_timeout, google.outage_hold) == ("googlebot", 2.0, 12 * HOUR)
    assert ra.FetchPolicy.yandex().name == "yandex"
    assert ra.FetchPolicy.legacy_allow_on_error().unreachable == "allow"
    with pytest.raises(dataclasses.FrozenInstanceError):
        default.max_hops = 10  # type: ignore[misc]


@pytest.mark.parametrize(
    ("max_age", "ttl"), [(None, DAY), (0.0, 60.0), (5.0, 60.0), (120.0, 120.0), (1e9, DAY)]
)
def test_success_ttl(max_age: float | None, ttl: float) -> None:
    """2xx: max-age clamped to [60 s, 86,400 s], a day without one."""
    outcome = dataclasses.replace(GOOD, max_age=max_age)
    resolution = ra.FetchPolicy().resolve(outcome, None, 0.0)
    assert resolution.source == "fetched"
    assert resolution.ttl == ttl
    assert resolution.last_good is GOOD_RULES
    assert resolution.last_good_at == 0.0
    assert resolution.failures == 0


# --- rfc9309 (default) ---------------------------------------------------------------


@pytest.mark.parametrize("down", DOWN_OUTCOMES, ids=DOWN_IDS)
def test_rfc9309_unreachable_without_good_copy(down: ra.FetchOutcome) -> None:
    """rfc9309: unreachable with no good copy disallows all; error TTL 300 s."""
    resolution = ra.FetchPolicy.rfc9309().resolve(down, None, 0.0)
    assert is_disallow_all(resolution)
    assert resolution.source == "unreachable"
    assert resolution.ttl == 300.0
    assert resolution.failures == 1
    assert resolution.unreachable_since == 0.0


@pytest.mark.parametrize("down", DOWN_OUTCOMES, ids=DOWN_IDS)
def test_rfc9309_unreachable_with_good_copy(down: ra.FetchOutcome) -> None:
    """rfc9309: a good copy younger than 30 days is used (stale); older, disallow all."""
    policy = ra.FetchPolicy.rfc9309()
    good = policy.resolve(GOOD, None, 0.0)
    stale = policy.resolve(down, good, 10 * DAY)
    assert stale.source == "stale"
    assert stale.robots is GOOD_RULES
    assert not verdict(stale, "/private")
    assert verdict(stale, "/public")
    expired = policy.resolve(down, stale, 30 * DAY)
    assert expired.source == "unreachable"
    assert is_disallow_all(expired)
    assert expired.last_good is GOOD_RULES  # still remembered


def test_rfc9309_error_ttl_doubles_and_retry_after_wins() -> None:
    """Error TTL: 300 s doubling per failure up to 3,600 s; Retry-After overrides it."""
    policy = ra.FetchPolicy.rfc9309()
    down = DOWN_OUTCOMES[0]
    previous = None
    ttls = []
    for step in range(6):
        previous = policy.resolve(down, previous, float(step))
        ttls.append(previous.ttl)
    assert ttls == [300.0, 600.0, 1200.0, 2400.0, 3600.0, 3600.0]
    assert previous is not None
    assert previous.unreachable_since == 0.0
    retry = dataclasses.replace(down, retry_after=7200.0)
    assert policy.resolve(retry, previous, 10.0).ttl == 7200.0
    assert policy.resolve(dataclasses.replace(down, retry_after=1.0), None, 0.0).ttl == 60.0


@pytest.mark.parametrize(
    ("status", "forbidden", "allowed"),
    [
        (401, "allow", True),
        (403, "allow", True),
        (401, "disallow", False),
        (403, "disallow", False),
        (404, "disallow", True),
        (410, "allow", True),
    ],
)
def test_unavailable_statuses(status: int, forbidden: str, allowed: bool) -> None:
    """4xx allows all; 401/403 disallow all only with forbidden="disallow"."""
    policy = ra.FetchPolicy.rfc9309(forbidden=forbidden)
    resolution = policy.resolve(ra.FetchOutcome(URL, URL, status), None, 0.0)
    assert resolution.source == "unavailable"
    assert verdict(resolution, "/private") is allowed
    assert resolution.ttl == DAY
    assert resolution.failures == 0


# --- googlebot -------------------------------------------------------------------------


@pytest.mark.parametrize("down", DOWN_OUTCOMES, ids=DOWN_IDS)
def test_googlebot_outage_without_good_copy(down: ra.FetchOutcome) -> None:
    """googlebot, no good copy: disallow all for 12 h, then allow all."""
    policy = ra.FetchPolicy.googlebot()
    first = policy.resolve(down, None, 0.0)
    assert is_disallow_all(first)
    assert first.source == "unreachable"
    later = policy.resolve(down, first, 11 * HOUR)
    assert is_disallow_all(later)
    after_hold = policy.resolve(down, later, 12 * HOUR)
    assert is_allow_all(after_hold)
    assert after_hold.source == "unreachable"
    assert after_hold.unreachable_since == 0.0


@pytest.mark.parametrize("down", DOWN_OUTCOMES, ids=DOWN_IDS)
def test_googlebot_outage_with_good_copy(down: ra.FetchOutcome) -> None:
    """googlebot, good copy: disallow all for 12 h, then the good copy, after 30 days allow all."""
    policy = ra.FetchPolicy.googlebot()
    good = policy.resolve(GOOD, None, 0.0)
    start = 5 * DAY
    held = policy.resolve(down, good, start)
    assert is_disallow_all(held)
    assert held.source == "unreachable"
    stale = policy.resolve(down, held, start + 13 * HOUR)
    assert stale.source == "stale"
    assert stale.robots is GOOD_RULES
    given_up = policy.resolve(down, stale, start + 30 * DAY)
    assert is_allow_all(given_up)
    assert given_up.source == "unreachable"


def test_googlebot_outage_ends_on_success() -> None:
    """A success ends the outage: the next failure starts a new 12 h hold."""
    policy = ra.FetchPolicy.googlebot()
    down = DOWN_OUTCOMES[0]
    first = policy.resolve(down, None, 0.0)
    back = policy.resolve(GOOD, first, 20 * HOUR)
    assert back.unreachable_since is None
    again = policy.resolve(down, back, 21 * HOUR)
    assert is_disallow_all(again)
    assert again.unreachable_since == 21 * HOUR


# --- yandex and legacy -------------------------------------------------------------------


@pytest.mark.parametrize("down", DOWN_OUTCOMES, ids=DOWN_IDS)
def test_yandex_allows_all_on_any_failure(down: ra.FetchOutcome) -> None:
    """yandex: unreachable allows all, with or without a good copy (no stale copy)."""
    policy = ra.FetchPolicy.yandex()
    alone = policy.resolve(down, None, 0.0)
    assert is_allow_all(alone)
    assert alone.source == "unreachable"
    good = policy.resolve(GOOD, None, 0.0)
    after_good = policy.resolve(down, good, 60.0)
    assert is_allow_all(after_good)
    assert after_good.source == "unreachable"
    assert verdict(after_good, "/private")


@pytest.mark.parametrize("down", DOWN_OUTCOMES, ids=DOWN_IDS)
def test_legacy_allow_on_error(down: ra.FetchOutcome) -> None:
    """legacy_allow_on_error: the good copy if any (stale), else allow all."""
    policy = ra.FetchPolicy.legacy_allow_on_error()
    alone = policy.resolve(down, None, 0.0)
    assert is_allow_all(alone)
    assert alone.source == "unreachable"
    good = policy.resolve(GOOD, None, 0.0)
    stale = policy.resolve(down, good, DAY)
    assert stale.source == "stale"
    assert stale.robots is GOOD_RULES
    assert not verdict(stale, "/private")
