"""NofollowMiddleware: a Scrapy spider middleware that follows no link of a ``nofollow``
page (``X-Robots-Tag`` or ``<meta name="robots">``, scoped to the crawler's token as
Google scopes it). Items pass; only the Requests a callback yields from that page are
dropped (counted in ``robotsasync/nofollow/dropped``). Enable it in SPIDER_MIDDLEWARES.

Scrapy itself honours no page directive (its meta robots PR has been open since
2020); StormCrawler, Nutch and Heritrix do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy import Request

from ..core.agent import product_token
from ..core.page_directives import page_directives
from ._scrapy_usage import DIRECTIVES_META

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable, Iterator

    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from typing_extensions import Self

    from ..core.page_directives import PageDirectives

__all__ = ["NofollowMiddleware"]


class NofollowMiddleware:
    """Drop the Requests yielded from a page whose directives say ``nofollow``."""

    def __init__(self, crawler: Crawler) -> None:
        settings = crawler.settings
        agent = settings.get("ROBOTSTXT_USER_AGENT") or settings.get("USER_AGENT") or "*"
        self._token = product_token(agent)
        self._crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        """Build the middleware for ``crawler``."""
        return cls(crawler)

    def process_spider_output(
        self, response: Response, result: Iterable[Any], spider: Any = None
    ) -> Iterator[Any]:
        """Pass items; drop Requests if ``response`` is nofollow."""
        nofollow = self._nofollow(response)
        for item in result:
            if nofollow and isinstance(item, Request):
                self._dropped()
                continue
            yield item

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any], spider: Any = None
    ) -> AsyncIterator[Any]:
        """The same for an asynchronous callback."""
        nofollow = self._nofollow(response)
        async for item in result:
            if nofollow and isinstance(item, Request):
                self._dropped()
                continue
            yield item

    def _nofollow(self, response: Response) -> bool:
        found: PageDirectives | None = response.meta.get(DIRECTIVES_META)
        if found is None:  # not read by RobotsTxtMiddleware (ROBOTSASYNC_USAGE_SIGNALS off)
            body = response.body if hasattr(response, "text") else b""
            found = page_directives(response.headers, body, user_agent=self._token)
        return found.nofollow

    def _dropped(self) -> None:
        stats = self._crawler.stats
        if stats is not None:
            stats.inc_value("robotsasync/nofollow/dropped")
