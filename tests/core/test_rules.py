"""Groups, merging and the extension records (Crawl-delay, Request-rate, ...) and warnings."""

from __future__ import annotations

import math
from datetime import time

import pytest

import robots_async as ra
from robots_async.core.rules import MAX_CRAWL_DELAY, MAX_WARNINGS

# --- Groups ------------------------------------------------------------------------------


def test_group_fields() -> None:
    """A Group keeps its agents as written, its normalised rules and its first line."""
    body = "# head\nUser-agent: FooBot/1.0\nuser-agent: *\nDisallow: /ä\nAllow: /a%2f\n"
    (group,) = ra.parse(body).groups
    assert group.agents == ("FooBot/1.0", "*")
    assert group.rules == (ra.Rule(False, "/%C3%A4", 4), ra.Rule(True, "/a%2F", 5))
    assert group.line == 2
    assert (group.crawl_delay, group.request_rate, group.visit_time) == (None, None, None)


def test_rule_str() -> None:
    """A Rule prints as its directive line."""
    assert str(ra.Rule(True, "/a", 3)) == "Allow: /a"
    assert str(ra.Rule(False, "/b", 4)) == "Disallow: /b"


@pytest.mark.parametrize(
    ("body", "agents"),
    [
        ("User-agent: a\nUser-agent: b\nDisallow: /\n", [("a", "b")]),
        ("User-agent: a\n\n# c\n\nUser-agent: b\nDisallow: /\n", [("a", "b")]),
        ("User-agent: a\nSitemap: https://e.com/s\nUser-agent: b\nDisallow: /\n", [("a", "b")]),
        ("User-agent: a\nCrawl-delay: 5\n\nUser-agent: *\nDisallow: /\n", [("a", "*")]),
        ("User-agent: a\nfoo: bar\njunk junk junk\nUser-agent: b\nAllow: /\n", [("a", "b")]),
        ("User-agent: a\nDisallow:\nUser-agent: b\nDisallow: /\n", [("a",), ("b",)]),
        ("User-agent: a\nAllow: /x\nUser-agent: b\nUser-agent: c\n", [("a",), ("b", "c")]),
    ],
    ids=[
        "consecutive",
        "blank-and-comment",
        "sitemap",
        "crawl-delay",
        "unknown-and-junk",
        "empty-rule-closes",
        "trailing-group",
    ],
)
def test_user_agent_starts_group_only_after_a_rule(
    body: str, agents: list[tuple[str, ...]]
) -> None:
    """Only an Allow/Disallow line closes the list of user agents of a group."""
    assert [g.agents for g in ra.parse(body).groups] == agents


def test_crawl_delay_does_not_end_group() -> None:
    """User-agent a, Crawl-delay, blank, User-agent *, Disallow: / is one group: a is blocked."""
    robots = ra.parse("User-agent: a\nCrawl-delay: 5\n\nUser-agent: *\nDisallow: /\n")
    assert not robots.allowed("/x", robots_token="a")
    assert robots.crawl_delay(robots_token="a") == 5.0
    assert robots.crawl_delay(robots_token="other") == 5.0


def test_rules_before_any_user_agent_are_ignored() -> None:
    """Allow/Disallow before the first user-agent are ignored and warned with their line."""
    robots = ra.parse("Sitemap: https://e.com/s\nDisallow: /\nAllow: /a\nUser-agent: *\n")
    assert robots.groups == (ra.Group(("*",), (), 4),)
    assert robots.allowed("/x", robots_token="bot")
    warnings = [(w.line, w.code) for w in robots.warnings]
    assert warnings == [(2, "rule-outside-group"), (3, "rule-outside-group")]


def test_groups_for_merges_groups_of_the_agent() -> None:
    """groups_for returns every group naming the agent, else the ``*`` groups, else ()."""
    body = (
        "User-agent: a\nDisallow: /1\n\nUser-agent: *\nDisallow: /2\n\n"
        "User-agent: b\nUser-agent: A\nDisallow: /3\n\nUser-agent: *\nDisallow: /4\n"
    )
    robots = ra.parse(body)
    groups = robots.groups
    assert robots.groups_for(robots_token="a") == (groups[0], groups[2])
    assert robots.groups_for(robots_token="B") == (groups[2],)
    assert robots.groups_for(robots_token="zzz") == (groups[1], groups[3])
    assert robots.groups_for(user_agent="A-Bot/1.0") == (groups[1], groups[3])
    assert robots.groups_for(user_agent="a/1.0 (+https://e.com)") == (groups[0], groups[2])
    assert ra.parse("User-agent: a\nDisallow: /\n").groups_for(robots_token="b") == ()


