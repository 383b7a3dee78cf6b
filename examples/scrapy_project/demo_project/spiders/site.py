"""Follow links within the start site; robots.txt is enforced by the middleware.

Offline, from the repository root: serve examples/ (its index.html links to an
allowed page and to /drafts/plan.html, which examples/robots.txt disallows for
DemoBot) on 127.0.0.1 only, and crawl it::

    python -m http.server 8000 --bind 127.0.0.1 --directory examples &
    cd examples/scrapy_project && scrapy crawl site -a start=http://127.0.0.1:8000/ -O pages.jsonl

pages.jsonl gets / and /about.html; /drafts/plan.html is never requested (the stats
printed at the end show ``robotstxt/forbidden: 1`` and ``robotsasync/forbidden/rules:
1``). Online: ``scrapy crawl site -a start=https://example.org/``.
"""

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
