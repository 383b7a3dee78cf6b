"""Scrapy integration: a ROBOTSTXT_PARSER backend and a drop-in RobotsTxtMiddleware.

Backend only (keeps Scrapy's middleware, gains Google-exact matching; any reactor)::

    ROBOTSTXT_PARSER = "robots_async.contrib.scrapy.RobotParser"

Drop-in middleware (adds RFC 9309 status semantics, TTL, per-scheme origins, the
500 KiB limit, Crawl-delay and AI usage preferences; needs asyncio: Scrapy's
default ``AsyncioSelectorReactor`` or ``TWISTED_REACTOR_ENABLED = False``)::

    DOWNLOADER_MIDDLEWARES = {
        "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
        "robots_async.contrib.scrapy.RobotsTxtMiddleware": 100,
    }

Settings keep Scrapy's names (ROBOTSTXT_OBEY, ROBOTSTXT_USER_AGENT) and add the
``ROBOTSASYNC_*`` ones of :data:`SETTINGS`, each checked at startup: a bad value
stops the crawl; ``ROBOTSTXT_OBEY = False`` is the only way to turn this off.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from typing import TYPE_CHECKING, Any

try:
    from scrapy import Request, signals
    from scrapy.exceptions import IgnoreRequest, NotConfigured, StopDownload
    from scrapy.robotstxt import RobotParser as _ScrapyRobotParser
except ImportError as exc:  # pragma: no cover - exercised without Scrapy installed
    raise ImportError(
        "robots_async.contrib.scrapy needs Scrapy: pip install 'robots-async[scrapy]'"
    ) from exc

from ..cache.cache import RobotsCache
from ..checker.audit import AuditLog
from ..checker.pacing import robots_delay
from ..core.agent import product_token
from ..core.errors import InvalidURLError
from ..core.parser import parse
from ..core.url import Origin
from ..core.usage import CATEGORIES, UsagePreferences, combine_usage, usage_from_header
from ..fetch.addresses import is_public
from ._scrapy_backend import check_backend_settings
from ._scrapy_config import _require_asyncio, _store_from, fetch_policy_from
from ._scrapy_errors import classify_scrapy_error
from ._scrapy_fetcher import _META_FLAG, ROBOTS_PRIORITY, ScrapyFetcher
from ._scrapy_nofollow import NofollowMiddleware
from ._scrapy_pace import ScrapyPacing
from ._scrapy_settings import (
    SETTINGS,
    ConfigurationError,
    ConfigurationTypeError,
    ScrapyConfig,
    Setting,
    UnknownSettingError,
    read_settings,
)
from ._scrapy_sitemaps import cached_robots_response, is_sitemap_spider_robots
from ._scrapy_startup import report_startup_error
from ._scrapy_usage import ScrapyUsageSignals
from ._scrapy_waiting import WaitingRequests

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from typing_extensions import Self

    from ..cache.cache import CacheEntry
    from ..core.robots import RobotsTxt
    from ..fetch.addresses import IPAddress


__all__ = [
    "SETTINGS",
    "ConfigurationError",
    "ConfigurationTypeError",
    "NofollowMiddleware",
    "RobotParser",
    "RobotsTxtMiddleware",
    "ScrapyConfig",
    "ScrapyFetcher",
    "Setting",
    "UnknownSettingError",
    "classify_scrapy_error",
    "fetch_policy_from",
    "read_settings",
]

logger = logging.getLogger(__name__)

#: Request meta: the robots.txt usage preferences found for the request's URL.
_USAGE_META = "_robotsasync_usage"

#: Where the combined preferences are published (robots.txt rule + response header).
USAGE_META = "content_usage"

#: Scrapy's signal after each robots.txt is parsed (Scrapy >= 2.18; None before).
_ROBOTS_PARSED = getattr(signals, "robots_parsed", None)

#: Preference -> the value in stats names (the header's own spelling).
_SHORT = {"allowed": "y", "disallowed": "n", "unknown": "unknown"}


def _text(value: str | bytes) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


class RobotParser(_ScrapyRobotParser):
    """``ROBOTSTXT_PARSER`` backend: robots_async's Google-exact matcher for Scrapy.

    The User-Agent Scrapy passes (``Scrapy/2.19 (+https://scrapy.org)``) is reduced
    to its product token (``Scrapy``) before matching, as RFC 9309 §2.2.1 intends.
    ``ROBOTSASYNC_POLICY`` picks the matching policy (default ``google``) and
    ``ROBOTSASYNC_MAX_BYTES`` the size parsed; any other ``ROBOTSASYNC_*`` setting
    needs :class:`RobotsTxtMiddleware`, and without it stops the crawl at startup.
    """

    def __init__(self, robots: RobotsTxt) -> None:
        self.robots = robots

    @classmethod
    def from_crawler(cls, crawler: Crawler | None, robotstxt_body: bytes) -> Self:
        """Parse ``robotstxt_body`` with the crawler's settings (defaults without one).

        Scrapy's middleware calls this once at startup (with an empty body), so a bad
        or unknown ``ROBOTSASYNC_*`` setting stops the crawl there, logged as one line.
        """
        try:
            config = read_settings(crawler.settings if crawler is not None else None)
            if crawler is not None:
                check_backend_settings(crawler.settings, RobotsTxtMiddleware)
        except ConfigurationError as exc:
            report_startup_error(exc)
            raise
        robots = parse(robotstxt_body, policy=config.policy, max_bytes=config.max_bytes)
        # Scrapy keeps a parser per domain for the whole crawl: an HTML page's
        # hundred warnings are packed (~14 -> ~5 KB a page), as RobotsCache packs them.
        robots._pack_warnings()
        return cls(robots)

    def allowed(self, url: str | bytes, user_agent: str | bytes) -> bool:
        """Return True if ``user_agent`` may fetch ``url``."""
        return self.robots.allowed(_text(url), robots_token=product_token(_text(user_agent)))

    def crawl_delay(self, user_agent: str | bytes) -> float | None:
        """Crawl-delay in seconds for ``user_agent``, if set."""
        return self.robots.crawl_delay(robots_token=product_token(_text(user_agent)))

    def sitemaps(self) -> list[str]:
        """Sitemap URLs listed in the file."""
        return list(self.robots.sitemaps)


class RobotsTxtMiddleware:
    """Drop-in replacement for Scrapy's RobotsTxtMiddleware, with RFC 9309 semantics.

    Same settings, ``dont_obey_robotstxt`` meta, stats names and ``robots_parsed``
    signal as Scrapy's; in addition: 429/5xx/network errors disallow (not a parsed
    error page), entries expire (24 h, Cache-Control, error back-off), http and
    https are separate origins, at most 500 KiB is parsed, Crawl-delay (or
    Request-rate) raises the download slot's delay, capped by
    ``ROBOTSASYNC_MAX_CRAWL_DELAY`` (30 s), and each response carries its AI usage
    preferences in ``response.meta["content_usage"]`` (robots.txt ``Content-Usage``
    rule and header combined; ``ROBOTSASYNC_REFUSE_USAGE`` drops refused ones).
    """

    DOWNLOAD_PRIORITY: int = ROBOTS_PRIORITY

    @staticmethod
    def public_address(address: IPAddress) -> bool:
        """Whether the SSRF guard counts ``address`` as public (a subclass may widen
        it, as the tests do to let 127.0.0.2 stand for a public site)."""
        return is_public(address)

    def __init__(self, crawler: Crawler) -> None:
        settings = crawler.settings
        if not settings.getbool("ROBOTSTXT_OBEY"):
            raise NotConfigured
        self.config = config = read_settings(settings)
        _require_asyncio(crawler)
        self.crawler = crawler
        self._robotstxt_useragent = _agent_setting(settings, "ROBOTSTXT_USER_AGENT")
        # USER_AGENT names the crawler only when ROBOTSTXT_USER_AGENT does not.
        default = None if self._robotstxt_useragent else _agent_setting(settings, "USER_AGENT")
        self._default_useragent = default or "Scrapy"
        self._policy = fetch_policy_from(config)
        # Requests waiting for robots.txt leave CONCURRENT_REQUESTS free, up to 8 per
        # slot of it; past that they count again (back-pressure).
        concurrency = max(1, settings.getint("CONCURRENT_REQUESTS"))
        self.waiting = WaitingRequests(crawler, limit=8 * concurrency)
        fetcher = ScrapyFetcher(
            crawler,
            policy=self._policy,
            match_policy=config.policy,
            public_address=self.public_address,
            waiting=self.waiting,
        )
        self._store = _store_from(config, settings.get("JOBDIR"))
        self.cache = RobotsCache(
            fetcher,
            policy=self._policy,
            max_entries=config.max_entries,
            max_memory=config.max_memory,
            store=self._store,
            match_policy=config.policy,
        )
        self._pacing = (
            ScrapyPacing(crawler, config, self._store, self.waiting) if config.pace else None
        )
        self._announced: dict[Origin, CacheEntry] = {}
        self._signals = (
            ScrapyUsageSignals(self.cache, fetcher, config.refuse_usage, self._inc)
            if config.usage_signals
            else None
        )
        self._audit = _audit_log(config.audit_log) if config.audit_log else None
        crawler.signals.connect(self._bytes_received, signal=signals.bytes_received)
        crawler.signals.connect(self._spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        """Build the middleware (NotConfigured unless ROBOTSTXT_OBEY is true).

        :raises ConfigurationError: for a bad or unknown ``ROBOTSASYNC_*`` setting or a
            non-asyncio reactor: Scrapy stops the crawl; the error is logged as one line.
        """
        try:
            return cls(crawler)
        except ConfigurationError as exc:
            report_startup_error(exc)
            raise

    async def process_request(
        self, request: Request, spider: Any = None
    ) -> Request | Response | None:
        """Wait for the origin's robots.txt; drop the request if it is disallowed, or if
        its robots.txt usage preference refuses a ``ROBOTSASYNC_REFUSE_USAGE`` category."""
        if self._pacing is not None:
            self._pacing.forget(request)
        if request.meta.get("dont_obey_robotstxt"):
            return None
        try:
            origin = Origin.from_url(request.url)
        except InvalidURLError:
            return None  # data:, file:, s3: ... robots.txt does not govern them
        entry = self.cache.fresh(origin)
        if entry is None or _our_limit(entry):
            with self.waiting.waiting(request):
                entry = await self._entry_beyond_our_limits(origin, entry)
            if _our_limit(entry):
                # Still our own shortage (no descriptors): back to the scheduler, to be
                # tried again later, never dropped as if the site had said no.
                self._inc("robotsasync/rescheduled/local_limit")
                return request.replace(dont_filter=True)
        await self._announce(origin, entry, request)
        if is_sitemap_spider_robots(request):  # one robots.txt request per origin
            return cached_robots_response(request, origin, entry)
        token = product_token(self._user_agent(request))
        verdict = entry.robots.explain(request.url, robots_token=token)
        if not verdict.allowed:
            self._forbid(request, entry, verdict.line, str(verdict.rule or verdict.reason))
        if self._pacing is not None:
            # The shared turn is the Crawl-delay: raising the slot's delay as well would
            # send a request up to a Crawl-delay after its turn, onto the next one's.
            if not await self._pacing.wait(request, origin, entry, self._user_agent(request)):
                # The crawl is closing: back to the scheduler, untried, as the requests
                # still queued there (a JOBDIR keeps them for the next run).
                return request.replace(dont_filter=True)
        elif self.config.crawl_delay:
            self._pace(request, entry.robots, token)
        usage = entry.robots.usage(request.url, robots_token=token)
        if usage is not None:
            # robots.txt already says "n": the response cannot make it "y" (vocab §7.1).
            self._refuse_usage(request, usage, "robots.txt")
            request.meta[_USAGE_META] = usage
        return None

    def process_exception(
        self, request: Request, exception: BaseException, spider: Any = None
    ) -> Request | None:
        """A paced request that met a back-off as its download slot sent it (not sent):
        back to the scheduler, to take a new turn after the back-off."""
        if self._pacing is None:
            return None
        return self._pacing.rescheduled(request, exception)

    async def _entry_beyond_our_limits(
        self, origin: Origin, entry: CacheEntry | None
    ) -> CacheEntry:
        """The origin's entry, waiting out an entry that our own limits made (its short
        TTL) once; the new fetch itself retries our shortage up to its total_timeout."""
        if entry is not None and _our_limit(entry):
            await asyncio.sleep(max(0.0, entry.expires_at - time.time()))
        entry, _ = await self.cache.get(origin)
        return entry

    async def process_response(
        self, request: Request, response: Response, spider: Any = None
    ) -> Response:
        """Publish the response's usage preferences; drop it if a refused one is "n"
        (with ``ROBOTSASYNC_USAGE_SIGNALS``: by any source, see ``_scrapy_usage``)."""
        if _META_FLAG in request.meta:
            return response  # our own robots.txt request
        robots_usage = request.meta.pop(_USAGE_META, None) or UsagePreferences()
        values = [_text(v) for v in response.headers.getlist("Content-Usage")]
        usage = combine_usage(robots_usage, usage_from_header(values)) if values else robots_usage
        request.meta[USAGE_META] = usage
        for category in CATEGORIES:
            self._inc(f"robotsasync/content_usage/{category}/{_SHORT[usage.get(category)]}")
        if self._signals is not None or self._audit is not None:
            await self._read_signals(request, response)
        self._refuse_usage(request, usage, "response")
        return response

    async def _read_signals(self, request: Request, response: Response) -> None:
        """Every signal (ROBOTSASYNC_USAGE_SIGNALS) and the audit line of a response;
        the line is written before any refusal, so refused responses are logged too."""
        try:
            origin = Origin.from_url(request.url)
        except InvalidURLError:
            return  # data:, file: ... no robots.txt or tdmrep.json governs them
        entry, _ = await self.cache.get(origin)
        token = product_token(self._user_agent(request))
        answer = None
        if self._signals is not None:
            answer = await self._signals.read(request, response, entry.robots, token)
        if self._audit is not None:
            verdict = entry.robots.explain(request.url, robots_token=token)
            await self._audit.write(request.url, verdict, entry, answer)
        if self._signals is not None and answer is not None:
            self._signals.refuse(request, answer)

    def _refuse_usage(self, request: Request, usage: UsagePreferences, where: str) -> None:
        for category in self.config.refuse_usage:
            if usage.disallows(category):
                self._inc(f"robotsasync/content_usage/refused/{category}")
                logger.debug(
                    "Refused by %(where)s usage preference %(category)s=n: %(request)s",
                    {"where": where, "category": category, "request": request},
                    extra={"spider": self.crawler.spider},
                )
                raise IgnoreRequest(f"Content-Usage {category}=n ({where})")

    def _inc(self, key: str) -> None:
        stats = self.crawler.stats
        if stats is not None:
            stats.inc_value(key)

    def _user_agent(self, request: Request) -> str:
        if self._robotstxt_useragent:
            return self._robotstxt_useragent
        header = request.headers.get(b"User-Agent")
        return _text(header) if header else self._default_useragent

    def _forbid(self, request: Request, entry: CacheEntry, line: int, why: str) -> None:
        self._inc("robotstxt/forbidden")
        # "rules": a rule of a fetched robots.txt; otherwise what happened to the file.
        cause = "rules" if entry.source == "fetched" else entry.source
        self._inc(f"robotsasync/forbidden/{cause}")
        # No rule decided (the file was unreachable: disallow all): no "line 0".
        where = f", line {line}" if line else ""
        logger.debug(
            "Forbidden by robots.txt: %(request)s (%(why)s%(where)s, %(source)s)",
            {"request": request, "why": why, "where": where, "source": entry.source},
            extra={"spider": self.crawler.spider},
        )
        raise IgnoreRequest("Forbidden by robots.txt")

    def _pace(self, request: Request, robots: RobotsTxt, token: str) -> None:
        """Raise the download slot's delay to the site's Crawl-delay (capped)."""
        delay = min(robots_delay(robots, token), self.config.max_crawl_delay)
        engine = self.crawler.engine
        if delay <= 0 or engine is None:
            return
        _, slot = engine.downloader._get_slot(request)  # Scrapy's own call: creates it if new
        if slot.delay < delay:
            slot.delay = delay
            slot.jitter = 0.0  # jitter would let some requests come sooner than asked
            self._inc("robotsasync/crawl_delay_applied")

    async def _announce(self, origin: Origin, entry: CacheEntry, request: Request) -> None:
        """Send ``robots_parsed`` once per fetched entry (as Scrapy >= 2.18 does per
        download), and count the entry's source."""
        if self._announced.get(origin) is entry:
            return
        self._announced[origin] = entry
        if len(self._announced) > 2 * self.cache.stats.entries + 100:
            self._announced = {o: e for o, e in self._announced.items() if e is self.cache.peek(o)}
        self._inc(f"robotsasync/source/{entry.source}")
        if entry.outcome.truncated:
            self._inc("robotsasync/truncated")
        if entry.outcome.status is not None and _ROBOTS_PARSED is not None:
            await self.crawler.signals.send_catch_log_async(
                signal=_ROBOTS_PARSED,
                robotparser=RobotParser(entry.robots),
                request=request,
            )

    def _bytes_received(self, data: bytes, request: Request, spider: Any = None) -> None:
        """Stop a robots.txt download past max_bytes and keep what arrived."""
        limit = request.meta.get(_META_FLAG)
        if limit is None:
            return
        received = request.meta.get("_robotsasync_received", 0) + len(data)
        request.meta["_robotsasync_received"] = received
        if received > limit:
            raise StopDownload(fail=False)

    async def _spider_closed(self, spider: Any = None) -> None:
        """Record the cache's counters (robotsasync/cache/<name>) and tdmrep.json's
        (robotsasync/tdmrep/<name>, when usage signals were read); close cache and store."""
        stats = self.crawler.stats
        if stats is not None:
            for name, value in dataclasses.asdict(self.cache.stats).items():
                stats.set_value(f"robotsasync/cache/{name}", value)
            tdm = None if self._signals is None else self._signals.tdmrep_stats
            for name, value in dataclasses.asdict(tdm).items() if tdm is not None else ():
                stats.set_value(f"robotsasync/tdmrep/{name}", value)
        try:
            if self._pacing is not None:
                await self._pacing.close()
            if self._signals is not None:
                await self._signals.aclose()
            if self._audit is not None:
                await self._audit.aclose()
            await self.cache.aclose()
        finally:
            if self._store is not None:
                await self._store.aclose()


