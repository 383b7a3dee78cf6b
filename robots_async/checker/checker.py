"""RobotsChecker: the one object a crawler needs — cache, fetch, parse, match, pace."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from functools import lru_cache
from threading import get_ident
from typing import TYPE_CHECKING, Any

from ..cache.cache import CacheEntry, CacheStats, RobotsCache
from ..cache.closing import AsyncClosing
from ..cache.settings import check_checker, check_pacing
from ..core.agent import require_token
from ..core.errors import ClosedError, ConfigurationTypeError, EventLoopError
from ..core.sitemaps import named_sitemaps
from ..core.url import Origin
from ..fetch.policy import FetchPolicy, Source
from ..fetch.wire import wire_url
from .paced import ClosableSleep, PacedChecks
from .pacing import PaceBy, Pacer, PaceSettings
from .unclosed import creation_site, warn_unclosed
from .usage_answer import UsageChecks, UsageSources, usage_of

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterable

    import aiohttp
    from typing_extensions import Unpack

    from ..cache.store import RobotsStore
    from ..cache.tdmrep import TdmRepStats
    from ..core.policy import MatchPolicy, PolicyName
    from ..core.results import RequestRate, Verdict
    from ..core.usage import UsagePreferences
    from ..fetch.fetcher import Fetcher
    from ..fetch.outcome import FetchOutcome
    from .sitemaps import SitemapOptions, SitemapWalk

__all__ = ["CheckerStats", "Decision", "RobotsChecker"]

#: require_token() memoised for per-call user_agent=: crawlers pass a handful of them.
_cached_token = lru_cache(maxsize=256)(require_token)


@dataclass(frozen=True, slots=True)
class Decision:
    """A verdict with its provenance: which file, fetched when, from the cache or not."""

    url: str
    verdict: Verdict
    origin: Origin
    #: "fetched", "unavailable" (allow all), "unreachable" or "stale".
    source: Source
    from_cache: bool
    fetched_at: float
    expires_at: float
    outcome: FetchOutcome
    #: AI usage preferences from robots.txt's Content-Usage rules (None: disallowed).
    usage: UsagePreferences | None = None

    @property
    def allowed(self) -> bool:
        """True if the URL may be fetched."""
        return self.verdict.allowed

    @property
    def status(self) -> int | None:
        """HTTP status of the robots.txt response (None after a network error)."""
        return self.outcome.status


@dataclass(frozen=True, slots=True)
class CheckerStats:
    """Checks answered and time spent pacing, plus the cache's counters."""

    checks: int
    disallowed: int
    waits: int
    waited: float
    cache: CacheStats
    #: Page responses observed with 429/503 and a Retry-After (pauses), and without
    #: one (back-offs begun or lengthened).
    pauses: int = 0
    backoffs: int = 0
    #: Pacing calls the shared store failed (paced within this process meanwhile).
    pace_store_errors: int = 0
    #: tdmrep.json counters; None until :meth:`usage` with a response first read one.
    tdmrep: TdmRepStats | None = None


