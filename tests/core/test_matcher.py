"""Pattern matching and the decision: wildcards, priority, ties, agents, worst cases.

Besides hand-written tables, two independent checks: a brute-force reference written
here (Google's position-set matcher and its line-by-line group handling), and a
differential test against the jwm.robotstxt binding of Google's C++ library.
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robots_async as ra
from tests.helpers import CORPUS

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

REF = "google-reference"


def verdict(body: str, url: str, token: str = "a", policy: str = REF) -> tuple[bool, int]:
    """(allowed, line) for ``url``; also checks allowed() agrees with explain()."""
    robots = ra.parse(body, policy=policy)
    result = robots.explain(url, robots_token=token)
    assert robots.allowed(url, robots_token=token) is result.allowed
    return result.allowed, result.line


# --- Wildcards ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("/", "/", True),
        ("/*", "/", True),
        ("*", "/anything", True),
        ("/a*b", "/ab", True),
        ("/a*b", "/axxb", True),
        ("/a*b", "/a/x/yb/z", True),
        ("/a*b", "/ba", False),
        ("*a", "/xa", True),
        ("/a**b", "/axb", True),
        ("/a**b", "/ab", True),
        ("/*/b", "/a/b", True),
        ("/*/b", "/ab", False),
        ("/a/*/c$", "/a/b/x/c", True),
        ("/a/*/c$", "/a/b/x/c/", False),
        ("/a*", "/a", True),
        ("/a*$", "/a", True),
        ("/a*$", "/b", False),
        ("/*?", "/x?y", True),
        ("/*;", "/x;p", True),
        ("/a$", "/a", True),
        ("/a$", "/ab", False),
        ("/a$b", "/a$b", True),
        ("/a$b", "/ab", False),
        ("/a$$", "/a$", True),
        ("/a$$", "/a", False),
        ("/a$*", "/a$x", True),
        ("/a$*", "/a", False),
        ("$", "/", False),
        ("a", "/a", False),
        ("a*", "/a", False),
        ("/*.php$", "/x.php", True),
        ("/*.php$", "/x.php?q", False),
        ("/*.php", "/x.php?q", True),
        ("/fish*", "/Fish", False),
        ("/a?b", "/a?b", True),
        ("/a?b", "/ab", False),
    ],
)
def test_wildcards(pattern: str, path: str, matches: bool) -> None:
    """``*`` matches any run (even ``/``), ``$`` is special only at the end of a pattern."""
    body = f"User-agent: a\nDisallow: {pattern}\n"
    assert verdict(body, path) == ((False, 2) if matches else (True, 0))


# --- Priority ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rules", "path", "expected"),
    [
        (["Allow: /*****", "Disallow: /abcd"], "/abcd", (True, 2)),
        (["Disallow: /abc", "Allow: /*x"], "/abcx", (False, 2)),
        (["Disallow: /é", "Allow: /%C3*"], "/%C3%A9", (False, 2)),
        (["Disallow: /é", "Allow: /%C3%A*"], "/%C3%A9", (True, 3)),
        (["Allow: /a$", "Disallow: /a"], "/a", (True, 2)),
        (["Allow: /p", "Disallow: /"], "/page", (True, 2)),
        (["Disallow: /page", "Allow: /p*"], "/page", (False, 2)),
        (["Disallow: /a", "Allow: /a*"], "/ab", (True, 3)),
        (["Allow: /a/", "Disallow: /a/*/c"], "/a/b/c", (False, 3)),
    ],
    ids=[
        "stars-count",
        "literal-beats-shorter-glob",
        "non-ascii-counts-encoded",
        "non-ascii-loses-to-longer",
        "dollar-counts",
        "longer-allow",
        "longer-disallow",
        "trailing-star-counts",
        "glob-longer",
    ],
)
def test_priority_is_normalised_pattern_length(
    rules: list[str], path: str, expected: tuple[bool, int]
) -> None:
    """The longest normalised pattern wins; ``*`` and ``$`` count one byte each."""
    body = "User-agent: a\n" + "\n".join(rules) + "\n"
    assert verdict(body, path) == expected


@pytest.mark.parametrize(
    ("rules", "path", "expected"),
    [
        (["Allow: /a", "Disallow: /a"], "/a", (True, 2)),
        (["Disallow: /a", "Allow: /a"], "/a", (True, 3)),
        (["Disallow: /", "Allow: *"], "/x", (True, 3)),
        (["Disallow: /a$", "Allow: /a*"], "/a", (True, 3)),
        (["Disallow: /ab$", "Allow: /a**"], "/ab", (True, 3)),
        (["Disallow: /ab$", "Allow: /a*****"], "/ab", (True, 3)),
        (["Disallow: /ab", "Allow: /a*$"], "/ab", (True, 3)),
    ],
    ids=[
        "allow-first",
        "disallow-first",
        "star-vs-slash",
        "anchored-vs-glob",
        "anchored-vs-trailing-stars",
        "anchored-vs-longer-trailing-stars",
        "prefix-vs-anchored-glob",
    ],
)
def test_allow_wins_ties(rules: list[str], path: str, expected: tuple[bool, int]) -> None:
    """An Allow and a Disallow of equal priority: allowed, with the Allow's line."""
    body = "User-agent: a\n" + "\n".join(rules) + "\n"
    assert verdict(body, path) == expected


