"""The Scrapy fetcher's SSRF guard, applied to the address each robots.txt hop's
connection actually used (issue 10 §2: DNS rebinding must not pass it).

Scrapy resolves and connects by itself, and its resolver (``TWISTED_DNS_RESOLVER``)
is one per process, sees a bare host name (no request, no meta) and shares its cache
with page downloads, so it cannot be narrowed to robots.txt requests. The address is
therefore known only from the response (``Response.ip_address``, set by Scrapy's
HTTP/1.1, HTTP/2, aiohttp and httpx download handlers): a hop whose connection
reached a non-public address after a public hop is refused after its GET was sent,
and its response is discarded unread.
"""

from __future__ import annotations

import asyncio
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from .._addresses import ip_or_none

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.http import Response

    from .._addresses import IPAddress, PublicAddress

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
        infos = await asyncio.wait_for(
            loop.getaddrinfo(host, None, type=socket.SOCK_STREAM), max(timeout, 0.1)
        )
    except (OSError, asyncio.TimeoutError):
        return []
    found = (ip_or_none(str(info[4][0])) for info in infos)
    return [address for address in found if address is not None]
