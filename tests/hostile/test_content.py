"""Hostile robots.txt content: fuzzing, scale and pathology, bounded warnings.

The server is the adversary here. Whatever bytes it sends, in whatever chunks,
parsing never raises, chunking is invisible, every question gets a consistent
answer, and time and memory stay bounded. Time bounds are hang guards, not
benchmarks; measurements are printed (``pytest -s``) for the record.
"""

from __future__ import annotations

import math
import random
import sys
import time
import tracemalloc
from functools import partial
from typing import TYPE_CHECKING, TypeVar

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import robots_async as ra
from robots_async.core.policy import rfc_target
from robots_async.core.rules import MAX_RULES, MAX_WARNINGS
from tests.helpers import parse_chunks, split_at, summary

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

T = TypeVar("T")

POLICIES = ["google", "google-reference", "rfc9309", "first-match"]
LONGEST_MATCH = ["google", "google-reference", "rfc9309"]
MAX_LINE = ra.MAX_LINE_BYTES
MIB = 1024 * 1024
#: Facts about the whole file: recorded beyond the warning cap.
FILE_LEVEL = frozenset({"truncated", "truncated-line", "too-many-rules"})
#: ASCII whitespace as bytes.strip() and Google's ascii_isspace see it (CR/LF end lines).
SPACE_CONTROLS = frozenset({0x09, 0x0B, 0x0C})
LINE_BREAKS = frozenset({0x0A, 0x0D})

# --- Strategies ------------------------------------------------------------------------

#: Tokens a hostile file is built from: wildcards, escapes (valid, broken, encoded
#: wildcards), comment and line-break bytes, controls, invalid and exotic UTF-8.
NASTY_BYTES = [
    b"*",
    b"$",
    b"%",
    b"#",
    b"\x00",
    b"\r",
    b"\n",
    b"\r\n",
    b"\t",
    b"\x0b",
    b"\x0c",
    b"\x01",
    b"\x1c",
    b"\x1f",
    b"\x7f",
    b" ",
    b"/",
    b"a",
    b"A",
    b":",
    b"?",
    b"&",
    b";",
    b"%2A",
    b"%24",
    b"%2f",
    b"%zz",
    b"%e3%83",
    b"%%",
    b"\xc3\xa4",
    b"\xff",
    b"\xfe",
    b"\xef\xbb\xbf",
    b"\xe2\x80\xa8",
    b"\xc2\x85",
    b"\xed\xa0\x80",
    b"\xf0\x9f\x98",
    b"index.htm",
    b"/robots.txt",
]
KEYS = [
    b"User-agent",
    b"user-agent",
    b"USER-AGENT",
    b"useragent",
    b"User agent",
    b"User-agentX",
    b"Allow",
    b"allow",
    b"Allowed",
    b"Disallow",
    b"DISALLOW",
    b"Disallowed",
    b"Dissallow",
    b"disalow",
    b"Sitemap",
    b"site-map",
    b"Crawl-delay",
    b"Request-rate",
    b"Visit-time",
    b"Host",
    b"Clean-param",
    b"Noindex",
    b" Disallow",
    b"\tAllow ",
    b"",
]
SEPARATORS = [b":", b": ", b" ", b"\t", b"", b" : ", b"::", b"\x00:", b": \x00", b":\x0b"]
LINE_ENDS = [b"\n", b"\r", b"\r\n", b"\n\r", b"", b"\x00\n", b"\x0b\n", b"\xc2\x85", b" # c\n"]
BODY_PREFIXES = [b"", b"\xef\xbb\xbf", b"\xef\xbb", b"\xef", b"\xff\xfe", b"\xfe\xff", b"\x00"]

