"""Adversarial configuration (issue 10 §1): odd numbers are accepted meaningfully or
refused with a ConfigurationError naming the setting; nothing raises OverflowError (or
any other error) later.

``math.isfinite(10**400)`` raises OverflowError, and ``repr`` of an int of more than
4,300 digits raises ValueError: both used to escape construction.
"""

from __future__ import annotations

import enum
import sys
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import pytest

import robots_async as ra

from .conftest import USER_AGENT

if TYPE_CHECKING:
    from collections.abc import Callable

    from .conftest import Server

FLOAT_FIELDS = (
    "connect_timeout",
    "total_timeout",
    "stale_max_age",
    "outage_hold",
    "outage_give_up",
    "ttl",
    "min_ttl",
    "max_ttl",
    "error_ttl",
    "max_error_ttl",
)
INT_FIELDS = ("max_hops", "max_bytes")
HUGE = 10**400  # an int, beyond any float
ENORMOUS = 10**5000  # beyond what repr() prints (sys.get_int_max_str_digits)


@pytest.mark.parametrize("field", FLOAT_FIELDS)
@pytest.mark.parametrize("value", [HUGE, -HUGE, ENORMOUS], ids=["1e400", "-1e400", "1e5000"])
def test_int_beyond_any_float_is_a_configuration_error(field: str, value: int) -> None:
    """Found: OverflowError (10**400) or a ValueError not naming the setting (10**5000)."""
    with pytest.raises(ra.ConfigurationError) as caught:
        ra.FetchPolicy(**{field: value})
    assert caught.value.setting == f"FetchPolicy.{field}"
    assert len(str(caught.value)) < 500


@pytest.mark.parametrize("field", INT_FIELDS)
def test_negative_int_too_long_to_print_is_a_configuration_error(field: str) -> None:
    """Found: repr() of -10**5000 raised ValueError('Exceeds the limit...')."""
    with pytest.raises(ra.ConfigurationError, match=f"FetchPolicy.{field}="):
        ra.FetchPolicy(**{field: -ENORMOUS})


@pytest.mark.parametrize("setting", ["max_delay"])
def test_checker_number_beyond_any_float(setting: str) -> None:
    """Found: RobotsChecker(max_delay=10**400) raised OverflowError."""
    with pytest.raises(ra.ConfigurationError, match=f"RobotsChecker.{setting}="):
        ra.RobotsChecker(USER_AGENT, **{setting: HUGE})


def test_message_of_a_huge_value_is_short() -> None:
    """A 1 MB string as a number: refused, the message cut (not 1 MB long)."""
    with pytest.raises(ra.ConfigurationTypeError) as caught:
        ra.FetchPolicy(max_hops="9" * 1_000_000)  # type: ignore[arg-type]
    assert caught.value.setting == "FetchPolicy.max_hops"
    assert len(str(caught.value)) < 500


@pytest.mark.parametrize(
    "value", [HUGE, ENORMOUS, float("inf"), float("nan")], ids=["1e400", "1e5000", "inf", "nan"]
)
@pytest.mark.parametrize("option", ["keep_for", "timeout"])
def test_redis_store_refuses_numbers_beyond_floats(option: str, value: float) -> None:
    """Found: RedisStore(keep_for=10**400) raised OverflowError (no server is contacted
    at construction)."""
    pytest.importorskip("redis")
    from robots_async.contrib.redis import RedisStore

    with pytest.raises(ValueError, match=f"RedisStore {option}"):
        RedisStore("redis://127.0.0.1:1/0", **{option: value})


class Hops(enum.IntEnum):
    """An int subclass, as a settings layer might hand over."""

    THREE = 3


class Seconds(float):
    """A float subclass (numpy.float64 is one)."""


@pytest.mark.parametrize(
    ("changes", "setting"),
    [
        ({"max_hops": True}, "max_hops"),
        ({"max_bytes": False}, "max_bytes"),
        ({"ttl": True}, "ttl"),
        ({"max_hops": "5"}, "max_hops"),
        ({"total_timeout": "30"}, "total_timeout"),
        ({"max_hops": 5.0}, "max_hops"),
        ({"ttl": Decimal(5)}, "ttl"),
        ({"ttl": Fraction(1, 2)}, "ttl"),
        ({"total_timeout": -0.0}, "total_timeout"),
        ({"total_timeout": 0}, "total_timeout"),
        ({"max_bytes": 0}, "max_bytes"),
        ({"ttl": -sys.float_info.min}, "ttl"),
        ({"min_ttl": 10.0, "max_ttl": 5.0}, "min_ttl"),
    ],
)
def test_refused_with_the_setting_named(changes: dict[str, Any], setting: str) -> None:
    """Held: bool for a number, strings, Decimal/Fraction, -0.0 or 0 where > 0 is
    required, a negative subnormal, disordered bounds."""
    with pytest.raises(ra.ConfigurationError) as caught:
        ra.FetchPolicy(**changes)
    assert caught.value.setting == f"FetchPolicy.{setting}"