def test_group_with_star_and_agent_is_specific_for_that_agent() -> None:
    """A group naming ``*`` and the agent counts as the agent's own group only."""
    body = "User-agent: *\nUser-agent: a\nDisallow: /x\n\nUser-agent: *\nDisallow: /y\n"
    robots = ra.parse(body)
    assert not robots.allowed("/x", robots_token="a")
    assert robots.allowed("/y", robots_token="a")
    assert not robots.allowed("/x", robots_token="b")
    assert not robots.allowed("/y", robots_token="b")


# --- Crawl-delay ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "delay"),
    [("10", 10.0), ("1.5", 1.5), (" 2.25 ", 2.25), (".5", 0.5), ("3 # seconds", 3.0)],
)
def test_crawl_delay_values(value: str, delay: float) -> None:
    """Crawl-delay is a float number of seconds."""
    robots = ra.parse(f"User-agent: *\nCrawl-delay: {value}\n")
    result = robots.crawl_delay(robots_token="bot")
    assert isinstance(result, float)
    assert result == delay
    assert robots.warnings == ()


def test_crawl_delay_zero_is_a_value() -> None:
    """Crawl-delay: 0 is reported as 0.0 (as the group shows it), not as absent."""
    robots = ra.parse("User-agent: *\nCrawl-delay: 0\n")
    assert robots.groups[0].crawl_delay == 0.0
    assert robots.crawl_delay(robots_token="bot") == 0.0


def test_crawl_delay_merged_groups_take_the_largest() -> None:
    """Several groups for the agent: the largest Crawl-delay applies; * is separate."""
    body = (
        "User-agent: a\nCrawl-delay: 2\nDisallow: /q\n\n"
        "User-agent: *\nCrawl-delay: 30\nDisallow: /\n\n"
        "User-agent: a\nCrawl-delay: 7\nDisallow: /x\n"
    )
    robots = ra.parse(body)
    assert robots.crawl_delay(robots_token="a") == 7.0
    assert robots.crawl_delay(user_agent="a/1.0") == 7.0
    assert robots.crawl_delay(robots_token="other") == 30.0


def test_crawl_delay_absent() -> None:
    """No Crawl-delay line (or no group for the agent) gives None."""
    robots = ra.parse("User-agent: a\nCrawl-delay: 4\nDisallow: /q\n\nUser-agent: b\nDisallow: /\n")
    assert robots.crawl_delay(robots_token="b") is None
    assert robots.crawl_delay(robots_token="c") is None
    assert ra.parse(b"").crawl_delay(robots_token="a") is None


@pytest.mark.parametrize("value", ["soon", "-1", "", "nan", "inf", "one"])
def test_crawl_delay_invalid_is_warned_and_ignored(value: str) -> None:
    """An unparsable Crawl-delay is ignored with an invalid-value warning on its line."""
    robots = ra.parse(f"User-agent: *\nCrawl-delay: 3\nCrawl-delay: {value}\n")
    assert robots.crawl_delay(robots_token="bot") == 3.0
    assert [(w.line, w.code) for w in robots.warnings] == [(3, "invalid-value")]


@pytest.mark.parametrize("value", ["1000000", "999999999999.5", "86401"])
def test_crawl_delay_huge_is_clamped(value: str) -> None:
    """A huge Crawl-delay is clamped to a finite maximum, with a warning."""
    robots = ra.parse(f"User-agent: *\nCrawl-delay: {value}\n")
    delay = robots.crawl_delay(robots_token="bot")
    assert delay == MAX_CRAWL_DELAY
    assert delay is not None
    assert math.isfinite(delay)
    assert [(w.line, w.code) for w in robots.warnings] == [(2, "invalid-value")]


def test_crawl_delay_absurdly_long_number_is_never_infinite() -> None:
    """A 400-digit Crawl-delay never yields an infinite delay, and it is warned."""
    robots = ra.parse("User-agent: *\nCrawl-delay: 1" + "0" * 400 + "\n")
    delay = robots.crawl_delay(robots_token="bot")
    assert delay is None or delay == MAX_CRAWL_DELAY
    assert [(w.line, w.code) for w in robots.warnings] == [(2, "invalid-value")]


