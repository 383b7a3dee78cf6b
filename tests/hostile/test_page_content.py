"""Hostile pages for page_directives(): whatever a server sends, no exception, no hang.

Time bounds are hang guards (a quadratic step would blow them by orders of
magnitude), not benchmarks: bench/bench_directives.py measures.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from robots_async import PageDirectives, page_directives
from robots_async.core.head_scan import scan_head

HTML = {"Content-Type": "text/html"}
TAGS = [
    "<meta ",
    "name=",
    "robots",
    "content=",
    "noindex",
    '"',
    "'",
    ">",
    "<",
    "/",
    "<!--",
    "-->",
    "<script>",
    "</script",
    "</head>",
    "<body",
    "&#110;",
    " ",
    "=",
    "\n",
    "é",
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(TAGS), max_size=60), st.integers(min_value=1, max_value=400))
def test_tag_soup_never_raises_and_respects_the_cap(parts: list[str], cap: int) -> None:
    body = "".join(parts).encode()
    result = page_directives(HTML, body, max_head_bytes=cap)
    assert isinstance(result, PageDirectives)
    whole = scan_head(body, len(body) + 1)
    # What a smaller cap finds is a prefix of what the whole body gives.
    found = scan_head(body, cap).metas
    assert whole.metas[: len(found)] == found


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000))
def test_any_bytes_never_raise(body: bytes) -> None:
    assert isinstance(page_directives(HTML, body), PageDirectives)
    assert isinstance(page_directives({}, body), PageDirectives)


NAMES = st.sampled_from(["X-Robots-Tag", "tdm-reservation", "tdm-policy", "Content-Type"])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(NAMES, st.text(max_size=80)), max_size=6),
    st.sampled_from(["*", "MyBot/1", "a b"]),
)
def test_any_header_text_never_raises(pairs: list[tuple[str, str]], agent: str) -> None:
    assert isinstance(page_directives(pairs, user_agent=agent), PageDirectives)


HOSTILE_HEADERS = {
    "unavailable_after and 100k commas": "unavailable_after: " + ", 1" * 100_000,
    "200k commas": "," * 200_000,
    "50k scopes": ", ".join(f"bot{i}: noindex" for i in range(50_000)),
}


@pytest.mark.parametrize("value", HOSTILE_HEADERS.values(), ids=HOSTILE_HEADERS.keys())
def test_huge_header_values_take_linear_time(value: str) -> None:
    start = time.perf_counter()
    page_directives([("X-Robots-Tag", value)], user_agent="bot7")
    assert time.perf_counter() - start < 3.0


HOSTILE_BODIES = {
    "script full of '</'": b"<head><script>" + b"</" * 40_000,
    "nothing but '<'": b"<head>" + b"<" * 70_000,
    "unterminated quote": b'<head><meta a="' + b"x" * 70_000,
    "metas to the cap": b"<head>" + b"<meta name=robots content=noindex>" * 3000,
    "'<meta' repeated": b"<head>" + b"<meta" * 20_000,
    "comment openings": b"<head>" + b"<!--" * 20_000,
    "20k attributes": b"<head><meta " + b"a=b " * 20_000 + b">",
}


@pytest.mark.parametrize("body", HOSTILE_BODIES.values(), ids=HOSTILE_BODIES.keys())
def test_pathological_heads_stay_bounded(body: bytes) -> None:
    start = time.perf_counter()
    result = page_directives(HTML, body)
    assert time.perf_counter() - start < 3.0
    assert result.head_truncated
    assert len(result.sources) <= 65_536 // 20  # bounded by the cap, not the body
