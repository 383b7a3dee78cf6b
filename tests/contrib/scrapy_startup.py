"""Start several real Scrapy crawlers in one process, one per settings variant, and
report which of them failed at startup and why (helper for test_scrapy_settings.py).

Usage: ``python scrapy_startup.py '<json>'`` with keys url (the page every crawler
requests), settings (the settings shared by all), variants (a list of settings,
one crawler each) and out (the JSON file written: one {"error": str | None} per
variant). Exits 1 when any crawler failed to start, as ``scrapy crawl`` does.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import scrapy
from scrapy.crawler import CrawlerProcess


def spider_class(index: int, url: str, custom: dict[str, Any]) -> type[scrapy.Spider]:
    """A spider requesting ``url`` once, with ``custom`` as its own settings."""

    class StartupSpider(scrapy.Spider):
        name = f"startup{index}"
        custom_settings = custom

        async def start(self) -> Any:
            yield scrapy.Request(url, dont_filter=True)

        def parse(self, response: Any) -> Any:
            yield {"url": response.url}

    return StartupSpider


def main() -> int:
    """Run every variant's crawler and write what happened to each."""
    args = json.loads(sys.argv[1])
    variants: list[dict[str, Any]] = args["variants"]
    errors: list[str | None] = [None] * len(variants)
    process = CrawlerProcess(settings=args["settings"])

    def record(index: int) -> Any:
        def failed(failure: Any) -> None:
            errors[index] = f"{type(failure.value).__name__}: {failure.value}"

        return failed

    for index, custom in enumerate(variants):
        deferred = process.crawl(spider_class(index, args["url"], custom))
        deferred.addErrback(record(index))
    process.start()
    with open(args["out"], "w", encoding="utf-8") as handle:
        json.dump([{"error": error} for error in errors], handle)
    return 1 if process.bootstrap_failed else 0


if __name__ == "__main__":
    sys.exit(main())
