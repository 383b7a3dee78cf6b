"""HTTP details shared by every fetcher: redirect chains, cache headers, address checks.

Kept apart from the aiohttp fetcher so that the Scrapy adapter, which downloads
through Scrapy's engine, makes exactly the same decisions.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
import time
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING
from urllib.parse import urljoin

from ._outcome import FetchOutcome
from ._records import observed_headers
from ._url import Origin

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ._fetch_policy import FetchPolicy
    from ._outcome import ErrorKind
    from ._robots import RobotsTxt

__all__ = ["REDIRECT_STATUSES", "RedirectChain", "is_redirect", "max_age", "retry_after"]

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_EMPTY_AUTHORITY = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:///")
_MAX_AGE = re.compile(r"(?:^|[,\s])(s-maxage|max-age)\s*=\s*\"?(\d+)", re.IGNORECASE)
_NO_CACHE = re.compile(r"(?:^|[,\s])(no-store|no-cache)\b", re.IGNORECASE)


def is_redirect(status: int, headers: Mapping[str, str]) -> bool:
    """True for the statuses we follow: 301/302/303/307/308, or any 3xx with a Location."""
    return status in REDIRECT_STATUSES or (300 <= status < 400 and "Location" in headers)


class RedirectChain:
    """Where a robots.txt fetch stands after its redirects, and how it ended."""

    __slots__ = ("count", "current", "origin", "url", "visited")

    def __init__(self, url: str) -> None:
        self.url = url
        self.origin = Origin.from_url(url)
        self.current = url
        self.count = 0
        self.visited = {url}

    async def follow(self, location: str | None, policy: FetchPolicy) -> ErrorKind | None:
        """Move to the redirect target, or return why the chain must stop.

        RFC 9309 §2.3.1.2: follow at least five redirects, across hosts; more than
        that (or a loop, or a bad Location) leaves the file unavailable.
        """
        location = (location or "").strip()
        if not location or _EMPTY_AUTHORITY.match(location):
            # "http:///x": urljoin would borrow the current host (RFC 9110 §4.2.1
            # makes an http URI without a host invalid).
            return "bad-redirect"
        try:
            target = urljoin(self.current, location)
            target_origin = Origin.from_url(target)
        except ValueError:  # InvalidURLError, or urljoin on "http://[::1" and the like
            return "bad-redirect"
        if target in self.visited:
            return "redirect-loop"
        if self.count >= policy.max_hops:
            self.count += 1
            return "redirect-limit"
        if not policy.cross_origin_redirects and target_origin != self.origin:
            return "blocked-redirect"
        if policy.block_private_redirects and await is_private_host(target_origin.host):
            return "blocked-redirect"
        self.current = target
        self.visited.add(target)
        self.count += 1
        return None

    def outcome(
        self,
        elapsed: float,
        status: int | None = None,
        *,
        error: ErrorKind | None = None,
        detail: str = "",
        headers: Mapping[str, str] | None = None,
        robots: RobotsTxt | None = None,
        bytes_read: int = 0,
        truncated: bool = False,
        body: bytes | None = None,
    ) -> FetchOutcome:
        """The :class:`FetchOutcome` of this chain."""
        return FetchOutcome(
            url=self.url,
            final_url=self.current,
            status=status,
            hops=self.count,
            bytes_read=bytes_read,
            truncated=truncated,
            error=error,
            error_detail=detail,
            elapsed=elapsed,
            max_age=max_age(headers) if headers is not None else None,
            retry_after=retry_after(headers) if headers is not None else None,
            robots=robots,
            body=body,
            headers=observed_headers(headers) if headers is not None else (),
        )


def max_age(headers: Mapping[str, str]) -> float | None:
    """Seconds from Cache-Control (s-maxage wins over max-age; no-store/no-cache: 0)."""
    value = headers.get("Cache-Control")
    if not value:
        return None
    if _NO_CACHE.search(value):
        return 0.0
    ages = {name.lower(): int(seconds) for name, seconds in _MAX_AGE.findall(value)}
    age = ages.get("s-maxage", ages.get("max-age"))
    return float(age) if age is not None else None


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Retry-After as seconds (delta-seconds or an HTTP date)."""
    value = (headers.get("Retry-After") or "").strip()
    if not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


async def is_private_host(host: str) -> bool:
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
