"""Requests waiting for a robots.txt do not hold Scrapy's concurrency.

Scrapy counts a request against ``CONCURRENT_REQUESTS`` from the moment the
downloader takes it (``Downloader.active``), so a request whose origin's robots.txt
hangs, and the robots.txt request itself, held a slot for up to a whole fetch: 16 hung
origins held the whole crawl (first pages of healthy origins at p50 30.5 s, 21 of 240
fetched in 45 s). Here the downloader's set of active requests leaves out the ones
this middleware marks as waiting: page requests waiting for their robots.txt (up to
``limit`` at once; past it, waiting counts again, as back-pressure) and robots.txt
requests, whose own concurrency the fetch lanes bound. The engine is woken when a
request starts waiting, so it takes the next one at once.

This reaches into ``Downloader.active`` (a set since Scrapy 1.0); if a Scrapy version
lays it out otherwise, nothing is changed and waiting counts as before (logged once).
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from scrapy import Request
    from scrapy.crawler import Crawler

__all__ = ["WaitingRequests"]

logger = logging.getLogger("robots_async.contrib.scrapy")


class _CountedActive(set[Any]):
    """``Downloader.active`` that leaves the waiting requests out of its length (what
    ``needs_backout()`` compares with CONCURRENT_REQUESTS), not out of its truth value
    (what the engine's idle check reads)."""

    def __init__(self, items: Iterable[Any], waiting: set[Any]) -> None:
        super().__init__(items)
        self._waiting = waiting

    def __len__(self) -> int:
        waiting = sum(1 for request in self._waiting if set.__contains__(self, request))
        return set.__len__(self) - waiting

    def __bool__(self) -> bool:
        # "Is anything in flight?" (the engine's idle check) counts every request: a
        # spider waiting for robots.txt is not idle.
        return set.__len__(self) > 0


class WaitingRequests:
    """The requests of one crawl that wait for robots.txt, left out of its concurrency."""

    def __init__(self, crawler: Crawler, limit: int) -> None:
        self._crawler = crawler
        self._limit = limit
        self._waiting: set[Any] = set()
        self._pages = 0  # page requests (not robots.txt ones) in ``_waiting``
        self._installed: bool | None = None  # None: not tried yet

    @contextmanager
    def waiting(self, request: Request, *, always: bool = False) -> Iterator[None]:
        """While in this block ``request`` does not count against CONCURRENT_REQUESTS
        (unless ``limit`` requests already wait; ``always`` for robots.txt requests)."""
        # The limit counts page requests only: robots.txt requests (one per origin,
        # bounded by the fetch lanes) once used it up, and 10 hung robots.txt then
        # held a crawl of CONCURRENT_REQUESTS=2 for their whole timeout.
        exempt = self._install() and (always or self._pages < self._limit)
        if exempt:
            self._waiting.add(request)
            self._pages += not always
            self._wake_engine()
        try:
            yield
        finally:
            if exempt:
                self._waiting.discard(request)
                self._pages -= not always

    def _install(self) -> bool:
        if self._installed is not None:
            return self._installed
        engine = self._engine()
        if engine is None:
            return False  # not crawling yet: try again on the next request
        downloader: Any = getattr(engine, "downloader", None)
        active = getattr(downloader, "active", None)
        if type(active) is not set:
            logger.warning(
                "robots_async: Scrapy's Downloader.active is not a set here; requests "
                "waiting for robots.txt count against CONCURRENT_REQUESTS"
            )
            self._installed = False
            return False
        downloader.active = _CountedActive(active, self._waiting)
        self._installed = True
        return True

    def _wake_engine(self) -> None:
        """Let the engine take the next request now rather than at its next heartbeat."""
        slot = getattr(self._engine(), "_slot", None)
        nextcall = getattr(slot, "nextcall", None)
        schedule = getattr(nextcall, "schedule", None)
        if callable(schedule):
            schedule()

    def _engine(self) -> Any:
        """The crawl's engine, or None before the crawl starts (Scrapy 2.19 raises then)."""
        try:
            return self._crawler.engine
        except (AttributeError, RuntimeError):
            return None