def test_first_rule_of_top_priority_gives_the_line() -> None:
    """Among equally long matching rules of one kind, the first in the file is reported."""
    body = "User-agent: a\nDisallow: /a*\nDisallow: /ab\n\nUser-agent: a\nDisallow: /*b\n"
    assert verdict(body, "/ab") == (False, 2)
    body = "User-agent: a\nAllow: /ab\nAllow: /a*\n"
    assert verdict(body, "/ab") == (True, 2)


# --- Google's /index.html rule -------------------------------------------------------------


@pytest.mark.parametrize(
    ("allow", "disallow", "path", "expected"),
    [
        ("/d/index.html", "/d/", "/d/", (True, 3)),
        ("/d/index.html", "/d/", "/d/index.html", (True, 3)),
        ("/d/index.html", "/d/", "/d/?q", (False, 2)),
        ("/d/index.html", "/d/", "/d/x", (False, 2)),
        ("/d/index.htm", "/d/", "/d/", (True, 3)),
        ("/d/index.htmlx", "/d/", "/d/", (True, 3)),
        ("/d/index.html?x=1", "/d/", "/d/", (True, 3)),
        ("/index.html", "/", "/", (True, 3)),
        ("/d/Index.html", "/d/", "/d/", (False, 2)),
        ("/d/index.php", "/d/", "/d/", (False, 2)),
        ("/d/index.html", "/d/*", "/d/", (True, 3)),
        ("/d/index.html", "/d/**", "/d/", (False, 2)),
    ],
    ids=[
        "directory",
        "file",
        "query-not-allowed",
        "sibling-not-allowed",
        "htm",
        "htmlx",
        "html-query",
        "root",
        "case-sensitive",
        "not-index",
        "own-length-ties",
        "own-length-loses",
    ],
)
def test_index_html_allows_directory(
    allow: str, disallow: str, path: str, expected: tuple[bool, int]
) -> None:
    """Google: Allow: /d/index.html also allows exactly /d/ (priority len('/d/$'))."""
    body = f"User-agent: a\nDisallow: {disallow}\nAllow: {allow}\n"
    assert verdict(body, path) == expected
    assert verdict(body, path, policy="google") == expected


def test_index_html_never_applies_to_disallow() -> None:
    """Disallow: /d/index.html does not disallow /d/."""
    assert verdict("User-agent: a\nDisallow: /d/index.html\n", "/d/") == (True, 0)


# --- Empty patterns -----------------------------------------------------------------------


def test_empty_disallow_allows_with_its_line() -> None:
    """An empty Disallow matches with priority 0: it allows and reports its line."""
    robots = ra.parse("User-agent: a\nDisallow:\n", policy=REF)
    result = robots.explain("/x", robots_token="a")
    assert (result.allowed, result.reason, result.line) == (True, "empty-rule", 2)
    assert result.rule == ra.Rule(False, "", 2)


