"""Run one real Scrapy crawl and write what happened as JSON (helper for test_scrapy.py).

Usage: ``python crawl.py '<json>'`` with keys start_urls, settings, meta (start URL ->
request meta), probes (paths asked of every robots_parsed robotparser), user_agent
and out (the JSON file written: stats, items, errors, robots_parsed).
"""

from __future__ import annotations

import json
import sys
from typing import Any
from urllib.parse import urljoin

import scrapy
from scrapy import signals
from scrapy.crawler import CrawlerProcess


def usage(response: Any) -> dict[str, Any] | None:
    """``response.meta["content_usage"]`` (set by the drop-in middleware) as JSON."""
    found = response.meta.get("content_usage")
    if found is None:
        return None
    return {
        "train-ai": found.train_ai,
        "search": found.search,
        "lines": list(found.lines),
        "header": list(found.header),
    }


def main() -> None:
    """Crawl as the JSON argument says and write the report."""
    args = json.loads(sys.argv[1])
    start_urls: list[str] = args["start_urls"]
    meta: dict[str, dict[str, Any]] = args["meta"]
    probes: list[str] = args["probes"]
    user_agent: str = args["user_agent"]
    report: dict[str, Any] = {"items": [], "errors": [], "robots_parsed": []}

    class ProbeSpider(scrapy.Spider):
        name = "probe"

        async def start(self) -> Any:
            for url in start_urls:
                yield scrapy.Request(
                    url,
                    callback=self.parse,
                    errback=self.failed,
                    meta=dict(meta.get(url, {})),
                    dont_filter=True,
                )

        def parse(self, response: Any) -> Any:
            yield {"url": response.url, "status": response.status, "usage": usage(response)}
            copied = response.meta.get("follow_with_meta")
            if copied is not None:  # the page's links, its meta copied (a spider idiom)
                meta = {**response.meta, **copied, "follow_with_meta": None}
                for href in response.css("a::attr(href)").getall():
                    yield response.follow(href, self.parse, errback=self.failed, meta=meta)
            if response.meta.get("follow_links"):  # one level of the page's links
                for href in response.css("a::attr(href)").getall():
                    yield response.follow(href, callback=self.parse, errback=self.failed)

        def failed(self, failure: Any) -> None:
            report["errors"].append(
                {"url": failure.request.url, "error": type(failure.value).__name__}
            )

    def item_scraped(item: Any, **_: Any) -> None:
        report["items"].append(dict(item))

    def robots_parsed(robotparser: Any, request: Any, **_: Any) -> None:
        report["robots_parsed"].append(
            {
                "type": type(robotparser).__name__,
                "module": type(robotparser).__module__,
                "request_url": request.url,
                "allowed": {
                    path: bool(robotparser.allowed(urljoin(request.url, path), user_agent))
                    for path in probes
                },
            }
        )

    process = CrawlerProcess(settings=args["settings"])
    crawler = process.create_crawler(ProbeSpider)
    crawler.signals.connect(item_scraped, signal=signals.item_scraped)
    if hasattr(signals, "robots_parsed"):  # Scrapy >= 2.18
        crawler.signals.connect(robots_parsed, signal=signals.robots_parsed)
    run_and_report(process, crawler, report, args["out"])


def run_and_report(process: Any, crawler: Any, report: dict[str, Any], out: str) -> None:
    """Run ``crawler`` in ``process``; write ``report`` with its stats to ``out``."""
    process.crawl(crawler)
    process.start()
    assert crawler.stats is not None
    report["stats"] = crawler.stats.get_stats()
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(report, handle, default=str)


if __name__ == "__main__":
    main()