@pytest.mark.parametrize("option", ["max_entries", "max_memory", "max_concurrent_fetches"])
@pytest.mark.parametrize("value", [True, 0, -1, 1.5, "10"])
def test_checker_and_cache_limits_refused(option: str, value: object) -> None:
    """Held: RobotsChecker and RobotsCache refuse bools, zero, negatives, floats, strings."""
    with pytest.raises(ra.ConfigurationError, match=f"RobotsChecker.{option}="):
        ra.RobotsChecker(USER_AGENT, **{option: value})
    fetcher = ra.AiohttpFetcher(user_agent=USER_AGENT)
    with pytest.raises(ra.ConfigurationError, match=f"RobotsCache.{option}="):
        ra.RobotsCache(fetcher, **{option: value})


def test_odd_but_meaningful_values_are_accepted() -> None:
    """Held: -0.0 where >= 0 is allowed (it is 0), an IntEnum, a float subclass, a
    subnormal timeout (every fetch times out: fail closed), huge ints for counts."""
    policy = ra.FetchPolicy(
        ttl=-0.0,
        max_hops=Hops.THREE,
        error_ttl=Seconds(7.0),
        total_timeout=5e-324,
        connect_timeout=5e-324,
        max_bytes=HUGE,
    )
    assert policy.ttl == 0
    assert policy.max_hops == 3


async def test_extreme_accepted_limits_give_correct_verdicts(
    server: Server, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """Held: every time limit at the largest float, counts at 10**400: a check on a
    real origin and one on a closed port answer, without OverflowError."""
    server.text("/robots.txt", "User-agent: *\nDisallow: /private\n")
    biggest = sys.float_info.max
    policy = ra.FetchPolicy(
        max_hops=HUGE,
        max_bytes=HUGE,
        connect_timeout=biggest,
        total_timeout=biggest,
        stale_max_age=biggest,
        outage_hold=biggest,
        outage_give_up=biggest,
        ttl=biggest,
        min_ttl=biggest,
        max_ttl=biggest,
        error_ttl=biggest,
        max_error_ttl=biggest,
    )
    checker = make_checker(
        fetch_policy=policy,
        max_delay=biggest,
        max_entries=HUGE,
        max_memory=HUGE,
        max_concurrent_fetches=HUGE,
    )
    decision = await checker.explain(server.url("/private/x"))
    assert (decision.allowed, decision.source) == (False, "fetched")
    assert await checker.allowed(server.url("/public"))
    assert checker.stats.cache.fetches == 1
    closed = await checker.explain("http://127.0.0.1:1/x")
    assert (closed.allowed, closed.source) == (False, "unreachable")


async def test_subnormal_timeout_fails_closed(
    server: Server, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """Held: a 5e-324 s fetch deadline cannot fetch anything: disallowed, not allowed."""
    server.text("/robots.txt", "User-agent: *\nAllow: /\n")
    policy = ra.FetchPolicy(total_timeout=5e-324, connect_timeout=5e-324)
    checker = make_checker(fetch_policy=policy)
    decision = await checker.explain(server.url("/a"))
    assert (decision.allowed, decision.source) == (False, "unreachable")


@pytest.mark.parametrize(
    "setting", ["ROBOTSASYNC_MAX_BYTES", "ROBOTSASYNC_MAX_ENTRIES", "ROBOTSASYNC_MAX_MEMORY"]
)
@pytest.mark.parametrize("value", ["9" * 400, HUGE], ids=["digits", "int"])
def test_scrapy_integer_settings_beyond_floats_are_read(setting: str, value: object) -> None:
    """Found: a 400-digit count (``-s ROBOTSASYNC_MAX_BYTES=999...``) raised
    OverflowError from math.isfinite at startup. An int is finite: accepted as given
    (no limit in practice), like the same int passed to FetchPolicy."""
    from robots_async.contrib._scrapy_settings import read_settings

    read_settings({setting: value})
    with pytest.raises(ra.ConfigurationError, match=setting):
        read_settings({setting: "-" + "9" * 400})
    with pytest.raises(ra.ConfigurationError, match=setting):
        read_settings({setting: "9" * 5000})  # beyond int(): refused, named
