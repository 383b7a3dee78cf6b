"""The fast paths of issue 13 give exactly what the general code gives.

Origin.from_url() answers the usual URL with one regex; the Bucket finds the longest
literal prefix with bisect through each literal's own prefixes. Each is checked here
against the general path on generated input (the conformance suites check verdicts).
"""

from __future__ import annotations

import random
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robots_async as ra
from robots_async.core.errors import InvalidURLError
from robots_async.core.prefixes import UNKNOWN, LiteralPrefixes
from robots_async.core.url import Origin, _origin_of, _split_absolute
from tests.core.test_matcher import reference_verdict
from tests.helpers import all_linked

_PIECES = [
    "http", "https", "HTTP", "://", "a", "B", ".", "-", "..", ":", "80", "0", "65535",
    "65536", "99999", "/", "?", "#", "@", ";", "x", "[::1]", " ", "\t", "com", "", ":/",
]  # fmt: skip


def _general(url: str) -> Origin | str:
    try:
        return _origin_of(_split_absolute(url), url)
    except InvalidURLError:
        return "invalid"


def _fast(url: str) -> Origin | str:
    try:
        return Origin.from_url(url)
    except InvalidURLError:
        return "invalid"


def test_origin_fast_path_equals_urlsplit_path() -> None:
    """20,000 URLs built from the pieces that matter give the same origin (or error)."""
    rng = random.Random(13)
    for _ in range(20_000):
        url = "".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 9)))
        if rng.random() < 0.7:
            url = rng.choice(["http://", "https://"]) + url
        assert _fast(url) == _general(url), url


@pytest.mark.parametrize(
    ("url", "origin"),
    [
        ("https://Example.COM./a", ("https", "example.com", 443)),
        ("http://h:0080/", ("http", "h", 80)),
        ("http://h:65535", ("http", "h", 65535)),
        ("https://a.b?x", ("https", "a.b", 443)),
    ],
)
def test_origin_fast_path_examples(url: str, origin: tuple[str, str, int]) -> None:
    """Case, a final dot, leading zeros in the port, a query right after the host."""
    assert Origin.from_url(url) == origin
    assert type(Origin.from_url(url)) is Origin


@pytest.mark.parametrize("url", ["https://./", "http://h:65536/", "http://h:1x/"])
def test_origin_fast_path_leaves_errors_to_the_checks(url: str) -> None:
    """An empty host or an out-of-range port still raises."""
    with pytest.raises(InvalidURLError):
        Origin.from_url(url)


_LITERAL = st.text(alphabet="/ab", min_size=0, max_size=5).map(lambda s: "/" + s)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.booleans(), _LITERAL), min_size=1, max_size=12), _LITERAL)
def test_nested_prefixes_find_the_longest(rules: list[tuple[bool, str]], path: str) -> None:
    """Many nested literal prefixes: the verdict and line are the longest match's."""
    body = "User-agent: *\n" + "".join(
        f"{'Allow' if allow else 'Disallow'}: {literal}\n" for allow, literal in rules
    )
    matching = [
        (len(literal), allow, -line)
        for line, (allow, literal) in enumerate(rules, start=2)
        if path.startswith(literal)
    ]
    verdict = ra.parse(body).explain("https://x.test" + path, robots_token="bot")
    if not matching:
        assert (verdict.allowed, verdict.line) == (True, 0)
    else:
        _, allow, line = max(matching)
        assert (verdict.allowed, verdict.line) == (allow, -line)


def _longest_literal(rules: list[tuple[bool, str]], path: str) -> tuple[bool, int]:
    """The verdict and line of the longest literal prefix of ``path`` (Allow on a tie)."""
    matching = [
        (len(literal), allow, -line)
        for line, (allow, literal) in enumerate(rules, start=2)
        if path.startswith(literal)
    ]
    if not matching:
        return True, 0
    _, allow, line = max(matching)
    return allow, -line


@pytest.mark.parametrize(
    ("seed", "size"), [(seed, size) for seed in range(4) for size in (60, 400)]
)
def test_parents_found_lazily_and_all_at_once_agree(seed: int, size: int) -> None:
    """Wide sibling lists (long walks that link every literal), deep nesting and small
    files (short walks through parents found earlier): every question, in any order,
    gets the longest literal's verdict and line."""
    rng = random.Random(seed)
    literals = {"/" + "".join(rng.choices("ab", k=rng.randrange(0, 7))) for _ in range(size)}
    if size > 100:
        literals |= {f"/s{i}" for i in range(rng.randrange(0, 300))}  # siblings: long walks
        literals |= {"/d" + "x" * k for k in range(rng.randrange(0, 200))}  # one deep chain
    rules = [(rng.random() < 0.5, literal) for literal in sorted(literals, key=str)]
    rng.shuffle(rules)
    body = "User-agent: *\n" + "".join(
        f"{'Allow' if allow else 'Disallow'}: {literal}\n" for allow, literal in rules
    )
    robots = ra.parse(body, max_bytes=None)
    paths = [literal + rng.choice(["", "a", "/b", "zz"]) for _, literal in rules]
    paths += ["/" + "".join(rng.choices("abc/sdx01", k=rng.randrange(0, 9))) for _ in range(300)]
    rng.shuffle(paths)
    for path in paths:
        verdict = robots.explain("https://x.test" + path, robots_token="bot")
        assert (verdict.allowed, verdict.line) == _longest_literal(rules, path), path
        assert robots.allowed("https://x.test" + path, robots_token="bot") == verdict.allowed


