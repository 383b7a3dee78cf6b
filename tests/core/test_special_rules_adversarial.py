"""Adversarial checks of how a bucket's special rules (``*`` and ``$``) are compiled
(SpecialRules.set_apart, Google's index.html rule, Bucket.heads, shared buckets).

Every verdict is compared with a brute-force reference written here: Google's
line-by-line decision (google_semantics.md items 34-40) over two independent
matchers (the position-set one of test_matcher and a regular expression), which
must agree with each other. explain() must give the reference's verdict, line and
pattern, and allowed() its verdict.
"""

from __future__ import annotations

import dataclasses
import random
import re
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

import pytest

import robots_async as ra
from robots_async.core import compiled as _compiled
from robots_async.core.policy import GOOGLE, PolicyName
from robots_async.core.wildcards import SCANS_BEFORE_INDEX
from tests.core.test_matcher import applicable_rules, names_any, reference_matches

if TYPE_CHECKING:
    from robots_async.core.matcher import Bucket

POLICIES: tuple[PolicyName, ...] = ("google", "google-reference", "rfc9309")
ORIGIN = "http://example.com"

Lines = list[tuple[str, str]]


# --- The reference ---------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def _regex(pattern: str) -> re.Pattern[str]:
    anchored = pattern.endswith("$")
    body = pattern[:-1] if anchored else pattern
    return re.compile(
        ".*".join(map(re.escape, body.split("*"))) + (r"\Z" if anchored else ""), re.DOTALL
    )


def matches(path: str, pattern: str) -> bool:
    """Whether ``pattern`` matches ``path``: two independent matchers, which must agree."""
    found = _regex(pattern).match(path) is not None
    assert reference_matches(path, pattern) is found, (path, pattern)
    return found


def index_html_extra(pattern: str) -> str | None:
    """Item 40: from the last "/" on, an Allow starting with /index.htm also allows
    the part up to that "/" exactly."""
    slash = pattern.rfind("/")
    if slash < 0 or not pattern[slash:].startswith("/index.htm"):
        return None
    return pattern[: slash + 1] + "$"


def rfc_pattern(value: str) -> str:
    """RFC 9309 §2.2.3 as the rfc9309 policy reads it: a ``$`` that is not last is a
    literal ``$``, written %24 (which counts three bytes)."""
    anchored = value.endswith("$")
    body = (value[:-1] if anchored else value).replace("$", "%24")
    return body + "$" if anchored else body


def rfc_target(path: str) -> str:
    """The target of the rfc9309 policy: literal ``*`` and ``$`` %-encoded."""
    return path.replace("*", "%2A").replace("$", "%24")


class Best(NamedTuple):
    """The best match of one kind in one scope: priority (-1: none), line, pattern."""

    priority: int = -1
    line: int = 0
    pattern: str = ""


def reference(
    lines: Lines, token: str, path: str, policy: PolicyName
) -> tuple[bool, int, str | None]:
    """(allowed, line, pattern of the deciding rule or None) as Google decides, for
    agent values "a", "b" and "*" (where every policy picks groups alike)."""
    rfc = policy == "rfc9309"
    if rfc:
        path = rfc_target(path)

    def names_token(value: str) -> bool:
        return value.lower() == token.lower()

    best = {(kind, scope): Best() for kind in ("allow", "disallow") for scope in (0, 1)}
    for number, kind, value, scope in applicable_rules(lines, names_token):
        pattern = rfc_pattern(value) if rfc else value
        candidates = [pattern]
        extra = index_html_extra(pattern) if kind == "allow" and not rfc else None
        if extra is not None:
            candidates.append(extra)
        key = (kind, scope)
        for candidate in candidates:
            priority = len(candidate) if matches(path, candidate) else -1
            if priority > best[key].priority:
                best[key] = Best(priority, number, candidate)
    scope = 1 if names_any(lines, names_token) else 0
    allow, disallow = best["allow", scope], best["disallow", scope]
    decider = disallow if disallow.priority > allow.priority else allow
    allowed = not (disallow.priority > 0 and disallow.priority > allow.priority)
    return allowed, decider.line, (decider.pattern if decider.priority >= 0 else None)


def body_of(lines: Lines) -> str:
    return "".join(f"{kind}: {value}\n" for kind, value in lines)


