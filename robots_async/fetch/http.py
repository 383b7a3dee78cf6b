"""HTTP details shared by every fetcher: redirect chains, cache headers, address checks.

Kept apart from the aiohttp fetcher so that the Scrapy adapter, which downloads
through Scrapy's engine, makes exactly the same decisions.
"""

from __future__ import annotations

import asyncio
import re
import socket
import time
from datetime import timezone
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING
from urllib.parse import urljoin

from ..core.url import Origin
from .addresses import ip_or_none, is_public
from .deadline import within
from .outcome import FetchOutcome, observed_headers

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..core.robots import RobotsTxt
    from .addresses import IPAddress, PublicAddress
    from .outcome import ErrorKind
    from .policy import FetchPolicy

__all__ = ["REDIRECT_STATUSES", "RedirectChain", "is_redirect", "max_age", "retry_after"]

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_EMPTY_AUTHORITY = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:///")
#: RFC 9111 §1.2.2: a larger delta-seconds (or an overflowing sum) counts as 2**31.
DELTA_MAX = 2**31
#: Longer than any HTTP-date (29 characters in the preferred form): not a date.
_MAX_DATE = 64


def is_redirect(status: int, headers: Mapping[str, str]) -> bool:
    """True for the statuses we follow: 301/302/303/307/308, or any 3xx with a Location."""
    return status in REDIRECT_STATUSES or (300 <= status < 400 and "Location" in headers)


class RedirectChain:
    """Where a robots.txt fetch stands after its redirects, and how it ended."""

    __slots__ = ("count", "current", "origin", "precheck", "url", "visited")

    def __init__(self, url: str, *, precheck: PublicAddress | None = is_public) -> None:
        """:param precheck: which addresses are public, to apply ``private_redirects``
        by looking hosts up here (for fetchers that cannot see the connection's
        address); None when the fetcher checks the address it connects to."""
        self.url = url
        self.precheck = precheck
        self.origin = Origin.from_url(url)
        self.current = url
        self.count = 0
        self.visited = {url}

    async def follow(
        self, location: str | None, policy: FetchPolicy, timeout: float | None = None
    ) -> ErrorKind | None:
        """Move to the redirect target, or return why the chain must stop.

        RFC 9309 §2.3.1.2: follow at least five redirects, across hosts; more than
        that (or a loop, or a bad Location) leaves the file unavailable.

        ``timeout``: seconds left of the fetch, which the precheck's own lookups may
        take at most ("timeout" past them); None: unbounded.
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
        if self.precheck is not None and policy.private_redirects == "block":
            # Its lookups (getaddrinfo, the system resolver's own timeouts) are held
            # to the fetch's deadline: a hung name ran the fetch past total_timeout.
            try:
                if timeout is not None and timeout <= 0:
                    raise asyncio.TimeoutError
                async with within(timeout):
                    leaves = await _leaves_public(
                        Origin.from_url(self.current).host, target_origin.host, self.precheck
                    )
            except asyncio.TimeoutError:
                return "timeout"
            if leaves:
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
        body_sha256: str | None = None,
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
            body_sha256=body_sha256,
        )


def max_age(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Freshness lifetime in seconds, clamped to [0, 2**31]; None when nothing says.

    RFC 9111 §4.2.1: s-maxage wins over max-age (first occurrence of each); without
    them Expires minus Date. ``no-store`` and an unscoped ``no-cache`` mean 0; a
    field-scoped ``no-cache="Set-Cookie"`` only restricts those fields (§5.2.2.4), so
    it leaves the response cacheable.
    """
    value = headers.get("Cache-Control")
    if value:
        directives = cache_directives(value)
        if "no-store" in directives or directives.get("no-cache", "") is None:
            return 0.0
        for name in ("s-maxage", "max-age"):
            if name in directives:
                # An invalid value makes the response stale (RFC 9111 §4.2.1).
                return delta_seconds(directives[name] or "") or 0.0
    expires = headers.get("Expires")
    if expires is None:
        return None
    when = http_date(expires)
    if when is None:
        return 0.0  # RFC 9111 §5.3: an invalid Expires ("0") is in the past
    return _clamp(when - _date(headers, now))


def retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Retry-After in seconds (delta-seconds, or an HTTP-date minus Date), clamped."""
    value = (headers.get("Retry-After") or "").strip()
    if not value:
        return None
    seconds = delta_seconds(value)
    if seconds is not None:
        return seconds
    when = http_date(value)
    return None if when is None else _clamp(when - _date(headers, now))


def cache_directives(value: str) -> dict[str, str | None]:
    """Cache-Control directives by lower-cased name (first occurrence wins).

    The value is None for a bare directive and the unquoted argument otherwise;
    commas inside a quoted string do not split (``no-cache="a, b"``).
    """
    directives: dict[str, str | None] = {}
    for part in _split_list(value):
        name, eq, argument = part.partition("=")
        name = name.strip().lower()
        if not name or name in directives:
            continue
        argument = argument.strip()
        if len(argument) >= 2 and argument[0] == argument[-1] == '"':
            argument = argument[1:-1]
        directives[name] = argument if eq else None
    return directives


def delta_seconds(text: str) -> float | None:
    """RFC 9111 §1.2.2 delta-seconds, saturating at 2**31; None if not 1*DIGIT.

    Measured on the digits' count before any int() (Python refuses to convert
    more than 4,300 digits, and float() of a 400-digit int overflows).
    """
    text = text.strip()
    if not text or not text.isascii() or not text.isdigit():
        return None
    digits = text.lstrip("0") or "0"
    if len(digits) > len(str(DELTA_MAX)):
        return float(DELTA_MAX)
    return float(min(int(digits), DELTA_MAX))


def http_date(value: str) -> float | None:
    """An HTTP-date as a POSIX timestamp (a zone-less date is UTC); None if invalid."""
    if len(value) > _MAX_DATE:
        return None
    try:
        when = parsedate_to_datetime(value.strip())
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        return when.timestamp()
    except (TypeError, ValueError, IndexError, OverflowError, OSError):
        return None


def _date(headers: Mapping[str, str], now: float | None) -> float:
    """The response's Date (the server's clock, so skew cancels out), else ``now``."""
    date = http_date(headers.get("Date") or "")
    if date is not None:
        return date
    return time.time() if now is None else now


def _clamp(seconds: float) -> float:
    return min(max(seconds, 0.0), float(DELTA_MAX))


def _split_list(value: str) -> list[str]:
    """Split an HTTP list on commas outside quoted strings (RFC 9110 §5.6.1, §5.6.4)."""
    parts: list[str] = []
    start = 0
    quoted = escaped = False
    for index, char in enumerate(value):
        if escaped:
            escaped = False
        elif quoted and char == "\\":
            escaped = True
        elif char == '"':
            quoted = not quoted
        elif char == "," and not quoted:
            parts.append(value[start:index])
            start = index + 1
    parts.append(value[start:])
    return parts


async def _leaves_public(current: str, target: str, public: PublicAddress = is_public) -> bool:
    """True if ``current`` reaches a public address and ``target`` a non-public one.

    Separate lookups from the connection's, so DNS rebinding can defeat this:
    the best a fetcher that cannot see its connection's address can do.
    """
    targets = await _addresses(target)
    if all(public(address) for address in targets):
        return False
    return any(public(address) for address in await _addresses(current))


async def _addresses(host: str) -> list[IPAddress]:
    """``host``'s addresses (itself if a literal); none if the lookup fails."""
    literal = ip_or_none(host)
    if literal is not None:
        return [literal]
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except OSError:
        return []  # the fetch itself will report the DNS failure
    found = (ip_or_none(str(info[4][0])) for info in infos)
    return [address for address in found if address is not None]
