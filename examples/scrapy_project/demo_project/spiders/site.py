"""Follow links within the start site; robots.txt is enforced by the middleware."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import scrapy

if TYPE_CHECKING:
    from collections.abc import Iterator

    from scrapy.http import Response


class SiteSpider(scrapy.Spider):
    """``scrapy crawl site -a start=https://example.org/``"""

    name = "site"

    def __init__(self, start: str = "https://example.org/", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start_urls = [start]
        self.allowed_domains = [start.split("/", 3)[2].split(":", 1)[0]]

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Any]:
        # The AI usage preferences (robots.txt Content-Usage rule + header), if any.
        usage = response.meta.get("content_usage")
        yield {
            "url": response.url,
            "status": response.status,
            "content_usage": (usage.as_header() or None) if usage is not None else None,
        }
        yield from response.follow_all(css="a::attr(href)", callback=self.parse)
