"""Hostile cache headers (issue 9 item 5): max-age, s-maxage, Retry-After, Expires and
Date of any length or sign are clamped to [0, 2**31] seconds and never raise."""

from __future__ import annotations

import math
from email.utils import formatdate

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robots_async as ra
from robots_async.fetch.http import DELTA_MAX, cache_directives, max_age, retry_after

NOW = 1_700_000_000.0
#: Digits, signs, dots, exponents, quotes, spaces and commas, up to 5,000 of them
#: (past Python's 4,300-digit int() limit).
NUMBERY = st.text(alphabet='0123456789-+.eE" ,;=', max_size=5000)
ANY_TEXT = st.text(max_size=300)
DATES = st.one_of(
    st.floats(min_value=-6e10, max_value=2.5e11).map(lambda t: formatdate(t, usegmt=True)),
    st.tuples(st.integers(-99999, 99999), st.integers(-9999, 9999)).map(
        lambda p: f"Mon, 01 Jan {p[0]} 00:00:00 {p[1]:+05d}"
    ),
    ANY_TEXT,
)


def clamped(value: float | None) -> bool:
    """None, or a finite number of seconds in [0, 2**31]."""
    return value is None or (math.isfinite(value) and 0.0 <= value <= DELTA_MAX)


@settings(max_examples=300, deadline=None)
@given(
    directive=st.sampled_from(["max-age", "s-maxage", "MAX-AGE", "no-cache", "private"]),
    value=NUMBERY,
    extra=ANY_TEXT,
)
def test_cache_control_values_are_clamped(directive: str, value: str, extra: str) -> None:
    """Any Cache-Control value (huge, negative, fractional, quoted, junk around it)."""
    for header in (
        f"{directive}={value}",
        f"{extra}, {directive}={value}",
        f"{directive}={value}, {extra}",
    ):
        assert clamped(max_age({"Cache-Control": header}, NOW))


@settings(max_examples=300, deadline=None)
@given(value=st.one_of(NUMBERY, DATES), date=st.one_of(st.none(), DATES))
def test_retry_after_values_are_clamped(value: str, date: str | None) -> None:
    """Retry-After as delta-seconds of any length or sign, or any date, with any Date."""
    headers = {"Retry-After": value, **({"Date": date} if date is not None else {})}
    assert clamped(retry_after(headers, NOW))


@settings(max_examples=300, deadline=None)
@given(expires=st.one_of(NUMBERY, DATES), date=st.one_of(st.none(), DATES))
def test_expires_and_date_are_clamped(expires: str, date: str | None) -> None:
    """Expires minus Date for any pair of values (an invalid Expires means 0)."""
    headers = {"Expires": expires, **({"Date": date} if date is not None else {})}
    assert clamped(max_age(headers, NOW))


@settings(max_examples=200, deadline=None)
@given(digits=st.integers(min_value=11, max_value=5000))
def test_huge_delta_seconds_saturate_at_2_pow_31(digits: int) -> None:
    """RFC 9111 §1.2.2: a delta-seconds too large to represent counts as 2**31."""
    assert max_age({"Cache-Control": "max-age=" + "9" * digits}, NOW) == DELTA_MAX
    assert retry_after({"Retry-After": "9" * digits}, NOW) == DELTA_MAX


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Cache-Control": 'no-cache="Set-Cookie", max-age=3600'}, 3600.0),  # issue 12
        ({"Cache-Control": 'no-cache="Set-Cookie, X-A", s-maxage=60'}, 60.0),
        ({"Cache-Control": "no-cache, max-age=3600"}, 0.0),
        ({"Cache-Control": "No-Store"}, 0.0),
        ({"Cache-Control": "max-age=-5"}, 0.0),  # invalid: stale (RFC 9111 §4.2.1)
        ({"Cache-Control": "max-age=1.5"}, 0.0),
        ({"Cache-Control": 'max-age="120"'}, 120.0),
        ({"Cache-Control": "max-age=0000120"}, 120.0),
        ({"Cache-Control": "max-age=10, max-age=99"}, 10.0),  # first occurrence
        ({"Cache-Control": "public"}, None),
        ({"Expires": "0"}, 0.0),  # RFC 9111 §5.3: invalid means already expired
        (
            {"Expires": formatdate(NOW + 600, usegmt=True), "Date": formatdate(NOW, usegmt=True)},
            600.0,
        ),
        ({"Expires": formatdate(NOW + 600, usegmt=True)}, 600.0),  # no Date: our clock
        ({"Expires": "Fri, 31 Dec 9999 23:59:59 GMT"}, float(DELTA_MAX)),
        ({"Cache-Control": "max-age=30", "Expires": "0"}, 30.0),  # max-age wins
    ],
)
def test_freshness_examples(headers: dict[str, str], expected: float | None) -> None:
    """Cache-Control (a field-scoped no-cache does not make the response uncacheable),
    then Expires minus Date."""
    assert max_age(headers, NOW) == expected


@pytest.mark.parametrize(
    ("value", "date", "expected"),
    [
        ("120", None, 120.0),
        ("-120", None, None),
        (formatdate(NOW + 90, usegmt=True), formatdate(NOW, usegmt=True), 90.0),
        # A server clock a day behind ours: the delta is the server's (Date).
        (formatdate(NOW - 86_400 + 90, usegmt=True), formatdate(NOW - 86_400, usegmt=True), 90.0),
        (formatdate(NOW - 90, usegmt=True), None, 0.0),
        ("Mon, 01 Jan 0001 00:00:00 +2359", None, 0.0),
        ("soon", None, None),
    ],
)
def test_retry_after_examples(value: str, date: str | None, expected: float | None) -> None:
    """Delta-seconds or an HTTP-date, measured from the response's Date when present."""
    headers = {"Retry-After": value, **({"Date": date} if date is not None else {})}
    assert retry_after(headers, NOW) == expected


def test_quoted_commas_do_not_split_directives() -> None:
    """no-cache="a, max-age=0" is one directive; the max-age inside is not read."""
    directives = cache_directives('no-cache="a, max-age=0", max-age=50')
    assert directives == {"no-cache": "a, max-age=0", "max-age": "50"}


def test_policy_turns_a_huge_max_age_into_its_max_ttl() -> None:
    """Through FetchPolicy: a 400-digit max-age is a 24 h TTL, not an OverflowError."""
    outcome = ra.FetchOutcome(
        "http://a.test/robots.txt",
        "http://a.test/robots.txt",
        200,
        max_age=max_age({"Cache-Control": "max-age=" + "9" * 400}, NOW),
        robots=ra.RobotsTxt.allow_all(),
    )
    assert ra.FetchPolicy().resolve(outcome, None, NOW).ttl == 86_400.0
