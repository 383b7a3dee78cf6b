"""ScrapyFetcher: robots.txt downloaded through Scrapy's own engine (proxies, headers and
middlewares apply), with RFC 9309 hops and the SSRF guard."""

from __future__ import annotations

import hashlib
import logging
import time
import zlib
from typing import TYPE_CHECKING, Protocol

try:
    from scrapy import Request
    from scrapy.exceptions import IgnoreRequest
    from scrapy.http.request import NO_CALLBACK
except ImportError as exc:  # pragma: no cover - exercised without Scrapy installed
    raise ImportError(
        "robots_async.contrib.scrapy needs Scrapy: pip install 'robots-async[scrapy]'"
    ) from exc

from ..cache.records import SHARED_HEADERS
from ..core.parser import RobotsParser
from ..fetch.addresses import is_public
from ..fetch.codings import CodingPlan, decode_whole, plan
from ..fetch.http import RedirectChain, is_redirect
from ._scrapy_errors import classify_scrapy_error
from ._scrapy_guard import PeerGuard, peer_address

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from ..core.policy import PolicyName
    from ..fetch.addresses import PublicAddress
    from ..fetch.outcome import ErrorKind, FetchOutcome
    from ..fetch.policy import FetchPolicy
    from ._scrapy_waiting import WaitingRequests

__all__ = ["ROBOTS_PRIORITY", "ScrapyFetcher", "Validators"]


logger = logging.getLogger("robots_async.contrib.scrapy")

#: Decompressed bytes Scrapy may produce for a robots.txt (guards against bombs;
#: the parser itself stops at max_bytes).
_DECOMPRESSED_CAP = 8 * 1024 * 1024

_META_FLAG = "robotsasync_fetch"

#: Scheduler priority of robots.txt requests: ahead of the pages waiting for them.
ROBOTS_PRIORITY = 1000

#: The outcome of a robots.txt request another middleware dropped (IgnoreRequest):
#: "unavailable", like a 4xx, as Scrapy treats it (never shared through a store:
#: another worker's middlewares may let it through).
_IGNORED: ErrorKind = "ignored"


class Validators(Protocol):
    """What the cache passes to make a refresh conditional (RFC 9111 §4.3.1)."""

    def request_headers(self, url: str) -> dict[str, str]:
        """``If-None-Match`` / ``If-Modified-Since`` for ``url`` (none for another URL)."""
        ...


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
        waiting: WaitingRequests | None = None,
    ) -> None:
        self._crawler = crawler
        self._policy = policy
        self._match_policy = match_policy
        self._public = public_address
        self._waiting = waiting

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
                left = self._policy.total_timeout - (time.monotonic() - started)
                error = await chain.follow(headers.get("Location"), self._policy, left)
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
            priority=ROBOTS_PRIORITY,
            dont_filter=True,
            callback=NO_CALLBACK,
            meta=meta,
        )
        engine = self._crawler.engine
        assert engine is not None
        if self._waiting is None:
            return request, await engine.download_async(request)
        # Bounded by the fetch lanes, not by the pages' CONCURRENT_REQUESTS.
        with self._waiting.waiting(request, always=True):
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
        body = response.body
        # Codings Scrapy left undone (unsupported, or HttpCompressionMiddleware off)
        # are still in the header; their bytes are not text (once parsed: allow all).
        coding = plan(
            [v.decode("latin-1") for v in response.headers.getlist("Content-Encoding")],
            client_decodes=False,
        )
        if coding.action == "decode":
            try:
                body = decode_whole(body, coding.codings, self._policy.max_bytes)
            except zlib.error as exc:
                coding = CodingPlan("refuse", coding.codings, f"bad content encoding: {exc}")
        if coding.action == "refuse":
            return chain.outcome(elapsed, response.status, error="protocol", detail=coding.reason)
        parser = RobotsParser(self._match_policy, max_bytes=self._policy.max_bytes)
        parser.feed(body)
        truncated = parser.truncated or "download_stopped" in response.flags
        robots = parser.close()
        parsed = body[: self._policy.max_bytes]
        kept = parsed if keep_body else None
        return chain.outcome(
            elapsed,
            response.status,
            headers=headers,
            robots=robots,
            bytes_read=parser.bytes_seen,
            truncated=truncated,
            body=kept,
            body_sha256=hashlib.sha256(parsed).hexdigest(),
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
