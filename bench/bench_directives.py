"""Cost of page_directives(): a typical header set, a 100 KB page, heavy heads.

    python bench/bench_directives.py [--rounds 15]

Issue 29's targets: under 20 us for a typical response's headers, under 1 ms for a
100 KB HTML page. Each round times a batch of calls per case and keeps the per-call
time; the median, interquartile range and best round are printed (a shared
machine swings single runs). The last rows pair our head scan with the standard
library's ``html.parser`` doing the same job on the same page (A,B,B,A batches, one
ratio per round): the reason the scan is our own code.
"""

from __future__ import annotations

import argparse
import statistics
import time
from html.parser import HTMLParser
from typing import TYPE_CHECKING, Any

from multidict import CIMultiDict

from robots_async import page_directives
from robots_async.core.head_scan import scan_head

if TYPE_CHECKING:
    from collections.abc import Callable

TARGETS_US = {"typical headers (aiohttp)": 20.0, "100 KB page": 1000.0}

HEADERS = [
    ("Date", "Thu, 26 Nov 2026 22:00:00 GMT"),
    ("Content-Type", "text/html; charset=utf-8"),
    ("Transfer-Encoding", "chunked"),
    ("Connection", "keep-alive"),
    ("Cache-Control", "max-age=600, public"),
    ("Vary", "Accept-Encoding"),
    ("Server", "cloudflare"),
    ("Content-Encoding", "gzip"),
    ("ETag", 'W/"5e2f-1a2b3c"'),
    ("Last-Modified", "Wed, 25 Nov 2026 10:00:00 GMT"),
    ("Strict-Transport-Security", "max-age=31536000; includeSubDomains"),
    ("X-Content-Type-Options", "nosniff"),
    ("X-Frame-Options", "SAMEORIGIN"),
    ("Set-Cookie", "session=abc123; Path=/; HttpOnly; Secure"),
    ("X-Robots-Tag", "noarchive, max-snippet:50"),
    ("X-Robots-Tag", "gptbot: noindex, nofollow"),
    ("tdm-reservation", "1"),
]


def _head(extra: str = "") -> str:
    return (
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
        "<title>An article &amp; its page</title>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="description" content="What the page is about, in a sentence or two.">'
        '<meta property="og:title" content="An article"><link rel=stylesheet href=/s.css>'
        "<script>window.dataLayer=window.dataLayer||[];function g(){dataLayer.push(arguments)}"
        "</script><style>body{margin:0}.x>.y{color:red}</style>"
        '<!-- build 1234 --><meta name="robots" content="noai, noimageai">'
        f'<meta name="GPTBot" content="noindex">{extra}</head>'
    )


def _page(size: int) -> bytes:
    """A ~``size``-byte page: the usual head, then a body of paragraphs."""
    head = _head()
    paragraph = "<p>" + "Some text of the article, with <a href=/x>a link</a>. " * 8 + "</p>\n"
    body = paragraph * ((size - len(head)) // len(paragraph) + 1)
    return (head + "<body>" + body + "</body></html>").encode()[:size]


def _heavy_head(size: int) -> bytes:
    """A page whose head is ``size`` bytes of inline script and style, then the metas."""
    script = "<script>" + "var a=1;if(a<2){a++};" * (size // 40) + "</script>"
    style = "<style>" + ".c{color:#123}" * (size // 28) + "</style>"
    return (_head(script + style) + "<body></body></html>").encode()


class _StdlibMetas(HTMLParser):
    """The same job with html.parser: metas until </head> or <body>."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.metas: list[tuple[str, str]] = []
        self.done = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "body":
            self.done = True
        elif tag == "meta" and not self.done:
            found = dict(attrs)
            if found.get("name") and found.get("content") is not None:
                self.metas.append((found["name"] or "", found["content"] or ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "head":
            self.done = True


def stdlib_scan(body: bytes) -> list[tuple[str, str]]:
    parser = _StdlibMetas()
    parser.feed(body[:65_536].decode("utf-8", "replace"))
    return parser.metas


def per_call(function: Callable[[], Any], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        function()
    return (time.perf_counter() - start) / calls


def measure(cases: dict[str, tuple[Callable[[], Any], int]], rounds: int) -> None:
    """Per-call time of each case: median, interquartile range and best of the rounds
    (the best shows the cost without other processes' interference)."""
    print(f"{'case':34} {'median':>9} {'IQR':>21} {'best':>9}  target (median)")
    for name, (function, calls) in cases.items():
        function()  # warm: imports, lru caches
        times = [per_call(function, calls) * 1e6 for _ in range(rounds)]
        q1, median, q3 = statistics.quantiles(times, n=4)
        target = TARGETS_US.get(name)
        verdict = (
            "" if target is None else f"< {target:g} us: {'ok' if median < target else 'MISSED'}"
        )
        print(
            f"{name:34} {median:7.1f}us  ({q1:7.1f} - {q3:7.1f} us) {min(times):7.1f}us  {verdict}"
        )


def paired(a: Callable[[], Any], b: Callable[[], Any], calls: int, rounds: int) -> list[float]:
    """B/A time ratios, one per round, timed A,B,B,A then B,A,A,B."""
    ratios = []
    for round_ in range(rounds):
        order = (a, b, b, a) if round_ % 2 == 0 else (b, a, a, b)
        spent = {id(a): 0.0, id(b): 0.0}
        for function in order:
            spent[id(function)] += per_call(function, calls)
        ratios.append(spent[id(b)] / spent[id(a)])
    return ratios


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    rounds = parser.parse_args().rounds
    multidict = CIMultiDict(HEADERS)
    plain = dict(HEADERS[:-3])  # without the robots headers: the common case
    page_100k = _page(100_000)
    heavy_60k = _heavy_head(60_000)
    heavy_1m = _heavy_head(1_000_000)
    html = {"Content-Type": "text/html"}
    assert page_directives(multidict, user_agent="GPTBot").noindex
    assert page_directives(html, page_100k, user_agent="GPTBot").noindex
    assert page_directives(html, heavy_60k).noai
    measure(
        {
            "typical headers (aiohttp)": (
                lambda: page_directives(multidict, user_agent="GPTBot"),
                2000,
            ),
            "typical headers (pairs)": (
                lambda: page_directives(HEADERS, user_agent="GPTBot"),
                2000,
            ),
            "headers, no robots header (dict)": (lambda: page_directives(plain), 2000),
            "100 KB page": (lambda: page_directives(html, page_100k, user_agent="GPTBot"), 300),
            "60 KB head (scripts, styles)": (lambda: page_directives(html, heavy_60k), 100),
            "1 MB head, 64 KB cap": (lambda: page_directives(html, heavy_1m), 100),
            "1 MB head, 2 MB cap": (
                lambda: page_directives(html, heavy_1m, max_head_bytes=2_000_000),
                20,
            ),
        },
        rounds,
    )
    for name, body in (("100 KB page", page_100k), ("60 KB head", heavy_60k)):
        assert stdlib_scan(body) == list(scan_head(body).metas)
        ratios = paired(lambda b=body: scan_head(b), lambda b=body: stdlib_scan(b), 50, rounds)
        q1, median, q3 = statistics.quantiles(ratios, n=4)
        print(f"html.parser / our scan, {name}: {median:.1f}x (IQR {q1:.1f} - {q3:.1f})")


if __name__ == "__main__":
    main()
