"""Fetching robots.txt over HTTP: the only core module that touches the network.

:class:`AiohttpFetcher` runs its own redirect loop (so every hop is counted and
checked), streams the body into :class:`RobotsParser` and stops at ``max_bytes``
of *decoded* data (a gzip bomb ends there), all within one total deadline. Whatever
happens is returned as a :class:`FetchOutcome`; nothing is raised.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
import time
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Protocol, runtime_checkable
from urllib.parse import urljoin

import aiohttp

from ._errors import InvalidURLError
from ._fetch_policy import FetchPolicy
from ._outcome import ErrorKind, FetchOutcome
from ._parser import RobotsParser
from ._url import Origin

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ._policy import MatchPolicy

__all__ = ["AiohttpFetcher", "Fetcher", "classify_error"]

_CHUNK = 64 * 1024
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_MAX_AGE = re.compile(r"(?:^|[,\s])(s-maxage|max-age)\s*=\s*\"?(\d+)", re.IGNORECASE)
_NO_CACHE = re.compile(r"(?:^|[,\s])(no-store|no-cache)\b", re.IGNORECASE)


@runtime_checkable
class Fetcher(Protocol):
    """Fetches one robots.txt URL; never raises for network or HTTP trouble."""

    async def fetch(self, url: str, *, keep_body: bool = False) -> FetchOutcome:
        """Fetch ``url`` (following redirects) and report what happened."""
        ...

    async def aclose(self) -> None:
        """Release what the fetcher owns."""
        ...


class AiohttpFetcher:
    """:class:`Fetcher` over an :class:`aiohttp.ClientSession`.

    :param session: a session to use (left open on :meth:`aclose`); by default one
        is created on first use and closed by :meth:`aclose`.
    :param user_agent: the crawler's User-Agent header, sent with every request.
    :param policy: limits and timeouts (:class:`FetchPolicy`).
    :param match_policy: how bodies are parsed (``"google"`` by default).
    :param headers: extra request headers.
    """

    def __init__(
        self,
        session: aiohttp.ClientSession | None = None,
        *,
        user_agent: str,
        policy: FetchPolicy | None = None,
        match_policy: str | MatchPolicy = "google",
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self._session = session
        self._owns_session = session is None
        self._policy = policy or FetchPolicy()
        self._match_policy = match_policy
        self._headers = {**(headers or {}), "User-Agent": user_agent}
        self._closed = False

    @property
    def policy(self) -> FetchPolicy:
        """The limits this fetcher applies."""
        return self._policy

    async def aclose(self) -> None:
        """Close the session if this fetcher created it."""
        self._closed = True
        if self._owns_session and self._session is not None:
            await self._session.close()
            self._session = None

    async def fetch(self, url: str, *, keep_body: bool = False) -> FetchOutcome:
        """Fetch ``url``, following at most ``policy.max_hops`` redirects."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        deadline = started + self._policy.total_timeout
        hop = _Hop(url)
        try:
            return await self._follow(hop, deadline, keep_body, started)
        except (asyncio.TimeoutError, aiohttp.ClientError, OSError, ValueError) as exc:
            kind = classify_error(exc, hop.count)
            return hop.outcome(loop.time() - started, error=kind, detail=_describe(exc))

    async def _follow(
        self, hop: _Hop, deadline: float, keep_body: bool, started: float
    ) -> FetchOutcome:
        loop = asyncio.get_running_loop()
        session = self._get_session()
        origin = Origin.from_url(hop.url)
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise asyncio.TimeoutError
            timeout = aiohttp.ClientTimeout(
                total=remaining, connect=min(self._policy.connect_timeout, remaining)
            )
            async with session.get(
                hop.current,
                allow_redirects=False,
                headers=self._headers,
                timeout=timeout,
                middlewares=(),  # never our own (or anyone's) robots middleware
            ) as response:
                status = response.status
                if status in _REDIRECTS or (300 <= status < 400 and "Location" in response.headers):
                    error = await self._redirect(hop, response, origin)
                    if error is not None:
                        return hop.outcome(loop.time() - started, status=status, error=error)
                    continue
                max_age = _max_age(response.headers)
                retry_after = _retry_after(response.headers)
                if not 200 <= status < 300:
                    return hop.outcome(
                        loop.time() - started, status, max_age=max_age, retry_after=retry_after
                    )
                body = await self._read(response, keep_body)
                return hop.outcome(
                    loop.time() - started,
                    status,
                    max_age=max_age,
                    retry_after=retry_after,
                    body=body,
                )

    async def _redirect(
        self, hop: _Hop, response: aiohttp.ClientResponse, origin: Origin
    ) -> ErrorKind | None:
        """Move ``hop`` to the redirect target, or say why not."""
        location = response.headers.get("Location", "").strip()
        if not location:
            return "bad-redirect"
        target = urljoin(hop.current, location)
        try:
            target_origin = Origin.from_url(target)
        except InvalidURLError:
            return "bad-redirect"
        if target in hop.visited:
            return "redirect-loop"
        if hop.count >= self._policy.max_hops:
            hop.count += 1
            return "redirect-limit"
        if not self._policy.cross_origin_redirects and target_origin != origin:
            return "blocked-redirect"
        if self._policy.block_private_redirects and await _is_private(target_origin.host):
            return "blocked-redirect"
        hop.advance(target)
        return None

    async def _read(self, response: aiohttp.ClientResponse, keep_body: bool) -> _Body:
        """Stream the decoded body into the parser; stop at max_bytes."""
        limit = self._policy.max_bytes
        parser = RobotsParser(self._match_policy, max_bytes=limit)
        kept: list[bytes] = []
        async for chunk in response.content.iter_chunked(_CHUNK):
            parser.feed(chunk)
            if keep_body:
                kept.append(chunk[: max(limit - sum(map(len, kept)), 0)])
            if parser.truncated:
                # Content after the limit is ignored (RFC 9309 §2.5): drop the
                # connection rather than download the rest.
                response.close()
                break
        return _Body(
            parser.close(),
            parser.bytes_seen,
            parser.truncated,
            b"".join(kept) if keep_body else None,
        )

    def _get_session(self) -> aiohttp.ClientSession:
        if self._closed:
            from ._errors import ClosedError

            raise ClosedError("fetcher is closed")
        if self._session is None:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300),
            )
        return self._session


