"""Configuration fails loudly at construction (issue 10 §1, issue 9 item 5).

Every public constructor refuses a bad setting with a ConfigurationError (a
ValueError; ConfigurationTypeError, also a TypeError, for the wrong type) whose
message names the setting, the value and the accepted values, before it creates
anything; good values, the presets and their documented fields still work.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from typing import Any

import pytest

import robots_async as ra
from robots_async.core import validate as _config
from robots_async.fetch import policy as fetch_policy
from robots_async.fetch.policy import FETCH_POLICY_NAMES, FetchPolicyChanges

from .conftest import TOKEN, USER_AGENT, Server

INF, NAN = math.inf, math.nan
FLOAT_FIELDS = [
    "connect_timeout",
    "total_timeout",
    "stale_max_age",
    "ttl",
    "min_ttl",
    "max_ttl",
    "error_ttl",
    "max_error_ttl",
]


def assert_names(error: ra.ConfigurationError, setting: str, value: object, accepted: str) -> None:
    """The error (and its message) names the setting, the bad value and what is accepted."""
    message = str(error)
    assert error.setting == setting
    assert error.value is value or error.value == value
    assert accepted in error.accepted
    assert f"{setting}={value!r}" in message
    assert accepted in message
    assert isinstance(error, ra.RobotsError)
    assert isinstance(error, ValueError)


def fetch_policy_cases() -> list[tuple[str, object, str]]:
    """(field, bad value, accepted text) for every FetchPolicy field."""
    cases: list[tuple[str, object, str]] = [
        ("name", "", "a non-empty string"),
        ("name", 5, "a non-empty string"),
        ("forbidden", "deny", "one of 'allow', 'disallow'"),
        ("forbidden", "Allow", "one of 'allow', 'disallow'"),
        ("forbidden", None, "one of 'allow', 'disallow'"),
        ("unreachable", "allow-all", "one of 'allow', 'disallow'"),
        ("max_hops", -1, "an int >= 0"),
        ("max_hops", 1.5, "an int >= 0"),
        ("max_hops", True, "an int >= 0"),
        ("max_bytes", 0, "None or an int >= 1"),
        ("max_bytes", -5, "None or an int >= 1"),
        ("max_bytes", "512000", "None or an int >= 1"),
        ("max_bytes", 5e5, "None or an int >= 1"),
        ("cross_origin_redirects", "yes", "True or False"),
        ("cross_origin_redirects", 1, "True or False"),
        ("outage_hold", -1.0, "None or a finite number >= 0"),
        ("outage_hold", INF, "None or a finite number >= 0"),
        ("outage_give_up", NAN, "None or a finite number >= 0"),
    ]
    for name in FLOAT_FIELDS:
        timeout = name.endswith("timeout")
        accepted = "a finite number > 0" if timeout else "a finite number >= 0"
        cases += [(name, -5.0, accepted), (name, INF, accepted), (name, NAN, accepted)]
        cases += [(name, -INF, accepted), (name, "10", accepted), (name, False, accepted)]
        if timeout:
            cases.append((name, 0, accepted))
    return cases


@pytest.mark.parametrize(("name", "value", "accepted"), fetch_policy_cases())
def test_fetch_policy_refuses_each_bad_field(name: str, value: object, accepted: str) -> None:
    """FetchPolicy(field=bad) raises at construction, naming field, value and accepted."""
    with pytest.raises(ra.ConfigurationError) as raised:
        ra.FetchPolicy(**{name: value})
    assert_names(raised.value, f"FetchPolicy.{name}", value, accepted)
    assert isinstance(raised.value, TypeError) is not has_field_type(name, value)


def has_field_type(name: str, value: object) -> bool:
    """True if ``value`` has the type of FetchPolicy field ``name`` (bool is no number)."""
    if name in {"name", "forbidden", "unreachable"}:
        return isinstance(value, str)
    if name == "cross_origin_redirects":
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if name in {"max_hops", "max_bytes"}:
        return isinstance(value, int)
    return isinstance(value, int | float)


@pytest.mark.parametrize(
    "preset",
    [
        ra.FetchPolicy.rfc9309,
        ra.FetchPolicy.googlebot,
        ra.FetchPolicy.yandex,
        ra.FetchPolicy.legacy_allow_on_error,
    ],
)
def test_presets_refuse_bad_changes(preset: Any) -> None:
    """The presets check their changes too (issue 9: total_timeout=inf once raised
    OverflowError from explain(); issue 10: forbidden="deny" was accepted)."""
    for changes in (
        {"total_timeout": INF},
        {"forbidden": "deny"},
        {"max_hops": -1},
        {"ttl": -1},
        {"total_timeout": -5},
    ):
        with pytest.raises(ra.ConfigurationError, match="FetchPolicy"):
            preset(**changes)
    with pytest.raises(TypeError):  # a misspelled keyword (mypy rejects it: test_typing)
        preset(totl_timeout=5.0)


def test_the_issue_example_is_refused_naming_the_first_bad_field() -> None:
    """Issue 10's example, FetchPolicy(forbidden="deny", max_hops=-1, ...)."""
    with pytest.raises(ra.ConfigurationError, match=r"FetchPolicy\.\w+="):
        ra.FetchPolicy(forbidden="deny", max_hops=-1, total_timeout=-5, ttl=-1)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("low", "high"),
    [("min_ttl", "max_ttl"), ("error_ttl", "max_error_ttl"), ("outage_hold", "outage_give_up")],
)
def test_fetch_policy_refuses_bounds_in_the_wrong_order(low: str, high: str) -> None:
    """A lower bound above its upper bound is refused, naming both settings."""
    with pytest.raises(ra.ConfigurationError) as raised:
        ra.FetchPolicy(**{low: 7200.0, high: 60.0})
    assert_names(raised.value, f"FetchPolicy.{low}", 7200.0, f"<= FetchPolicy.{high} (60.0)")
    ra.FetchPolicy(**{low: 60.0, high: 60.0})  # equal is fine


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"max_bytes": None},
        {"max_bytes": 1},
        {"max_hops": 0},
        {"stale_max_age": 0},
        {"ttl": 0, "min_ttl": 0, "max_ttl": 0},
        {"error_ttl": 0},
        {"outage_hold": None, "outage_give_up": None},
        {"outage_hold": 0.0, "outage_give_up": 0.0},
        {"total_timeout": 10**9, "connect_timeout": 1e-3},
        {"max_ttl": 10 * 365 * 86_400.0},
        {"forbidden": "disallow", "unreachable": "allow"},
        {"cross_origin_redirects": False, "name": "my-crawler"},
    ],
)
def test_fetch_policy_accepts_good_values(changes: dict[str, Any]) -> None:
    """Edge values that mean something (no limit, no redirects, no TTL) are accepted."""
    policy = ra.FetchPolicy(**changes)
    for name, value in changes.items():
        assert getattr(policy, name) == value