@pytest.mark.parametrize(
    ("rules", "path", "expected"),
    [
        (["Allow:", "Disallow: /x"], "/x", (False, 3)),
        (["Disallow: /x", "Disallow:"], "/x", (False, 2)),
        (["Disallow:", "Allow:"], "/x", (True, 3)),
        (["Allow:", "Disallow:"], "/x", (True, 2)),
    ],
    ids=["empty-allow-no-override", "empty-disallow-no-effect", "tie-allow-line", "allow-first"],
)
def test_empty_patterns_have_no_opinion(
    rules: list[str], path: str, expected: tuple[bool, int]
) -> None:
    """Empty Allow/Disallow never disallow and never override another rule."""
    body = "User-agent: a\n" + "\n".join(rules) + "\n"
    assert verdict(body, path) == expected


def test_empty_specific_group_beats_star() -> None:
    """A specific group with only an empty rule still makes the ``*`` rules irrelevant."""
    body = "User-agent: *\nDisallow: /\n\nUser-agent: a\nDisallow:\n"
    assert verdict(body, "/x", "a") == (True, 5)
    assert verdict(body, "/x", "b") == (False, 2)


# --- Agent selection -------------------------------------------------------------------------


@pytest.mark.parametrize("policy", ["google", REF, "rfc9309", "first-match"])
def test_specific_group_beats_star_completely(policy: str) -> None:
    """If a group names the agent, the ``*`` rules are ignored even when nothing matches."""
    body = "User-agent: *\nDisallow: /\n\nUser-agent: a\nDisallow: /private\n\nUser-agent: b\n"
    robots = ra.parse(body, policy=policy)
    assert robots.allowed("/public", robots_token="a")
    assert not robots.allowed("/private", robots_token="a")
    assert robots.allowed("/public", robots_token="b")
    assert robots.explain("/public", robots_token="b").reason == "no-match"
    assert not robots.allowed("/public", robots_token="c")


@pytest.mark.parametrize(
    ("group", "token", "blocked"),
    [
        ("bot", "bot", True),
        ("bot", "BOT", True),
        ("bot", "mybot", False),
        ("bot", "botnet", False),
        ("mybot", "bot", False),
        ("my-bot", "my", False),
        ("Googlebot", "Googlebot-Image", False),
        ("Googlebot-Image", "Googlebot", False),
    ],
)
def test_agents_match_exactly_not_as_substrings(group: str, token: str, blocked: bool) -> None:
    """Agent names are compared whole and case-insensitively: "bot" is not "mybot"."""
    body = f"User-agent: {group}\nDisallow: /\n"
    for policy in ("google", REF, "rfc9309"):
        robots = ra.parse(body, policy=policy)
        assert robots.allowed("/x", robots_token=token) is not blocked
        assert robots.allowed("/x", user_agent=f"{token}/1.0 (+https://e.com)") is not blocked


@pytest.mark.parametrize(
    "value", ["Googlebot/2.1", "Googlebot 2", "Googlebot2", "Googlebot*", "googlebot.com"]
)
def test_robots_agent_value_is_cut_to_its_token(value: str) -> None:
    """A robots.txt user-agent value is reduced to its leading [A-Za-z_-] run."""
    body = f"User-agent: {value}\nDisallow: /\n"
    assert verdict(body, "/x", "Googlebot") == (False, 2)


@pytest.mark.parametrize("token", ["Googlebot/2.1", "Googlebot 2", " Googlebot", "*"])
def test_robots_token_is_used_verbatim(token: str) -> None:
    """robots_token is not reduced: an invalid token matches only the ``*`` group."""
    body = "User-agent: Googlebot\nDisallow: /g\n\nUser-agent: *\nDisallow: /s\n"
    assert verdict(body, "/g", token) == (True, 0)
    assert verdict(body, "/s", token) == (False, 5)