def check(
    lines: Lines,
    paths: list[str],
    policy: PolicyName,
    token: str = "a",
    robots: ra.RobotsTxt | None = None,
) -> int:
    """Assert explain() and allowed() give the reference's answers for each path of
    ``paths``; return the number of paths checked."""
    if robots is None:
        robots = ra.parse(body_of(lines), policy=policy)
    for path in paths:
        url = ORIGIN + path
        expected = reference(lines, token, path, policy)
        result = robots.explain(url, robots_token=token)
        got = (result.allowed, result.line, result.rule.pattern if result.rule else None)
        context = (policy, token, path, body_of(lines))
        assert got == expected, context
        assert robots.allowed(url, robots_token=token) is expected[0], context
        if token == "a":
            assert robots.allowed(url, user_agent="a/1.0 (+http://a.test)") is expected[0], context
    return len(paths)


def test_reference_on_hand_checked_cases() -> None:
    """The reference itself: items 34-40 on cases worked out by hand."""
    group = [("user-agent", "a")]
    cases: list[tuple[Lines, str, PolicyName, tuple[bool, int, str | None]]] = [
        ([("disallow", "/a$b")], "/a$b", "google", (False, 2, "/a$b")),
        ([("disallow", "/a$b")], "/ab", "google", (True, 0, None)),
        ([("disallow", "/a$$")], "/a$", "google", (False, 2, "/a$$")),
        ([("disallow", "$")], "/", "google", (True, 0, None)),
        ([("disallow", "/a"), ("allow", "/a$")], "/a", "google", (True, 3, "/a$")),
        ([("disallow", "/a/"), ("allow", "/a/index.html")], "/a/", "google", (True, 3, "/a/$")),
        ([("disallow", "/a/"), ("allow", "/a/index.html")], "/a/", "rfc9309", (False, 2, "/a/")),
        ([("disallow", "/a/"), ("allow", "/a/index.html")], "/a/?", "google", (False, 2, "/a/")),
        ([("disallow", "/a/*"), ("allow", "/a/index.html")], "/a/", "google", (True, 3, "/a/$")),
        ([("disallow", "/a/**"), ("allow", "/a/index.html")], "/a/", "google", (False, 2, "/a/**")),
        ([("disallow", "/*/"), ("allow", "/*/index.html")], "/x/", "google", (True, 3, "/*/$")),
        ([("disallow", "/"), ("allow", "/index.html$")], "/", "google", (True, 3, "/$")),
        ([("disallow", "/a$b")], "/a$b", "rfc9309", (False, 2, "/a%24b")),
        ([("disallow", "/a$bc"), ("allow", "/a$b*")], "/a$bc", "google", (True, 3, "/a$b*")),
        ([("disallow", "/a$bc"), ("allow", "/a*bc*")], "/a$bc", "google", (True, 3, "/a*bc*")),
        ([("disallow", "/a$bc"), ("allow", "/a*bc*")], "/a$bc", "rfc9309", (False, 2, "/a%24bc")),
    ]
    for rules, path, policy, expected in cases:
        assert reference(group + rules, "a", path, policy) == expected, (rules, path, policy)


# --- Special patterns, one file at a time ------------------------------------------------------

SPECIAL = [
    "$", "*", "**", "***", "*$", "**$", "$$", "*$$", "$*",
    "/", "/$", "/*", "/**", "/*$", "/$*",
    "/a", "/a$", "/a*", "/a**", "/a***", "/a*$", "/a**$", "/a***$",
    "/a$b", "/a$b$", "/a$b*", "/a$$", "/a$*", "/a$*$", "/a$*b", "/a*$b", "/a*$*",
    "/a*b", "/a**b", "/a***b", "/a*b$", "/a**b$", "/a*b*", "/a*b*$", "/a*b**c", "/a*b*c$",
    "*a", "*a$", "*a*", "**a**", "/*a", "/*a$", "/*a*b", "/*/b", "/*/b$",
    "/ab", "/ab$", "/ab*", "/a/", "/a/$", "/a/*", "/a/*$", "/b", "a", "a*", "a$",
]  # fmt: skip