def test_crawl_delay_outside_group_is_warned() -> None:
    """A Crawl-delay before any user-agent applies to no group and is warned."""
    robots = ra.parse("Crawl-delay: 5\nUser-agent: *\nDisallow: /x\n")
    assert robots.crawl_delay(robots_token="bot") is None
    assert [(w.line, w.code) for w in robots.warnings] == [(1, "rule-outside-group")]


# --- Request-rate and Visit-time -----------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "requests", "seconds"),
    [
        ("1/10", 1, 10.0),
        ("1/5m", 1, 300.0),
        ("3/1h", 3, 3600.0),
        ("2/1d", 2, 86400.0),
        ("10 / 60s", 10, 60.0),
        ("1/2.5", 1, 2.5),
    ],
)
def test_request_rate(value: str, requests: int, seconds: float) -> None:
    """Request-rate n/T with an optional unit (s, m, h, d)."""
    rate = ra.parse(f"User-agent: *\nRequest-rate: {value}\n").request_rate(robots_token="b")
    assert rate == ra.RequestRate(requests, seconds)
    assert rate is not None
    assert rate.delay == pytest.approx(seconds / requests)


@pytest.mark.parametrize("value", ["0/10", "1/0", "fast", "/10", ""])
def test_request_rate_invalid(value: str) -> None:
    """An invalid Request-rate is ignored with an invalid-value warning."""
    robots = ra.parse(f"User-agent: *\nRequest-rate: {value}\n")
    assert robots.request_rate(robots_token="b") is None
    assert [(w.line, w.code) for w in robots.warnings] == [(2, "invalid-value")]


def test_request_rate_merged_groups_take_the_slowest() -> None:
    """Of several groups for the agent, the Request-rate with the longest delay applies."""
    body = (
        "User-agent: a\nRequest-rate: 1/5\nDisallow: /x\n\n"
        "User-agent: a\nRequest-rate: 10/60\nDisallow: /y\n\n"
        "User-agent: a\nRequest-rate: 1/1m\nDisallow: /z\n"
    )
    assert ra.parse(body).request_rate(robots_token="a") == ra.RequestRate(1, 60.0)


@pytest.mark.parametrize(
    ("value", "start", "end"),
    [
        ("0600-0845", time(6, 0), time(8, 45)),
        ("06:00-08:45", time(6, 0), time(8, 45)),
        ("2200 - 0330", time(22, 0), time(3, 30)),
    ],
)
def test_visit_time(value: str, start: time, end: time) -> None:
    """Visit-time HHMM-HHMM gives a VisitTime window."""
    robots = ra.parse(f"User-agent: *\nVisit-time: {value}\n")
    assert robots.visit_time(robots_token="b") == ra.VisitTime(start, end)
    assert robots.groups[0].visit_time == ra.VisitTime(start, end)


@pytest.mark.parametrize("value", ["2500-0100", "0660-0700", "morning", "06-08"])
def test_visit_time_invalid(value: str) -> None:
    """An invalid Visit-time is ignored with an invalid-value warning."""
    robots = ra.parse(f"User-agent: *\nVisit-time: {value}\n")
    assert robots.visit_time(robots_token="b") is None
    assert [(w.line, w.code) for w in robots.warnings] == [(2, "invalid-value")]


def test_extensions_follow_agent_selection() -> None:
    """Extensions come from the groups that apply: the agent's own, else ``*``."""
    body = (
        "User-agent: *\nCrawl-delay: 9\nRequest-rate: 1/9\nVisit-time: 0100-0200\nAllow: /\n\n"
        "User-agent: a\nCrawl-delay: 1\nRequest-rate: 1/1\nVisit-time: 0300-0400\n"
    )
    robots = ra.parse(body)
    assert robots.crawl_delay(robots_token="a") == 1.0
    assert robots.request_rate(robots_token="a") == ra.RequestRate(1, 1.0)
    assert robots.visit_time(robots_token="a") == ra.VisitTime(time(3), time(4))
    assert robots.crawl_delay(robots_token="b") == 9.0
    assert robots.request_rate(robots_token="b") == ra.RequestRate(1, 9.0)
    assert robots.visit_time(robots_token="b") == ra.VisitTime(time(1), time(2))


# --- Host, Clean-param, Sitemap --------------------------------------------------------------


def test_host_is_first_value() -> None:
    """host is the first Host: value, wherever it appears; None without one."""
    body = "Host: mirror.example.com\nUser-agent: *\nDisallow: /\nHost: other.example\n"
    assert ra.parse(body).host == "mirror.example.com"
    assert ra.parse("User-agent: *\nHost:\nHost: b.example\n").host == "b.example"
    assert ra.parse("User-agent: *\nDisallow: /\n").host is None


