"""The Scrapy middleware's reading of every opt-out signal (``ROBOTSASYNC_USAGE_SIGNALS``).

Per response: page directives into ``response.meta["robots_directives"]``, the combined
answer (robots.txt Content-Usage and Content-Signal, TDMRep, page, Content-Usage
header) into ``response.meta["usage_answer"]``, and ``IgnoreRequest`` when a
``ROBOTSASYNC_REFUSE_USAGE`` category is disallowed by any source. tdmrep.json is
fetched once per origin through the middleware's own robots.txt fetcher and lanes.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import IgnoreRequest

from ..checker.usage_answer import UsageSources
from ..core.page_directives import page_directives

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.http import Request, Response

    from ..cache.cache import RobotsCache
    from ..cache.tdmrep import TdmRepStats
    from ..core.robots import RobotsTxt
    from ..core.usage import UsageCategory
    from ..core.usage_answer import UsageAnswer
    from ..fetch.fetcher import Fetcher

__all__ = ["ANSWER_META", "DIRECTIVES_META", "ScrapyUsageSignals"]

logger = logging.getLogger("robots_async.contrib.scrapy")

#: Response meta: the combined UsageAnswer.
ANSWER_META = "usage_answer"
#: Response meta: the page's PageDirectives.
DIRECTIVES_META = "robots_directives"


class ScrapyUsageSignals:
    """Reads every signal for a response and refuses what the settings refuse."""

    def __init__(
        self,
        cache: RobotsCache,
        fetcher: Fetcher,
        refuse: tuple[UsageCategory, ...],
        inc: Callable[[str], None],
    ) -> None:
        self._sources = UsageSources(cache, fetcher)
        self._refuse = refuse
        self._inc = inc

    async def read(
        self, request: Request, response: Response, robots: RobotsTxt, token: str
    ) -> UsageAnswer:
        """Publish the page's directives and the combined answer on ``request.meta``."""
        body = response.body if _is_text(response) else b""
        page = page_directives(response.headers, body, user_agent=token)
        answer = await self._sources.answer(
            robots, request.url, token, response.headers, body, page=page
        )
        request.meta[DIRECTIVES_META] = page
        request.meta[ANSWER_META] = answer
        return answer

    def refuse(self, request: Request, answer: UsageAnswer) -> None:
        """Raise IgnoreRequest if a refused category is disallowed by any source."""
        for category in self._refuse:
            refusing = answer.refusing([category])
            if refusing:
                names = ", ".join(sorted({s.source for s in refusing}))
                self._inc(f"robotsasync/usage_answer/refused/{category}")
                logger.debug("Refused: %s disallowed by %s: %s", category, names, request)
                raise IgnoreRequest(f"{category} disallowed ({names})")

    @property
    def tdmrep_stats(self) -> TdmRepStats | None:
        """The tdmrep.json counters (None before the first response was read)."""
        tdm = self._sources.tdmrep
        return None if tdm is None else tdm.stats

    async def aclose(self) -> None:
        """Close the tdmrep.json cache."""
        await self._sources.aclose()


def _is_text(response: Any) -> bool:
    """Only text responses have a body to scan (Scrapy's Response subclasses)."""
    return hasattr(response, "text")