def _targets(patterns: list[str]) -> list[str]:
    """Paths around each pattern: its literal parts, one shorter, longer, filled in."""
    paths = {"/", "/a", "/ab", "/a$", "/a$b", "/a$bc", "/a$$", "/b", "/ba", "/a/", "/a/b", "/$"}
    for pattern in patterns:
        literal = pattern.removesuffix("$")
        for fill in ("", "b", "a/", "$"):
            path = literal.replace("*", fill)
            for end in ("", "b", "$", "/"):
                full = path + end
                paths.add(full if full.startswith("/") else "/" + full)
        if len(literal) > 1:
            paths.add(literal[:-1].replace("*", ""))
    return sorted(path if path.startswith("/") else "/" + path for path in paths)


TARGETS = _targets(SPECIAL)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("pattern", SPECIAL)
def test_each_special_pattern_alone_and_against_itself(policy: PolicyName, pattern: str) -> None:
    """A pattern as Disallow, as Allow, as both (ties: Allow), on several lines and
    in two groups of the agent, beside a plain literal of its own literal."""
    literal = pattern.replace("*", "").replace("$", "") or "/"
    files: list[Lines] = [
        [("user-agent", "a"), ("disallow", pattern)],
        [("user-agent", "a"), ("allow", pattern), ("disallow", "/")],
        [("user-agent", "a"), ("disallow", pattern), ("allow", pattern)],
        [("user-agent", "a"), ("allow", pattern), ("disallow", pattern)],
        [("user-agent", "a"), ("disallow", pattern), ("disallow", pattern), ("allow", literal)],
        [("user-agent", "a"), ("disallow", literal), ("allow", pattern), ("allow", pattern)],
        [
            ("user-agent", "a"),
            ("disallow", pattern),
            ("user-agent", "b"),
            ("allow", "/"),
            ("user-agent", "a"),
            ("allow", pattern),
            ("disallow", pattern + "*"),
        ],
    ]
    paths = _targets([pattern, literal])
    checked = sum(check(lines, paths, policy) for lines in files)
    assert checked == len(files) * len(paths)


@pytest.mark.parametrize("policy", POLICIES)
def test_exact_and_raised_literals_equal_to_plain_ones(policy: PolicyName) -> None:
    """``/a$``, ``/a*``, ``/a$b`` and a plain ``/a`` or ``/a$b`` in one bucket: each
    index (plain, exact, raised) gives its own rule and the longest wins."""
    files: list[Lines] = [
        [("user-agent", "a"), ("allow", "/a"), ("disallow", "/a$"), ("allow", "/a*")],
        [("user-agent", "a"), ("disallow", "/a*"), ("allow", "/a"), ("disallow", "/a$")],
        [("user-agent", "a"), ("disallow", "/a$b"), ("allow", "/a$"), ("allow", "/a$b$")],
        [("user-agent", "a"), ("allow", "/a$b*"), ("disallow", "/a$bc"), ("disallow", "/a$b$")],
        [("user-agent", "a"), ("disallow", "/a$"), ("disallow", "/a$$"), ("allow", "/a$*")],
        [("user-agent", "*"), ("disallow", "/a**"), ("user-agent", "a"), ("allow", "/a$")],
        [("user-agent", "a"), ("disallow", "/ab"), ("allow", "/a*$"), ("allow", "/ab$")],
        [("user-agent", "a"), ("allow", "/ab"), ("disallow", "/a**"), ("disallow", "/ab*")],
    ]
    for lines in files:
        check(lines, TARGETS, policy)


