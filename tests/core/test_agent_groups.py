"""The crawler that asks gets its own group (issue 11 §2), and group extensions agree.

Under the default policies a group naming the crawler exactly (case-insensitively, up
to the first space or "/") is its group; only without one does Google's reduction
of the robots.txt value to a leading [A-Za-z_-] run decide; an empty token never
selects a named group. ``google-reference`` keeps Google's behaviour bit for bit.
"""

from __future__ import annotations

import datetime

import pytest

import robots_async as ra

NUMBERED = b"User-agent: 008\nDisallow: /\n\nUser-agent: *\nDisallow: /private\n"
RULE_BOTS = b"User-agent: Rule1TestBot\nDisallow: /foo\n\nUser-agent: Rule3TestBot\nDisallow: *m\n"
PAGE = "http://example.com/page"


@pytest.mark.parametrize("agent", ["*", "123", "2bot", "Яндекс", "360Spider", ""])
@pytest.mark.parametrize("policy", ["google", "rfc9309"])
def test_agents_without_a_group_get_star(agent: str, policy: str) -> None:
    """An agent the file does not name gets "*", never the "008" group."""
    robots = ra.parse(NUMBERED, policy=policy)  # type: ignore[arg-type]
    for kwargs in ({"user_agent": agent}, {"robots_token": agent}):
        assert robots.allowed(PAGE, **kwargs)  # type: ignore[arg-type]
        assert not robots.allowed("http://example.com/private", **kwargs)  # type: ignore[arg-type]
        assert robots.explain("http://example.com/private", **kwargs).line == 5  # type: ignore[arg-type]


def test_numbered_group_names_its_crawler_exactly() -> None:
    """ "User-agent: 008" is the group of the crawler called 008, and only of it."""
    robots = ra.parse(NUMBERED)
    assert not robots.allowed(PAGE, user_agent="008/1.0")
    assert robots.groups_for(user_agent="008") == (robots.groups[0],)


def test_reference_keeps_googles_empty_token_quirk() -> None:
    """google-reference: the empty agent selects "008" (reduced to ""), as Google's does."""
    robots = ra.parse(NUMBERED, policy="google-reference")
    assert not robots.allowed(PAGE, robots_token="")
    assert robots.allowed(PAGE, robots_token="*")
    assert robots.allowed(PAGE, robots_token="360Spider")  # the query is not reduced


def test_digit_names_do_not_merge_groups() -> None:
    """Rule1TestBot and Rule3TestBot are two crawlers, not one "Rule" group."""
    robots = ra.parse(RULE_BOTS)
    assert robots.allowed("http://example.com/fo.html", user_agent="Rule1TestBot")
    assert not robots.allowed("http://example.com/foo", user_agent="Rule1TestBot/2.0")
    assert not robots.allowed("http://example.com/fo.html", user_agent="Rule3TestBot")
    assert robots.allowed("http://example.com/foo", user_agent="Rule3TestBot")
    assert robots.explain("http://example.com/foo", user_agent="rule1testbot").line == 2


def test_exact_name_wins_over_reduction() -> None:
    """A group naming Googlebot exactly replaces the "Googlebot2" group it reduces to."""
    body = b"User-agent: Googlebot2\nDisallow: /b\n\nUser-agent: Googlebot\nDisallow: /a\n"
    google = ra.parse(body)
    assert google.allowed("http://e.com/b", robots_token="Googlebot")
    assert not google.allowed("http://e.com/a", robots_token="Googlebot")
    assert not google.allowed("http://e.com/b", robots_token="Googlebot2")
    assert google.allowed("http://e.com/a", robots_token="Googlebot2")
    reference = ra.parse(body, policy="google-reference")
    assert not reference.allowed("http://e.com/b", robots_token="Googlebot")  # merged
    assert reference.allowed("http://e.com/b", robots_token="Googlebot2")  # never named


def test_reduction_still_applies_without_an_exact_group() -> None:
    """Without a group naming it exactly, Google's reduction decides (Googlebot2 -> Googlebot)."""
    body = b"User-agent: Googlebot2\nDisallow: /\n\nUser-agent: *\nAllow: /\n"
    assert not ra.parse(body).allowed(PAGE, robots_token="Googlebot")
    assert not ra.parse(body, policy="google-reference").allowed(PAGE, robots_token="Googlebot")