class RobotsChecker(PacedChecks, UsageChecks, AsyncClosing):
    """Answers "may I fetch this URL?" for a crawler, fetching robots.txt as needed.

    Every method taking a URL accepts a ``str``, a ``yarl.URL``, an ``httpx.URL`` or
    any object whose ``str()`` is an absolute http(s) URL (anything else raises
    :class:`URLTypeError`); one URL gets one verdict whatever its type.

    :param user_agent: the crawler's User-Agent header (sent when fetching robots.txt;
        its product token selects the robots.txt group).
    :param robots_token: the product token, when it should not be derived.
    :param session: an :class:`aiohttp.ClientSession` to fetch with (not closed here).
    :param cache: a :class:`RobotsCache` to use instead of a new one.
    :param fetcher: a :class:`Fetcher` instead of an :class:`AiohttpFetcher`.
    :param fetch_policy: status semantics, limits and TTLs (:class:`FetchPolicy`).
    :param policy: matching semantics: ``"google"`` (default), ``"rfc9309"``, ...
    :param store: a shared :class:`RobotsStore` (e.g. ``contrib.redis.RedisStore``; not
        closed by :meth:`aclose`: the caller closes it, e.g. with ``async with``).
    :param min_delay: seconds :meth:`wait` leaves between visits to one origin at
        least, whatever robots.txt says (default 0, as Scrapy's DOWNLOAD_DELAY).
    :param max_delay: cap on the Crawl-delay/Request-rate pacing of :meth:`wait`.
    :param pace_by: what :meth:`wait` paces: ``"origin"`` (scheme, host, port) or
        ``"host"`` (as Scrapy's download slots).
    :param max_retry_after: longest pause a page's ``Retry-After`` imposes through
        :meth:`observe` (an hour: a maintenance window that announces itself is
        honoured, a wrong header cannot park an origin for a whole crawl).
    :param max_backoff: longest back-off after 429/503 responses without
        ``Retry-After`` (2 s, doubled each time, up to this; 5 minutes).
    :param max_concurrent_fetches: robots.txt fetches in their first second at once
        (the fast lane; see :class:`RobotsCache`).
    :param max_entries: origins cached at most.
    :param max_memory: bytes the cached rules may retain (measured estimate).
    :param clock: wall-clock time source for expiry and pacing (tests pass a fake one;
        wall time, not monotonic, because store records are shared across machines).
    :param sleep: how :meth:`wait` sleeps (tests pass a fake one).
    """

    def __init__(
        self,
        user_agent: str,
        *,
        robots_token: str | None = None,
        session: aiohttp.ClientSession | None = None,
        cache: RobotsCache | None = None,
        fetcher: Fetcher | None = None,
        fetch_policy: FetchPolicy | None = None,
        policy: PolicyName | MatchPolicy = "google",
        store: RobotsStore | None = None,
        min_delay: float = 0.0,
        max_delay: float = 30.0,
        pace_by: PaceBy = "origin",
        max_retry_after: float = 3600.0,
        max_backoff: float = 300.0,
        max_concurrent_fetches: int = 64,
        max_entries: int = 10_000,
        max_memory: int = 256 * 1024 * 1024,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        self._token = check_checker(
            user_agent=user_agent,
            robots_token=robots_token,
            parts={
                "session": session,
                "fetcher": fetcher,
                "store": store,
                "clock": clock,
                "sleep": sleep,
            },
            policy=policy,
            fetch_policy=fetch_policy,
            max_delay=max_delay,
            max_concurrent_fetches=max_concurrent_fetches,
            max_entries=max_entries,
            max_memory=max_memory,
        )
        if cache is not None and not isinstance(cache, RobotsCache):  # 0 was "no cache"
            raise ConfigurationTypeError("RobotsChecker.cache", cache, "None or a RobotsCache")
        check_pacing(
            "RobotsChecker",
            min_delay=min_delay,
            max_delay=max_delay,
            pace_by=pace_by,
            max_retry_after=max_retry_after,
            max_backoff=max_backoff,
        )
        self._user_agent = user_agent
        fetch_policy = fetch_policy or (cache.policy if cache else FetchPolicy())
        if fetcher is None:
            from ..fetch.fetcher import AiohttpFetcher  # aiohttp is imported on first use only

            fetcher = AiohttpFetcher(
                session, user_agent=user_agent, policy=fetch_policy, match_policy=policy
            )
            owns_fetcher = True
        else:
            owns_fetcher = False
        self._fetcher = fetcher
        self._cache = cache or RobotsCache(
            self._fetcher,
            policy=fetch_policy,
            max_entries=max_entries,
            max_memory=max_memory,
            max_concurrent_fetches=max_concurrent_fetches,
            clock=clock,
            store=store,
            match_policy=policy,
            robots_token=self._token,
        )
        self._hot_rules = self._cache.hot_rules
        self._owns = (owns_fetcher, cache is None)
        self._usage_sources = UsageSources(self._cache, self._fetcher)
        self._clock = clock
        settings = PaceSettings(min_delay, max_delay, pace_by, max_retry_after, max_backoff)
        self._sleeper = ClosableSleep(sleep)
        self._pacer = Pacer(store, settings, clock=clock, sleep=self._sleeper)
        self._loop: asyncio.AbstractEventLoop | None = None
        # That loop while it may take allowed()'s hot path: an asyncio loop (whose
        # private _thread_id names the thread running it), None once closed.
        self._hot_loop: Any = None
        self._last_agent: tuple[str | None, str] = (None, self._token)
        # Plain int counters: `+= 1` on an attribute is half a dict item's (16 vs 32 ns).
        self._checks = 0
        self._disallowed = 0
        self._closed = False
        self._usage_turns = asyncio.Lock()  # first questions on large Content-Usage sets
        self._created_at = creation_site()

    def __del__(self) -> None:
        # Used (so its session may be open), owning it and never closed: say so, as an
        # unclosed file does. Unused, it holds nothing (the session is made on first use).
        if not getattr(self, "_closed", True) and self._loop is not None and any(self._owns):
            warn_unclosed(self, self._created_at)

    @property
    def user_agent(self) -> str:
        """The User-Agent header sent with robots.txt requests."""
        return self._user_agent

    @property
    def robots_token(self) -> str:
        """The product token matched against robots.txt groups."""
        return self._token

    @property
    def cache(self) -> RobotsCache:
        """The cache behind this checker."""
        return self._cache

    @property
    def stats(self) -> CheckerStats:
        """Counters: checks, disallowed, pacing, the cache's own and tdmrep.json's."""
        pacer = self._pacer
        tdm = self._usage_sources.tdmrep
        return CheckerStats(
            self._checks,
            self._disallowed,
            pacer.waits,
            pacer.waited,
            self._cache.stats,
            pacer.pauses,
            pacer.backoffs,
            pacer.store_errors,
            None if tdm is None else tdm.stats,
        )

    async def allowed(self, url: object, *, user_agent: str | None = None) -> bool:
        """Return True if ``url`` may be fetched (robots.txt fetched when needed).

        The URL judged is the one aiohttp sends for ``url`` (dot segments resolved,
        escapes normalised: see ``_wire``), so no spelling of a URL reaches a
        disallowed path.

        :raises InvalidURLError: if ``url`` is not an absolute http(s) URL.
        """
        hot = self._hot_loop
        # The loop bound to runs in this thread, so it runs this call (asyncio runs
        # no loop inside another): what _bind() checks, without the getpid() of
        # get_running_loop() (30 vs 150 ns). Other loops (uvloop) take _allowed().
        if hot is not None and type(url) is str and hot._thread_id == get_ident():
            # The cache's hot index answers a URL sent as written whose origin's rules
            # are cached and fresh (see HotRules.verdict): no wire_url(), no Origin,
            # no LRU move, no expiry float, the match called natively when compiled
            # (bench_core.py's cached-checker line).
            token = self._token if user_agent is None else self._token_for(user_agent)
            allowed = self._hot_rules.verdict(url, token)
            if allowed is not None:
                self._checks += 1
                if not allowed:
                    self._disallowed += 1
                return allowed
        return await self._allowed(url, user_agent)

    async def _allowed(self, url: object, user_agent: str | None) -> bool:
        """:meth:`allowed` for any URL, fetching robots.txt when needed."""
        url = wire_url(url)
        origin = Origin.from_url(url)
        entry = self._fresh(origin)
        if entry is None:
            entry, _ = await self._entry(origin)
        allowed = entry.robots.allowed(url, robots_token=self._token_for(user_agent))
        self._checks += 1
        if not allowed:
            self._disallowed += 1
        return allowed

    async def explain(self, url: object, *, user_agent: str | None = None) -> Decision:
        """Return the :class:`Decision` for ``url``: verdict, rule, line and provenance.

        ``Decision.url`` is the URL as the client sends it (see :meth:`allowed`).
        """
        url = wire_url(url)
        origin = self._origin(url)
        entry, from_cache = await self._entry(origin)
        token = self._token_for(user_agent)
        verdict = entry.robots.explain(url, robots_token=token)
        self._checks += 1
        if not verdict.allowed:
            self._disallowed += 1
        return Decision(
            url,
            verdict,
            origin,
            entry.source,
            from_cache,
            entry.fetched_at,
            entry.expires_at,
            entry.outcome,
            await usage_of(entry.robots, url, token, self._usage_turns)
            if verdict.allowed
            else None,
        )

    async def robots(self, url: object) -> CacheEntry:
        """The cache entry (rules, source, outcome, times) for ``url``'s origin."""
        entry, _ = await self._entry(self._origin(url))
        return entry

    async def crawl_delay(self, url: object, *, user_agent: str | None = None) -> float | None:
        """Crawl-delay in seconds for ``url``'s origin, if robots.txt sets one."""
        entry, _ = await self._entry(self._origin(url))
        return entry.robots.crawl_delay(robots_token=self._token_for(user_agent))

    async def request_rate(
        self, url: object, *, user_agent: str | None = None
    ) -> RequestRate | None:
        """Request-rate for ``url``'s origin, if robots.txt sets one."""
        entry, _ = await self._entry(self._origin(url))
        return entry.robots.request_rate(robots_token=self._token_for(user_agent))

    async def sitemaps(self, url: object) -> tuple[str, ...]:
        """Sitemap URLs of ``url``'s origin, relative ones resolved against robots.txt."""
        origin = self._origin(url)
        entry, _ = await self._entry(origin)
        return named_sitemaps(origin.robots_url, entry.robots.sitemaps)

    def sitemap_urls(self, url: str, **options: Unpack[SitemapOptions]) -> SitemapWalk:
        """Stream the URLs of the sitemaps the cached robots.txt names that this crawler
        may fetch (options: :class:`SitemapOptions`; see ``checker/sitemaps.py``)."""
        from .sitemaps import SitemapWalk

        return SitemapWalk(self, url, **options)

    @property
    def fetcher(self) -> Fetcher:
        """The fetcher robots.txt (and sitemaps) are fetched with."""
        return self._fetcher

    def invalidate(self, url: object) -> bool:
        """Forget the robots.txt of ``url``'s origin; True if it was cached."""
        return self._cache.invalidate(self._origin(url))

    async def prefetch(self, urls: Iterable[object]) -> None:
        """Fetch the robots.txt of every distinct origin among ``urls`` concurrently.

        :raises InvalidURLError: for a URL that is not absolute http(s).
        """
        origins = {self._origin(url) for url in urls}
        await asyncio.gather(*(self._entry(origin) for origin in origins))

    async def aclose(self) -> None:
        """Close what this checker created (cache, fetcher and its session).

        :raises EventLoopError: in a loop other than the one it was used in (its
            connections belong to that loop; nothing is closed but the checker).
        """
        if self._closed:
            return
        self._closed = True
        self._hot_loop = None
        self._sleeper.close()  # waits for a turn end with ClosedError
        if self._loop is not None and self._loop is not asyncio.get_running_loop():
            self._bind()
        owns_fetcher, owns_cache = self._owns
        await self._usage_sources.aclose()
        if owns_cache:
            await self._cache.aclose()
        if owns_fetcher:
            await self._fetcher.aclose()

    async def _entry(self, origin: Origin) -> tuple[CacheEntry, bool]:
        self._bind()
        if self._closed:
            raise ClosedError("checker is closed")
        return await self._cache.get(origin)

    def _fresh(self, origin: Origin) -> CacheEntry | None:
        """The cached entry if fresh (no fetch); the fast path of :meth:`allowed`."""
        self._bind()
        if self._closed:
            return None  # _entry() raises ClosedError (also with a cache not ours)
        return self._cache.fresh(origin)

    def _bind(self) -> None:
        """Bind to the running loop on first use; refuse any other loop after."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            if self._loop is not None:
                raise EventLoopError(
                    "this RobotsChecker was first used in another event loop, e.g. an "
                    "earlier asyncio.run(); create it in the loop that uses it"
                )
            self._loop = loop
            if isinstance(loop, asyncio.BaseEventLoop) and not self._closed:
                self._hot_loop = loop

    def _origin(self, url: object) -> Origin:
        # No memo: Origin.from_url() answers a usual URL in ~0.5 us, as fast as a memo
        # hit, and a memo costs memory per distinct authority (userinfo included).
        return Origin.from_url(url)

    def _token_for(self, user_agent: str | None) -> str:
        """The product token for a per-call ``user_agent`` (memoised: crawlers pass a
        handful of them, usually one; the last one is a compare, not the lru_cache
        call: 10 vs 45 ns, -2% a cached check, paired)."""
        if user_agent is None:
            return self._token
        last = self._last_agent
        if user_agent == last[0]:
            return last[1]
        token = _cached_token(user_agent)
        self._last_agent = (user_agent, token)
        return token