# Globs of three or more segments: each is tried only if its longest segment after the
# head occurs in the target (its last one, "/" here, occurs in every target).
MIDDLE = [
    "/*/wall/*/*/roses/", "/*/w/*/", "/a*bbb*c", "/a*b*ccc$", "/x*/yy/*z$", "*/long/*/",
    "/a*bb*b", "/a*b*b$", "/*/p/0/*/",
]  # fmt: skip
MIDDLE_TARGETS = [
    "/", "/u/wall/x/y/roses/", "/wall/x/y/roses/", "/u/wall/x/roses/", "/u/roses/wall/x/y/",
    "/u/wall/x/y/roses", "/u/w/", "/u/w/x", "/u/w/x/", "/w/x/", "/abbbc", "/abbb", "/abbc",
    "/acbbbc", "/abccc", "/abcc", "/abbccc", "/abccc/", "/x/yy/z", "/x/yyz", "/x/yy/az",
    "/x/yy/z/", "/a/long/b/", "/long/b/", "/a/long/", "/abbb", "/abb", "/abbx", "/abb$",
    "/u/p/0/", "/u/p/0/x/", "/p/0/x/", "/u/p/0",
]  # fmt: skip


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("pattern", MIDDLE)
def test_globs_with_middle_segments(policy: PolicyName, pattern: str) -> None:
    """A glob found through a middle segment matches exactly where Google's does,
    alone, as Allow against a Disallow of ``/``, and among the other such globs."""
    files: list[Lines] = [
        [("user-agent", "a"), ("disallow", pattern)],
        [("user-agent", "a"), ("disallow", "/"), ("allow", pattern)],
        [("user-agent", "a"), *(("disallow", other) for other in MIDDLE), ("allow", pattern)],
    ]
    paths = sorted({*MIDDLE_TARGETS, *_targets([pattern])})
    checked = sum(check(lines, paths, policy) for lines in files)
    assert checked == len(files) * len(paths)


# --- Google's index.html rule ----------------------------------------------------------------

INDEX_ALLOWS = [
    "/a/index.html", "/a/index.htm", "/a/index.htmlx", "/a/index.html?x=1", "/*/index.html",
    "/index.html$", "/a/index.html*", "/a/index.html$", "/a/index.htm*$", "*/index.html",
    "/a*/index.html", "/a/index.html/b", "/a/Index.html", "/a/b/index.html", "/index.html",
    "/a$/index.html", "/a/index.html/index.htm", "index.html", "/a/**/index.html",
]  # fmt: skip
INDEX_DISALLOWS = ["/", "/a/", "/a/$", "/a/*", "/a/**", "/*/", "/*/$", "/a", "*", "/a/index.html"]
INDEX_TARGETS = [
    "/", "/a", "/a/", "/a//", "/a/?", "/a/x", "/b/", "/a/b/", "/a$/", "/x/y/", "/a/index.html",
    "/a/index.htm", "/a/index.html/", "/a/index.html/b", "/a/Index.html", "/index.html", "/x/",
    "/a/b/index.html", "/a/index.html?x=1", "/ax/", "/a/index.htmlx",
]  # fmt: skip


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("allow", INDEX_ALLOWS)
def test_index_html_allow_against_each_disallow(policy: PolicyName, allow: str) -> None:
    """Each index.html Allow competing with a Disallow of its directory (before or
    after it, in another group of the agent), under every policy (rfc9309: no rule)."""
    checked = 0
    for disallow in INDEX_DISALLOWS:
        for lines in (
            [("user-agent", "a"), ("disallow", disallow), ("allow", allow)],
            [("user-agent", "a"), ("allow", allow), ("disallow", disallow)],
            [("user-agent", "a"), ("disallow", disallow), ("user-agent", "a"), ("allow", allow)],
            [("user-agent", "a"), ("allow", allow), ("allow", allow), ("disallow", disallow)],
        ):
            checked += check(lines, INDEX_TARGETS, policy)
    assert checked == len(INDEX_DISALLOWS) * 4 * len(INDEX_TARGETS)


def test_index_html_policies() -> None:
    """The two Google policies apply the rule, rfc9309 does not; a Disallow never."""
    body = "User-agent: a\nDisallow: /a/\nAllow: /a/index.html\nDisallow: /b/index.html\n"
    cases: list[tuple[PolicyName, bool]] = [
        ("google", True),
        ("google-reference", True),
        ("rfc9309", False),
    ]
    for policy, allowed in cases:
        robots = ra.parse(body, policy=policy)
        assert robots.allowed(ORIGIN + "/a/", robots_token="a") is allowed
        assert robots.explain(ORIGIN + "/a/", robots_token="a").line == (3 if allowed else 2)
        assert robots.allowed(ORIGIN + "/b/", robots_token="a")


