"""Walking an origin's sitemaps: discovery, fetching, scope and robots.txt checks.

:class:`SitemapWalk` is what :meth:`RobotsChecker.sitemap_urls` returns: an async
iterator over :class:`SitemapUrl` with running :attr:`SitemapWalk.stats`. Sitemaps
come from the cached robots.txt (no second request) or from the caller; indexes are
followed breadth first, each sitemap fetched once, through the cache's fetch lanes
with the fetcher's redirect limit, deadline and address guard. Parsing is
``core/sitemaps.py``'s; a limit or a bad document ends that sitemap with a warning
(logged and counted), never the walk. A sitemap's entries (at most ``max_urls``) are
collected while it downloads and yielded after, so a slow consumer never holds a
fetch lane or runs into the fetch's deadline.

Scope (sitemaps.org): a URL is kept if its origin's robots.txt named the sitemap
(or an index above it), or it lies on the sitemap's host under the sitemap's
directory; else the URL's own robots.txt is read (at most
``max_foreign_origins`` of them) for a ``Sitemap:`` line naming the sitemap
(cross-submission). An index's children must be on its host (sitemaps.org); a
sitemap named by a document on another host is fetched like a redirect target, so
the guard refuses a private address for it when ``private_redirects="block"``; so
are the sitemaps below it (same host name, but perhaps another answer: rebinding).
"""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypedDict
from urllib.parse import urlsplit

from ..core.errors import ConfigurationError, InvalidURLError
from ..core.sitemaps import (
    SitemapLimits,
    SitemapParser,
    SitemapUrl,
    in_path_scope,
    join,
    named_sitemaps,
)
from ..core.url import Origin
from ..fetch.body import StreamingFetcher

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable

    from ..cache.cache import CacheEntry, RobotsCache
    from ..core.results import Verdict
    from ..core.sitemap_xml import RawEntry
    from ..fetch.fetcher import Fetcher
    from ..fetch.outcome import FetchOutcome

__all__ = ["SitemapOptions", "SitemapStats", "SitemapWalk"]

logger = logging.getLogger("robots_async")

#: Seconds past total_timeout before the lanes stop a fetch (as for robots.txt).
_GRACE = 0.25
#: Warnings kept in the stats (the rest are logged and counted only).
_KEPT_WARNINGS = 100


class SitemapOptions(TypedDict, total=False):
    """Options of :meth:`RobotsChecker.sitemap_urls`."""

    #: Read these sitemaps (relative URLs resolve against ``url``), not robots.txt's.
    sitemaps: Iterable[str] | None
    #: Yield disallowed URLs too, each with its verdict (else only allowed ones).
    include_disallowed: bool
    #: Byte, URL, sitemap, depth and foreign-origin bounds.
    limits: SitemapLimits | None


class _Checker(Protocol):
    """What a walk uses of :class:`RobotsChecker` (named so: no import circle)."""

    @property
    def fetcher(self) -> Fetcher: ...
    @property
    def cache(self) -> RobotsCache: ...
    async def sitemaps(self, url: str) -> tuple[str, ...]: ...
    async def robots(self, url: str) -> CacheEntry: ...
    async def allowed(self, url: str) -> bool: ...
    async def explain(self, url: str) -> _Decision: ...


class _Decision(Protocol):
    @property
    def verdict(self) -> Verdict: ...


@dataclass(frozen=True, slots=True)
class SitemapStats:
    """What a walk did so far."""

    sitemaps_fetched: int
    sitemaps_failed: int
    urls_yielded: int
    dropped_robots: int
    dropped_scope: int
    cross_submitted: int
    limits_hit: int
    warnings: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Sitemap:
    url: str
    depth: int
    #: Origins whose robots.txt named this sitemap or an index above it.
    vouched: frozenset[Origin]
    #: This sitemap and the indexes above it (cross-submission may name any).
    chain: tuple[str, ...]
    #: Fetched with the address guard on (``public_only``): it, or an index above
    #: it, was named by a document on another host. A child inherits it: on its
    #: index's host, but that name may answer a private address the next time.
    guarded: bool


class _Collect:
    """A :class:`BodySink` that parses and keeps the entries (bounded by max_urls)."""

    def __init__(self, parser: SitemapParser) -> None:
        self.parser = parser
        self.entries: list[RawEntry] = []

    def feed(self, data: bytes) -> bool:
        self.entries += self.parser.feed(data)
        return bool(self.parser.stopped)