def test_presets_keep_their_documented_values() -> None:
    """The presets are unchanged by validation, and each validates."""
    default = ra.FetchPolicy()
    assert ra.FetchPolicy.rfc9309() == default
    google = ra.FetchPolicy.googlebot()
    assert (google.name, google.outage_hold, google.outage_give_up) == (
        "googlebot",
        12 * 3600.0,
        30 * 86_400.0,
    )
    yandex = ra.FetchPolicy.yandex()
    assert (yandex.name, yandex.unreachable, yandex.stale_max_age) == ("yandex", "allow", 0.0)
    legacy = ra.FetchPolicy.legacy_allow_on_error(total_timeout=5.0)
    assert (legacy.name, legacy.unreachable, legacy.total_timeout) == (
        "legacy-allow-on-error",
        "allow",
        5.0,
    )
    changed = dataclasses.replace(google, max_bytes=None)
    assert changed.max_bytes is None
    with pytest.raises(ra.ConfigurationError, match=r"FetchPolicy\.max_bytes"):
        dataclasses.replace(google, max_bytes=0)


@pytest.mark.parametrize("name", FETCH_POLICY_NAMES)
def test_preset_by_name(name: ra.FetchPolicyName) -> None:
    """FetchPolicy.preset(name) is the named classmethod; each preset carries its name."""
    by_method = getattr(ra.FetchPolicy, name.replace("-", "_"))(total_timeout=3.0)
    assert ra.FetchPolicy.preset(name, total_timeout=3.0) == by_method
    assert by_method.name == name