@pytest.mark.parametrize(
    ("value", "params", "prefix"),
    [
        ("utm_source&utm_medium /articles/", ("utm_source", "utm_medium"), "/articles/"),
        ("ref", ("ref",), None),
        ("s&&ref   /forum", ("s", "ref"), "/forum"),
    ],
)
def test_clean_param(value: str, params: tuple[str, ...], prefix: str | None) -> None:
    """Clean-param: p1&p2 [path prefix] is kept as a CleanParam with its line."""
    robots = ra.parse(f"User-agent: *\nDisallow: /x\nClean-param: {value}\n")
    assert robots.clean_params == (ra.CleanParam(params, prefix, 3),)


def test_clean_params_in_file_order() -> None:
    """Several Clean-param lines are kept in file order; an empty one is warned."""
    robots = ra.parse("Clean-param: a\nClean-param:\nUser-agent: *\nClean-param: b /p\n")
    assert robots.clean_params == (
        ra.CleanParam(("a",), None, 1),
        ra.CleanParam(("b",), "/p", 4),
    )
    assert [(w.line, w.code) for w in robots.warnings] == [(2, "invalid-value")]


def test_sitemaps_order_dedupe_any_position() -> None:
    """Sitemaps are file-wide, in file order, deduplicated, from any position."""
    body = (
        "Sitemap: https://e.com/1.xml\nUser-agent: *\nSitemap: https://e.com/2.xml\n"
        "Disallow: /\nsitemap:https://e.com/1.xml\nSITEMAP: https://e.com/3.xml\n"
        "Sitemap:\n"
    )
    robots = ra.parse(body)
    assert robots.sitemaps == ("https://e.com/1.xml", "https://e.com/2.xml", "https://e.com/3.xml")
    assert not robots.allowed("/x", robots_token="bot")
    assert robots.warnings == ()


def test_sitemap_value_is_kept_as_written() -> None:
    """A sitemap URL is not %-escaped or case-folded; a comment still ends it."""
    robots = ra.parse("Sitemap: https://e.com/Käse.xml # cheese\n")
    assert robots.sitemaps == ("https://e.com/Käse.xml",)


def test_relative_sitemap_is_warned() -> None:
    """A sitemap that is not an absolute URL is warned on its line."""
    robots = ra.parse("User-agent: *\nDisallow:\nSitemap: /sitemap.xml\n")
    assert [(w.line, w.code) for w in robots.warnings] == [(3, "relative-sitemap")]
    assert "/sitemap.xml" in robots.warnings[0].message


# --- Warnings ---------------------------------------------------------------------------------

WARNING_BODY = (
    "Disallow: /early\n"  # 1 rule-outside-group
    "User-agent: a\n"  # 2
    "Dissallow: /t\n"  # 3 typo
    "Disallow /m\n"  # 4 missing-colon
    "<html><body>\n"  # 5 no-separator
    "Noindex: /n\n"  # 6 unknown-key
    "Crawl-delay: soon\n"  # 7 invalid-value
    "Sitemap: sitemap.xml\n"  # 8 relative-sitemap
    "Disallow: /" + "L" * ra.MAX_LINE_BYTES + "\n"  # 9 line-too-long
    "Disallow: /ok\n"  # 10
)


def test_warning_codes_and_lines() -> None:
    """Each kind of problem is reported with its code and line, sorted by line."""
    robots = ra.parse(WARNING_BODY, max_bytes=None)
    assert [(w.line, w.code) for w in robots.warnings] == [
        (1, "rule-outside-group"),
        (3, "typo"),
        (4, "missing-colon"),
        (5, "no-separator"),
        (6, "unknown-key"),
        (7, "invalid-value"),
        (8, "relative-sitemap"),
        (9, "line-too-long"),
    ]
    assert all(isinstance(w.message, str) and w.message for w in robots.warnings)
    assert not robots.allowed("/ok", robots_token="a")
    assert not robots.allowed("/m", robots_token="a")
    assert not robots.allowed("/t", robots_token="a")


@pytest.mark.parametrize(
    ("line", "fragment"),
    [("Noindex: /n", "Noindex"), ("Dissallow: /t", "Dissallow"), ("<html><body>", "<html>")],
)
def test_warning_message_names_the_text(line: str, fragment: str) -> None:
    """A warning message quotes the offending key or line."""
    (warning,) = ra.parse(f"User-agent: a\n{line}\n").warnings
    assert fragment in warning.message


