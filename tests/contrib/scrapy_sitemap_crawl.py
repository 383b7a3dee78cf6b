"""Run a real SitemapSpider at ``/robots.txt`` and write the URLs it parsed as JSON.

Usage: ``python scrapy_sitemap_crawl.py '<json>'`` with keys robots (the robots.txt
URL), settings and out (the JSON file written: parsed URLs and stats).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from scrapy import signals
from scrapy.crawler import CrawlerProcess
from scrapy.spiders import SitemapSpider


def main() -> None:
    """Crawl as the JSON argument says and write the report."""
    args = json.loads(sys.argv[1])
    parsed: list[str] = []

    class Spider(SitemapSpider):
        name = "sitemaps"
        sitemap_urls = [args["robots"]]  # noqa: RUF012 (Scrapy's class attribute)

        def parse(self, response: Any) -> Any:
            parsed.append(response.url)
            yield {"url": response.url}

    process = CrawlerProcess(settings=args["settings"])
    crawler = process.create_crawler(Spider)
    report: dict[str, Any] = {}

    def closed(spider: Any) -> None:
        assert crawler.stats is not None
        report["stats"] = {k: v for k, v in crawler.stats.get_stats().items() if isinstance(v, int)}

    crawler.signals.connect(closed, signal=signals.spider_closed)
    process.crawl(crawler)
    process.start()
    report["parsed"] = sorted(parsed)
    with open(args["out"], "w", encoding="utf-8") as handle:
        json.dump(report, handle)


if __name__ == "__main__":
    main()