@pytest.mark.parametrize("name", ["rfc-9309", "Googlebot", "", None])
def test_preset_by_unknown_name_names_the_setting(name: object) -> None:
    """An unknown preset name names the adapter's setting and lists the presets."""
    setting = "ROBOTSASYNC_FETCH_POLICY"
    with pytest.raises(ra.ConfigurationError) as raised:
        ra.FetchPolicy.preset(name, setting=setting)  # type: ignore[arg-type]
    accepted = "one of 'rfc9309', 'googlebot', 'yandex', 'legacy-allow-on-error'"
    assert_names(raised.value, setting, name, accepted)


def test_preset_keywords_are_exactly_the_fields() -> None:
    """The presets' typed keywords (FetchPolicyChanges) match FetchPolicy's fields and
    types, so a field added or renamed in one place only fails here."""
    changes = typing.get_type_hints(FetchPolicyChanges)
    hints = typing.get_type_hints(ra.FetchPolicy)
    assert changes == {f.name: hints[f.name] for f in dataclasses.fields(ra.FetchPolicy)}


def test_every_numeric_field_has_a_bound() -> None:
    """The bounds table names exactly the numeric fields (no stale or missing entry)."""
    hints = typing.get_type_hints(ra.FetchPolicy)
    numeric = {
        name
        for name, hint in hints.items()
        if hint is not bool and ({int, float} & {hint, *typing.get_args(hint)})
    }
    assert set(fetch_policy._FETCH_BOUNDS) == numeric


def test_error_back_off_never_overflows() -> None:
    """After thousands of failures in a row the error TTL is max_error_ttl, not an
    OverflowError (2.0 ** 1024 does not fit a float)."""
    policy = ra.FetchPolicy()
    down = ra.FetchOutcome("https://x.test/robots.txt", "https://x.test/robots.txt", 503)
    previous = policy.resolve(down, None, 0.0)
    previous = dataclasses.replace(previous, failures=5000)
    resolution = policy.resolve(down, previous, 1.0)
    assert resolution.failures == 5001
    assert resolution.ttl == policy.max_error_ttl


# --------------------------------------------------------------------------- policy names


@pytest.mark.parametrize("name", ["googel", "Google", "rfc-9309", "google_reference", ""])
def test_parse_and_parser_refuse_unknown_policy_names(name: str) -> None:
    """parse() and RobotsParser name the bad policy and list the accepted ones."""
    accepted = "one of 'google', 'google-reference', 'rfc9309', 'first-match' or a MatchPolicy"
    with pytest.raises(ra.ConfigurationError) as raised:
        ra.parse(b"", policy=name)  # type: ignore[arg-type]
    assert_names(raised.value, "policy", name, accepted)
    with pytest.raises(ra.ConfigurationError) as raised:
        ra.RobotsParser(name)  # type: ignore[arg-type]
    assert_names(raised.value, "policy", name, accepted)


