"""Two spiders in one CrawlerProcess, each with its own start URLs and settings
(helper for test_scrapy_pace_close.py).

Usage: ``python scrapy_two_crawls.py '<json>'`` with keys crawls (a list of
{start_urls, settings}) and out (the JSON written: each crawl's stats).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import scrapy
from scrapy.crawler import CrawlerProcess


def spider_class(name: str, start_urls: list[str], settings: dict[str, Any]) -> type[Any]:
    """A spider named ``name`` fetching ``start_urls`` with its own ``settings``."""

    class Spider(scrapy.Spider):
        custom_settings = settings

        async def start(self) -> Any:
            for url in start_urls:
                yield scrapy.Request(url, dont_filter=True)

        def parse(self, response: Any) -> Any:
            yield {"url": response.url}

    Spider.name = name
    return Spider


def main() -> None:
    """Run every crawl in one process; report each one's stats."""
    args = json.loads(sys.argv[1])
    process = CrawlerProcess(settings=args["settings"])
    crawlers = []
    for i, crawl in enumerate(args["crawls"]):
        crawler = process.create_crawler(
            spider_class(f"crawl{i}", crawl["start_urls"], crawl["settings"])
        )
        crawlers.append(crawler)
        process.crawl(crawler)
    process.start()
    report = [crawler.stats.get_stats() for crawler in crawlers]
    with open(args["out"], "w", encoding="utf-8") as handle:
        json.dump(report, handle, default=str)


if __name__ == "__main__":
    main()
