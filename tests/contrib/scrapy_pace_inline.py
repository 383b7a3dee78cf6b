"""A crawl whose callback downloads a second page inline (``engine.download_async``,
Scrapy's documented idiom), asked to close while that page waits for its turn.

Usage: ``python scrapy_pace_inline.py '<json>'`` with keys first, inline (URLs),
settings and out (the JSON written: stats and what the callback got).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import scrapy
from crawl import run_and_report  # (run as a script: its directory is on sys.path)
from scrapy.crawler import CrawlerProcess
from scrapy.exceptions import IgnoreRequest


def main() -> None:
    """Crawl ``first``; its callback downloads ``inline`` through the engine."""
    args = json.loads(sys.argv[1])
    report: dict[str, Any] = {"inline": None}

    class InlineSpider(scrapy.Spider):
        name = "inline"

        async def start(self) -> Any:
            yield scrapy.Request(args["first"], callback=self.parse, dont_filter=True)

        async def parse(self, response: Any) -> Any:
            assert self.crawler.engine is not None
            try:
                inline = await self.crawler.engine.download_async(scrapy.Request(args["inline"]))
            except IgnoreRequest as exc:  # the middleware dropped it
                report["inline"] = type(exc).__name__
            else:
                report["inline"] = inline.status
            yield {"url": response.url}

    process = CrawlerProcess(settings=args["settings"])
    crawler = process.create_crawler(InlineSpider)
    run_and_report(process, crawler, report, args["out"])


if __name__ == "__main__":
    main()