def test_policy_registry() -> None:
    """get_policy: every name in PolicyName is a preset of that name; objects pass
    through; an adapter's setting name appears in the error."""
    from robots_async.core.policy import POLICY_NAMES, get_policy

    assert typing.get_args(ra.PolicyName) == POLICY_NAMES
    for name in POLICY_NAMES:
        assert get_policy(name).name == name
    assert get_policy(ra.RFC9309) is ra.RFC9309
    with pytest.raises(ra.ConfigurationError, match="ROBOTSASYNC_POLICY='googel'"):
        get_policy("googel", setting="ROBOTSASYNC_POLICY")
    with pytest.raises(ra.ConfigurationTypeError, match="ROBOTSASYNC_POLICY=None"):
        get_policy(None, setting="ROBOTSASYNC_POLICY")


# --------------------------------------------------------------------------- checker, cache


def checker_cases() -> list[tuple[dict[str, Any], str, object, str]]:
    """(kwargs, setting, bad value, accepted) for RobotsChecker."""
    policy = "one of 'google', 'google-reference', 'rfc9309', 'first-match' or a MatchPolicy"
    token = "a product token such as 'MyBot'"
    cases: list[tuple[dict[str, Any], str, object, str]] = [
        ({"policy": "googel"}, "policy", "googel", policy),
        ({"policy": 5}, "policy", 5, policy),
        ({"robots_token": "My Bot"}, "robots_token", "My Bot", token),
        ({"robots_token": "MyBot/1.0"}, "robots_token", "MyBot/1.0", token),
        ({"robots_token": ""}, "robots_token", "", token),
        ({"fetch_policy": "googlebot"}, "fetch_policy", "googlebot", "None or a FetchPolicy"),
    ]
    delay = "a finite number >= 0"
    cases += [({"max_delay": v}, "max_delay", v, delay) for v in (-1.0, INF, NAN, "30")]
    limits = ("max_entries", "max_memory", "max_concurrent_fetches")
    bad = (0, -1, 1.5, "64", None)
    cases += [({name: v}, name, v, "an int >= 1") for name in limits for v in bad]
    return cases


@pytest.mark.parametrize(("kwargs", "setting", "value", "accepted"), checker_cases())
def test_checker_refuses_each_bad_setting(
    kwargs: dict[str, Any], setting: str, value: object, accepted: str
) -> None:
    """RobotsChecker(bad) raises at construction (issue 10: policy="googel" used to be
    accepted and then disallowed every origin silently)."""
    with pytest.raises(ra.ConfigurationError) as raised:
        ra.RobotsChecker(USER_AGENT, **kwargs)
    assert_names(raised.value, f"RobotsChecker.{setting}", value, accepted)


@pytest.mark.parametrize("user_agent", ["", "   ", "/1.0", "(compatible)"])
def test_checker_refuses_a_user_agent_without_a_name(user_agent: str) -> None:
    """A User-Agent naming no crawler: InvalidUserAgentError naming the setting."""
    with pytest.raises(ra.InvalidUserAgentError) as raised:
        ra.RobotsChecker(user_agent)
    assert f"RobotsChecker.user_agent={user_agent!r}" in str(raised.value)
    assert "MyBot/1.0" in str(raised.value)  # an example of what is accepted
    with pytest.raises(ra.ConfigurationTypeError, match=r"RobotsChecker\.user_agent=b'Bot'"):
        ra.RobotsChecker(b"Bot")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "user_agent", ["Bot/1\r\nX-Injected: 1", "Bot/1\n", "Bot\x01/1", "Bot\x7f"]
)
def test_a_user_agent_no_header_can_carry_is_refused(user_agent: str) -> None:
    """A control character other than HTAB (RFC 9110 §5.5): aiohttp refused every
    request, each robots.txt was "unreachable" and everything disallowed, where the
    checker or fetcher should not have been made."""
    with pytest.raises(ra.ConfigurationError, match=r"RobotsChecker\.user_agent=.*control"):
        ra.RobotsChecker(user_agent)
    with pytest.raises(ra.ConfigurationError, match=r"AiohttpFetcher\.user_agent=.*control"):
        ra.AiohttpFetcher(user_agent=user_agent)
    ra.RobotsChecker("Bot/1.0\t(+https://example.org/bot)")  # HTAB is allowed