def test_truncation_warnings() -> None:
    """Truncation is warned once, and a line cut by the limit is warned as dropped."""
    body = b"User-agent: *\nDisallow: /a\nDisallow: /bbbb\n"
    robots = ra.parse(body, max_bytes=len(body) - 3)
    assert [(w.line, w.code) for w in robots.warnings] == [
        (2, "truncated"),
        (3, "truncated-line"),
    ]


def test_warnings_are_capped() -> None:
    """At most 100 warnings are kept (the first ones), plus one too-many-warnings."""
    body = "".join(f"junk line {i}\n" for i in range(1500)) + "User-agent: *\nDisallow: /x\n"
    robots = ra.parse(body)
    warnings = robots.warnings
    assert MAX_WARNINGS == 100
    assert len(warnings) == 101
    assert [w.line for w in warnings if w.code == "no-separator"] == list(range(1, 101))
    assert [w.code for w in warnings].count("too-many-warnings") == 1
    assert warnings[-1].code == "too-many-warnings"
    assert not robots.allowed("/x", robots_token="bot")


@pytest.mark.parametrize(
    ("junk", "kept", "marker"), [(99, 99, False), (100, 100, False), (101, 100, True)]
)
def test_warning_cap_boundary(junk: int, kept: int, marker: bool) -> None:
    """The too-many-warnings marker appears only when a warning was actually dropped."""
    robots = ra.parse("".join(f"junk line {i}\n" for i in range(junk)))
    codes = [w.code for w in robots.warnings]
    assert codes.count("no-separator") == kept
    assert ("too-many-warnings" in codes) is marker
    assert len(codes) == kept + marker


@pytest.mark.parametrize(("cap", "kept"), [(0, 0), (7, 7), (1_000, 1_000), (None, 1_500)])
@pytest.mark.parametrize("chunk", [None, 97])
def test_max_warnings_keeps_as_many_as_asked(cap: int | None, kept: int, chunk: int | None) -> None:
    """``max_warnings`` sets the cap (None: every warning), fed whole or in chunks;
    the rules after the junk are found whatever the cap."""
    body = b"".join(b"junk line %d\n" % i for i in range(1500)) + b"User-agent: *\nDisallow: /x\n"
    if chunk is None:
        robots = ra.parse(body, max_warnings=cap)
    else:
        parser = ra.RobotsParser(max_warnings=cap)
        for start in range(0, len(body), chunk):
            parser.feed(body[start : start + chunk])
        robots = parser.close()
    codes = [w.code for w in robots.warnings]
    assert codes.count("no-separator") == kept
    assert ("too-many-warnings" in codes) is (kept < 1500)
    if kept < 1500:
        assert (
            robots.warnings[-1].message == f"more than {cap} warnings; the rest were not recorded"
        )
    assert not robots.allowed("/x", robots_token="bot")


# "Crawl-delay abc" records three warnings on its line, not in the order of their codes:
# missing-colon, rule-outside-group, invalid-value.
SEVERAL_ON_A_LINE = b"Crawl-delay abc\nDisalow /x\n"
LONG_LINE = b"x" * (ra.MAX_LINE_BYTES + 1) + b"\n"


@pytest.mark.parametrize(
    ("tail", "max_bytes"),
    [(b"", None), (LONG_LINE, None), (b"User-agent: *\n", len(SEVERAL_ON_A_LINE) + 3)],
)
@pytest.mark.parametrize("cap", [0, 1, 2, 3, 4, 5])
def test_a_cap_keeps_the_first_warnings_of_the_uncapped_list(
    tail: bytes, max_bytes: int | None, cap: int
) -> None:
    """A line's warnings keep one order whatever the rest of the file holds (a long
    line, a truncation), so that ``max_warnings=n`` keeps the first n of the list
    ``max_warnings=None`` gives. Sorting by (line, code) when something had to be
    merged put line 1's invalid-value first only in such files."""
    body = SEVERAL_ON_A_LINE + tail

    def line_warnings(robots: ra.RobotsTxt) -> list[tuple[int, str]]:
        not_of_a_line = ("truncated", "truncated-line", "too-many-warnings")
        return [(w.line, w.code) for w in robots.warnings if w.code not in not_of_a_line]

    every = line_warnings(ra.parse(body, max_bytes=max_bytes, max_warnings=None))
    assert every[:3] == [(1, "missing-colon"), (1, "rule-outside-group"), (1, "invalid-value")]
    assert line_warnings(ra.parse(body, max_bytes=max_bytes, max_warnings=cap)) == every[:cap]