def test_real_crawler_names() -> None:
    """360Spider, MJ12bot and archive.org_bot each find the group that names them."""
    body = (
        b"User-agent: 360Spider\nDisallow: /a\n\n"
        b"User-agent: MJ12bot\nDisallow: /b\n\n"
        b"User-agent: archive.org_bot\nDisallow: /c\n\n"
        b"User-agent: *\nDisallow: /z\n"
    )
    robots = ra.parse(body)
    cases = {
        "360Spider/2.0 (+http://webscan.360.cn)": "/a",
        "Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)": "/b",
        "archive.org_bot +http://archive.org/details/archive.org_bot": "/c",
    }
    for agent, blocked in cases.items():
        for path in ("/a", "/b", "/c", "/z"):
            assert robots.allowed("http://e.com" + path, user_agent=agent) is (path != blocked)


def test_request_rate_keeps_the_slowest_line() -> None:
    """Several Request-rate lines in one group: the slowest wins, like Crawl-delay."""
    body = b"User-agent: *\nRequest-rate: 1/10s\nRequest-rate: 100/15m\nCrawl-delay: 2\n"
    rate = ra.parse(body).request_rate(user_agent="Bot")
    assert rate is not None
    assert (rate.requests, rate.seconds, rate.delay) == (1, 10.0, 10.0)
    body = b"User-agent: *\nRequest-rate: 100/15m\nRequest-rate: 1/10s\n"
    assert ra.parse(body).request_rate(user_agent="Bot") == ra.RequestRate(1, 10.0)


def test_request_rate_keeps_its_time_window() -> None:
    """Request-rate: 1/10s 1820-1940 keeps the window the rate applies in (UTC)."""
    rate = ra.parse(b"User-agent: *\nRequest-rate: 1/10s 1820-1940\n").request_rate(
        user_agent="Bot"
    )
    assert rate == ra.RequestRate(
        1, 10.0, ra.VisitTime(datetime.time(18, 20), datetime.time(19, 40))
    )
    assert ra.parse(b"User-agent: *\nRequest-rate: 1/10s\n").request_rate(
        user_agent="Bot"
    ) == ra.RequestRate(1, 10.0, None)


@pytest.mark.parametrize("value", ["0200 0630", "0200-0630", "02:00 - 06:30", "02:00-06:30"])
def test_visit_time_spellings(value: str) -> None:
    """Visit-time accepts the space-separated form seen in real files."""
    robots = ra.parse(f"User-agent: *\nVisit-time: {value}\n")
    assert robots.visit_time(user_agent="Bot") == ra.VisitTime(
        datetime.time(2, 0), datetime.time(6, 30)
    )
    assert robots.warnings == ()


@pytest.mark.parametrize("value", ["2500-0630", "0200", "0200 x 0630", "ab-cd"])
def test_bad_visit_time_warns(value: str) -> None:
    """A malformed window is ignored with a warning whose message shows text."""
    robots = ra.parse(f"User-agent: *\nVisit-time: {value}\n")
    assert robots.visit_time(user_agent="Bot") is None
    assert [w.code for w in robots.warnings] == ["invalid-value"]
    assert "b'" not in robots.warnings[0].message


@pytest.mark.parametrize(
    ("line", "k_allowed", "star_allowed"),
    [
        ("KatBot", False, True),  # ASCII, another case: the quick test lower-cases it
        ("\u212aatbot", False, True),  # Kelvin sign: Unicode lower() gives "katbot"
        ("KatBot/2.0 (+https://k.test)", False, True),
        ("Kat", True, False),
        ("OtherBot", True, False),
        ("* KatBot", False, False),  # "*" then a space: a global line, merged
    ],
)
def test_first_token_finds_its_group_whatever_the_spelling(
    line: str, k_allowed: bool, star_allowed: bool
) -> None:
    """The first question's pass over the agent lines (with its quick skip of lines
    that cannot name the token) selects exactly what the agent index selects."""
    body = f"User-agent: {line}\nDisallow: /k\n\nUser-agent: *\nDisallow: /star\n"
    first, second = ra.parse(body), ra.parse(body)
    second.allowed("https://x.test/", robots_token="warmup")  # index from then on
    for robots in (first, second):
        assert robots.allowed("https://x.test/k", robots_token="katbot") is k_allowed
        assert robots.allowed("https://x.test/star", robots_token="katbot") is star_allowed
