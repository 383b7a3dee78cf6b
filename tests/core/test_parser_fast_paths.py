"""The parser's shortcuts give exactly what the plain line-by-line reading gives.

Comments are removed per chunk, parse() ends the last line without close(), and
once the warnings are full only lines that can hold a directive are looked at.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import robots_async as ra
from robots_async.core.rules import MAX_WARNINGS
from tests.helpers import parse_chunks, split_at, summary

if TYPE_CHECKING:
    import random

URLS = ["/", "/a", "/a/b", "/b", "/c", "/css", "/late", "/typo", "/space", "/ua"]
TOKENS = ["FooBot", "otherbot", ""]

# Lines that are only junk: each can add a warning, never a directive.
JUNK = [
    b"<div class='x'>",
    b"  font-style: normal;",
    b"  display: none;",
    b"  color: #fff;",
    b"height:10px",
    b"visibility: hidden",
    b"right: 0",
    b"content: ''",
    b"@media (max-width: 640px) {",
    b"}",
    b"\tsome text",
    b"displaying nothing here",
]
# Lines that can be directives, some only through Google's leniency.
DIRECTIVES = [
    b"User-agent: FooBot",
    b"  user-agent: otherbot",
    b"Useragent: *",
    b"Disallow: /a",
    b"\tDISALLOW: /late",
    b"Allow: /a/b",
    b"dissallow: /typo",
    b"Disallow /space",
    b"Sitemap: https://example.com/s.xml",
    b"sitemap: relative.xml",
    b"Crawl-delay: 3",
    b"Host: example.com",
    b"Clean-param: ref /c",
]


def blanked(lines: list[bytes]) -> bytes:
    """The body with every junk line emptied (same line numbers, no junk warnings)."""
    return b"\n".join(b"" if line in JUNK else line for line in lines) + b"\n"


def without_warnings(robots: ra.RobotsTxt) -> dict[str, object]:
    found = summary(robots, URLS, TOKENS)
    del found["warnings"]
    return found


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    head=st.integers(MAX_WARNINGS + 1, MAX_WARNINGS + 700),
    size=st.integers(1, 1500),
    rng=st.randoms(use_true_random=False),
    policy=st.sampled_from(["google", "rfc9309"]),
)
def test_directives_after_the_warning_cap_are_all_read(
    head: int, size: int, rng: random.Random, policy: str
) -> None:
    """Past a thousand junk lines every directive still counts, at its own line."""
    lines = [JUNK[i % len(JUNK)] for i in range(head)] + rng.choices(JUNK + DIRECTIVES, k=size)
    body = b"\n".join(lines) + b"\n"
    full = ra.parse(body, policy=policy, max_bytes=None)
    assert without_warnings(full) == without_warnings(
        ra.parse(blanked(lines), policy=policy, max_bytes=None)
    )
    assert [w.code for w in full.warnings][-1] == "too-many-warnings"
    pieces = parse_chunks(split_at(body, range(0, len(body), 997)), policy=policy, max_bytes=None)
    assert summary(pieces, URLS, TOKENS) == summary(full, URLS, TOKENS)


def test_rules_far_past_the_cap_keep_their_line_numbers() -> None:
    junk = b"<p>junk</p>\n" * 5000
    body = b"User-agent: *\n" + junk + b"Disallow: /late\n" + junk + b"  allow: /late/ok\n"
    robots = ra.parse(body, max_bytes=None)
    rules = robots.groups[0].rules
    assert [(r.line, str(r)) for r in rules] == [
        (5002, "Disallow: /late"),
        (10003, "Allow: /late/ok"),
    ]
    assert robots.explain("https://e.com/late/x", robots_token="bot").line == 5002


@pytest.mark.parametrize(
    ("body", "line"),
    [
        (b"User-agent: *\r#comment\nDisallow: /a\n", 3),  # "\r#c\n" is two line breaks
        (b"User-agent: *\r#\r\nDisallow: /a\n", 3),
        (b"User-agent: * #c\r\n#\r\rDisallow: /a#b\n", 4),
        (b"User-agent: *\nDisallow: /a   # trailing\n", 2),
        (b"User-agent: *\nDisallow#: /b\nDisallow: /a\n", 3),
    ],
)
def test_comments_keep_line_numbers(body: bytes, line: int) -> None:
    robots = ra.parse(body)
    assert [(r.line, r.pattern) for r in robots.groups[0].rules] == [(line, "/a")]
    bytewise = parse_chunks([body[i : i + 1] for i in range(len(body))])
    assert summary(bytewise, URLS, TOKENS) == summary(robots, URLS, TOKENS)


@pytest.mark.parametrize(
    "last",
    [
        b"Disallow: /a",
        b"Disallow: /a#comment",
        b"Disallow: /a\0/b",
        b"Disallow: /a" + b"b" * 20_000,
        b"Disallow: /a" + b"b" * (ra.MAX_LINE_BYTES - 12),
        b"Disallow: /a\r",
        b"  ",
        b"junk",
    ],
)
@pytest.mark.parametrize("max_bytes", [None, ra.DEFAULT_MAX_BYTES, 30])
def test_parse_reads_an_unterminated_last_line_as_close_does(
    last: bytes, max_bytes: int | None
) -> None:
    body = b"User-agent: *\nDisallow: /c\n" + last
    via_close = parse_chunks([body, b""], max_bytes=max_bytes)
    assert summary(ra.parse(body, max_bytes=max_bytes), URLS, TOKENS) == summary(
        via_close, URLS, TOKENS
    )


# Lines that take the parser's clipping path: past the cap, with a NUL, with a "#"
# before or after either.
_CAP = ra.MAX_LINE_BYTES
CLIPPED = [
    b"User-agent: *",
    b"Disallow: /a",
    b"Disallow: /b\0/c",
    b"Disallow: /c#/d\0/e",
    b"Disallow: /css\0#x",
    b"\0Disallow: /late",
    b"Allow: /a/b" + b"b" * (_CAP - 11),
    b"Disallow: /ua" + b"u" * _CAP,
    b"Disallow: /space" + b"s" * (_CAP - 20) + b"#" + b"c" * 40,
    b"Disallow: /typo" + b"t" * (_CAP - 18) + b"\0" + b"n" * 9,
    b"<script>" + b"x" * (_CAP + 300) + b"</script>",
    b"junk\0Disallow: /b",
    b"# only a comment",
]


def _content(line: bytes) -> bytes:
    """What Google reads of a raw line: the cap, then up to a NUL, then up to "#"."""
    return line[:_CAP].split(b"\0")[0].split(b"#")[0]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    picks=st.lists(st.sampled_from(CLIPPED), min_size=1, max_size=len(CLIPPED)),
    breaks=st.lists(
        st.sampled_from([b"\n", b"\r\n", b"\r"]), min_size=len(CLIPPED), max_size=len(CLIPPED)
    ),
    cut=st.integers(1, 40_000),
)
@example(picks=CLIPPED, breaks=[b"\r\n"] * len(CLIPPED), cut=16_000)
def test_clipped_lines_read_as_their_content(
    picks: list[bytes], breaks: list[bytes], cut: int
) -> None:
    """Long lines, NULs and comments, each rule applied to the whole chunk at once,
    read as the plain per-line rule reads them; each long line warned about once."""
    body = b"".join(line + brk for line, brk in zip(picks, breaks, strict=False))
    robots = ra.parse(body, max_bytes=None)
    expected = ra.parse(b"\n".join(map(_content, picks)) + b"\n", max_bytes=None)
    assert without_warnings(robots) == without_warnings(expected)
    long_lines = [n for n, line in enumerate(picks, 1) if len(line) > _CAP]
    assert [w.line for w in robots.warnings if w.code == "line-too-long"] == long_lines
    pieces = parse_chunks(split_at(body, range(0, len(body), cut)), max_bytes=None)
    assert summary(pieces, URLS, TOKENS) == summary(robots, URLS, TOKENS)