class _Body:
    __slots__ = ("bytes_read", "raw", "robots", "truncated")

    def __init__(self, robots: object, bytes_read: int, truncated: bool, raw: bytes | None):
        self.robots = robots
        self.bytes_read = bytes_read
        self.truncated = truncated
        self.raw = raw


class _Hop:
    """Where the redirect chain stands."""

    __slots__ = ("count", "current", "url", "visited")

    def __init__(self, url: str) -> None:
        self.url = url
        self.current = url
        self.count = 0
        self.visited = {url}

    def advance(self, target: str) -> None:
        self.current = target
        self.visited.add(target)
        self.count += 1

    def outcome(
        self,
        elapsed: float,
        status: int | None = None,
        *,
        error: ErrorKind | None = None,
        detail: str = "",
        max_age: float | None = None,
        retry_after: float | None = None,
        body: _Body | None = None,
    ) -> FetchOutcome:
        return FetchOutcome(
            url=self.url,
            final_url=self.current,
            status=status,
            hops=self.count,
            bytes_read=body.bytes_read if body else 0,
            truncated=body.truncated if body else False,
            error=error,
            error_detail=detail,
            elapsed=elapsed,
            max_age=max_age,
            retry_after=retry_after,
            robots=body.robots if body else None,  # type: ignore[arg-type]
            body=body.raw if body else None,
        )


def classify_error(exc: BaseException, hops: int = 0) -> ErrorKind:
    """Map an exception from aiohttp or the OS to an :data:`ErrorKind`."""
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return "timeout"
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        return "dns"
    if isinstance(exc, (aiohttp.ClientConnectorCertificateError, aiohttp.ClientSSLError)):
        return "tls"
    if isinstance(exc, aiohttp.ClientConnectorError):
        return "dns" if isinstance(exc.os_error, socket.gaierror) else "connect"
    if isinstance(exc, aiohttp.InvalidURL):
        return "bad-redirect" if hops else "protocol"
    if isinstance(exc, aiohttp.ClientPayloadError):
        # Broken chunking or encoding is a protocol error; a cut body is a reset.
        cause = str(exc).lower()
        return "protocol" if "encoding" in cause and "not completed" not in cause else "reset"
    if isinstance(exc, (aiohttp.ServerDisconnectedError, ConnectionError)):
        return "reset"
    if isinstance(exc, aiohttp.ClientOSError):
        return "reset" if isinstance(exc.__cause__, ConnectionError) else "connect"
    return "protocol"


def _describe(exc: BaseException) -> str:
    text = str(exc)[:200]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _max_age(headers: Mapping[str, str]) -> float | None:
    """Seconds from Cache-Control (s-maxage wins over max-age; no-store/no-cache: 0)."""
    value = headers.get("Cache-Control")
    if not value:
        return None
    if _NO_CACHE.search(value):
        return 0.0
    ages = {name.lower(): int(seconds) for name, seconds in _MAX_AGE.findall(value)}
    age = ages.get("s-maxage", ages.get("max-age"))
    return float(age) if age is not None else None


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Retry-After as seconds (delta-seconds or an HTTP date)."""
    value = headers.get("Retry-After", "").strip()
    if not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


async def _is_private(host: str) -> bool:
    """True if ``host`` is, or resolves to, a loopback, private or link-local address."""
    try:
        addresses = [ipaddress.ip_address(host)]
    except ValueError:
        loop = asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(host, None, type=socket.SOCK_STREAM)
        except OSError:
            return False  # the fetch itself will report the DNS failure
        addresses = [ipaddress.ip_address(info[4][0]) for info in infos]
    return any(
        a.is_loopback or a.is_private or a.is_link_local or a.is_reserved or a.is_unspecified
        for a in addresses
    )