@pytest.mark.parametrize(
    ("policy", "path", "expected"),
    [
        ("google", "/é/", (True, 3, "/%C3%A9/$")),
        ("google", "/%C3%A9/", (True, 3, "/%C3%A9/$")),
        ("google", "/%C3%A9/x", (False, 2, "/%C3%A9/")),
        ("google", "/%c3%a9/", (True, 0, None)),
        ("google-reference", "/é/", (True, 0, None)),
        ("google-reference", "/%C3%A9/", (True, 3, "/%C3%A9/$")),
        ("rfc9309", "/é/", (False, 2, "/%C3%A9/")),
    ],
)
def test_index_html_of_a_non_ascii_directory(
    policy: PolicyName, path: str, expected: tuple[bool, int, str | None]
) -> None:
    """The extra rule is made from the %-encoded pattern (item 17): ``/é/`` is
    allowed where the target is encoded as the pattern is (google encodes raw
    non-ASCII, google-reference does not, item 18; %c3 is not %C3)."""
    robots = ra.parse("User-agent: a\nDisallow: /é/\nAllow: /é/index.html\n", policy=policy)
    result = robots.explain(ORIGIN + path, robots_token="a")
    assert (result.allowed, result.line, result.rule.pattern if result.rule else None) == expected
    assert robots.allowed(ORIGIN + path, robots_token="a") is expected[0]


def test_index_html_is_found_in_the_normalised_pattern() -> None:
    """A custom policy (index_html with RFC 3986 decoding): ``/a/%69ndex.html`` is
    ``/a/index.html`` once normalised, as groups and first-match show it, so it also
    allows ``/a/``, as first-match with the same knobs decides."""
    policy = dataclasses.replace(GOOGLE, name="google-rfc3986", rfc3986=True)
    body = "User-agent: a\nAllow: /a/%69ndex.html\nDisallow: /a/\n"
    robots = ra.parse(body, policy=policy)
    assert robots.groups[0].rules[0].pattern == "/a/index.html"
    first_match = ra.parse(body, policy=dataclasses.replace(policy, first_match=True))
    assert first_match.explain(ORIGIN + "/a/", robots_token="a").line == 2
    assert robots.explain(ORIGIN + "/a/", robots_token="a").line == 2
    assert robots.allowed(ORIGIN + "/a/", robots_token="a")


# --- Bucket.heads ------------------------------------------------------------------------------


def _bucket(robots: ra.RobotsTxt, token: str = "a") -> Bucket:
    bucket = robots._bucket(token)
    assert bucket is not None
    return bucket


HEAD_FILES: list[tuple[Lines, tuple[str, ...] | None]] = [
    ([("disallow", "/a$")], ("/a",)),
    ([("disallow", "/ab*")], ("/ab",)),
    ([("disallow", "/ab***")], ("/ab",)),
    ([("disallow", "/a$b")], ("/a$b",)),
    ([("disallow", "/ab*$")], ("/ab",)),
    ([("disallow", "/ab*c")], ("/ab",)),
    ([("disallow", "/ab*c*d$")], ("/ab",)),
    ([("disallow", "*x")], None),
    ([("disallow", "*x$")], None),
    ([("disallow", "$")], None),
    ([("disallow", "*")], None),
    ([("disallow", "/$")], None),
    ([("disallow", "/*x")], None),
    ([("allow", "/ab*"), ("allow", "*x"), ("allow", "$"), ("disallow", "/c")], ("/c",)),
    ([("allow", "/a/index.html"), ("disallow", "/b$")], ("/b",)),
    (
        [("disallow", "/ab$"), ("disallow", "/ab*"), ("disallow", "/c*d"), ("allow", "/ab")],
        ("/ab", "/c"),
    ),
]


@pytest.mark.parametrize("policy", ["google", "google-reference"])
@pytest.mark.parametrize(("rules", "heads"), HEAD_FILES)
def test_heads_of_each_kind_of_disallow(
    policy: PolicyName, rules: Lines, heads: tuple[str, ...] | None
) -> None:
    """A target starting with no head is allowed without a look at the rules: each
    kind of Disallow gives its literal or glob head, and every target is checked."""
    lines = [("user-agent", "a"), *rules]
    robots = ra.parse(body_of(lines), policy=policy)
    found = _bucket(robots).heads
    # None: a head "" or "/" admits every target.
    assert found == heads if heads is None else set(found or ()) == set(heads)
    paths = [*TARGETS, "/c", "/cd", "/b", "/bx", "/x", "/a/"]
    check(lines, paths, policy, robots=robots)