def _brute_parent(literals: list[str], i: int) -> int:
    """Index of the longest literal that is a proper prefix of ``literals[i]`` (-1: none)."""
    found = [j for j, other in enumerate(literals) if j != i and literals[i].startswith(other)]
    return max(found, key=lambda j: len(literals[j]), default=-1)


@pytest.mark.parametrize("seed", range(12))
def test_each_parent_found_lazily_is_the_longest_prefix(seed: int) -> None:
    """LiteralPrefixes.parent in random order (bisects, jumps through parents found
    before, and searches that give up and link all) equals a brute-force search, as
    does link_all."""
    rng = random.Random(seed)
    alphabet = rng.choice(["ab", "abc/", "a", "a0"])
    longest = 8 if seed < 8 else 40  # long ones: chains of "a...a0" past _MAX_STEPS
    literals = {
        "/" + "".join(rng.choices(alphabet, k=rng.randrange(1, longest))) for _ in range(150)
    }
    index = LiteralPrefixes(sorted(literals))
    order = list(range(len(index.prefixes)))
    rng.shuffle(order)
    expected = [_brute_parent(index.prefixes, i) for i in range(len(index.prefixes))]
    assert [index.parent(i) for i in order] == [expected[i] for i in order]
    index.link_all()
    assert list(index.parents) == expected


def test_a_parent_past_many_siblings_is_found_without_linking_them() -> None:
    """``/a`` decides ``/ab``, and 10,000 literals ``/a0``..``/a9999`` sort between them:
    the parent is found by bisecting, not by walking back over the siblings or linking
    every literal (0.4 ms a file on the corpus's largest)."""
    robots = ra.parse(
        "User-agent: *\nDisallow: /a\n" + "".join(f"Allow: /a{i}\n" for i in range(10_000))
    )
    assert not robots.allowed("https://x.test/ab", robots_token="bot")
    assert robots.allowed("https://x.test/a12", robots_token="bot")
    bucket = robots._first[1]
    assert bucket is not None
    assert not all_linked(bucket)
    assert sum(up != UNKNOWN for up in bucket.parents) <= 4


@pytest.mark.parametrize("seed", range(6))
def test_many_wildcards_found_through_the_piece_index(seed: int) -> None:
    """Past 96 wildcard rules they are found through pieces of their segments: every
    verdict and line still equals the brute-force reference matcher's."""
    rng = random.Random(seed)
    alphabet = "ab/.?=" if seed % 2 else "abcdefgh0123"

    def segment(most: int) -> str:
        return "".join(rng.choices(alphabet, k=rng.randrange(0, most)))

    rules = []
    for _ in range(rng.randrange(100, 400)):
        stars = "*".join(segment(7) for _ in range(rng.randrange(2, 5)))
        pattern = "/" + stars + rng.choice(["", "", "$", "*"])
        rules.append((rng.choice(["allow", "disallow"]), pattern))
    rules += [("disallow", "/" + segment(5)) for _ in range(20)]  # literals beside them
    lines = [("user-agent", "*"), *rules]
    robots = ra.parse("".join(f"{kind}: {value}\n" for kind, value in lines))
    paths = ["/" + segment(25) for _ in range(300)]
    paths += [value.replace("*", segment(3)).rstrip("$") for _, value in rules[:200]]
    for path in paths:
        verdict = robots.explain("https://x.test" + path, robots_token="bot")
        assert (verdict.allowed, verdict.line) == reference_verdict(lines, "bot", path), path


def test_hostile_wildcards_index_promptly() -> None:
    """Hundreds of globs with 16 KB segments: the piece index is built and used in
    bounded time, and verdicts stay right."""
    segment = "".join(random.Random(5).choices("abcdefgh", k=16_000))
    lines = ["User-agent: *"]
    lines += [f"Disallow: /*{segment[i : i + 8000]}*{i}z" for i in range(120)]
    robots = ra.parse("\n".join(lines).encode(), max_bytes=None)
    start = time.perf_counter()
    for i in range(200):
        assert robots.allowed(f"https://x.test/page/{i}", robots_token="bot")
    assert not robots.allowed(f"https://x.test/q{segment[3:8003]}-3z", robots_token="bot")
    assert time.perf_counter() - start < 10.0