nasty_text = st.lists(st.sampled_from(NASTY_BYTES), max_size=24).map(b"".join)
#: A long run of one nasty token; sometimes past the line cap.
long_run = st.builds(
    lambda token, count: token * count,
    st.sampled_from(NASTY_BYTES),
    st.integers(100, MAX_LINE // 2),
)
values = st.one_of(
    nasty_text,
    nasty_text,
    st.binary(max_size=16),
    st.text(alphabet="0123456789./ smhd-", max_size=12).map(str.encode),
    long_run,
)
keys = st.one_of(st.sampled_from(KEYS), st.sampled_from(KEYS).map(bytes.swapcase), nasty_text)
lines = st.builds(
    lambda key, sep, value, end: key + sep + value + end,
    keys,
    st.sampled_from(SEPARATORS),
    values,
    st.sampled_from(LINE_ENDS),
)
hostile_bodies = st.builds(
    lambda prefix, body: prefix + b"".join(body),
    st.sampled_from(BODY_PREFIXES),
    st.lists(lines, max_size=30),
)
max_bytes_options = st.one_of(
    st.none(), st.just(ra.DEFAULT_MAX_BYTES), st.integers(0, 2000), st.integers(MAX_LINE, 40_000)
)

#: URLs that have upset URL handling somewhere: no path, odd schemes, escapes, NUL,
#: controls, lone surrogates, astral characters, backslashes, huge paths.
HOSTILE_URLS = [
    "",
    "/",
    "*",
    "$",
    "/*",
    "/$",
    "/%",
    "/%2",
    "/%zz",
    "/%2A",
    "/%24",
    "/%00",
    "/\x00",
    "/a\x00b",
    "/\r\n",
    "/\x7f",
    "/ä",
    "/\ud800",
    "/\udcff",
    "/x\ud83d",
    "\udc80",
    "/\U0001f600",
    "//",
    "///",
    "?",
    "#",
    "#/x",
    ";",
    "http://",
    "https://",
    "http://h",
    "http://h#f",
    "http://h?q",
    "http://u:p@h:8080/a?b#c",
    "HTTP://H/A",
    "ftp://h/x",
    "mailto:x@y",
    "javascript:alert(1)",
    "//h/x",
    "\\\\h\\x",
    " /x ",
    "/robots.txt",
    "/ROBOTS.TXT",
    "http://h/robots.txt#x",
    "/index.html",
    "/a/index.htm",
    "/x" + "y" * 20_000,
    "/" + "%41" * 3000,
]
TOKENS = ["*", "", "a", "A", "bot", "\udcff", "a\x00", "ä"]

url_chars = st.one_of(
    st.sampled_from("/*$%#?;:@.aA \x00\r\n\t\x7f\\"),
    st.characters(codec=None),
    st.characters(categories=["Cs"]),
)
hostile_urls = st.one_of(
    st.sampled_from(HOSTILE_URLS),
    st.text(url_chars, max_size=40),
    st.builds(
        str.__add__,
        st.sampled_from(["http://h", "https://u@h:1", "//", "/", "", "x:"]),
        st.text(url_chars, max_size=40),
    ),
)
tokens = st.one_of(st.sampled_from(TOKENS), st.text(url_chars, max_size=8))


# --- Invariants ------------------------------------------------------------------------


def check_structure(robots: ra.RobotsTxt) -> None:
    """What parsing hostile bytes may produce: bounded, comment- and break-free values."""
    warnings = robots.warnings
    line_warnings = [w for w in warnings if w.code not in FILE_LEVEL]
    assert len(line_warnings) <= MAX_WARNINGS + 1
    assert [w.line for w in warnings] == sorted(w.line for w in warnings)
    assert [w.code for w in warnings].count("too-many-warnings") <= 1
    for group in robots.groups:
        assert group.agents
        for rule in group.rules:
            assert rule.line >= 1
            # A value never spans lines, never holds "#" (a comment) nor NUL (cut there).
            assert not {"\n", "\r", "#", "\x00"} & set(rule.pattern)
            # Each byte becomes at most "%XY"; the line cap bounds the rest.
            assert len(rule.pattern) <= 3 * MAX_LINE
        for agent in group.agents:
            assert not {"\n", "\r", "#", "\x00"} & set(agent)
    for text in (*robots.sitemaps, robots.host or ""):
        assert not {"\n", "\r", "#", "\x00"} & set(text)


def check_answers(robots: ra.RobotsTxt, urls: Sequence[str], agents: Sequence[str]) -> None:
    """allowed() agrees with explain(); a verdict names a rule of the agent's groups."""
    for token in agents:
        groups = robots.groups_for(robots_token=token)
        rules = {(rule.allow, rule.line) for group in groups for rule in group.rules}
        names = {group.agents for group in groups}
        delay = robots.crawl_delay(robots_token=token)
        assert delay is None or 0.0 <= delay <= 86_400.0
        rate = robots.request_rate(robots_token=token)
        assert rate is None or (rate.requests > 0 and rate.seconds > 0)
        robots.visit_time(robots_token=token)
        for url in urls:
            verdict = robots.explain(url, robots_token=token)
            assert robots.allowed(url, robots_token=token) is verdict.allowed
            if verdict.reason in ("allow", "disallow", "empty-rule"):
                assert verdict.rule is not None
                assert verdict.line == verdict.rule.line
                assert (verdict.rule.allow, verdict.line) in rules
                assert verdict.agents in names
                assert verdict.allowed is (verdict.reason != "disallow")
                if verdict.reason == "disallow":
                    assert verdict.rule.pattern != ""
            else:
                assert verdict.rule is None
                assert verdict.allowed
                assert verdict.reason in ("no-match", "no-group", "robots-txt")
            if verdict.reason == "no-group":
                assert groups == ()


def chunked_parse(
    body: bytes, cuts: list[int], policy: str, max_bytes: int | None
) -> tuple[ra.RobotsTxt, ra.RobotsTxt]:
    """The same body parsed in one piece and fed in the pieces ``cuts`` makes."""
    whole = ra.parse(body, policy=policy, max_bytes=max_bytes)
    pieces = parse_chunks(split_at(body, cuts), policy=policy, max_bytes=max_bytes)
    return whole, pieces


# --- 1. Fuzzing ------------------------------------------------------------------------


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    body=st.binary(max_size=4096),
    cuts=st.lists(st.integers(0, 4096), max_size=16),
    policy=st.sampled_from(POLICIES),
    max_bytes=max_bytes_options,
    urls=st.lists(hostile_urls, max_size=4),
)
def test_arbitrary_bytes_parse_identically_in_any_chunks(
    body: bytes, cuts: list[int], policy: str, max_bytes: int | None, urls: list[str]
) -> None:
    """Arbitrary bytes parse without raising, and chunking never changes the result."""
    whole, pieces = chunked_parse(body, cuts, policy, max_bytes)
    probe = [*HOSTILE_URLS[:24], *urls]
    assert summary(pieces, probe, TOKENS[:4]) == summary(whole, probe, TOKENS[:4])
    check_structure(whole)
    check_answers(whole, probe, TOKENS[:4])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    body=hostile_bodies,
    data=st.data(),
    policy=st.sampled_from(POLICIES),
    max_bytes=max_bytes_options,
)
def test_hostile_directives_parse_identically_in_any_chunks(
    body: bytes, data: st.DataObject, policy: str, max_bytes: int | None
) -> None:
    """Directive lines of nasty keys and values give the same file in any chunking."""
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=24), label="cuts")
    urls = data.draw(st.lists(hostile_urls, max_size=6), label="urls")
    whole, pieces = chunked_parse(body, cuts, policy, max_bytes)
    probe = [*HOSTILE_URLS, *urls]
    assert summary(pieces, probe, TOKENS) == summary(whole, probe, TOKENS)
    if len(body) <= 2000:
        bytewise = parse_chunks(
            [body[i : i + 1] for i in range(len(body))], policy=policy, max_bytes=max_bytes
        )
        assert summary(bytewise, probe[:12], TOKENS[:3]) == summary(whole, probe[:12], TOKENS[:3])
    check_structure(whole)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    body=hostile_bodies,
    urls=st.lists(hostile_urls, min_size=1, max_size=10),
    agents=st.lists(tokens, min_size=1, max_size=4),
    user_agents=st.lists(st.text(url_chars, max_size=30), max_size=3),
    policy=st.sampled_from(POLICIES),
)
def test_hostile_urls_and_agents_get_consistent_answers(
    body: bytes, urls: list[str], agents: list[str], user_agents: list[str], policy: str
) -> None:
    """Any str URL or agent (lone surrogates, NUL, controls) gets consistent answers."""
    robots = ra.parse(body, policy=policy)
    check_answers(robots, urls, agents)
    for user_agent in user_agents:
        token = ra.product_token(user_agent)
        for url in urls:
            verdict = robots.explain(url, user_agent=user_agent)
            assert verdict == robots.explain(url, robots_token=token)
            assert robots.allowed(url, user_agent=user_agent) is verdict.allowed
        assert robots.crawl_delay(user_agent=user_agent) == robots.crawl_delay(robots_token=token)
        assert robots.request_rate(user_agent=user_agent) == robots.request_rate(robots_token=token)