@pytest.mark.parametrize(
    ("cap", "error", "an_int"),
    [
        (-1, ValueError, True),
        (True, TypeError, True),
        ("10", TypeError, False),
        (1.5, TypeError, False),
    ],
)
def test_max_warnings_is_checked(cap: object, error: type[Exception], an_int: bool) -> None:
    """A bad ``max_warnings`` fails at once, naming the parameter. A compiled build
    refuses what is not an int itself, before our check, with mypyc's message (as
    for ``max_bytes``); the annotation stays ``int | None`` so that mypy refuses it
    too (tests/test_typing.py)."""
    match = "max_warnings" if an_int or not ra.COMPILED else "int or None object expected"
    with pytest.raises(error, match=match):
        ra.parse(b"User-agent: *\n", max_warnings=cap)  # type: ignore[arg-type]
    with pytest.raises(error, match=match):
        ra.RobotsParser(max_warnings=cap)  # type: ignore[arg-type]


def test_warnings_are_capped_with_mixed_codes() -> None:
    """The cap counts every kind of warning; parsing goes on after it."""
    body = "User-agent: a\n" + "Dissallow: /t\nNoindex: /n\n" * 800 + "Disallow: /x\n"
    robots = ra.parse(body)
    assert len(robots.warnings) == MAX_WARNINGS + 1
    assert sum(w.code == "too-many-warnings" for w in robots.warnings) == 1
    assert not robots.allowed("/x", robots_token="a")
    assert not robots.allowed("/t", robots_token="a")
    lines = [w.line for w in robots.warnings]
    assert lines == sorted(lines)


# --- Synthetic files and the RobotsTxt surface ---------------------------------------------


def test_allow_all() -> None:
    """RobotsTxt.allow_all() allows everything and says so."""
    robots = ra.RobotsTxt.allow_all()
    assert robots.synthetic == "allow-all"
    assert robots.allowed("/x", robots_token="bot")
    verdict = robots.explain("/x", robots_token="bot")
    assert (verdict.allowed, verdict.reason, verdict.line) == (True, "allow-all", 0)
    assert robots.groups == ()
    assert robots.sitemaps == ()


def test_disallow_all_still_allows_robots_txt() -> None:
    """RobotsTxt.disallow_all() blocks everything except /robots.txt."""
    robots = ra.RobotsTxt.disallow_all()
    assert robots.synthetic == "disallow-all"
    assert not robots.allowed("/x", robots_token="bot")
    assert not robots.allowed("https://e.com/", user_agent="Bot/1.0")
    assert robots.explain("/x", robots_token="bot").reason == "disallow-all"
    assert robots.allowed("/robots.txt", robots_token="bot")
    assert robots.explain("/robots.txt", robots_token="bot").reason == "robots-txt"


def test_parsed_file_is_not_synthetic() -> None:
    """A parsed file has synthetic None, its policy, and empty extras by default."""
    robots = ra.parse("User-agent: *\nDisallow: /\n", policy="rfc9309")
    assert robots.synthetic is None
    assert robots.policy is ra.RFC9309
    assert (robots.host, robots.clean_params, robots.sitemaps) == (None, (), ())
    assert not robots.truncated


def test_verdict_fields() -> None:
    """A Verdict names the deciding rule, its line, its group's agents and the token."""
    body = "User-agent: x\nUser-agent: FooBot\nDisallow: /a\n\nUser-agent: foobot\nAllow: /a/b\n"
    robots = ra.parse(body)
    verdict = robots.explain("https://e.com/a/b/c", user_agent="FooBot/1.2")
    assert verdict == ra.Verdict(True, "allow", ra.Rule(True, "/a/b", 6), 6, ("foobot",), "FooBot")
    verdict = robots.explain("/a/z", robots_token="FOOBOT")
    assert verdict == ra.Verdict(
        False, "disallow", ra.Rule(False, "/a", 3), 3, ("x", "FooBot"), "FOOBOT"
    )
    verdict = robots.explain("/q", robots_token="foobot")
    assert (verdict.reason, verdict.rule, verdict.line) == ("no-match", None, 0)
    assert verdict.agents == ("x", "FooBot", "foobot")