def _agent_setting(settings: Any, name: str) -> str | None:
    """The User-Agent in setting ``name`` (None when unset or empty, as Scrapy reads it).

    :raises ConfigurationError: for one without a crawler's name: it matched robots.txt
        as the nameless crawler (the ``*`` group only, never its own), a User-Agent
        RobotsChecker refuses; for bytes, Scrapy's own middleware's spelling, the text.
    """
    value = settings.get(name)
    if not value:
        return None
    accepted = (
        "a User-Agent that starts with the crawler's name, e.g. "
        "'MyBot/1.0 (+https://example.org/bot)'"
    )
    if not isinstance(value, (str, bytes)):
        raise ConfigurationTypeError(name, value, accepted)
    if not product_token(_text(value)):
        raise ConfigurationError(name, value, accepted)
    return _text(value)


def _audit_log(path: str) -> AuditLog:
    """The audit log at ``path``; refused under the setting's name (ConfigurationError)."""
    try:
        return AuditLog(path)
    except ConfigurationError as exc:
        raise ConfigurationError("ROBOTSASYNC_AUDIT_LOG", path, exc.accepted) from None


def _our_limit(entry: CacheEntry) -> bool:
    """True for an entry our own limits made (no descriptor, no socket buffer): not the
    site's answer, so no request is dropped on it."""
    return entry.outcome.error == "local-limit"
