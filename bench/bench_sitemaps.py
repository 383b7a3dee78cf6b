"""Sitemap parsing speed: URLs per second from one 50,000-URL sitemap, paired.

    python bench/bench_sitemaps.py [--rounds 7] [--urls 50000]

Parses the same bytes with robots_async's ``SitemapParser`` (fed in 64 KiB pieces,
each entry built as a ``SitemapUrl``, dates parsed), ultimate-sitemap-parser's
``sitemap_from_str`` and Scrapy's ``scrapy.utils.sitemap.Sitemap`` (lxml iterparse;
dicts of text, no dates parsed). The three run interleaved in each round, the
order rotated; the report gives each one's median URLs/s and the median and spread
(min..max) of the per-round ratios against ours. Then the tracemalloc peak of ours
on the 50,000-URL file and on a 1 GiB gzip bomb (stopped at the 50 MB default).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from robots_async.core.sitemaps import SitemapParser, SitemapUrl
from tests.sitemap_site import gzip_bomb_gb

if TYPE_CHECKING:
    from collections.abc import Callable

URL = "https://example.com/sitemap.xml"
_PIECE = 64 * 1024


def sitemap(count: int) -> bytes:
    """A sitemaps.org urlset of ``count`` URLs with every optional field."""
    rows = "".join(
        f"<url><loc>https://example.com/products/item-{i}?ref=sitemap</loc>"
        f"<lastmod>2024-{1 + i % 12:02d}-{1 + i % 28:02d}T10:{i % 60:02d}:00+00:00</lastmod>"
        f"<changefreq>weekly</changefreq><priority>0.{i % 10}</priority></url>\n"
        for i in range(count)
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{rows}</urlset>\n'
    ).encode()


def ours(body: bytes) -> int:
    parser = SitemapParser(URL)
    count = 0
    for start in range(0, len(body), _PIECE):
        for raw in parser.feed(body[start : start + _PIECE]):
            SitemapUrl.from_raw(raw, URL)
            count += 1
    for raw in parser.close():
        SitemapUrl.from_raw(raw, URL)
        count += 1
    return count


def usp(body: bytes) -> int:
    from usp.tree import sitemap_from_str

    return sum(1 for _ in sitemap_from_str(body.decode()).all_pages())


def scrapy(body: bytes) -> int:
    from scrapy.utils.sitemap import Sitemap

    return sum(1 for _ in Sitemap(body))


def timed(parse: Callable[[bytes], int], body: bytes, expected: int) -> float:
    started = time.perf_counter()
    found = parse(body)
    elapsed = time.perf_counter() - started
    if found != expected:
        raise SystemExit(f"{parse.__name__} found {found} URLs, not {expected}")
    return expected / elapsed


def peak(parse: Callable[[], object]) -> float:
    tracemalloc.start()
    parse()
    _, top = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return top / 2**20


def bomb() -> str:
    parser = SitemapParser(URL)
    data = gzip_bomb_gb()
    for start in range(0, len(data), _PIECE):
        parser.feed(data[start : start + _PIECE])
    parser.close()
    return parser.stopped


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--rounds", type=int, default=7)
    options.add_argument("--urls", type=int, default=50_000)
    args = options.parse_args()
    body = sitemap(args.urls)
    parsers = [ours, usp, scrapy]
    rates: dict[str, list[float]] = {p.__name__: [] for p in parsers}
    for parse in parsers:  # warm-up: imports, caches
        timed(parse, body, args.urls)
    for round_number in range(args.rounds):
        shift = round_number % len(parsers)
        for parse in parsers[shift:] + parsers[:shift]:
            rates[parse.__name__].append(timed(parse, body, args.urls))
    print(f"{args.urls:,} URLs, {len(body) / 2**20:.1f} MiB, {args.rounds} rounds interleaved")
    for name, values in rates.items():
        line = f"  {name:7s} median {statistics.median(values):>10,.0f} URLs/s"
        if name != "ours":
            ratios = [a / b for a, b in zip(rates["ours"], values, strict=True)]
            line += (
                f"   ours/{name}: median {statistics.median(ratios):.2f}x"
                f" (spread {min(ratios):.2f}..{max(ratios):.2f})"
            )
        print(line)
    print(f"tracemalloc peak, ours on {args.urls:,} URLs: {peak(lambda: ours(body)):.1f} MiB")
    bomb_bytes = gzip_bomb_gb()
    stopped: list[str] = []
    top = peak(lambda: stopped.append(bomb()))
    print(
        f"tracemalloc peak, ours on a 1 GiB gzip bomb ({len(bomb_bytes) / 2**20:.1f} MiB"
        f" gzipped): {top:.1f} MiB; stopped: {stopped[0]}"
    )


if __name__ == "__main__":
    main()