# A pattern alphabet for the brute-force reference: wildcards, a "$" anywhere, escapes.
pattern_parts = st.sampled_from(["*", "$", "/", "a", "b", "%", "%61", "%2A", "?", "=", "**"])
oracle_patterns = st.lists(pattern_parts, max_size=14).map("".join)
oracle_paths = st.lists(
    st.sampled_from(["/", "a", "b", "$", "*", "%", "%61", "%2A", "?", "=", "aa"]), max_size=24
).map(lambda parts: "/" + "".join(parts))


def position_set_matches(target: str, pattern: str) -> bool:
    """Google's position-set matcher: every offset reachable by the pattern's prefix."""
    positions = {0}
    for index, char in enumerate(pattern):
        if char == "$" and index == len(pattern) - 1:
            return len(target) in positions
        if char == "*":
            positions = set(range(min(positions), len(target) + 1))
        else:
            positions = {p + 1 for p in positions if p < len(target) and target[p] == char}
        if not positions:
            return False
    return True


@settings(max_examples=400, deadline=None)
@given(
    rules=st.lists(st.tuples(st.booleans(), oracle_patterns), min_size=1, max_size=8),
    path=oracle_paths,
    policy=st.sampled_from(LONGEST_MATCH),
)
def test_wildcard_and_escape_rules_match_a_brute_force_reference(
    rules: list[tuple[bool, str]], path: str, policy: str
) -> None:
    """Longest match over patterns full of "*", "$" and escapes agrees with brute force."""
    body = "User-agent: *\n" + "".join(
        f"{'Allow' if allow else 'Disallow'}: {pattern}\n" for allow, pattern in rules
    )
    robots = ra.parse(body, policy=policy)
    target = ra.request_target(path)  # "//a" names a host: its path is "/"
    if policy == "rfc9309":
        target = rfc_target(target)
    best = {True: (-1, 0), False: (-1, 0)}  # allow -> (priority, line)
    for rule in robots.groups[0].rules:
        if position_set_matches(target, rule.pattern) and len(rule.pattern) > best[rule.allow][0]:
            best[rule.allow] = (len(rule.pattern), rule.line)
    (allow_priority, allow_line), (deny_priority, deny_line) = best[True], best[False]
    disallowed = deny_priority > 0 and deny_priority > allow_priority
    verdict = robots.explain(path, robots_token="bot")
    assert verdict.allowed is (not disallowed)
    assert verdict.line == (deny_line if deny_priority > allow_priority else allow_line)
    assert robots.allowed(path, robots_token="bot") is verdict.allowed


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("code", [0xD800, 0xDBFF, 0xDC80, 0xDCFF, 0xDFFF], ids=hex)
def test_lone_surrogate_urls_are_matched_as_their_surrogatepass_bytes(
    policy: str, code: int
) -> None:
    """A lone surrogate in a URL never raises; it is %-encoded like its surrogatepass bytes."""
    surrogate = chr(code)
    encoded = "".join(f"%{b:02X}" for b in surrogate.encode("utf-8", "surrogatepass"))
    robots = ra.parse(f"User-agent: *\nDisallow: /{encoded}\nDisallow: /x$\n", policy=policy)
    url = f"http://h/{surrogate}?q#{surrogate}"
    verdict = robots.explain(url, robots_token="bot")
    assert robots.allowed(url, robots_token="bot") is verdict.allowed
    # google-reference matches raw text (the bit-for-bit reference): never the encoding.
    assert verdict.allowed is (policy == "google-reference")
    assert robots.allowed(f"/x{surrogate}", user_agent=f"bot{surrogate}")
    assert not robots.allowed("/x", user_agent=f"{surrogate}bot/1.0")


# --- 2. Scale and pathology ------------------------------------------------------------


def timed(action: Callable[[], T]) -> tuple[T, float]:
    """Run ``action``; return its result and the seconds it took."""
    start = time.perf_counter()
    result = action()
    return result, time.perf_counter() - start


def report(label: str, **values: float | str) -> None:
    """Print a measurement for the record (shown with ``pytest -s``)."""
    parts = ", ".join(
        f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in values.items()
    )
    print(f"\nMEASURE {label}: {parts}")


def agent_name(index: int) -> str:
    """A distinct letters-only product token for each index (digits would end a token)."""
    letters = []
    while True:
        index, digit = divmod(index, 26)
        letters.append(chr(ord("a") + digit))
        if not index:
            return "bot" + "".join(letters)