def test_user_agent_is_reduced_to_product_token() -> None:
    """user_agent= is a full header; its product token selects the group."""
    robots = ra.parse("User-agent: Googlebot\nDisallow: /g\n", policy=REF)
    ua = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
    assert not robots.allowed("/g", user_agent=ua)
    assert not robots.allowed("/g", user_agent="Googlebot/2.1")
    assert robots.explain("/g", user_agent=ua).token == "Googlebot"


@pytest.mark.parametrize(
    ("value", "token", "blocked"),
    [
        ("*", "anybot", True),
        ("* foo", "anybot", True),
        ("*\tfoo", "anybot", True),
        ("*bot", "anybot", False),
        ("**", "anybot", False),
        ("*bot", "", True),
        ("", "", True),
    ],
    ids=["star", "star-space", "star-tab", "star-bot", "double-star", "empty-query", "empty-value"],
)
def test_global_agent_and_empty_tokens(value: str, token: str, blocked: bool) -> None:
    """``*`` (alone or before whitespace) is global; ``*bot`` is an empty token."""
    body = f"User-agent: {value}\nDisallow: /\n"
    assert verdict(body, "/x", token)[0] is not blocked


# --- Worst cases (hang guards, not benchmarks) -------------------------------------------------

HOSTILE_PATTERN = "/" + "*a" * 500 + "b"
LONG_PATH = "/" + "a" * 10_000


@pytest.mark.parametrize("policy", ["google", REF, "rfc9309", "first-match"])
@pytest.mark.parametrize("suffix", ["", "$"], ids=["unanchored", "anchored"])
def test_many_stars_against_long_path_is_prompt(policy: str, suffix: str) -> None:
    """A 1001-byte pattern of stars against a 10,000-byte path returns promptly."""
    robots = ra.parse(f"User-agent: *\nDisallow: {HOSTILE_PATTERN}{suffix}\n", policy=policy)
    start = time.perf_counter()
    assert robots.allowed(LONG_PATH, robots_token="bot")
    assert not robots.allowed(LONG_PATH + "b", robots_token="bot")
    assert robots.explain(LONG_PATH + "c", robots_token="bot").allowed
    assert time.perf_counter() - start < 2.0


def test_many_queries_on_hostile_file_finish() -> None:
    """1,000 queries of long paths against many star-heavy rules finish in bounded time."""
    lines = ["User-agent: *"]
    for k in range(1, 41):
        stars = "*a" * (k * 12)
        lines += [f"Disallow: /{stars}b", f"Allow: /{stars}c$", f"Disallow: /*{'a' * k}*x*y*z"]
    robots = ra.parse("\n".join(lines) + "\n")
    start = time.perf_counter()
    results = [robots.allowed("/" + "a" * (10_000 - i), robots_token="bot") for i in range(1000)]
    assert all(results)
    assert not robots.allowed("/" + "a" * 5000 + "b", robots_token="bot")
    assert time.perf_counter() - start < 30.0


# --- Brute-force reference -----------------------------------------------------------------------


def reference_matches(path: str, pattern: str) -> bool:
    """Google's position-set matcher: track every path offset the pattern prefix can reach."""
    positions = [0]
    for index, char in enumerate(pattern):
        if char == "$" and index == len(pattern) - 1:
            return positions[-1] == len(path)
        if char == "*":
            positions = list(range(positions[0], len(path) + 1))
        else:
            positions = [p + 1 for p in positions if p < len(path) and path[p] == char]
            if not positions:
                return False
    return True


class Best(NamedTuple):
    """The best match of one kind in one bucket: priority (-1 = none) and line."""

    priority: int = -1
    line: int = 0


def is_global_agent(value: str) -> bool:
    """A user-agent value for every crawler: ``*`` alone or before whitespace."""
    return value == "*" or (value[:1] == "*" and value[1:2].isspace())


