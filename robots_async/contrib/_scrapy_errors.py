"""Which kind of failure a Scrapy download exception is (DNS, timeout, TLS ...).

Classified with ``isinstance`` against Scrapy's and Twisted's own types, never by
name: Scrapy >= 2.15 wraps Twisted's errors in its own (``CannotResolveHostError``
...), its asyncio download handlers raise those too, and older versions raise the
Twisted ones, so both sets are checked, along with whatever an exception wraps.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ..fetch.outcome import ErrorKind

__all__ = ["classify_scrapy_error"]


@cache
def _error_types() -> tuple[tuple[ErrorKind, tuple[type[BaseException], ...]], ...]:
    """Exception types per error kind, in the order they are tried.

    Twisted's types cover every Scrapy version; Scrapy >= 2.15 wraps them in its
    own (``CannotResolveHostError`` ...) and its asyncio handlers raise those too.
    TLS first (aiohttp's TLS errors are connection errors), then timeouts (a
    Twisted TimeoutError is a ConnectError), DNS, connect; "reset" comes last, for
    the wrappers that only say that the download failed.
    """
    import aiohttp
    from OpenSSL import SSL
    from scrapy import exceptions as scrapy_errors
    from twisted.internet import error as tx
    from twisted.web.client import ResponseFailed, ResponseNeverReceived

    def scrapy_types(*names: str) -> tuple[type[BaseException], ...]:
        return tuple(getattr(scrapy_errors, name) for name in names if hasattr(scrapy_errors, name))

    return (
        ("tls", (SSL.Error, ssl.SSLError, aiohttp.ClientSSLError)),
        (
            "timeout",
            (
                TimeoutError,
                asyncio.TimeoutError,
                tx.TimeoutError,
                tx.TCPTimedOutError,
                *scrapy_types("DownloadTimeoutError"),
            ),
        ),
        (
            "dns",
            (tx.DNSLookupError, socket.gaierror, *scrapy_types("CannotResolveHostError")),
        ),
        (
            "connect",
            (
                tx.ConnectionRefusedError,
                tx.NoRouteError,
                tx.ConnectError,
                ConnectionRefusedError,
                *scrapy_types("DownloadConnectionRefusedError"),
            ),
        ),
        (
            "reset",
            (
                tx.ConnectionLost,
                tx.ConnectionDone,
                ResponseFailed,
                ResponseNeverReceived,
                ConnectionResetError,
                BrokenPipeError,
                *scrapy_types("ResponseDataLossError", "DownloadFailedError"),
            ),
        ),
    )


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """``exc``, what it wraps (``__cause__``, Twisted's ``reasons``), breadth first."""
    queue: list[BaseException] = [exc]
    seen: set[int] = set()
    while queue and len(seen) < 32:
        current = queue.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        for reason in getattr(current, "reasons", None) or ():
            value = getattr(reason, "value", reason)  # a Failure, or an exception
            if isinstance(value, BaseException):
                queue.append(value)
        if current.__cause__ is not None:
            queue.append(current.__cause__)


def classify_scrapy_error(exc: BaseException) -> ErrorKind:
    """Map a Twisted or Scrapy download exception to an :data:`ErrorKind`.

    ``isinstance`` against the exception and everything it wraps: the most specific
    kind found anywhere wins; what nothing explains is "protocol".
    """
    causes = list(_causes(exc))
    for kind, types in _error_types():
        if any(isinstance(cause, types) for cause in causes):
            return kind
    return "protocol"