def cache_cases() -> list[tuple[dict[str, Any], str, object, str]]:
    """(kwargs, setting, bad value, accepted) for RobotsCache."""
    cases: list[tuple[dict[str, Any], str, object, str]] = [
        ({"match_policy": "googel"}, "match_policy", "googel", "'google', 'google-reference'"),
        ({"robots_token": "A B"}, "robots_token", "A B", "a product token"),
        ({"policy": "rfc9309"}, "policy", "rfc9309", "None or a FetchPolicy"),
    ]
    limits = ("max_entries", "max_memory", "max_concurrent_fetches")
    cases += [({name: v}, name, v, "an int >= 1") for name in limits for v in (0, -3, 2.0, True)]
    return cases


@pytest.mark.parametrize(("kwargs", "setting", "value", "accepted"), cache_cases())
def test_cache_refuses_each_bad_setting(
    kwargs: dict[str, Any], setting: str, value: object, accepted: str
) -> None:
    """RobotsCache(bad) raises at construction, naming setting, value and accepted."""
    fetcher = ra.AiohttpFetcher(user_agent=USER_AGENT)
    with pytest.raises(ra.ConfigurationError) as raised:
        ra.RobotsCache(fetcher, **kwargs)
    assert_names(raised.value, f"RobotsCache.{setting}", value, accepted)


def test_fetcher_refuses_an_unknown_match_policy() -> None:
    """AiohttpFetcher used to keep "googel" and fail every fetch as "unreachable"."""
    with pytest.raises(ra.ConfigurationError, match=r"AiohttpFetcher\.match_policy='googel'"):
        ra.AiohttpFetcher(user_agent=USER_AGENT, match_policy="googel")  # type: ignore[arg-type]


async def test_good_settings_are_accepted_and_answer(server: Server) -> None:
    """Unusual but valid settings (no byte limit, a huge finite timeout, a token given,
    rfc9309 matching, no pacing cap) build a checker that answers correctly."""
    server.text("/robots.txt", f"User-agent: {TOKEN}\nDisallow: /private\n")
    policy = ra.FetchPolicy.googlebot(max_bytes=None, total_timeout=1e9, connect_timeout=5)
    async with ra.RobotsChecker(
        USER_AGENT,
        robots_token=TOKEN,
        fetch_policy=policy,
        policy="rfc9309",
        max_delay=0,
        max_entries=1,
        max_memory=1,
        max_concurrent_fetches=1,
    ) as checker:
        decision = await checker.explain(server.url("/private/x"))
        assert not decision.allowed
        assert decision.source == "fetched"
        assert await checker.allowed(server.url("/public"))
        assert checker.robots_token == TOKEN
    async with ra.RobotsChecker(USER_AGENT, policy=ra.FIRST_MATCH) as checker:
        assert checker.robots_token == TOKEN


# --------------------------------------------------------------------------- validators


def test_validators_for_adapters() -> None:
    """The shared validators other modules (Scrapy settings, CLI flags) call."""
    assert _config.number("--timeout", 5, positive=True) == 5.0
    assert _config.integer("ROBOTSASYNC_MAX_ENTRIES", 3, minimum=1) == 3
    assert _config.optional_integer("ROBOTSASYNC_MAX_BYTES", None, minimum=1) is None
    assert _config.choice("ROBOTSASYNC_FORBIDDEN", "allow", ("allow", "disallow")) == "allow"
    assert _config.agent("--agent", "MyBot/1.0") == "MyBot"
    assert _config.token("ROBOTSTXT_USER_AGENT", "360Spider") == "360Spider"
    with pytest.raises(ra.ConfigurationError) as raised:
        _config.number("--timeout", INF, positive=True)
    assert_names(raised.value, "--timeout", INF, "a finite number > 0")
    with pytest.raises(ra.ConfigurationError) as raised:
        _config.choice("ROBOTSASYNC_FORBIDDEN", "deny", ("allow", "disallow"))
    assert_names(raised.value, "ROBOTSASYNC_FORBIDDEN", "deny", "one of 'allow', 'disallow'")