def test_million_rules_in_one_group_keep_the_first_cap() -> None:
    """1,000,000 rules in one group: the first 100,000 are kept, warned, and fast to query."""
    count = 1_000_000
    body = b"User-agent: *\n" + b"".join(b"Disallow: /p%d/\n" % i for i in range(count))
    robots, parse_s = timed(lambda: ra.parse(body, max_bytes=None))
    assert isinstance(robots, ra.RobotsTxt)
    (group,) = robots.groups
    assert len(group.rules) == MAX_RULES
    assert group.rules[-1] == ra.Rule(False, f"/p{MAX_RULES - 1}/", MAX_RULES + 1)
    assert [(w.line, w.code) for w in robots.warnings] == [(1, "too-many-rules")]
    _, compile_s = timed(lambda: robots.allowed("/warm-up", robots_token="bot"))
    last_kept = robots.explain(f"/p{MAX_RULES - 1}/x", robots_token="bot")
    assert (last_kept.allowed, last_kept.line) == (False, MAX_RULES + 1)
    assert robots.explain(f"/p{MAX_RULES}/", robots_token="bot").reason == "no-match"
    urls = [f"/p{i * 997}/x" for i in range(1000)]
    answers, query_s = timed(lambda: [robots.allowed(u, robots_token="bot") for u in urls])
    assert isinstance(answers, list)
    assert answers.count(False) == sum(i * 997 < MAX_RULES for i in range(1000))
    report("1M rules", parse_s=parse_s, compile_s=compile_s, queries_1000_s=query_s)
    assert parse_s < 15.0
    assert compile_s < 5.0
    assert query_s < 2.0


def test_the_rule_cap_counts_the_whole_file() -> None:
    """The cap is per file: a second group past it keeps no rules; one warning, first cut."""
    extra = 5
    rules = b"Disallow: /x\n" * (MAX_RULES + extra)
    body = b"User-agent: a\n" + rules + b"User-agent: b\n" + rules
    robots = ra.parse(body, max_bytes=None)
    assert [len(g.rules) for g in robots.groups] == [MAX_RULES, 0]
    assert [(w.line, w.code) for w in robots.warnings] == [(1, "too-many-rules")]
    assert not robots.allowed("/x", robots_token="a")
    assert robots.allowed("/x", robots_token="b")  # its rules lie beyond the cap


def test_many_small_groups_cannot_bypass_the_rule_cap() -> None:
    """250,000 one-rule * groups merge into one bucket, still capped at the file limit."""
    body = b"User-agent: *\nDisallow: /x\n" * 250_000
    robots = ra.parse(body, max_bytes=None)
    assert sum(len(g.rules) for g in robots.groups) == MAX_RULES
    assert "too-many-rules" in {w.code for w in robots.warnings}
    (answer, seconds) = timed(lambda: robots.allowed("/x", robots_token="bot"))
    assert answer is False
    assert seconds < 10.0


def test_hundred_thousand_agent_groups() -> None:
    """100,000 groups parse; a specific agent and an unknown agent are answered promptly."""
    count = MAX_RULES - 1  # one rule each, and the * group's rule still fits
    body = b"".join(
        b"User-agent: %s\nDisallow: /x%d\n" % (agent_name(i).encode(), i) for i in range(count)
    )
    body += b"User-agent: *\nDisallow: /star\n"
    robots, parse_s = timed(lambda: ra.parse(body, max_bytes=None))
    assert isinstance(robots, ra.RobotsTxt)
    assert len(robots.groups) == count + 1
    target = agent_name(77_777)
    verdict, specific_s = timed(lambda: robots.explain("/x77777/y", robots_token=target))
    assert isinstance(verdict, ra.Verdict)
    assert (verdict.allowed, verdict.line, verdict.agents) == (False, 2 * 77_777 + 2, (target,))
    assert robots.allowed("/x1", robots_token=target)
    unknown, unknown_s = timed(lambda: robots.explain("/star", robots_token="nobody"))
    assert isinstance(unknown, ra.Verdict)
    assert (unknown.allowed, unknown.line) == (False, 2 * count + 2)
    assert robots.allowed("/x77777", robots_token="nobody")
    _, many_s = timed(
        lambda: [robots.allowed("/x5", robots_token=agent_name(i)) for i in range(0, count, 100)]
    )
    report(
        "100k groups",
        parse_s=parse_s,
        specific_s=specific_s,
        unknown_s=unknown_s,
        agents_1000_s=many_s,
    )
    assert parse_s < 10.0
    assert specific_s + unknown_s < 3.0
    assert many_s < 5.0


def test_groups_merged_for_one_agent_share_the_file_cap() -> None:
    """250,000 one-rule groups for one agent: the first 100,000 rules apply, promptly."""
    count = 250_000
    body = b"".join(b"User-agent: *\nDisallow: /p%d/\n" % i for i in range(count))
    robots, parse_s = timed(lambda: ra.parse(body, max_bytes=None))
    assert isinstance(robots, ra.RobotsTxt)
    kept = MAX_RULES
    verdict, compile_s = timed(lambda: robots.explain(f"/p{kept - 1}/", robots_token="bot"))
    assert isinstance(verdict, ra.Verdict)
    assert (verdict.allowed, verdict.line) == (False, 2 * kept)
    assert robots.explain("/p0/", robots_token="bot").line == 2
    assert robots.allowed(f"/p{kept}/", robots_token="bot")  # beyond the cap
    assert [w.code for w in robots.warnings] == ["too-many-rules"]
    report("merged groups", groups=count, merged_rules=kept, parse_s=parse_s, compile_s=compile_s)
    assert parse_s < 15.0
    assert compile_s < 15.0


def ask_both(robots: ra.RobotsTxt, miss: str, hit: str) -> tuple[bool, bool, bool, bool]:
    """allowed() and explain() for a URL that should pass and one that should not."""
    return (
        robots.allowed(miss, robots_token="bot"),
        robots.explain(miss, robots_token="bot").allowed,
        robots.allowed(hit, robots_token="bot"),
        robots.explain(hit, robots_token="bot").allowed,
    )


@pytest.mark.parametrize("policy", POLICIES)
def test_pathological_wildcards_are_prompt(policy: str) -> None:
    """Star-heavy patterns against long paths answer in linear-ish time, correctly."""
    cases = [
        ("/" + "*a" * 500 + "b", "/" + "a" * 10_000, "/" + "a" * 10_000 + "b"),
        ("/*a*a*a*a*a*a*a*a*a*a*b", "/" + "a" * 20_000, "/" + "a" * 20_000 + "b"),
        ("/" + "*" * 16_000 + "b$", "/" + "b" * 20_000 + "c", "/" + "c" * 20_000 + "b"),
        ("/" + "a*" * 8_000 + "$", "/" + "a" * 7_999, "/" + "a" * 8_000),
    ]
    for pattern, miss, hit in cases:
        robots = ra.parse(f"User-agent: *\nDisallow: {pattern}\n", policy=policy)
        answers, seconds = timed(partial(ask_both, robots, miss, hit))
        assert answers == (True, True, False, False), pattern[:20]
        assert seconds < 2.0, pattern[:20]