def applicable_rules(
    lines: list[tuple[str, str]], names_token: Callable[[str], bool]
) -> Iterator[tuple[int, str, str, int]]:
    """(line number, kind, value, scope) of each rule in a group for the token (scope
    1: a user-agent value ``names_token``) or for every crawler (scope 0), with
    Google's grouping: consecutive user-agent lines share the rules that follow."""
    seen_global = seen_specific = seen_rule = False
    for number, (kind, value) in enumerate(lines, start=1):
        if kind == "user-agent":
            if seen_rule:
                seen_global = seen_specific = seen_rule = False
            if is_global_agent(value):
                seen_global = True
            elif names_token(value):
                seen_specific = True
        elif seen_global or seen_specific:
            seen_rule = True
            yield number, kind, value, 1 if seen_specific else 0


def names_any(lines: list[tuple[str, str]], names_token: Callable[[str], bool]) -> bool:
    """Whether a group names the token (then the ``*`` groups do not apply)."""
    return any(
        kind == "user-agent" and not is_global_agent(value) and names_token(value)
        for kind, value in lines
    )


def reference_verdict(lines: list[tuple[str, str]], token: str, path: str) -> tuple[bool, int]:
    """Google's matcher, line by line: groups, buckets, priority, ties and matching line."""

    def names_token(value: str) -> bool:
        reduced = re.match(r"[A-Za-z_-]*", value)
        return reduced is not None and reduced.group().lower() == token.lower()

    best = {(kind, scope): Best() for kind in ("allow", "disallow") for scope in (0, 1)}
    for number, kind, value, scope in applicable_rules(lines, names_token):
        priority = len(value) if reference_matches(path, value) else -1
        if priority > best[kind, scope].priority:
            best[kind, scope] = Best(priority, number)
    scope = 1 if names_any(lines, names_token) else 0
    allow, disallow = best["allow", scope], best["disallow", scope]
    disallowed = disallow.priority > 0 and disallow.priority > allow.priority
    line = disallow.line if disallow.priority > allow.priority else allow.line
    return not disallowed, line


agents = st.sampled_from(["a", "A", "*", "b", "a/1.0", "*bot", "* x"])
patterns = st.one_of(
    st.text(alphabet="/ab*$", max_size=6),
    st.text(alphabet="ab*$", max_size=5).map(lambda tail: "/" + tail),
    st.builds(
        lambda literal, stars, end: "/" + literal + "*" * stars + end,
        st.text(alphabet="ab/", max_size=3),
        st.integers(0, 3),
        st.sampled_from(["", "$"]),
    ),
)
robots_lines = st.lists(
    st.one_of(
        st.tuples(st.just("user-agent"), agents),
        st.tuples(st.sampled_from(["allow", "disallow"]), patterns),
    ),
    max_size=12,
)


@st.composite
def paths_for(draw: st.DrawFn, lines: list[tuple[str, str]]) -> str:
    """A path: random, or made from one of the patterns so that it likely matches."""
    values = [value for kind, value in lines if kind != "user-agent"]
    if values and draw(st.booleans()):
        value = draw(st.sampled_from(values)).removesuffix("$")
        fill = draw(st.text(alphabet="ab/", max_size=2))
        path = value.replace("*", fill) + draw(st.sampled_from(["", "a", "b/"]))
        return path if path.startswith("/") else "/" + path
    return "/" + draw(st.text(alphabet="ab$*/", max_size=7))


@st.composite
def matcher_cases(draw: st.DrawFn) -> tuple[list[tuple[str, str]], str, str]:
    """Random robots.txt lines, a path suited to them, and a query token."""
    lines = draw(robots_lines)
    return lines, draw(paths_for(lines)), draw(st.sampled_from(["a", "b", ""]))


@settings(max_examples=1000, deadline=None)
@given(matcher_cases())
def test_matches_brute_force_reference(case: tuple[list[tuple[str, str]], str, str]) -> None:
    """google-reference agrees with a straightforward reference matcher: verdict and line."""
    lines, path, token = case
    body = "".join(f"{kind}: {value}\n" for kind, value in lines)
    expected = reference_verdict(lines, token, path)
    assert verdict(body, "http://example.com" + path, token) == expected


one_group_rules = st.lists(
    st.tuples(st.sampled_from(["allow", "disallow"]), patterns), min_size=1, max_size=6
)


