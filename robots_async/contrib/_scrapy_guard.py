"""The Scrapy fetcher's SSRF guard: a robots.txt redirect may not go from a public
address to a non-public one, DNS rebinding included (issue 10 §2).

Scrapy resolves and connects by itself, and its resolver (``TWISTED_DNS_RESOLVER``)
is one per process, sees a bare host name (no request, no meta) and shares its cache
with page downloads, so it cannot be narrowed to robots.txt requests. Two checks:

* before a hop is sent, its host is looked up through the reactor's resolver, the
  one Scrapy's HTTP/1.1 handler connects with. With Scrapy's DNS cache on (the
  default; its entries do not expire) the connection then reuses that very answer,
  so a non-public one is refused with nothing sent;
* after the hop, the address its connection actually used (``Response.ip_address``,
  set by Scrapy's HTTP/1.1, HTTP/2, aiohttp and httpx handlers) is checked: where the
  first check could not pin the answer (cache off or evicted, asyncio handlers, no
  reactor) a rebound hop is refused after its GET was sent, its response unread.
"""

from __future__ import annotations

import asyncio
import socket
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ..fetch.addresses import ip_or_none
from ..fetch.deadline import within

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.http import Response
    from twisted.internet.defer import Deferred

    from ..fetch.addresses import IPAddress, PublicAddress

__all__ = ["PeerGuard", "peer_address"]


def peer_address(request: Request, response: Response) -> IPAddress | None:
    """The address the response came from, if it is the site's own.

    None when the handler does not report it (file:, ftp:, s3:, a response from
    HttpCacheMiddleware) and through a proxy, where it is the proxy's address
    (HttpProxyMiddleware sets ``meta["proxy"]``, also from ``http_proxy``).
    """
    if request.meta.get("proxy"):
        return None
    address = getattr(response, "ip_address", None)
    return None if address is None else ip_or_none(str(address))


@dataclass(slots=True)
class PeerGuard:
    """Remembers where the previous hop of one fetch connected, and refuses a hop
    that went from a public address to a non-public one."""

    #: Which addresses count as public.
    public: PublicAddress
    #: ``FetchPolicy.private_redirects == "block"``.
    block: bool
    #: The previous hop's host and its peer address (None: not seen).
    previous_host: str | None = None
    previous_peer: IPAddress | None = None

    async def before(self, url: str, timeout: float) -> str:
        """Why the next hop, to ``url``, must not be sent ("" if it may): its host has
        a non-public address (as the reactor's resolver answers) after a public hop."""
        if not self.block or self.previous_host is None:
            return ""
        host = urlsplit(url).hostname or ""
        found = await reactor_addresses(host, timeout)
        private = [a for a in found or () if not self.public(a)]
        if not private or not await self._previous_was_public(timeout):
            return ""
        return (
            f"redirect from a public address to {url}, which resolves to non-public "
            f"{', '.join(map(str, private))}: refused before sending"
        )

    async def refusal(self, url: str, peer: IPAddress | None, timeout: float) -> str:
        """Why the hop to ``url`` that connected to ``peer`` is refused ("" if not);
        then remember it as the previous hop."""
        why = ""
        if (
            self.block
            and self.previous_host is not None
            and peer is not None
            and not self.public(peer)
            and await self._previous_was_public(timeout)
        ):
            why = (
                f"redirect from a public address to non-public {peer} ({url}): "
                "refused after the connection, response discarded"
            )
        self.previous_host = urlsplit(url).hostname or ""
        self.previous_peer = peer
        return why

    async def _previous_was_public(self, timeout: float) -> bool:
        """The previous hop's peer was public; unseen, any address its host has is."""
        if self.previous_peer is not None:
            return self.public(self.previous_peer)
        return any(self.public(a) for a in await _addresses(self.previous_host or "", timeout))


async def _addresses(host: str, timeout: float) -> list[IPAddress]:
    """``host``'s addresses (itself if a literal); none if the lookup fails or is slow."""
    literal = ip_or_none(host)
    if literal is not None:
        return [literal]
    loop = asyncio.get_running_loop()
    try:
        async with within(max(timeout, 0.1)):
            infos = await loop.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, asyncio.TimeoutError):
        return []
    found = (ip_or_none(str(info[4][0])) for info in infos)
    return [address for address in found if address is not None]


async def reactor_addresses(host: str, timeout: float) -> list[IPAddress] | None:
    """``host``'s addresses as the Twisted reactor's resolver (Scrapy's, which also
    caches them for the connection) answers; None without a reactor; [] on failure."""
    literal = ip_or_none(host)
    if literal is not None:
        return [literal]
    if "twisted.internet.reactor" not in sys.modules:
        return None  # TWISTED_REACTOR_ENABLED = False: importing it would install one
    from twisted.internet import reactor
    from twisted.internet.defer import Deferred

    done: Deferred[list[IPAddress]] = Deferred()
    reactor.nameResolver.resolveHostName(_Receiver(done), host)
    try:
        async with within(max(timeout, 0.1)):
            return await done.asFuture(asyncio.get_running_loop())
    except asyncio.TimeoutError:
        return []


@dataclass(slots=True)
class _Receiver:
    """Collects one resolution's addresses (Twisted's IResolutionReceiver)."""

    done: Deferred[list[IPAddress]]
    found: list[IPAddress] = field(default_factory=list)

    def resolutionBegan(self, resolution: object) -> None:  # noqa: N802 - Twisted's name
        """Nothing to do."""

    def addressResolved(self, address: object) -> None:  # noqa: N802 - Twisted's name
        """Keep an IP address."""
        found = ip_or_none(str(getattr(address, "host", "")))
        if found is not None:
            self.found.append(found)

    def resolutionComplete(self) -> None:  # noqa: N802 - Twisted's name
        """Hand the addresses over."""
        if not self.done.called:
            self.done.callback(self.found)
