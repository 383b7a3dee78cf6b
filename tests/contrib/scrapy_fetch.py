"""Fetch one robots.txt twice through ScrapyFetcher inside a real crawl: plainly, then
with validators (helper for test_scrapy_refresh.py).

Usage: ``python scrapy_fetch.py '<json>'`` with keys url (the robots.txt), etag
(sent back as If-None-Match the second time), settings and out (the JSON file
written: status, headers and body size of each outcome).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Any

import scrapy
from scrapy.crawler import CrawlerProcess

from robots_async import FetchPolicy
from robots_async.contrib.scrapy import ScrapyFetcher


@dataclass(frozen=True)
class ETag:
    """Validators as the cache passes them: conditional headers for one URL."""

    url: str
    etag: str

    def request_headers(self, url: str) -> dict[str, str]:
        """If-None-Match for the URL that gave the ETag."""
        return {"If-None-Match": self.etag} if url == self.url else {}


def main() -> None:
    """Crawl nothing but the two fetches made from the spider's start()."""
    args = json.loads(sys.argv[1])
    report: list[dict[str, Any]] = []

    class FetchSpider(scrapy.Spider):
        name = "fetch"

        async def start(self) -> Any:
            fetcher = ScrapyFetcher(self.crawler, policy=FetchPolicy())
            url = args["url"]
            for validators in (None, ETag(url, args["etag"])):
                outcome = await fetcher.fetch(url, keep_body=True, validators=validators)
                report.append(
                    {
                        "status": outcome.status,
                        "error": outcome.error,
                        "headers": dict(outcome.headers),
                        "body": len(outcome.body or b""),
                    }
                )
            return
            yield  # an async generator that yields no request

    process = CrawlerProcess(settings=args["settings"])
    process.crawl(FetchSpider)
    process.start()
    with open(args["out"], "w", encoding="utf-8") as handle:
        json.dump(report, handle)


if __name__ == "__main__":
    main()