@st.composite
def one_group_cases(draw: st.DrawFn) -> tuple[list[tuple[str, str]], str]:
    """Rules of a single group for agent "a", and a path suited to them."""
    lines = [("user-agent", "a"), *draw(one_group_rules)]
    return lines, draw(paths_for(lines))


@settings(max_examples=1000, deadline=None)
@given(one_group_cases())
def test_priority_matches_brute_force_reference(case: tuple[list[tuple[str, str]], str]) -> None:
    """Within one group, google-reference picks the same rule as the reference matcher."""
    lines, path = case
    body = "".join(f"{kind}: {value}\n" for kind, value in lines)
    assert verdict(body, "http://example.com" + path) == reference_verdict(lines, "a", path)


def reference_first_match(lines: list[tuple[str, str]], token: str, path: str) -> tuple[bool, int]:
    """The 1997 reading: first group naming the agent (else first ``*`` group), first rule.

    A group names the agent exactly (full name) or, without such a group, by Google's
    reduction of its value to a leading ``[A-Za-z_-]`` run.
    """
    groups: list[tuple[list[str], list[tuple[str, str, int]]]] = []
    for number, (kind, value) in enumerate(lines, start=1):
        if kind == "user-agent":
            if not groups or groups[-1][1]:
                groups.append(([], []))
            groups[-1][0].append(value)
        elif groups:
            groups[-1][1].append((kind, value, number))

    def names_token(agents: list[str]) -> bool:
        for value in agents:
            if value == "*" or (value[:1] == "*" and value[1:2].isspace()):
                continue
            reduced = re.match(r"[A-Za-z_-]*", value)
            if reduced is not None and reduced.group().lower() == token.lower():
                return True
        return False

    def is_global(agents: list[str]) -> bool:
        return any(v == "*" or (v[:1] == "*" and v[1:2].isspace()) for v in agents)

    def names_exactly(agents: list[str]) -> bool:
        # The default policies' improvement: the full name (up to a space or "/") first.
        names = (re.match(r"[^\s/;(),]*", v.strip()) for v in agents)
        return any(n is not None and n.group().lower() == token.lower() for n in names)

    chosen = None
    if token:  # an empty token never selects a named group
        chosen = next((g for g in groups if names_exactly(g[0])), None)
        if chosen is None:
            chosen = next((g for g in groups if names_token(g[0])), None)
    if chosen is None:
        chosen = next((g for g in groups if is_global(g[0])), None)
    for kind, value, number in chosen[1] if chosen else []:
        if value and reference_matches(path, value):
            return kind == "allow", number
    return True, 0


@settings(max_examples=600, deadline=None)
@given(matcher_cases())
def test_first_match_matches_brute_force_reference(
    case: tuple[list[tuple[str, str]], str, str],
) -> None:
    """first-match agrees with a straightforward file-order reference: verdict and line."""
    lines, path, token = case
    body = "".join(f"{kind}: {value}\n" for kind, value in lines)
    expected = reference_first_match(lines, token, path)
    assert verdict(body, "http://example.com" + path, token, "first-match") == expected


@pytest.mark.parametrize(
    ("lines", "path", "expected"),
    [
        ([("user-agent", "a"), ("allow", "/a**"), ("disallow", "/ab$")], "/ab", (True, 2)),
        ([("user-agent", "a"), ("disallow", "/ab$"), ("allow", "/a*****")], "/ab", (True, 3)),
        ([("user-agent", "*"), ("disallow", "/"), ("allow", "*")], "/x", (True, 3)),
        ([("user-agent", "a"), ("disallow", "$")], "/", (True, 0)),
        ([("user-agent", "a"), ("allow", ""), ("disallow", "")], "/", (True, 2)),
    ],
    ids=["trailing-stars-tie", "trailing-stars-win", "tie", "dollar-alone", "empty"],
)
def test_reference_implementation_itself(
    lines: list[tuple[str, str]], path: str, expected: tuple[bool, int]
) -> None:
    """The brute-force reference gives the documented answers on hand-checked cases."""
    assert reference_verdict(lines, "a", path) == expected


# --- Differential test against Google's C++ library (jwm.robotstxt) ------------------------------