def _many_rules(count: int, seed: int) -> Lines:
    rng = random.Random(seed)
    shapes = ["/p{}$", "/p{}*", "/p{}*q", "/p{}", "/p{}$x", "/p{}*q*r$", "*p{}"]
    lines: Lines = [("user-agent", "a")]
    for i in range(count):
        kind = "disallow" if rng.random() < 0.7 else "allow"
        lines.append((kind, rng.choice(shapes[:-1] if i else shapes).format(i)))
    return lines


@pytest.mark.parametrize("count", [20, 63, 64, 65, 130])
def test_heads_with_many_rules(count: int) -> None:
    """Past 64 rules there are no heads (None); either way every verdict holds."""
    lines = _many_rules(count, count)
    if count > 1:
        lines[1] = ("disallow", "/p0$")  # no empty head: heads kept below the bound
    robots = ra.parse(body_of(lines), policy="google")
    heads = _bucket(robots).heads
    assert (heads is None) is (count > 64)
    paths = ["/", "/p", "/q", "/x"]
    for i in range(0, count, 3):
        paths += [f"/p{i}", f"/p{i}x", f"/p{i}q", f"/p{i}qr", f"/p{i}$x", f"/p{i}/q/r", f"/xp{i}"]
    check(lines, paths, "google", robots=robots)


def test_many_globs_through_the_piece_index() -> None:
    """120 globs (past the piece index's threshold) asked more often than the scans
    before the index is built: the same verdicts before and after it."""
    lines: Lines = [("user-agent", "a"), ("disallow", "/")]
    for i in range(120):
        lines.append(("allow" if i % 2 else "disallow", f"/*seg{i:03d}*tail{i % 7}$"))
        lines.append(("disallow" if i % 2 else "allow", f"/*seg{i:03d}*"))
    robots = ra.parse(body_of(lines), policy="google")
    paths = []
    for i in range(0, 120, 5):
        paths += [f"/x/seg{i:03d}/tail{i % 7}", f"/seg{i:03d}tail{i % 7}x", f"/seg{i:03d}"]
    check(lines, paths, "google", robots=robots)  # scans first, then the index
    wild = robots._first[1].wild  # type: ignore[union-attr]
    assert wild is not None
    for _ in range(SCANS_BEFORE_INDEX):
        robots.allowed(ORIGIN + "/x/seg000/none", robots_token="a")
    assert not isinstance(wild.grams, int)  # the piece index is built
    check(lines, paths, "google", robots=robots)


# --- Random files --------------------------------------------------------------------------------

VOCABULARY = [*SPECIAL, *INDEX_ALLOWS, "/a/b", "/a/b$", "/a/b*", "/*b", "/a/*/b", ""]
PATH_ALPHABET = "ab/$*"


