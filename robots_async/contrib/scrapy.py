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

import dataclasses
import logging
import os
import time
from typing import TYPE_CHECKING, Any, Protocol

try:
    from scrapy import Request, signals
    from scrapy.exceptions import IgnoreRequest, NotConfigured, StopDownload
    from scrapy.http.request import NO_CALLBACK
    from scrapy.robotstxt import RobotParser as _ScrapyRobotParser
except ImportError as exc:  # pragma: no cover - exercised without Scrapy installed
    raise ImportError(
        "robots_async.contrib.scrapy needs Scrapy: pip install 'robots-async[scrapy]'"
    ) from exc

from ..cache.cache import RobotsCache
from ..cache.records import SHARED_HEADERS
from ..core.agent import product_token
from ..core.errors import InvalidURLError
from ..core.parser import RobotsParser, parse
from ..core.url import Origin
from ..core.usage import CATEGORIES, UsagePreferences, combine_usage, usage_from_header
from ..fetch.addresses import is_public
from ..fetch.http import RedirectChain, is_redirect
from ..fetch.policy import FetchPolicy
from ._scrapy_errors import classify_scrapy_error
from ._scrapy_guard import PeerGuard, peer_address
from ._scrapy_settings import (
    SETTINGS,
    ConfigurationError,
    ConfigurationTypeError,
    ScrapyConfig,
    Setting,
    read_settings,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from typing_extensions import Self

    from ..cache.cache import CacheEntry
    from ..cache.store import RobotsStore
    from ..core.policy import PolicyName
    from ..core.robots import RobotsTxt
    from ..fetch.addresses import IPAddress, PublicAddress
    from ..fetch.outcome import ErrorKind, FetchOutcome

__all__ = [
    "SETTINGS",
    "ConfigurationError",
    "ConfigurationTypeError",
    "RobotParser",
    "RobotsTxtMiddleware",
    "ScrapyConfig",
    "ScrapyFetcher",
    "Setting",
    "classify_scrapy_error",
    "fetch_policy_from",
    "read_settings",
]

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
#: Request meta: the robots.txt usage preferences found for the request's URL.
_USAGE_META = "_robotsasync_usage"
#: Where the combined preferences are published (robots.txt rule + response header).
USAGE_META = "content_usage"
#: The outcome of a robots.txt request another middleware dropped (IgnoreRequest):
#: "unavailable", like a 4xx, as Scrapy treats it (never shared through a store:
#: another worker's middlewares may let it through).
_IGNORED: ErrorKind = "ignored"
#: Scrapy's signal after each robots.txt is parsed (Scrapy >= 2.18; None before).
_ROBOTS_PARSED = getattr(signals, "robots_parsed", None)
#: Preference -> the value in stats names (the header's own spelling).
_SHORT = {"allowed": "y", "disallowed": "n", "unknown": "unknown"}


class Validators(Protocol):
    """What the cache passes to make a refresh conditional (RFC 9111 §4.3.1)."""

    def request_headers(self, url: str) -> dict[str, str]:
        """``If-None-Match`` / ``If-Modified-Since`` for ``url`` (none for another URL)."""
        ...


def _text(value: str | bytes) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


class RobotParser(_ScrapyRobotParser):
    """``ROBOTSTXT_PARSER`` backend: robots_async's Google-exact matcher for Scrapy.

    The User-Agent Scrapy passes (``Scrapy/2.19 (+https://scrapy.org)``) is reduced
    to its product token (``Scrapy``) before matching, as RFC 9309 §2.2.1 intends.
    ``ROBOTSASYNC_POLICY`` picks the matching policy (default ``google``).
    """

    def __init__(self, robots: RobotsTxt) -> None:
        self.robots = robots

    @classmethod
    def from_crawler(cls, crawler: Crawler | None, robotstxt_body: bytes) -> Self:
        """Parse ``robotstxt_body`` with the crawler's settings (defaults without one)."""
        config = read_settings(crawler.settings if crawler is not None else None)
        robots = parse(robotstxt_body, policy=config.policy, max_bytes=config.max_bytes)
        # Scrapy keeps a parser per domain for the whole crawl: an HTML page's
        # thousand warnings are packed (~205 -> ~40 KB), as RobotsCache packs them.
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


class ScrapyFetcher:
    """A :class:`robots_async.Fetcher` that downloads through Scrapy's own engine.

    Proxies, headers and downloader middlewares apply to the robots.txt request as
    to any other. Redirects are followed here (``dont_redirect``) so hops, loops and
    the 5-hop limit follow RFC 9309, and nothing is retried by Scrapy: the error TTL
    decides when to ask again. Stats are Scrapy's: one request and at most one
    response per robots.txt, whatever the hops.

    SSRF guard (``policy.private_redirects == "block"``): a redirect from a public
    address to a non-public one is error "blocked-redirect" (disallow all), logged
    and counted in ``robotsasync/blocked_redirect``. Scrapy resolves and connects by
    itself, so:

    * before a hop is sent, its host is looked up (an IP literal is itself) by the
      system resolver and by the reactor's, which is Scrapy's: any non-public
      address refuses it and no request goes out. With Scrapy's DNS cache on (the
      default, ``DNSCACHE_ENABLED``; entries never expire) the HTTP/1.1 connection
      reuses the answer checked here, so DNS rebinding cannot pass;
    * after each hop, the address its connection actually used
      (``Response.ip_address``) is checked: if the previous hop reached a public
      address and this one a non-public one, the response is discarded unread and
      the verdict is "blocked-redirect". This catches what the first check could
      not pin (DNS cache off or evicted, the asyncio download handlers, no
      reactor), but the GET has then been sent: what is guaranteed is that nothing
      it returns is used, not that it never left;
    * not checked after the connection: a hop through a proxy (``ip_address`` is
      the proxy's) or from a handler that does not report the address (file:,
      ftp:, s3:, HttpCacheMiddleware); only the lookups before sending apply.

    No resolver is installed for robots.txt requests: ``TWISTED_DNS_RESOLVER`` is
    one per process, called with a bare host name (no request), after the request
    waited in its download slot (no context reaches it), its cache is shared with
    page downloads, kept-alive connections skip it and the asyncio download
    handlers do not use it, so it cannot be scoped to robots.txt requests.

    :param public_address: which addresses count as public (tests widen it;
        default :func:`robots_async._addresses.is_public`).
    """

    def __init__(
        self,
        crawler: Crawler,
        *,
        policy: FetchPolicy,
        match_policy: PolicyName = "google",
        public_address: PublicAddress = is_public,
    ) -> None:
        self._crawler = crawler
        self._policy = policy
        self._match_policy = match_policy
        self._public = public_address

    async def fetch(
        self, url: str, *, keep_body: bool = False, validators: Validators | None = None
    ) -> FetchOutcome:
        """Fetch ``url`` via the engine; never raises for download trouble.

        ``validators`` (from the cache, for a refresh) make the request conditional
        (``If-None-Match`` / ``If-Modified-Since``); a 304 is returned as such, and
        Scrapy's HTTP cache is bypassed so that it cannot answer 200 from disk.
        """
        started = time.monotonic()
        # Before each hop the chain (system resolver) and the guard (Scrapy's resolver,
        # whose cache the connection reuses) look its host up; after it, the guard
        # checks the address the connection used.
        chain = RedirectChain(url, precheck=self._public)
        guard = PeerGuard(self._public, block=self._policy.private_redirects == "block")
        self._inc("robotstxt/request_count")
        while True:
            remaining = self._policy.total_timeout - (time.monotonic() - started)
            try:
                if remaining <= 0:
                    raise TimeoutError("robots.txt fetch took too long")
                conditional = validators.request_headers(chain.current) if validators else {}
                request, response = await self._download(chain.current, remaining, conditional)
            except IgnoreRequest as exc:
                return self._ignored(chain, started, exc)
            except Exception as exc:  # noqa: BLE001 - any download failure is an outcome
                return self._failed(chain, started, exc)
            remaining = self._policy.total_timeout - (time.monotonic() - started)
            refused = await guard.refusal(chain.current, peer_address(request, response), remaining)
            if refused:
                self._count_response(response)  # Scrapy counts what the request ended with
                return self._blocked(chain, started, refused)
            headers = _headers(response)
            if is_redirect(response.status, headers):
                error = await chain.follow(headers.get("Location"), self._policy)
                if error is None:
                    refused = await guard.before(chain.current, remaining)
                    if not refused:
                        continue
                    self._count_response(response)
                    return self._blocked(chain, started, refused)
                self._count_response(response)
                if error == "blocked-redirect":
                    self._inc("robotsasync/blocked_redirect")
                    logger.warning(
                        "robots.txt redirect from %s to %r refused before sending "
                        "(cross-origin or public-to-non-public guard)",
                        chain.current,
                        headers.get("Location"),
                    )
                return chain.outcome(time.monotonic() - started, response.status, error=error)
            self._count_response(response)
            return self._outcome(chain, response, headers, started, keep_body)

    async def aclose(self) -> None:
        """Nothing to release: the engine belongs to Scrapy."""

    def _inc(self, key: str) -> None:
        stats = self._crawler.stats
        if stats is not None:
            stats.inc_value(key)

    def _count_response(self, response: Response) -> None:
        """Scrapy counts the response a robots.txt request ends with, not each hop."""
        self._inc("robotstxt/response_count")
        self._inc(f"robotstxt/response_status_count/{response.status}")

    def _ignored(self, chain: RedirectChain, started: float, exc: IgnoreRequest) -> FetchOutcome:
        """Another middleware dropped the request: no robots.txt, as in Scrapy."""
        self._inc("robotsasync/robots_ignored")
        logger.info(
            "robots.txt request %s dropped by a middleware (%s): allow all", chain.current, exc
        )
        detail = f"IgnoreRequest: {exc}"
        return chain.outcome(time.monotonic() - started, error=_IGNORED, detail=detail)

    def _blocked(self, chain: RedirectChain, started: float, why: str) -> FetchOutcome:
        """A hop's connection reached a non-public address after a public hop."""
        self._inc("robotsasync/blocked_redirect")
        logger.warning("robots.txt request %s: %s", chain.current, why)
        return chain.outcome(time.monotonic() - started, error="blocked-redirect", detail=why)

    def _failed(self, chain: RedirectChain, started: float, exc: Exception) -> FetchOutcome:
        self._inc(f"robotstxt/exception_count/{type(exc)}")  # Scrapy's key
        kind = classify_scrapy_error(exc)
        detail = f"{type(exc).__name__}: {exc}" if str(exc) else repr(exc)
        logger.warning("robots.txt request %s failed (%s): %s", chain.current, kind, detail)
        return chain.outcome(time.monotonic() - started, error=kind, detail=detail)

    async def _download(
        self, url: str, timeout: float, conditional: Mapping[str, str]
    ) -> tuple[Request, Response]:
        """The request as the downloader middlewares left it (``meta["proxy"]``) and
        its response."""
        meta = {
            "dont_obey_robotstxt": True,
            "dont_redirect": True,
            "dont_retry": True,
            "handle_httpstatus_all": True,
            "download_timeout": timeout,
            "download_maxsize": _download_maxsize(self._policy.max_bytes),
            _META_FLAG: self._policy.max_bytes,
        }
        if conditional:
            meta["dont_cache"] = True  # HttpCacheMiddleware must not answer from disk
        request = Request(
            url,
            headers=dict(conditional),
            priority=RobotsTxtMiddleware.DOWNLOAD_PRIORITY,
            dont_filter=True,
            callback=NO_CALLBACK,
            meta=meta,
        )
        engine = self._crawler.engine
        assert engine is not None
        return request, await engine.download_async(request)

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


def _download_maxsize(max_bytes: int | None) -> int:
    """Bytes Scrapy may download: room for compression, never unbounded (bombs)."""
    return _DECOMPRESSED_CAP if max_bytes is None else max(_DECOMPRESSED_CAP, 4 * max_bytes)


def _headers(response: Response) -> dict[str, str]:
    """The response headers a fetch decision or a shared record reads, as text."""
    found = {}
    for name in ("Location", *SHARED_HEADERS):
        value = response.headers.get(name)
        if value is not None:
            found[name] = value.decode("latin-1")
    return found


def _require_asyncio(crawler: Crawler) -> None:
    """Refuse a non-asyncio Twisted reactor at startup (the cache runs on asyncio)."""
    from scrapy.utils.asyncio import is_asyncio_available

    try:
        available = is_asyncio_available()
    except RuntimeError:  # no reactor, no running loop: built outside a crawl
        return
    if not available:
        raise ConfigurationError(
            "TWISTED_REACTOR",
            crawler.settings.get("TWISTED_REACTOR"),
            "'twisted.internet.asyncioreactor.AsyncioSelectorReactor' (Scrapy's default) or "
            "TWISTED_REACTOR_ENABLED = False: robots_async's RobotsTxtMiddleware needs "
            "asyncio (under other reactors use only the backend, ROBOTSTXT_PARSER = "
            "'robots_async.contrib.scrapy.RobotParser')",
        )


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

    DOWNLOAD_PRIORITY: int = 1000

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
        self._default_useragent: str = settings.get("USER_AGENT", "Scrapy")
        self._robotstxt_useragent: str | None = settings.get("ROBOTSTXT_USER_AGENT")
        self._policy = fetch_policy_from(config)
        fetcher = ScrapyFetcher(
            crawler,
            policy=self._policy,
            match_policy=config.policy,
            public_address=self.public_address,
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
        self._announced: dict[Origin, CacheEntry] = {}
        crawler.signals.connect(self._bytes_received, signal=signals.bytes_received)
        crawler.signals.connect(self._spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        """Build the middleware (NotConfigured unless ROBOTSTXT_OBEY is true).

        :raises ConfigurationError: for a bad ``ROBOTSASYNC_*`` setting or a non-asyncio
            reactor: Scrapy stops the crawl.
        """
        return cls(crawler)

    async def process_request(self, request: Request, spider: Any = None) -> None:
        """Wait for the origin's robots.txt; drop the request if it is disallowed, or if
        its robots.txt usage preference refuses a ``ROBOTSASYNC_REFUSE_USAGE`` category."""
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
        if self.config.crawl_delay:
            self._pace(request, entry.robots, token)
        usage = entry.robots.usage(request.url, robots_token=token)
        if usage is not None:
            # robots.txt already says "n": the response cannot make it "y" (vocab §7.1).
            self._refuse_usage(request, usage, "robots.txt")
            request.meta[_USAGE_META] = usage

    def process_response(
        self, request: Request, response: Response, spider: Any = None
    ) -> Response:
        """Publish the response's usage preferences; drop it if a refused one is "n"."""
        if _META_FLAG in request.meta:
            return response  # our own robots.txt request
        robots_usage = request.meta.pop(_USAGE_META, None) or UsagePreferences()
        values = [_text(v) for v in response.headers.getlist("Content-Usage")]
        usage = combine_usage(robots_usage, usage_from_header(values)) if values else robots_usage
        request.meta[USAGE_META] = usage
        for category in CATEGORIES:
            self._inc(f"robotsasync/content_usage/{category}/{_SHORT[usage.get(category)]}")
        self._refuse_usage(request, usage, "response")
        return response

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
        if entry.source in ("unreachable", "stale"):
            self._inc(f"robotsasync/forbidden/{entry.source}")
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
        delay = min(delay, self.config.max_crawl_delay)
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
        """Record the cache's counters (robotsasync/cache/<name>); close cache and store."""
        stats = self.crawler.stats
        if stats is not None:
            for name, value in dataclasses.asdict(self.cache.stats).items():
                stats.set_value(f"robotsasync/cache/{name}", value)
        try:
            await self.cache.aclose()
        finally:
            if self._store is not None:
                await self._store.aclose()


def fetch_policy_from(config: ScrapyConfig) -> FetchPolicy:
    """The :class:`FetchPolicy` described by the ``ROBOTSASYNC_*`` settings.

    :raises ConfigurationError: naming the Scrapy setting, for a value that passed
        the table's check but that the policy itself refuses.
    """
    preset = _FETCH_PRESETS[config.fetch_policy]
    try:
        return preset(
            max_bytes=config.max_bytes,
            total_timeout=config.timeout,
            forbidden=config.forbidden,
            private_redirects=config.private_redirects,
        )
    except ValueError as exc:
        raise _as_setting_error(exc) from exc


#: FetchPolicy fields and the settings that fill them (for the core's error messages).
_POLICY_FIELDS = {
    "max_bytes": "ROBOTSASYNC_MAX_BYTES",
    "total_timeout": "ROBOTSASYNC_TIMEOUT",
    "forbidden": "ROBOTSASYNC_FORBIDDEN",
    "private_redirects": "ROBOTSASYNC_PRIVATE_REDIRECTS",
}


def _as_setting_error(exc: ValueError) -> ConfigurationError:
    """The core's refusal of a FetchPolicy field, re-worded with the Scrapy setting."""
    field = str(getattr(exc, "setting", "")).rpartition(".")[2]
    setting = _POLICY_FIELDS.get(field, f"ROBOTSASYNC_* ({field or 'FetchPolicy'})")
    return ConfigurationError(
        setting, getattr(exc, "value", None), getattr(exc, "accepted", str(exc))
    )


def _store_from(config: ScrapyConfig, jobdir: str | None = None) -> RobotsStore | None:
    """Redis if configured; else the SQLite file (by default in JOBDIR); else none.

    :raises StoreSchemaError: a store file from a newer version (stops the crawl).
    """
    if config.redis_url is not None:
        from .redis import RedisStore

        return RedisStore(config.redis_url, prefix=config.redis_prefix)
    path = config.store
    if path is None and jobdir:
        path = os.path.join(jobdir, "robots_async.sqlite")
    if not path:
        return None
    from ..cache.sqlite import SQLiteStore

    return SQLiteStore(path)
