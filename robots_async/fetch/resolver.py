"""The fetcher's DNS: asynchronous lookups with a deadline, and the SSRF guard on their answers.

:class:`GuardedResolver` wraps an aiohttp resolver (by default ``AsyncResolver``,
c-ares through aiodns: aiohttp's default ``ThreadedResolver`` runs ``getaddrinfo``
in the loop's shared thread pool, where a few slow names hold every thread and
healthy names queue behind them). Each lookup is cut at the fetch's
:class:`HopGuard` deadline and at ``lookup_timeout``.

The guard is applied to the answer the connector is given, not to a separate
lookup: a hop that must stay public gets only public addresses (none: refused), so
the connection can only use a checked address and DNS rebinding (public for a
check, private for the connection) has no second lookup to exploit. The connector
must not cache lookups (``use_dns_cache=False``), or a cached, unchecked answer
would bypass this.
"""

from __future__ import annotations

import asyncio
import contextvars
import errno
import os
import socket
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from aiohttp.abc import AbstractResolver

from .addresses import ip_or_none, is_public
from .deadline import within

if TYPE_CHECKING:
    from aiohttp.abc import ResolveResult

    from .addresses import PublicAddress

__all__ = ["GUARD", "BlockedAddressError", "GuardedResolver", "HopGuard"]

#: errnos saying the process or host ran out of descriptors or buffers.
LOCAL_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
#: A lookup ends this much before the connect timeout and the fetch deadline, so a
#: slow name is reported as a DNS failure rather than as a generic timeout.
_MARGIN = 0.1


@dataclass(slots=True)
class HopGuard:
    """What one request of a fetch allows, and what its lookup found.

    Set in :data:`GUARD` around the request; the resolver reads and fills it.
    """

    #: Loop time by which the lookup must end (the fetch's deadline).
    deadline: float
    #: Only public addresses may be connected to (a redirect from a public address).
    public_only: bool = False
    #: Whether any address handed to the connector was public.
    reached_public: bool = False
    #: Non-public addresses withheld from the connector.
    refused: list[str] = field(default_factory=list)


#: The guard of the request the current task is making (None: no guard, no record).
GUARD: contextvars.ContextVar[HopGuard | None] = contextvars.ContextVar(
    "robots_async_hop_guard", default=None
)


class BlockedAddressError(OSError):
    """Every address of a redirect target is non-public while the guard wants public."""


class GuardedResolver(AbstractResolver):
    """An aiohttp resolver that bounds each lookup and applies the :class:`HopGuard`.

    :param inner: the resolver that looks names up (closed with this one).
    :param lookup_timeout: seconds a lookup may take at most (the hop's deadline may
        cut it shorter).
    :param public: decides which addresses are public (tests widen it; the default
        is :func:`robots_async._addresses.is_public`).
    """

    def __init__(
        self, inner: AbstractResolver, *, lookup_timeout: float, public: PublicAddress = is_public
    ) -> None:
        self._inner = inner
        self._lookup_timeout = lookup_timeout
        self._public = public

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        """Look ``host`` up within the deadline; keep only what the guard allows."""
        guard = GUARD.get()
        timeout = self._lookup_timeout
        if guard is not None:
            timeout = min(timeout, guard.deadline - asyncio.get_running_loop().time())
        timeout -= _MARGIN
        try:
            if timeout <= 0:
                raise asyncio.TimeoutError
            async with within(timeout):
                answers = await self._inner.resolve(host, port, family)
        except asyncio.TimeoutError:
            # An OSError with errno None: aiohttp reports it as a DNS failure.
            raise OSError(None, f"lookup of {host!r} took more than {timeout:.1f} s") from None
        except OSError as exc:
            # c-ares says only "Could not contact DNS servers" when it cannot open a
            # socket: ask the OS whether that is our own limit, not the name's.
            local = _local_shortage()
            if local is not None:
                raise OSError(local, f"lookup of {host!r}: {os.strerror(local)}") from exc
            raise
        if not answers:
            # aiohttp's connector, handed no address, fails an assert (AssertionError).
            raise OSError(None, f"lookup of {host!r} found no address")
        return answers if guard is None else self._allowed(host, answers, guard)

    def _allowed(
        self, host: str, answers: list[ResolveResult], guard: HopGuard
    ) -> list[ResolveResult]:
        kept = []
        for answer in answers:
            address = ip_or_none(answer["host"])
            public = address is not None and self._public(address)
            if guard.public_only and not public:
                guard.refused.append(answer["host"])
                continue
            guard.reached_public = guard.reached_public or public
            kept.append(answer)
        if not kept and guard.refused:
            raise BlockedAddressError(
                None, f"{host!r} resolves only to non-public addresses: {guard.refused}"
            )
        return kept

    async def close(self) -> None:
        """Close the inner resolver."""
        await self._inner.close()


def _local_shortage() -> int | None:
    """The errno of our own shortage if a UDP socket cannot be opened now, else None."""
    try:
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM).close()
    except OSError as exc:
        return exc.errno if exc.errno in LOCAL_ERRNOS else None
    return None
