"""Scrapy's SitemapSpider pointed at ``/robots.txt``, answered from the middleware's cache.

``SitemapSpider`` requests ``/robots.txt`` itself to read its ``Sitemap:`` lines, and
the middleware has fetched that same file for the origin's verdicts: two requests
per origin. When the request is a SitemapSpider's own (its callback is bound to a
``SitemapSpider``), the middleware answers it with a response built from the cached
entry instead, so a crawl makes exactly one robots.txt request per origin.

The body holds the file's ``Sitemap:`` lines, resolved against the robots.txt URL:
all that SitemapSpider reads from it (``sitemap_urls_from_robots``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ..core.sitemaps import named_sitemaps

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.http import TextResponse

    from ..cache.entry import CacheEntry
    from ..core.url import Origin

__all__ = ["cached_robots_response", "is_sitemap_spider_robots"]

#: In ``response.flags`` of a robots.txt answered from the cache.
FLAG = "robots_async: cached robots.txt"


def is_sitemap_spider_robots(request: Request) -> bool:
    """True for a SitemapSpider's request of an origin's ``/robots.txt``."""
    parts = urlsplit(request.url)
    if parts.path != "/robots.txt" or parts.query:
        return False
    from scrapy.spiders import SitemapSpider

    return isinstance(getattr(request.callback, "__self__", None), SitemapSpider)


def cached_robots_response(request: Request, origin: Origin, entry: CacheEntry) -> TextResponse:
    """The response SitemapSpider gets: the cached file's ``Sitemap:`` lines."""
    from scrapy.http import TextResponse

    urls = named_sitemaps(origin.robots_url, entry.robots.sitemaps)
    body = "".join(f"Sitemap: {url}\n" for url in urls).encode()
    return TextResponse(
        request.url,
        status=200,
        headers={"Content-Type": "text/plain; charset=utf-8"},
        body=body,
        encoding="utf-8",
        request=request,
        flags=[FLAG],
    )
