"""Scrapy integration: a ROBOTSTXT_PARSER backend and a drop-in RobotsTxtMiddleware.

Backend only (keeps Scrapy's middleware, gains Google-exact matching)::

    ROBOTSTXT_PARSER = "robots_async.contrib.scrapy.RobotParser"

Drop-in middleware (adds RFC 9309 status semantics, TTL, per-scheme origins, the
500 KiB limit and Crawl-delay)::

    DOWNLOADER_MIDDLEWARES = {
        "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
        "robots_async.contrib.scrapy.RobotsTxtMiddleware": 100,
    }

Settings keep Scrapy's names (ROBOTSTXT_OBEY, ROBOTSTXT_USER_AGENT) and add
``ROBOTSASYNC_*`` ones: POLICY, FETCH_POLICY, FORBIDDEN, MAX_BYTES, TIMEOUT,
MAX_ENTRIES, CRAWL_DELAY, MAX_CRAWL_DELAY, REDIS_URL, REDIS_PREFIX.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from typing import TYPE_CHECKING, Any

try:
    from scrapy import Request, signals
    from scrapy.exceptions import IgnoreRequest, NotConfigured, StopDownload
    from scrapy.http.request import NO_CALLBACK
    from scrapy.robotstxt import RobotParser as _ScrapyRobotParser
except ImportError as exc:  # pragma: no cover - exercised without Scrapy installed
    raise ImportError(
        "robots_async.contrib.scrapy needs Scrapy: pip install 'robots-async[scrapy]'"
    ) from exc

from .._agent import product_token
from .._cache import RobotsCache
from .._errors import InvalidURLError
from .._fetch_policy import FetchPolicy
from .._http import RedirectChain, is_redirect
from .._parser import DEFAULT_MAX_BYTES, RobotsParser, parse
from .._url import Origin

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.settings import BaseSettings
    from typing_extensions import Self

    from .._cache import CacheEntry
    from .._outcome import ErrorKind, FetchOutcome
    from .._robots import RobotsTxt
    from .._store import RobotsStore

__all__ = ["RobotParser", "RobotsTxtMiddleware", "ScrapyFetcher"]

logger = logging.getLogger(__name__)

_FETCH_PRESETS = {
    "rfc9309": FetchPolicy.rfc9309,
    "googlebot": FetchPolicy.googlebot,
    "yandex": FetchPolicy.yandex,
    "legacy-allow-on-error": FetchPolicy.legacy_allow_on_error,
}
#: Decompressed bytes Scrapy may produce for a robots.txt (guards against bombs;
#: the parser itself stops at max_bytes).
_DECOMPRESSED_CAP = 8 * 1024 * 1024
_META_FLAG = "robotsasync_fetch"


def _text(value: str | bytes) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


class RobotParser(_ScrapyRobotParser):
    """``ROBOTSTXT_PARSER`` backend: robots_async's Google-exact matcher for Scrapy.

    The User-Agent Scrapy passes (``Scrapy/2.19 (+https://scrapy.org)``) is reduced
    to its product token (``Scrapy``) before matching, as RFC 9309 §2.2.1 intends.
    Setting ``ROBOTSASYNC_POLICY`` picks the matching policy (default ``google``).
    """

    def __init__(self, robots: RobotsTxt) -> None:
        self.robots = robots

    @classmethod
    def from_crawler(cls, crawler: Crawler, robotstxt_body: bytes) -> Self:
        """Parse ``robotstxt_body`` with the crawler's settings."""
        settings = crawler.settings
        policy = settings.get("ROBOTSASYNC_POLICY", "google")
        max_bytes = settings.getint("ROBOTSASYNC_MAX_BYTES", DEFAULT_MAX_BYTES)
        return cls(parse(robotstxt_body, policy=policy, max_bytes=max_bytes))

    def allowed(self, url: str | bytes, user_agent: str | bytes) -> bool:
        """Return True if ``user_agent`` may fetch ``url``."""
        return self.robots.allowed(_text(url), robots_token=product_token(_text(user_agent)))

    def crawl_delay(self, user_agent: str | bytes) -> float | None:
        """Crawl-delay in seconds for ``user_agent``, if set."""
        return self.robots.crawl_delay(robots_token=product_token(_text(user_agent)))

    def sitemaps(self) -> list[str]:
        """Sitemap URLs listed in the file."""
        return list(self.robots.sitemaps)


class ScrapyFetcher:
    """A :class:`robots_async.Fetcher` that downloads through Scrapy's own engine.

    Proxies, headers and downloader middlewares apply to the robots.txt request as
    to any other. Redirects are followed here (``dont_redirect``) so hops, loops and
    the 5-hop limit follow RFC 9309, and nothing is retried by Scrapy: the error TTL
    decides when to ask again.
    """

    def __init__(
        self, crawler: Crawler, *, policy: FetchPolicy, match_policy: str = "google"
    ) -> None:
        self._crawler = crawler
        self._policy = policy
        self._match_policy = match_policy

    async def fetch(self, url: str, *, keep_body: bool = False) -> FetchOutcome:
        """Fetch ``url`` via the engine; never raises for download trouble."""
        started = time.monotonic()
        chain = RedirectChain(url)
        stats = self._crawler.stats
        assert stats is not None
        stats.inc_value("robotstxt/request_count")  # once per robots.txt, as Scrapy counts
        while True:
            remaining = self._policy.total_timeout - (time.monotonic() - started)
            try:
                if remaining <= 0:
                    raise TimeoutError("robots.txt fetch took too long")
                response = await self._download(chain.current, remaining)
            except Exception as exc:  # noqa: BLE001 - any download failure is an outcome
                stats.inc_value(f"robotstxt/exception_count/{type(exc)}")
                kind = classify_scrapy_error(exc)
                return chain.outcome(time.monotonic() - started, error=kind, detail=repr(exc))
            headers = _headers(response)
            stats.inc_value("robotstxt/response_count")
            stats.inc_value(f"robotstxt/response_status_count/{response.status}")
            if is_redirect(response.status, headers):
                error = await chain.follow(headers.get("Location"), self._policy)
                if error is None:
                    continue
                return chain.outcome(time.monotonic() - started, response.status, error=error)
            return self._outcome(chain, response, headers, started, keep_body)

    async def aclose(self) -> None:
        """Nothing to release: the engine belongs to Scrapy."""

    async def _download(self, url: str, timeout: float) -> Response:
        request = Request(
            url,
            priority=RobotsTxtMiddleware.DOWNLOAD_PRIORITY,
            dont_filter=True,
            callback=NO_CALLBACK,
            meta={
                "dont_obey_robotstxt": True,
                "dont_redirect": True,
                "dont_retry": True,
                "handle_httpstatus_all": True,
                "download_timeout": timeout,
                "download_maxsize": max(_DECOMPRESSED_CAP, 4 * self._policy.max_bytes),
                _META_FLAG: self._policy.max_bytes,
            },
        )
        engine = self._crawler.engine
        assert engine is not None
        return await engine.download_async(request)

    def _outcome(
        self,
        chain: RedirectChain,
        response: Response,
        headers: Mapping[str, str],
        started: float,
        keep_body: bool,
    ) -> FetchOutcome:
        elapsed = time.monotonic() - started
        if not 200 <= response.status < 300:
            return chain.outcome(elapsed, response.status, headers=headers)
        parser = RobotsParser(self._match_policy, max_bytes=self._policy.max_bytes)
        parser.feed(response.body)
        truncated = parser.truncated or "download_stopped" in response.flags
        robots = parser.close()
        body = response.body[: self._policy.max_bytes] if keep_body else None
        return chain.outcome(
            elapsed,
            response.status,
            headers=headers,
            robots=robots,
            bytes_read=parser.bytes_seen,
            truncated=truncated,
            body=body,
        )


def _headers(response: Response) -> dict[str, str]:
    """The response headers a fetch decision reads, as text."""
    found = {}
    for name in ("Location", "Cache-Control", "Retry-After"):
        value = response.headers.get(name)
        if value is not None:
            found[name] = value.decode("latin-1")
    return found


def classify_scrapy_error(exc: BaseException) -> ErrorKind:
    """Map a Twisted or Scrapy download exception to an :data:`ErrorKind`."""
    name = type(exc).__name__
    if isinstance(exc, TimeoutError) or name in ("TimeoutError", "TCPTimedOutError"):
        return "timeout"
    if name == "DNSLookupError":
        return "dns"
    if name in ("ConnectionRefusedError", "ConnectError", "NoRouteError"):
        return "connect"
    if "SSL" in name or "TLS" in name or (name == "Error" and "OpenSSL" in type(exc).__module__):
        return "tls"
    if name in ("ConnectionLost", "ConnectionDone", "ResponseFailed", "ResponseNeverReceived"):
        return "reset"
    return "protocol"


class RobotsTxtMiddleware:
    """Drop-in replacement for Scrapy's RobotsTxtMiddleware, with RFC 9309 semantics.

    Same settings, ``dont_obey_robotstxt`` meta, stats names and ``robots_parsed``
    signal as Scrapy's; in addition: 429/5xx/network errors disallow (not a parsed
    error page), entries expire (24 h, Cache-Control, error back-off), http and
    https are separate origins, at most 500 KiB is parsed, and Crawl-delay (or
    Request-rate) raises the download slot's delay, capped by
    ``ROBOTSASYNC_MAX_CRAWL_DELAY`` (30 s).
    """

    DOWNLOAD_PRIORITY: int = 1000

    def __init__(self, crawler: Crawler) -> None:
        settings = crawler.settings
        if not settings.getbool("ROBOTSTXT_OBEY"):
            raise NotConfigured
        self.crawler = crawler
        self._default_useragent: str = settings.get("USER_AGENT", "Scrapy")
        self._robotstxt_useragent: str | None = settings.get("ROBOTSTXT_USER_AGENT")
        self._policy = fetch_policy_from(settings)
        match_policy = settings.get("ROBOTSASYNC_POLICY", "google")
        fetcher = ScrapyFetcher(crawler, policy=self._policy, match_policy=match_policy)
        self.cache = RobotsCache(
            fetcher,
            policy=self._policy,
            max_entries=settings.getint("ROBOTSASYNC_MAX_ENTRIES", 10_000),
            store=_store_from(settings),
            match_policy=match_policy,
        )
        self._apply_delay = settings.getbool("ROBOTSASYNC_CRAWL_DELAY", True)
        self._max_delay = settings.getfloat("ROBOTSASYNC_MAX_CRAWL_DELAY", 30.0)
        self._announced: dict[Origin, CacheEntry] = {}
        crawler.signals.connect(self._bytes_received, signal=signals.bytes_received)
        crawler.signals.connect(self._spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        """Build the middleware (NotConfigured unless ROBOTSTXT_OBEY is true)."""
        return cls(crawler)

    async def process_request(self, request: Request, spider: Any = None) -> None:
        """Wait for the origin's robots.txt and drop the request if it is disallowed."""
        if request.meta.get("dont_obey_robotstxt"):
            return
        try:
            origin = Origin.from_url(request.url)
        except InvalidURLError:
            return  # data:, file:, s3: ... robots.txt does not govern them
        entry, _ = await self.cache.get(origin)
        await self._announce(origin, entry, request)
        token = product_token(self._user_agent(request))
        verdict = entry.robots.explain(request.url, robots_token=token)
        if not verdict.allowed:
            self._forbid(request, entry, verdict.line, str(verdict.rule or verdict.reason))
        if self._apply_delay:
            self._pace(request, entry.robots, token)

    def _user_agent(self, request: Request) -> str:
        if self._robotstxt_useragent:
            return self._robotstxt_useragent
        header = request.headers.get(b"User-Agent")
        return _text(header) if header else self._default_useragent

    def _forbid(self, request: Request, entry: CacheEntry, line: int, why: str) -> None:
        stats = self.crawler.stats
        assert stats is not None
        stats.inc_value("robotstxt/forbidden")
        if entry.source in ("unreachable", "stale"):
            stats.inc_value(f"robotsasync/forbidden/{entry.source}")
        logger.debug(
            "Forbidden by robots.txt: %(request)s (%(why)s, line %(line)d, %(source)s)",
            {"request": request, "why": why, "line": line, "source": entry.source},
            extra={"spider": self.crawler.spider},
        )
        raise IgnoreRequest("Forbidden by robots.txt")

    def _pace(self, request: Request, robots: RobotsTxt, token: str) -> None:
        """Raise the download slot's delay to the site's Crawl-delay (capped)."""
        delay = robots.crawl_delay(robots_token=token) or 0.0
        rate = robots.request_rate(robots_token=token)
        if rate is not None:
            delay = max(delay, rate.delay)
        delay = min(delay, self._max_delay)
        engine = self.crawler.engine
        if delay <= 0 or engine is None:
            return
        _, slot = engine.downloader._get_slot(request)  # Scrapy's own call: creates it if new
        if slot.delay < delay:
            slot.delay = delay
            slot.jitter = 0.0  # jitter would let some requests come sooner than asked
            self.crawler.stats.inc_value("robotsasync/crawl_delay_applied")

    async def _announce(self, origin: Origin, entry: CacheEntry, request: Request) -> None:
        """Send ``robots_parsed`` once per fetched entry (as Scrapy does per download)."""
        if self._announced.get(origin) is entry:
            return
        self._announced[origin] = entry
        if len(self._announced) > 2 * self.cache.stats.entries + 100:
            self._announced = {o: e for o, e in self._announced.items() if e is self.cache.peek(o)}
        stats = self.crawler.stats
        assert stats is not None
        stats.inc_value(f"robotsasync/source/{entry.source}")
        if entry.outcome.truncated:
            stats.inc_value("robotsasync/truncated")
        if entry.outcome.status is not None:
            await self.crawler.signals.send_catch_log_async(
                signal=signals.robots_parsed,
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
        """Record the cache's counters (robotsasync/cache/<name>) and close it."""
        stats = self.crawler.stats
        if stats is not None:
            for name, value in dataclasses.asdict(self.cache.stats).items():
                stats.set_value(f"robotsasync/cache/{name}", value)
        await self.cache.aclose()


def fetch_policy_from(settings: BaseSettings) -> FetchPolicy:
    """The :class:`FetchPolicy` described by ``ROBOTSASYNC_*`` settings."""
    name = settings.get("ROBOTSASYNC_FETCH_POLICY", "rfc9309")
    try:
        preset = _FETCH_PRESETS[name]
    except KeyError:
        choices = ", ".join(sorted(_FETCH_PRESETS))
        raise NotConfigured(f"ROBOTSASYNC_FETCH_POLICY must be one of {choices}") from None
    return preset(
        max_bytes=settings.getint("ROBOTSASYNC_MAX_BYTES", DEFAULT_MAX_BYTES),
        total_timeout=settings.getfloat("ROBOTSASYNC_TIMEOUT", 30.0),
        forbidden=settings.get("ROBOTSASYNC_FORBIDDEN", "allow"),
    )


def _store_from(settings: BaseSettings) -> RobotsStore | None:
    url = settings.get("ROBOTSASYNC_REDIS_URL")
    if not url:
        return None
    from .redis import RedisStore

    return RedisStore(url, prefix=settings.get("ROBOTSASYNC_REDIS_PREFIX", "robots_async"))
