"""The pacing half of RobotsChecker: wait() before a visit, observe() after it (a base
class, so the checker stays one object and a wait one method call)."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from ..core.errors import ClosedError
from ..core.validate import number, optional_number
from .pacing import pace_unit, robots_delay

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from ..cache.entry import CacheEntry
    from ..core.url import Origin
    from .pacing import Pacer

__all__ = ["ClosableSleep", "PacedChecks"]


class PacedChecks:
    """:meth:`wait`, :meth:`sent` and :meth:`observe` over the checker's :class:`Pacer`."""

    __slots__ = ()

    _pacer: Pacer

    if TYPE_CHECKING:

        def _origin(self, url: object) -> Origin: ...

        async def _entry(self, origin: Origin) -> tuple[CacheEntry, bool]: ...

        def _fresh(self, origin: Origin) -> CacheEntry | None: ...

        def _token_for(self, user_agent: str | None) -> str: ...

    async def wait(self, url: object, *, user_agent: str | None = None) -> float:
        """Sleep until ``url``'s origin may be visited again; return the seconds slept.

        The interval is the largest of Crawl-delay, Request-rate's delay and
        ``min_delay``, capped by ``max_delay``; with a shared ``store`` that paces
        (MemoryStore, SQLiteStore, RedisStore) the next visit is reserved there, so
        every worker together visits the origin at most once per interval. Pauses
        that :meth:`observe` recorded (by any worker) are slept through.

        :raises ClosedError: the checker is closed, or was closed during the wait (the
            request must not be sent; ``aclose()`` ends every wait at once).
        """
        origin = self._origin(url)
        delay = await self._delay(origin, self._token_for(user_agent))
        return await self._pacer.wait(pace_unit(origin, self._pacer.settings.pace_by), delay)

    async def observe(
        self,
        url: object,
        status: int,
        headers: object = None,
        *,
        user_agent: str | None = None,
        elapsed: float | timedelta | None = None,
    ) -> None:
        """Record a page response so that :meth:`wait` slows down for every worker.

        429 and 503 with ``Retry-After`` (seconds or an HTTP-date) pause the origin
        until then (capped by ``max_retry_after``, never shortened by a later one);
        without it they start an exponential back-off with jitter (2 s, doubling up
        to ``max_backoff``) that a later success ends. ``headers`` may be any
        mapping, multi-dict or list of pairs (aiohttp, httpx, Scrapy, a dict).

        ``elapsed``, the seconds (or a ``timedelta``, as httpx's ``Response.elapsed``)
        between sending the request and this response, tells a 429 to a request sent before the
        back-off ended (the same overload: counted once) from one sent after it (it
        doubles the back-off). Without it a 429 is judged by when it arrives, and a
        slow one, sent with the first but answered after the back-off, doubles it.

        :raises TypeError: ``status`` is not an int.
        :raises ConfigurationTypeError: ``elapsed`` is not a number (a TypeError).
        :raises ConfigurationError: ``elapsed`` is negative or not finite (a ValueError).
        """
        if isinstance(status, bool) or not isinstance(status, int):
            raise TypeError(f"observe(): status must be an int, not {type(status).__name__}")
        seconds = optional_number("observe(): elapsed", _in_seconds(elapsed))
        unit, delay = self._known_pacing(url, user_agent)
        await self._pacer.observe(unit, delay, status, headers, elapsed=seconds)

    async def sent(
        self, url: object, *, late: float | timedelta, user_agent: str | None = None
    ) -> None:
        """Report that a page of ``url`` was sent ``late`` seconds after its turn (after
        :meth:`wait` returned): held in a connection pool, a download slot, a queue of
        the crawler's own. From ``LATE_AFTER`` (0.05 s) on, every worker's next turn of
        its origin keeps an interval after it; otherwise that turn, taken an interval
        after this one, brings the next page closer. :meth:`wait` reports a late
        wake itself; adapters that see the send (the aiohttp middleware with its
        ``trace_config``, Scrapy's) report the rest.

        :raises ConfigurationTypeError: ``late`` is not a number (a TypeError).
        :raises ConfigurationError: ``late`` is negative or not finite (a ValueError).
        """
        seconds = number("sent(): late", _in_seconds(late))
        unit, delay = self._known_pacing(url, user_agent)
        await self._pacer.sent(unit, delay, late=seconds)

    def _known_pacing(self, url: object, user_agent: str | None) -> tuple[str, float]:
        """``url``'s pace unit and the delay its cached robots.txt asks (0 when none is
        cached: no fetch after a visit, min_delay alone then)."""
        origin = self._origin(url)
        entry = self._fresh(origin)
        delay = robots_delay(entry.robots, self._token_for(user_agent)) if entry else 0.0
        return pace_unit(origin, self._pacer.settings.pace_by), delay

    async def _delay(self, origin: Origin, token: str) -> float:
        entry, _ = await self._entry(origin)
        return robots_delay(entry.robots, token)


def _in_seconds(value: object) -> object:
    """``value``, a timedelta (httpx's ``Response.elapsed``) converted to seconds."""
    return value.total_seconds() if isinstance(value, timedelta) else value


class ClosableSleep:
    """The pacer's sleep, ended by :meth:`close` with :class:`ClosedError`: a wait
    for a turn lasts up to ``max_retry_after`` (an hour), and one sleeping when its
    checker closed went on, its request then sent after the close (a ``Crawl-delay:
    20`` wait was still pending 3 s after ``aclose()``)."""

    __slots__ = ("_closed", "_sleep", "_woken")

    def __init__(self, sleep: Callable[[float], Awaitable[Any]]) -> None:
        self._sleep = sleep
        self._closed = False
        #: Done once closed; made on the loop of the first sleep.
        self._woken: asyncio.Future[None] | None = None

    async def __call__(self, seconds: float) -> None:
        """Sleep ``seconds``; :raises ClosedError: if closed before or meanwhile."""
        if self._closed:
            raise ClosedError("checker is closed")
        woken = self._woken
        if woken is None or woken.get_loop() is not asyncio.get_running_loop():
            woken = self._woken = asyncio.get_running_loop().create_future()
        sleeping = asyncio.ensure_future(self._sleep(seconds))
        try:
            await asyncio.wait((sleeping, woken), return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not sleeping.done():
                sleeping.cancel()
        if self._closed:
            raise ClosedError("checker is closed")
        sleeping.result()  # (the sleep's own error, if it had one)

    def close(self) -> None:
        """End every sleep now and refuse later ones."""
        self._closed = True
        if self._woken is not None and not self._woken.done():
            self._woken.set_result(None)