CORPUS_FILES = sorted(CORPUS.iterdir())
RULE_VALUE = re.compile(r"^[ \t]*(?:dis)?allow[ \t]*:[ \t]*([^\s#]*)", re.IGNORECASE | re.MULTILINE)
AGENT_VALUE = re.compile(
    r"^[ \t]*user-agent[ \t]*:[ \t]*([A-Za-z_-]+)", re.IGNORECASE | re.MULTILINE
)
COMMON_PATHS = [
    "/",
    "/index.html",
    "/robots.txt",
    "/search?q=test",
    "/admin/",
    "/wp-admin/admin-ajax.php",
    "/api/v1/items",
    "/images/photo.gif",
    "/%E3%83%84",
    "/a;b?c=d",
    "/sitemap.xml",
    "/cgi-bin/",
    "/login?next=/account",
    "/static/app.js",
    "/products/123/reviews",
    "/user/profile#top",
    "/tag/News/",
    "/print/",
    "/feed",
    "/?s=query",
]


def corpus_urls(text: str, host: str) -> list[str]:
    """About 30 URLs: variants of the file's own rule paths plus common paths."""
    paths: dict[str, None] = {}
    for value in RULE_VALUE.findall(text):
        literal = value.replace("*", "x").removesuffix("$")
        for path in (literal, literal + "z", literal[:-1], value):
            if len(paths) < 20 and path:
                paths.setdefault(path if path.startswith("/") else "/" + path)
    paths.update(dict.fromkeys(COMMON_PATHS))
    return [f"https://{host}{path}" for path in paths]


def second_agent(text: str) -> str:
    """The first agent the file names other than Googlebot, else a made-up one."""
    for name in AGENT_VALUE.findall(text):
        if name.lower() != "googlebot":
            return name
    return "ExampleBot"


def test_corpus_is_present() -> None:
    """The differential corpus holds the 32 real robots.txt files."""
    assert len(CORPUS_FILES) == 32


@pytest.mark.parametrize("path", CORPUS_FILES, ids=[p.name for p in CORPUS_FILES])
def test_corpus_agrees_with_google_cpp(path: object) -> None:
    """On real files, google-reference gives jwm.robotstxt's verdict and matching line."""
    googlebot = pytest.importorskip("jwm.robotstxt.googlebot")
    text = path.read_bytes().decode("utf-8", "replace")  # type: ignore[attr-defined]
    robots = ra.parse(text.encode("utf-8"), policy=REF, max_bytes=None)
    urls = corpus_urls(text, path.name)  # type: ignore[attr-defined]
    assert len(urls) >= 20
    mismatches = []
    for agent in ("Googlebot", second_agent(text), "360Spider", "008", ""):
        for url in urls:
            matcher = googlebot.RobotsMatcher()
            expected = (matcher.OneAgentAllowedByRobots(text, agent, url), matcher.matching_line())
            result = robots.explain(url, robots_token=agent)
            got = (result.allowed, result.line)
            if got != expected or robots.allowed(url, robots_token=agent) is not got[0]:
                mismatches.append((agent, url, expected, got))
    assert mismatches == []


@pytest.mark.parametrize(
    ("pattern", "path"),
    [
        ("/a*b", "/a/x/b"),
        ("/a*b$", "/a/x/b"),
        ("/a*b*", "/a/x/b/c"),
        ("/a*b**", "/a/x/b/c"),
        ("/a**b", "/a/x/b"),
        ("/*/x*y$", "/k/x/y"),
        ("*.php", "/index.php"),
    ],
)
def test_explain_gives_each_glob_as_written(pattern: str, path: str) -> None:
    """A head*tail glob keeps no pattern string (rebuilt for explain): every form,
    trailing stars and "**" included, is reported as written."""
    robots = ra.parse(f"User-agent: *\nDisallow: {pattern}\nAllow: /zz\n".encode())
    verdict = robots.explain(f"https://example.com{path}", "bot")
    assert verdict.allowed is False
    assert verdict.rule is not None
    assert verdict.rule.pattern == pattern
    assert verdict.line == 2