STORE = "None or a RobotsStore"


@pytest.mark.parametrize(
    ("kwargs", "setting", "accepted"),
    [
        ({"store": "redis://localhost:6379/0"}, "store", STORE),
        ({"store": "/tmp/robots.sqlite"}, "store", STORE),
        ({"store": 0}, "store", STORE),
        ({"cache": "cache"}, "cache", "None or a RobotsCache"),
        ({"cache": 0}, "cache", "None or a RobotsCache"),
        ({"cache": ra.MemoryStore()}, "cache", "None or a RobotsCache"),
        ({"fetcher": "x"}, "fetcher", "None or a Fetcher"),
        ({"session": "x"}, "session", "None or an aiohttp.ClientSession"),
        ({"clock": 0.0}, "clock", "a function"),
        ({"sleep": None}, "sleep", "a function"),
    ],
)
def test_checker_refuses_parts_of_the_wrong_kind(
    kwargs: dict[str, Any], setting: str, accepted: str
) -> None:
    """Found: store="redis://..." (a URL for a RedisStore) and the other parts were kept,
    and the first check raised AttributeError ('str' object has no attribute 'get');
    cache=0 was taken as no cache; cache=MemoryStore() raised AttributeError."""
    with pytest.raises(ra.ConfigurationTypeError) as raised:
        ra.RobotsChecker(USER_AGENT, **kwargs)
    [value] = kwargs.values()
    assert_names(raised.value, f"RobotsChecker.{setting}", value, accepted)


@pytest.mark.parametrize(
    ("kwargs", "setting", "accepted"),
    [
        ({"store": "redis://localhost:6379/0"}, "store", STORE),
        ({"clock": "time"}, "clock", "a function"),
    ],
)
def test_cache_refuses_parts_of_the_wrong_kind(
    kwargs: dict[str, Any], setting: str, accepted: str
) -> None:
    fetcher = ra.AiohttpFetcher(user_agent=USER_AGENT)
    with pytest.raises(ra.ConfigurationTypeError) as raised:
        ra.RobotsCache(fetcher, **kwargs)
    [value] = kwargs.values()
    assert_names(raised.value, f"RobotsCache.{setting}", value, accepted)
    with pytest.raises(ra.ConfigurationTypeError, match=r"^RobotsCache\.fetcher='x'"):
        ra.RobotsCache("x")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "setting", "accepted"),
    [
        ({"policy": "googlebot"}, "policy", "None or a FetchPolicy"),
        ({"session": "x"}, "session", "None or an aiohttp.ClientSession"),
        ({"resolver": "8.8.8.8"}, "resolver", "None or an aiohttp AbstractResolver"),
        ({"public_address": True}, "public_address", "a function"),
        ({"headers": [("X-Bot", "1")]}, "headers", "None or a mapping"),
        ({"user_agent": b"MyBot"}, "user_agent", "a non-empty string"),
    ],
)
def test_fetcher_refuses_parts_of_the_wrong_kind(
    kwargs: dict[str, Any], setting: str, accepted: str
) -> None:
    """Found: policy="googlebot" (a preset's name) was kept and the first fetch raised
    AttributeError ('str' object has no attribute 'connect_timeout'); a str session,
    resolver or public_address, or headers as pairs, failed there likewise."""
    arguments = {"user_agent": USER_AGENT, **kwargs}
    with pytest.raises(ra.ConfigurationTypeError) as raised:
        ra.AiohttpFetcher(**arguments)
    [value] = kwargs.values()
    assert_names(raised.value, f"AiohttpFetcher.{setting}", value, accepted)
