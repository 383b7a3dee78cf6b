"""The checker's combined usage answer: robots.txt, TDMRep, the page and its headers.

Gathers each source (robots.txt from the cache, tdmrep.json from a
:class:`~robots_async.cache.tdmrep.TdmRepCache` over the same fetcher and lanes, the
response's headers and head) and hands them to the sans-I/O
:func:`~robots_async.core.usage_answer.combine_sources`.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, overload

from ..cache.tdmrep import TdmRepCache
from ..core.header_pairs import selected_headers
from ..core.page_directives import page_directives
from ..core.usage import usage_from_header
from ..core.usage_answer import UsageAnswer, combine_sources
from ..fetch.wire import wire_url

if TYPE_CHECKING:
    from ..cache.cache import RobotsCache
    from ..cache.entry import CacheEntry
    from ..core.page_directives import PageDirectives
    from ..core.robots import RobotsTxt
    from ..core.tdmrep import TdmAnswer
    from ..core.url import Origin
    from ..core.usage import UsagePreferences
    from ..fetch.fetcher import Fetcher

__all__ = ["Body", "UsageChecks", "UsageSources", "usage_of"]

#: A response body as the checker takes it.
Body = bytes | bytearray | memoryview


class UsageSources:
    """What a checker needs beyond robots.txt for :meth:`RobotsChecker.usage`."""

    def __init__(self, cache: RobotsCache, fetcher: Fetcher) -> None:
        self._cache = cache
        self._fetcher = fetcher
        self._tdm: TdmRepCache | None = None

    @property
    def tdmrep(self) -> TdmRepCache | None:
        """The tdmrep.json cache (None until first used)."""
        return self._tdm

    async def answer(
        self,
        robots: RobotsTxt,
        url: str,
        token: str,
        headers: object,
        body: Body | None,
        *,
        page: PageDirectives | None = None,
        turns: asyncio.Lock | None = None,
    ) -> UsageAnswer:
        """Every source for ``url``, combined (see core/usage_answer.py); ``page``: the
        directives of ``headers`` and ``body`` if the caller has read them already;
        ``turns``: the checker's lock that indexes large Content-Usage sets one at a
        time (see :func:`usage_of`)."""
        header_usage = None
        if headers is not None or body is not None:
            if page is None:
                page = page_directives(headers, body or b"", user_agent=token)
            values = [value for _, value in selected_headers(headers, ("content-usage",))]
            header_usage = usage_from_header(values) if values else None
        return combine_sources(
            robots_usage=(
                robots.usage(url, robots_token=token)
                if turns is None
                else await usage_of(robots, url, token, turns)
            ),
            signals=robots.content_signals(url, robots_token=token),
            tdm_file=await self._tdm_answer(url),
            page=page,
            header_usage=header_usage,
        )

    async def aclose(self) -> None:
        """Close the tdmrep.json cache (cancels its fetches in flight)."""
        if self._tdm is not None:
            await self._tdm.aclose()

    async def _tdm_answer(self, url: str) -> TdmAnswer:
        if self._tdm is None:
            self._tdm = TdmRepCache(self._cache, self._fetcher)
        answer, _ = await self._tdm.lookup(url)
        return answer


class UsageChecks:
    """:meth:`usage` of RobotsChecker (a base class, as ``PacedChecks`` is)."""

    __slots__ = ()

    _usage_sources: UsageSources
    _usage_turns: asyncio.Lock

    if TYPE_CHECKING:

        def _origin(self, url: object) -> Origin: ...

        async def _entry(self, origin: Origin) -> tuple[CacheEntry, bool]: ...

        def _token_for(self, user_agent: str | None) -> str: ...

    @overload
    async def usage(
        self, url: object, headers: None = None, body: None = None, *, user_agent: str | None = None
    ) -> UsagePreferences | None: ...
    @overload
    async def usage(
        self,
        url: object,
        headers: object,
        body: Body | None = None,
        *,
        user_agent: str | None = None,
    ) -> UsageAnswer: ...
    @overload
    async def usage(
        self, url: object, headers: object = None, *, body: Body, user_agent: str | None = None
    ) -> UsageAnswer: ...
    async def usage(
        self,
        url: object,
        headers: object = None,
        body: Body | None = None,
        *,
        user_agent: str | None = None,
    ) -> UsagePreferences | UsageAnswer | None:
        """AI usage preferences for ``url`` (draft-ietf-aipref-attach; issue 29).

        With neither ``headers`` nor ``body``: robots.txt's Content-Usage only, None
        when ``url`` may not be fetched (as before). With a response's ``headers``
        and/or ``body`` (``headers={}`` for none): a :class:`UsageAnswer` combining
        robots.txt Content-Usage and Content-Signal, TDMRep, page directives and the
        Content-Usage header, most restrictive first (docs/opt-outs.md).
        """
        url = wire_url(url)
        entry, _ = await self._entry(self._origin(url))
        token = self._token_for(user_agent)
        if headers is None and body is None:
            return await usage_of(entry.robots, url, token, self._usage_turns)
        return await self._usage_sources.answer(
            entry.robots, url, token, headers, body, turns=self._usage_turns
        )


#: Content-Usage rules above which a first question waits its turn to index them.
_USAGE_ON_LOOP = 1000


async def usage_of(
    robots: RobotsTxt, url: str, token: str, turns: asyncio.Lock
) -> UsagePreferences | None:
    """``robots.usage()`` for ``url``; the first question on a large file in turn.

    One large index is built at a time: 60 files of 500 KB of rules asked at once were
    all indexed in one loop iteration (their questions were ready together), a stall
    the sum of their builds; in turn, each build (~17 ms) is its own step and the loop
    runs between them. A worker thread did not help: the builds are pure Python and
    starved the loop of the GIL (1 s stalls measured).
    """
    if robots._usage_unindexed(token) > _USAGE_ON_LOOP:
        async with turns:
            await asyncio.sleep(0)  # let what became ready meanwhile run first
            return robots.usage(url, robots_token=token)
    return robots.usage(url, robots_token=token)