def _random_pattern(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.6:
        return rng.choice(VOCABULARY)
    text = "".join(rng.choice(PATH_ALPHABET) for _ in range(rng.randint(0, 5)))
    return text if roll < 0.7 else "/" + text


def random_file(rng: random.Random) -> Lines:
    """One to three groups of one or two agents, one to five rules each; a rule may
    repeat an earlier pattern, as the other kind or the same."""
    lines: Lines = []
    for _ in range(rng.randint(1, 3)):
        for _ in range(rng.randint(1, 2)):
            lines.append(("user-agent", rng.choice(["a", "a", "*", "b"])))
        for _ in range(rng.randint(1, 5)):
            kind = rng.choice(["allow", "disallow"])
            earlier = [value for k, value in lines if k != "user-agent"]
            if earlier and rng.random() < 0.2:
                lines.append((kind, rng.choice(earlier)))
            else:
                lines.append((kind, _random_pattern(rng)))
    return lines


def random_paths(rng: random.Random, lines: Lines, count: int) -> list[str]:
    """Paths made from the file's patterns (likely to match), and random ones."""
    values = [value for kind, value in lines if kind != "user-agent"]
    paths: list[str] = []
    for _ in range(count):
        roll = rng.random()
        if roll < 0.5 and values:
            value = rng.choice(values)
            if rng.random() < 0.5:
                value = value.removesuffix("$")
            fill = "".join(rng.choice("ab/$") for _ in range(rng.randint(0, 2)))
            path = value.replace("*", fill) + rng.choice(["", "", "a", "/", "$", "?x"])
        elif roll < 0.6:
            path = rng.choice(INDEX_TARGETS)
        else:
            path = "/" + "".join(rng.choice(PATH_ALPHABET) for _ in range(rng.randint(0, 6)))
        paths.append(path if path.startswith("/") else "/" + path)
    return paths


RANDOM_FILES = 400
PATHS_PER_FILE = 6


def test_random_files_match_the_reference() -> None:
    """Seeded random files of special patterns, each policy, tokens "a" and "c"
    (the ``*`` group): verdict, line and pattern as the reference's. Some targets
    must be answered by the heads alone, so that shortcut is under test too."""
    rng = random.Random(20261123)
    checked = by_heads = 0
    for _ in range(RANDOM_FILES):
        lines = random_file(rng)
        paths = random_paths(rng, lines, PATHS_PER_FILE)
        body = body_of(lines)
        for policy in POLICIES:
            robots = ra.parse(body, policy=policy)
            for token in ("a", "c"):
                checked += check(lines, paths, policy, token, robots=robots)
                bucket = robots._bucket(token)
                heads = bucket.heads if bucket is not None else None
                if heads is not None and policy != "rfc9309":
                    by_heads += sum(not path.startswith(heads) for path in paths)
    assert checked == RANDOM_FILES * PATHS_PER_FILE * len(POLICIES) * 2
    assert by_heads > 500


# --- Shared buckets ----------------------------------------------------------------------------


def test_shared_buckets_keep_lines_kinds_and_policies_apart() -> None:
    """Files with the same special rules share a bucket; moving a line, swapping an
    Allow and a Disallow, another policy or another grouping each get their own,
    whose answers are the reference's."""
    _compiled.forget_shared()
    base: Lines = [
        ("user-agent", "a"),
        ("disallow", "/a/"),
        ("allow", "/a/index.html"),
        ("disallow", "/*.php$"),
        ("allow", "/a$"),
        ("disallow", "/b*"),
    ]
    other_kind = {"allow": "disallow", "disallow": "allow", "user-agent": "user-agent"}
    swapped = [(other_kind[kind], value) for kind, value in base]
    moved = [("user-agent", "b"), ("disallow", "/zz"), *base]
    regrouped = [*base[:3], ("user-agent", "a"), *base[3:]]
    paths = ["/a/", "/a", "/a/x.php", "/x.php", "/b", "/bx", "/a/index.html", "/c", "/x.phpx"]
    first = ra.parse(body_of(base), policy="google")
    again = ra.parse(body_of(base) + "Sitemap: http://example.com/s.xml\n", policy="google")
    assert _bucket(first) is _bucket(again)
    others: dict[str, tuple[Lines, PolicyName]] = {
        "swapped": (swapped, "google"),
        "moved": (moved, "google"),
        "regrouped": (regrouped, "google"),
        "reference": (base, "google-reference"),
        "rfc": (base, "rfc9309"),
    }
    for name, (lines, policy) in others.items():
        robots = ra.parse(body_of(lines), policy=policy)
        assert _bucket(robots) is not _bucket(first), name
        check(lines, paths, policy, robots=robots)
    check(base, paths, "google", robots=first)
    check(base, paths, "google", robots=again)
    # Asked in the other order: the shared bucket built by the second file first.
    _compiled.forget_shared()
    for lines, policy in [*others.values(), (base, "google")]:
        check(lines, paths, policy)


def test_shared_bucket_reports_each_files_own_group() -> None:
    """Two files whose rule values and lines are the same, but whose second group
    starts elsewhere and names other agents, share a bucket; explain() gives each
    its own group's agents."""
    one = "User-agent: a\nDisallow: /x*\nSitemap: http://example.com/s\nUser-agent: a\nAllow: /x$\n"
    two = "User-agent: a\nDisallow: /x*\nUser-agent: a\nUser-agent: c\nAllow: /x$\n"
    first, second = ra.parse(one), ra.parse(two)
    assert _bucket(first) is _bucket(second)
    for robots, agents in ((first, ("a",)), (second, ("a", "c"))):
        allow = robots.explain(ORIGIN + "/x", robots_token="a")
        assert (allow.allowed, allow.line, allow.agents) == (True, 5, agents)
        disallow = robots.explain(ORIGIN + "/xy", robots_token="a")
        assert (disallow.allowed, disallow.line, disallow.agents) == (False, 2, ("a",))