class SitemapWalk:
    """Async iterator over the URLs of an origin's sitemaps (see the module docstring).

    Made by :meth:`RobotsChecker.sitemap_urls`; iterate it once.
    """

    def __init__(
        self,
        checker: _Checker,
        url: str,
        *,
        sitemaps: Iterable[str] | None = None,
        include_disallowed: bool = False,
        limits: SitemapLimits | None = None,
    ) -> None:
        fetcher = checker.fetcher
        if not isinstance(fetcher, StreamingFetcher):
            raise ConfigurationError(
                "RobotsChecker.fetcher",
                fetcher,
                "a fetcher with fetch_into() (AiohttpFetcher) to read sitemaps",
            )
        if isinstance(sitemaps, (str, bytes)):
            # An Iterable[str] to a type checker, whose characters would be read as URLs.
            raise ConfigurationError("sitemap_urls(sitemaps=)", sitemaps, "a list of URLs")
        if limits is not None and not isinstance(limits, SitemapLimits):
            raise ConfigurationError("sitemap_urls(limits=)", limits, "a SitemapLimits")
        self._checker = checker
        self._fetcher = fetcher
        self._origin = Origin.from_url(url)
        self._url = url
        self._given = None if sitemaps is None else tuple(sitemaps)
        self._all = include_disallowed
        self._limits = limits or SitemapLimits()
        self._listed: dict[Origin, frozenset[str]] = {}
        self._counts = dict.fromkeys(SitemapStats.__slots__[:-1], 0)
        self._warnings: list[str] = []
        self._unread = 0  # sitemaps listed but left unread (max_sitemaps)
        self._foreign_capped = False  # max_foreign_origins reached (and warned)

    @property
    def stats(self) -> SitemapStats:
        """A snapshot of the counters (and the first warnings)."""
        return SitemapStats(**self._counts, warnings=tuple(self._warnings))

    def __aiter__(self) -> AsyncIterator[SitemapUrl]:
        return self._walk()

    async def _walk(self) -> AsyncIterator[SitemapUrl]:
        queue = deque(await self._roots())
        seen = {sitemap.url for sitemap in queue}
        while queue:
            if self._counts["sitemaps_fetched"] >= self._limits.max_sitemaps:
                self._unread += len(queue)
                break
            sitemap = queue.popleft()
            entries = await self._read(sitemap)
            self._enqueue([raw.loc for raw in entries if raw.is_sitemap], sitemap, queue, seen)
            for raw in entries:
                if raw.is_sitemap:
                    continue
                item = await self._judge(raw, sitemap)
                if item is not None:
                    self._counts["urls_yielded"] += 1
                    yield item
        if self._unread:
            self._warn(
                f"limit: {self._limits.max_sitemaps} sitemaps read for {self._origin}; "
                f"{self._unread} left unread",
                limit=True,
            )

    async def _roots(self) -> list[_Sitemap]:
        host = self._origin.host
        if self._given is not None:
            urls = [_given_url(self._url, given) for given in self._given]
            # The caller chose these: fetched as the caller's own requests (no guard).
            return [_Sitemap(u, 0, frozenset(), (u,), False) for u in dict.fromkeys(urls)]
        vouched = frozenset({self._origin})
        named = await self._checker.sitemaps(self._url)
        return [_Sitemap(u, 0, vouched, (u,), _host(u) != host) for u in named]

    def _enqueue(
        self, locs: list[str], index: _Sitemap, queue: deque[_Sitemap], seen: set[str]
    ) -> None:
        """Queue the children ``locs`` of ``index``; one warning per kind of child left
        out, however many (an index of 50,000 must not log 50,000 lines)."""
        host = _host(index.url)
        again: list[str] = []
        too_deep = 0
        for loc in locs:
            if _host(loc) != host:
                self._counts["dropped_scope"] += 1  # sitemaps.org: an index lists its own site's
            elif loc in seen:
                again.append(loc)
            elif index.depth >= self._limits.max_depth:
                too_deep += 1
            elif self._counts["sitemaps_fetched"] + len(queue) >= self._limits.max_sitemaps:
                # Never read (max_sitemaps): counted, not held. Queued, 500 indexes of
                # 50,000 children would hold 25 million of them.
                self._unread += 1
            else:
                seen.add(loc)
                chain = (loc, *index.chain)
                queue.append(_Sitemap(loc, index.depth + 1, index.vouched, chain, index.guarded))
        if again:
            times = f" ({len(again)} repeats in all)" if len(again) > 1 else ""
            self._warn(f"{index.url} lists {again[0]} again{times}: read once")
        if too_deep:
            self._warn(
                f"limit: index depth {self._limits.max_depth} at {index.url}; "
                f"{too_deep} sitemaps left unread",
                limit=True,
            )

    async def _read(self, sitemap: _Sitemap) -> list[RawEntry]:
        """Fetch and parse one sitemap; its entries (those read before any stop)."""
        checker, url = self._checker, sitemap.url
        try:
            Origin.from_url(url)  # what the fetcher would refuse (ftp:, a port past 65535)
        except InvalidURLError as exc:
            self._counts["sitemaps_fetched"] += 1
            return self._failed(url, exc.reason)
        sinks: list[_Collect] = []

        async def attempt() -> FetchOutcome:
            sink = _Collect(SitemapParser(url, self._limits))
            sinks.append(sink)  # the lanes may start a fetch again: the last one counts
            return await self._fetcher.fetch_into(url, sink, public_only=sitemap.guarded)

        self._counts["sitemaps_fetched"] += 1
        timeout = checker.cache.policy.total_timeout + _GRACE
        outcome = await checker.cache.lanes.run(attempt, timeout)
        sink = sinks[-1] if sinks else None
        if isinstance(outcome, str) or sink is None:
            return self._failed(url, "still running at its deadline")
        if outcome.error is not None or outcome.status is None or outcome.status >= 300:
            detail = outcome.error or f"HTTP {outcome.status}"
            return self._failed(url, f"{detail} {outcome.error_detail}".strip(), sink.entries)
        parser = sink.parser
        entries = sink.entries
        if not outcome.truncated:
            entries += parser.close()
        if parser.stopped:
            self._warn(f"{url}: {parser.stopped}", limit=parser.limit_hit)
        elif parser.kind == "unknown":
            self._warn(f"{url}: not a sitemap, index or feed")
        return entries

    def _failed(self, url: str, why: str, entries: list[RawEntry] | None = None) -> list[RawEntry]:
        self._counts["sitemaps_failed"] += 1
        self._warn(f"{url}: {why}")
        return entries or []

    async def _judge(self, raw: RawEntry, sitemap: _Sitemap) -> SitemapUrl | None:
        """The item for ``raw``, or None when out of scope or disallowed."""
        try:
            origin = Origin.from_url(raw.loc)
        except InvalidURLError:
            self._counts["dropped_scope"] += 1
            return None
        if not await self._in_scope(raw.loc, origin, sitemap):
            self._counts["dropped_scope"] += 1
            return None
        verdict = None
        try:
            if self._all:
                verdict = (await self._checker.explain(raw.loc)).verdict
                allowed = verdict.allowed
            else:
                allowed = await self._checker.allowed(raw.loc)
        except InvalidURLError:  # no URL a client could send: nothing to crawl
            self._counts["dropped_scope"] += 1
            return None
        if not allowed:
            self._counts["dropped_robots"] += 1
            if not self._all:
                return None
        return SitemapUrl.from_raw(raw, sitemap.url, verdict)

    async def _in_scope(self, loc: str, origin: Origin, sitemap: _Sitemap) -> bool:
        if origin in sitemap.vouched or in_path_scope(loc, sitemap.url):
            return True
        listed = self._listed.get(origin)
        if listed is None:
            if len(self._listed) >= self._limits.max_foreign_origins:
                if not self._foreign_capped:  # once: 50,000 URLs must not log 50,000 lines
                    self._foreign_capped = True
                    self._warn(
                        f"limit: {self._limits.max_foreign_origins} other origins' robots.txt "
                        f"read for cross-submission; {origin} and later ones not read",
                        limit=True,
                    )
                return False
            entry = await self._checker.robots(loc)
            named = named_sitemaps(origin.robots_url, entry.robots.sitemaps)
            listed = self._listed[origin] = frozenset(named)
        if any(url in listed for url in sitemap.chain):
            self._counts["cross_submitted"] += 1
            return True
        return False

    def _warn(self, message: str, *, limit: bool = False) -> None:
        if limit:
            self._counts["limits_hit"] += 1
        if len(self._warnings) < _KEPT_WARNINGS:
            self._warnings.append(message)
        logger.warning("sitemap: %s", message)


def _host(url: str) -> str:
    """The host of ``url`` in lower case; "" for none, or when urllib cannot split it
    ("http://[::1/x" from a hostile index: no host, so never the index's)."""
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


def _given_url(base: str, given: str) -> str:
    """A caller's sitemap URL resolved against ``base``; :raises InvalidURLError: when it
    is no http(s) URL a client could fetch (the caller's own mistake: said at once)."""
    url = join(base, given)
    if url is None:
        raise InvalidURLError(given, "unparsable URL")
    Origin.from_url(url)
    return url