@pytest.mark.parametrize("policy", ["google", "first-match"])
def test_ten_thousand_glob_rules_against_one_path(policy: str) -> None:
    """10,000 wildcard rules sharing one head are scanned promptly for a 2,083-byte path.

    Each rule costs a scan of the path (about 50 ms a query here): linear, not a hang.
    """
    body = "User-agent: *\n" + "".join(f"Disallow: /*x{i}-*y\n" for i in range(10_000))
    robots = ra.parse(body, policy=policy)
    miss = "/" + "x" * 2_080 + "y"
    hit = "/" + "x" * 2_076 + "9999-y"
    answers, seconds = timed(
        lambda: [robots.allowed(miss + "z" * i, robots_token="bot") for i in range(20)]
    )
    assert answers == [True] * 20
    verdict = robots.explain(hit, robots_token="bot")
    assert (verdict.allowed, verdict.line) == (False, 10_001)
    report(f"10k globs {policy}", per_query_s=seconds / 20)
    assert seconds < 5.0


@pytest.mark.parametrize("policy", POLICIES)
def test_pattern_at_the_line_cap_keeps_its_anchor_and_one_over_loses_it(policy: str) -> None:
    """A 16,663-byte rule line is kept whole ("$" anchors); one byte more cuts the "$"."""
    head = b"Disallow: /"
    fill = b"a*" * ((MAX_LINE - len(head) - 2) // 2)
    exact = head + fill + b"b" * (MAX_LINE - len(head) - len(fill) - 1) + b"$"
    assert len(exact) == MAX_LINE
    over = exact[:-1] + b"b$"
    path = "/" + "a" * len(fill) + "b" * (MAX_LINE - len(head) - len(fill))
    for line, anchored in ((exact, True), (over, False)):
        robots = ra.parse(b"User-agent: *\n" + line + b"\n", policy=policy, max_bytes=None)
        assert robots.groups[0].rules[0].pattern.endswith("$") is anchored
        assert ("line-too-long" in {w.code for w in robots.warnings}) is not anchored
        assert not robots.allowed(path, robots_token="bot")
        assert robots.allowed(path + "c", robots_token="bot") is anchored


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(
    "escapes", [b"%25" * 50_000, b"%" * 100_000, b"%zz" * 30_000, b"%e3%83%84" * 20_000]
)
def test_long_runs_of_escapes_are_cut_and_match_themselves(policy: str, escapes: bytes) -> None:
    """Huge runs of valid, bare and broken % escapes are cut at the line cap and still match."""
    body = b"User-agent: *\nDisallow: /" + escapes + b"\n"
    robots, seconds = timed(lambda: ra.parse(body, policy=policy, max_bytes=None))
    assert isinstance(robots, ra.RobotsTxt)
    (rule,) = robots.groups[0].rules
    assert len(rule.pattern) == MAX_LINE - len("Disallow: ")
    assert [w.code for w in robots.warnings] == ["line-too-long"]
    # The kept pattern matches its own text (normalisation is idempotent) ...
    url = rule.pattern + "x"
    verdict, query_s = timed(lambda: robots.explain(url, robots_token="bot"))
    assert isinstance(verdict, ra.Verdict)
    assert (verdict.allowed, verdict.line) == (False, 2)
    assert not robots.allowed(url, robots_token="bot")
    # ... and the RFC policies normalise the raw, lower-case run the same way. (Not for
    # "%e3%83%84": the cut leaves a bare "%e" that stays lower-case while the URL's
    # "%e3" becomes "%E3", so that cut pattern no longer matches its own raw text.)
    if policy in ("rfc9309", "first-match") and b"e" not in escapes:
        assert not robots.allowed("/" + escapes.decode(), robots_token="bot")
    assert robots.allowed("/" + "%26" * 10, robots_token="bot")
    assert seconds + query_s < 2.0


@pytest.mark.parametrize(
    ("policy", "decoded"), [("google", False), ("rfc9309", True), ("first-match", True)]
)
def test_long_run_of_unreserved_escapes(policy: str, decoded: bool) -> None:
    """50,000 "%41": RFC policies decode them to "A" (cut mid-escape); Google keeps them."""
    robots = ra.parse(b"User-agent: *\nDisallow: /" + b"%41" * 50_000 + b"\n", policy=policy)
    kept = (MAX_LINE - len("Disallow: /")) // 3  # whole escapes left after the cut
    pattern = robots.groups[0].rules[0].pattern
    assert pattern == ("/" + "A" * kept + "%4" if decoded else "/" + "%41" * kept + "%4")
    assert robots.allowed("/" + "A" * 2 * kept, robots_token="bot")
    assert not robots.allowed("/" + "%41" * kept + "%4x", robots_token="bot")


@pytest.mark.parametrize("code", range(0x20), ids=lambda c: f"{c:02x}")
def test_control_byte_in_a_value(code: int) -> None:
    """A control byte inside a value is literal, except NUL (ends it) and CR/LF (end lines)."""
    char = chr(code)
    for policy in POLICIES:
        robots = ra.parse(f"User-agent: *\nDisallow: /a{char}b\n".encode(), policy=policy)
        (rule,) = robots.groups[0].rules
        literal = code not in LINE_BREAKS and code != 0
        assert rule.pattern == ("/a" + char + "b" if literal else "/a")
        assert not robots.allowed(f"/a{char}b", robots_token="bot")
        assert robots.allowed("/ab", robots_token="bot") is literal
        check_answers(robots, [f"/a{char}", f"/{char}", char], ["bot", char])


@pytest.mark.parametrize("code", range(0x20), ids=lambda c: f"{c:02x}")
def test_control_byte_in_a_key(code: int) -> None:
    """A control byte after a key: Google reads the key by prefix; strict policies do not."""
    byte = bytes([code])
    for policy in POLICIES:
        after = ra.parse(b"User-agent: *\nDisallow" + byte + b": /x\n", policy=policy)
        before = ra.parse(b"User-agent: *\n" + byte + b"Disallow: /x\n", policy=policy)
        prefix_keys = policy.startswith("google")
        stripped = code in SPACE_CONTROLS
        rule_after = stripped or (prefix_keys and code not in LINE_BREAKS and code != 0)
        assert after.allowed("/x", robots_token="bot") is not rule_after
        # Before the key only whitespace is stripped; CR/LF leave "Disallow: /x" a line.
        rule_before = stripped or code in LINE_BREAKS
        assert before.allowed("/x", robots_token="bot") is not rule_before


@pytest.mark.parametrize("code", range(0x20), ids=lambda c: f"{c:02x}")
def test_control_byte_in_a_user_agent(code: int) -> None:
    """A control byte cuts an agent's token; after "*" only whitespace keeps it global."""
    byte = bytes([code])
    for policy in POLICIES:
        inside = ra.parse(b"User-agent: bo" + byte + b"t\nDisallow: /x\n", policy=policy)
        assert not inside.allowed("/x", robots_token="bo")
        assert inside.allowed("/x", robots_token="bot")
        star = ra.parse(b"User-agent: *" + byte + b"\nDisallow: /x\n", policy=policy)
        is_global = code in SPACE_CONTROLS or code in LINE_BREAKS or code == 0
        assert star.allowed("/x", robots_token="other") is not is_global


def test_every_control_byte_everywhere_at_once() -> None:
    """A file made of every control byte in every position never raises."""
    controls = bytes(range(0x20))
    body = b"".join(
        b"User-agent" + c + b": b" + c + b"t\nDis" + c + b"allow: /" + c + b"\n" + c + b"Allow" + c
        for c in (bytes([b]) for b in controls)
    )
    body += controls * 100
    for policy in POLICIES:
        whole = ra.parse(body, policy=policy)
        check_structure(whole)
        check_answers(whole, ["/", "/\x01", controls.decode()], ["b", "bt", ""])
        bytewise = parse_chunks([body[i : i + 1] for i in range(len(body))], policy=policy)
        assert bytewise.groups == whole.groups
        assert bytewise.warnings == whole.warnings


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_utf16_body_with_bom_finds_nothing(encoding: str) -> None:
    """UTF-16 is not decoded: NULs end every line, so no rules; one warning, all allowed."""
    text = "User-agent: *\nDisallow: /\nSitemap: https://e.com/s.xml\n" * 500
    body = ("\ufeff" + text).encode(encoding)
    for policy in POLICIES:
        robots = ra.parse(body, policy=policy)
        assert robots.groups == ()
        assert robots.sitemaps == ()
        assert [(w.line, w.code) for w in robots.warnings] == [(1, "no-separator")]
        assert robots.allowed("/x", robots_token="bot")
        assert robots.explain("/x", robots_token="bot").reason == "no-group"


@pytest.mark.parametrize(
    ("max_bytes", "truncated"),
    [(ra.DEFAULT_MAX_BYTES, True), (None, False)],
    ids=["default", "none"],
)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_five_megabyte_line_in_random_chunks_uses_bounded_memory(
    max_bytes: int | None, truncated: bool, seed: int
) -> None:
    """A 5 MB line fed in 1 B..64 KB chunks keeps memory bounded (< 10 MiB peak)."""
    body = b"User-agent: *\nDisallow: /" + b"a" * (5 * MIB)
    rng = random.Random(seed)
    sizes = [1] * 20_000 + [rng.randint(1, 65_536) for _ in range(200)]
    tracemalloc.start()
    try:
        start = time.perf_counter()
        parser = ra.RobotsParser(max_bytes=max_bytes)
        offset = 0
        for size in [*sizes, len(body)]:
            parser.feed(body[offset : offset + size])
            offset += size
        robots = parser.close()
        seconds = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert offset >= len(body)
    report("5 MB line", max_bytes=str(max_bytes), seconds=seconds, peak_mib=peak / MIB)
    assert robots.truncated is truncated
    if truncated:
        assert robots.groups[0].rules == ()
        assert [w.code for w in robots.warnings] == ["truncated", "truncated-line"]
    else:
        assert len(robots.groups[0].rules[0].pattern) == MAX_LINE - len("Disallow: ")
        assert [w.code for w in robots.warnings] == ["line-too-long"]
    assert peak < 10 * MIB
    assert seconds < 10.0


@pytest.mark.parametrize("seed", [0, 1])
def test_two_hundred_thousand_blank_lines_keep_line_numbers(seed: int) -> None:
    """200,000 blank lines (LF, CRLF, CR) cost nothing and keep line numbers exact."""
    blanks = b"\r\n" * 80_000 + b"\n" * 60_000 + b"\r" * 40_000 + b" \t\n" * 20_000
    body = blanks + b"User-agent: *\nDisallow: /x\n"
    cuts = random.Random(seed).sample(range(len(body)), 500)
    for robots in (ra.parse(body), parse_chunks(split_at(body, cuts))):
        verdict = robots.explain("/x", robots_token="bot")
        assert (verdict.allowed, verdict.line) == (False, 200_002)
        assert robots.warnings == ()


def test_hundred_thousand_comment_lines() -> None:
    """100,000 comment lines (some hiding rules, NULs, BOMs) add no rules and no warnings."""
    comments = [
        b"# Disallow: /\n",
        b"   #User-agent: x\n",
        b"#\x00Disallow: /\n",
        b"#\xef\xbb\xbf\n",
    ]
    body = b"User-agent: *\n" + b"".join(comments[i % 4] for i in range(100_000))
    body += b"Disallow: /x # Disallow: /\n"
    robots, seconds = timed(lambda: ra.parse(body, max_bytes=None))
    assert isinstance(robots, ra.RobotsTxt)
    assert robots.groups[0].rules == (ra.Rule(False, "/x", 100_002),)
    assert robots.warnings == ()
    assert robots.allowed("/y", robots_token="bot")
    assert seconds < 5.0


def test_million_sitemap_lines_are_kept_and_measured() -> None:
    """1,000,000 distinct sitemaps are all kept in order (no cap: memory is measured).

    Retained memory grows linearly with the body (about 2x its size); with
    ``max_bytes=None`` a hostile file can make it as large as it likes.
    """
    count = 1_000_000
    body = b"".join(b"Sitemap: https://example.com/s-%d.xml\n" % i for i in range(count))

    def feed() -> ra.RobotsTxt:
        parser = ra.RobotsParser(max_bytes=None)
        for offset in range(0, len(body), 65_536):
            parser.feed(body[offset : offset + 65_536])
        return parser.close()

    robots, seconds = timed(feed)
    assert isinstance(robots, ra.RobotsTxt)
    sitemaps = robots.sitemaps
    assert len(sitemaps) == count
    assert (sitemaps[0], sitemaps[-1]) == (
        "https://example.com/s-0.xml",
        f"https://example.com/s-{count - 1}.xml",
    )
    retained = sys.getsizeof(sitemaps) + sum(map(sys.getsizeof, sitemaps))
    report(
        "1M sitemaps",
        seconds=seconds,
        body_mib=len(body) / MIB,
        retained_mib=retained / MIB,
        ratio=retained / len(body),
    )
    assert retained < 4 * len(body)
    assert seconds < 15.0


def test_million_duplicate_sitemap_lines_keep_one() -> None:
    """1,000,000 copies of one sitemap line are deduplicated to a single entry."""
    line = b"Sitemap: https://example.com/same.xml\n"
    parser = ra.RobotsParser(max_bytes=None)
    chunk = line * 2_000
    start = time.perf_counter()
    for _ in range(500):
        parser.feed(chunk)
    robots = parser.close()
    seconds = time.perf_counter() - start
    report("1M duplicate sitemaps", seconds=seconds)
    assert robots.sitemaps == ("https://example.com/same.xml",)
    assert robots.warnings == ()
    assert seconds < 10.0


def fill(line: Callable[[int], bytes], limit: int = ra.DEFAULT_MAX_BYTES) -> bytes:
    """A body of ``line(i)`` repeated up to ``limit`` bytes, after one global group."""
    parts, size = [b"User-agent: *\n"], 14

    def lines() -> Iterator[bytes]:
        index = 0
        while True:
            yield line(index)
            index += 1

    for text in lines():
        if size > limit:
            break
        parts.append(text)
        size += len(text)
    return b"".join(parts)


AMPLIFIERS: dict[str, Callable[[int], bytes]] = {
    "empty-groups": lambda i: b"user-agent:\nallow:\n",
    "glob-rules": lambda i: b"allow:*%x*\n" % i,
    "sitemaps": lambda i: b"sitemap:%x\n" % i,
    "clean-params": lambda i: b"clean-param:a%x\n" % i,
}


@pytest.mark.parametrize("shape", list(AMPLIFIERS))
def test_default_limit_bounds_memory_of_dense_files(shape: str) -> None:
    """A 512,000-byte file of the densest records costs < 64 MiB to parse and query."""
    body = fill(AMPLIFIERS[shape])
    tracemalloc.start()
    try:
        robots = ra.parse(body)
        robots.allowed("/a*b", robots_token="bot")
        robots.allowed("/a*b", robots_token="other")
        robots.allowed("/a*b", robots_token="")  # the agent of the "empty-groups" groups
        assert len(robots.groups) >= 1
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    report(f"dense {shape}", peak_mib=peak / MIB)
    assert robots.truncated
    assert peak < 64 * MIB


def test_explain_on_a_file_of_agents_is_bounded() -> None:
    """200 explain() calls on a group of 36,000 agents (a 504 KB file) finish promptly."""
    robots = ra.parse(b"User-agent: *\n" * 36_000 + b"Disallow: /x\n")
    verdicts, seconds = timed(lambda: [robots.explain("/x", robots_token="b") for _ in range(200)])
    assert isinstance(verdicts, list)
    # Verdict.agents are the deciding group's values as written: all 36,000 of them.
    assert all(len(v.agents) == 36_000 and not v.allowed for v in verdicts)
    report("explain with 36k agents", explain_200_s=seconds)
    assert seconds < 5.0


@settings(max_examples=150, deadline=None)
@given(
    key=st.sampled_from([b"Crawl-delay", b"Visit-time"]),
    value=st.one_of(
        st.text(alphabet="0123456789.-: ", max_size=30).map(str.encode),
        st.builds(
            lambda digits, tail: b"9" * digits + tail,
            st.integers(300, 16_000),
            st.sampled_from([b"", b".5", b"-0000", b"00-" + b"1" * 5000]),
        ),
    ),
)
def test_huge_numbers_in_delay_and_visit_time(key: bytes, value: bytes) -> None:
    """Crawl-delay and Visit-time with thousands of digits parse to finite values or None."""
    robots = ra.parse(b"User-agent: *\n" + key + b": " + value + b"\n")
    delay = robots.crawl_delay(robots_token="bot")
    assert delay is None or (math.isfinite(delay) and 0 <= delay <= 86_400)
    robots.visit_time(robots_token="bot")


@pytest.mark.parametrize(
    "value",
    [
        b"9" * 400 + b"/1",
        b"9" * 4_000 + b"/1",
        b"9" * 5_000 + b"/1",
        b"1/" + b"9" * 400,
        b"1/" + b"9" * 400 + b"d",
        b"1/" + b"9" * 16_000 + b".5",
    ],
    ids=[
        "400-digit-count",
        "4000-digit-count",
        "5000-digit-count",
        "400-digit-seconds",
        "400-digit-days",
        "16000-digit-seconds",
    ],
)
def test_huge_request_rate_never_raises_and_stays_finite(value: bytes) -> None:
    """Request-rate with huge numbers parses; its delay is finite (or the line is ignored)."""
    robots = ra.parse(b"User-agent: *\nRequest-rate: " + value + b"\n")
    rate = robots.request_rate(robots_token="bot")
    assert rate is None or (math.isfinite(rate.delay) and rate.delay >= 0)


# --- 3. Warnings stay bounded ----------------------------------------------------------

JUNK_LINES = [
    b"junk without separator",
    b"Noindex: /x",
    b"Dissallow: /typo",
    b"Crawl-delay: soon",
    b"Request-rate: never",
    b"Visit-time: noon",
    b"Sitemap: relative.xml",
    b"Clean-param: &",
    b"\xff\xfe: binary key",
]
LONG_JUNK = b"x" * (MAX_LINE + 1)  # two warnings: line-too-long, then no-separator


def warnings_per_line(policy: str) -> dict[bytes, int]:
    """How many warnings each junk line gives on its own (inside a group)."""
    return {
        junk: len(ra.parse(b"User-agent: *\n" + junk + b"\n", policy=policy).warnings)
        for junk in (*JUNK_LINES, LONG_JUNK)
    }


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("max_bytes", [None, ra.DEFAULT_MAX_BYTES], ids=["unlimited", "default"])
def test_fifty_thousand_junk_lines_keep_exactly_the_cap(policy: str, max_bytes: int | None) -> None:
    """50,000 junk lines: the first 100 warnings, file-level ones, then one marker, last."""
    body = b"User-agent: *\n" + b"".join(JUNK_LINES[i % 9] + b"\n" for i in range(50_000))
    robots = ra.parse(body, policy=policy, max_bytes=max_bytes)
    warnings = robots.warnings
    codes = [w.code for w in warnings]
    # The 843 KB body is cut by the default limit: "truncated" and the cut line's
    # warning are facts about the file, kept beyond the cap.
    file_level = ["truncated", "truncated-line"] if max_bytes else []
    assert sorted(c for c in codes if c in FILE_LEVEL) == file_level
    assert len(warnings) == MAX_WARNINGS + len(file_level) + 1
    assert codes.count("too-many-warnings") == 1
    # The marker follows every line warning (whether it also follows the file-level
    # ones is test_file_level_warnings_survive_the_cap_and_the_marker_stays_last).
    line_codes = [c for c in codes if c not in FILE_LEVEL]
    assert line_codes[-1] == "too-many-warnings"
    lines = [w.line for w in warnings if w.code not in FILE_LEVEL][:-1]
    assert len(lines) == MAX_WARNINGS
    assert lines == sorted(lines)
    assert lines[-1] < 2_000  # the first warnings are kept, not the last


@settings(max_examples=60, deadline=None)
@given(
    picks=st.lists(st.integers(0, len(JUNK_LINES) - 1), min_size=1, max_size=20),
    repeat=st.integers(1, 300),
    long_lines=st.integers(0, 3),
    cuts=st.lists(st.integers(0, 10**7), max_size=12),
    policy=st.sampled_from(POLICIES),
)
# Found by hypothesis: 6 long-line warnings + 996 others, each part under the cap.
@example(picks=[0] * 12, repeat=83, long_lines=3, cuts=[], policy="google")
def test_warning_count_is_exact_below_and_capped_above(
    picks: list[int], repeat: int, long_lines: int, cuts: list[int], policy: str
) -> None:
    """Warnings are exactly the sum of each line's own, up to the cap, then one marker."""
    per_line = warnings_per_line(policy)
    junk = [LONG_JUNK] * long_lines + [JUNK_LINES[i] for i in picks] * repeat
    body = b"User-agent: *\n" + b"".join(line + b"\n" for line in junk)
    expected = sum(per_line[line] for line in junk)
    robots = parse_chunks(split_at(body, [c % (len(body) + 1) for c in cuts]), policy=policy)
    codes = [w.code for w in robots.warnings]
    assert len(codes) == min(expected, MAX_WARNINGS) + (expected > MAX_WARNINGS)
    assert ("too-many-warnings" in codes) is (expected > MAX_WARNINGS)
    assert robots.warnings == ra.parse(body, policy=policy).warnings


RULE_FLOOD = b"User-agent: *\n" + b"Disallow: /x\n" * (MAX_RULES + 1)


@pytest.mark.parametrize(
    ("body", "cut", "file_level"),
    [
        (RULE_FLOOD + b"junk\n" * 1500, None, [(1, "too-many-rules")]),
        (b"junk\n" * 1500 + RULE_FLOOD, None, [(1501, "too-many-rules")]),
        (RULE_FLOOD + b"junk\n" * MAX_WARNINGS, None, [(1, "too-many-rules")]),
        (
            b"junk\n" * 1500 + b"User-agent: *\nDisallow: /abcdef",
            3,
            [(1501, "truncated"), (1502, "truncated-line")],
        ),
    ],
    ids=["rules-cut-then-junk", "junk-then-rules-cut", "rules-cut-at-cap", "junk-then-truncated"],
)
def test_file_level_warnings_survive_the_cap_and_the_marker_stays_last(
    body: bytes, cut: int | None, file_level: list[tuple[int, str]]
) -> None:
    """truncated/too-many-rules survive a full cap; the marker, when present, comes last."""
    limit = None if cut is None else len(body) - cut  # cut: bytes beyond max_bytes
    warnings = ra.parse(body, max_bytes=limit).warnings
    codes = [w.code for w in warnings]
    assert [(w.line, w.code) for w in warnings if w.code in FILE_LEVEL] == file_level
    junk = sum(code == "no-separator" for code in codes)
    assert junk == MAX_WARNINGS
    overflow = body.count(b"junk\n") > MAX_WARNINGS
    assert len(warnings) == MAX_WARNINGS + len(file_level) + overflow
    assert ("too-many-warnings" in codes) is overflow
    if overflow:
        assert codes[-1] == "too-many-warnings"
