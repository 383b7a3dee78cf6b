"""ROBOTSASYNC_PACE: Scrapy requests take their origin's turn in the shared store.

Each request waits in ``process_request`` for the next visit the store grants its
origin (or host), left out of ``CONCURRENT_REQUESTS`` while it waits as requests
waiting for robots.txt are (``_scrapy_waiting``). Page responses are observed as the
downloader receives them (``response_downloaded``, before any middleware's
``process_response``), so a 429 that RetryMiddleware turns into a retry still pauses
the origin, for this process and every other one, before the retry takes its turn.
The shared turn replaces the Crawl-delay raise of the download slot (which would send a
request up to a Crawl-delay after its turn, onto another process's next turn: measured,
two crawls' requests 0.01 s apart). The slot's own delay (DOWNLOAD_DELAY, a
DOWNLOAD_SLOTS entry's; not AutoThrottle's) is part of each request's interval, so it
is the fleet's floor (up to ROBOTSASYNC_MAX_CRAWL_DELAY, the cap of every interval),
and a paced crawl's slots send without jitter (``_scrapy_slots``). A request still goes
later than its turn when its slot sent another request (not paced, or another origin
of its host) within its delay, or has CONCURRENT_REQUESTS_PER_DOMAIN requests in
flight; sent then, it brought the next page of its unit, sent at its own turn, closer
than the interval (behind a 2.5 s page, Crawl-delay 1: 0.001 s). So the send-time check
below also keeps a paced request an interval after its unit's last page sent by this
process (``_late_at_send``) and, held RECHECK_AFTER or more, after another process's
page of a turn begun since its own (``Pacer.left_at_send``); a page sent late is
recorded in the store, so the other processes' next turns keep an interval after it
(two crawls' pages had come 0.48 s apart). Since
the slot's delay follows robots.txt's request too, an origin's first turn is taken an
interval after its robots.txt was fetched (see ``_after_robots_txt``).

A request that took its turn can still wait in Scrapy's download slot (for
``CONCURRENT_REQUESTS_PER_DOMAIN`` or DOWNLOAD_DELAY) while a 429 begins a back-off:
sent as the slot frees, it went out 0.01 s into a 2 s back-off. So the paced requests
are checked again as the slot sends them (Scrapy's ``DownloadHandlers``, with the
interval check above): one that waited RECHECK_AFTER or more since its turn asks the
store whether a pause holds, one that did not asks this process only. One that meets a
pause is not sent: it goes back to the scheduler (:class:`PausedAtSendError`, turned
into a new request by the middleware's ``process_exception``) and takes a new turn,
which follows the pause. Sitting the pause out in the handler held the slot, whose key
is the host: a 2 s back-off of one origin held the other origins of its host as long
(measured: a page due 1 s in went 2.9 s in), and the held requests all went as the pause
ended.

A crawl asked to close (CLOSESPIDER_TIMEOUT, a signal) waits for the requests in
progress, and a request waiting for its turn is one: a 20 s Retry-After kept a crawl
asked to close at 1 s open 21.4 s, then sent the page. So the engine's
``close_spider_async`` is wrapped: once it is called, every wait for a turn ends and
its request goes back to the scheduler, untried, as the requests still queued there
are (kept by a JOBDIR for the next run, never sent in this one).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import IgnoreRequest

from ..checker.pacing import (
    BUSY_STATUSES,
    RECHECK_AFTER,
    Pacer,
    PaceSettings,
    pace_unit,
    robots_delay,
)
from ..core.agent import product_token
from ..core.errors import RobotsError
from ._scrapy_slots import PacedSlots

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from ..cache.entry import CacheEntry
    from ..cache.store import RobotsStore
    from ..core.url import Origin
    from ._scrapy_settings import ScrapyConfig
    from ._scrapy_waiting import WaitingRequests

__all__ = ["LateAtSendError", "PausedAtSendError", "ScrapyPacing"]

logger = logging.getLogger("robots_async.contrib.scrapy")

#: ``request.meta`` key of a paced request: (unit, Crawl-delay, loop time of its turn).
PACE_META = "_robotsasync_pace"
#: ``request.meta`` key: the loop time a paced request went to the download handler.
_SENT_META = "_robotsasync_sent"
#: ``request.meta`` key of a request handed back at close (see :meth:`ScrapyPacing.wait`).
_HELD_META = "_robotsasync_held_at_close"


class PausedAtSendError(RobotsError):
    """A paced request met a pause of its unit as its download slot sent it: it was
    not sent, and goes back to the scheduler for a new turn."""


class LateAtSendError(PausedAtSendError):
    """A paced request its download slot held past its turn (a slow page or a request
    not paced before it, with CONCURRENT_REQUESTS_PER_DOMAIN): sent now, it would
    follow its unit's last page closer than the interval. Not sent; a new turn."""


class _CrawlClosingError(RobotsError):
    """Raised by a pacing sleep once the crawl is asked to close (caught by
    ScrapyPacing.wait: it never reaches Scrapy)."""


class ScrapyPacing:
    """The fleet-wide turn of each request, and the 429/503 it observes."""

    def __init__(
        self,
        crawler: Crawler,
        config: ScrapyConfig,
        store: RobotsStore | None,
        waiting: WaitingRequests,
    ) -> None:
        settings = PaceSettings(
            min_delay=min(
                max(0.0, crawler.settings.getfloat("DOWNLOAD_DELAY")), config.max_crawl_delay
            ),
            max_delay=config.max_crawl_delay,
            pace_by=config.pace_by,
            max_retry_after=config.max_retry_after,
            max_backoff=config.max_backoff,
        )
        self._pacer = Pacer(store, settings, clock=time.time, sleep=self._sleep)
        self._crawler = crawler
        #: Whether the crawl was asked to close, and the future that wakes the sleeps
        #: then (made on the crawl's loop by the first sleep).
        self._closing = False
        self._closed: asyncio.Future[None] | None = None
        #: This crawl's mark on a request it hands back at close: a mark kept with the
        #: request by a JOBDIR (or a shared queue) is another crawl's, not a return.
        self._held_mark = secrets.token_hex(8)
        self._waiting = waiting
        #: Observations still being recorded, by unit: a request's wait starts after.
        self._recording: dict[str, asyncio.Task[None]] = {}
        if store is None:
            logger.warning(
                "ROBOTSASYNC_PACE without ROBOTSASYNC_REDIS_URL or a SQLite store "
                "(ROBOTSASYNC_STORE / JOBDIR) paces this process only"
            )
        self._slots = PacedSlots(crawler)
        #: Loop time of the last paced page sent, by unit, oldest send first (see
        #: :meth:`_late_at_send`).
        self._last_sent: OrderedDict[str, float] = OrderedDict()
        #: Whether the send-time check is in Scrapy's download handlers (None: not tried).
        self._installed: bool | None = None
        crawler.signals.connect(self._downloaded, signal=signals.response_downloaded)
        # Installed as the spider opens, not at the first wait for a turn: a crawl
        # asked to close before it (its first robots.txt still coming) was not cut,
        # and its requests then waited out their turns (4 pages, Crawl-delay 3, robots.txt
        # in 2 s: asked to close at 1 s, the crawl took 11.9 s and sent all 4).
        crawler.signals.connect(self._opened, signal=signals.spider_opened)

    @staticmethod
    def forget(request: Request) -> None:
        """Drop the pacing meta ``request`` may have copied from another (RetryMiddleware,
        or a spider's ``meta=response.meta``): only :meth:`wait` marks it paced, so a
        request it does not pace (``dont_obey_robotstxt``) is neither held at send for
        another request's unit nor observed for it."""
        request.meta.pop(PACE_META, None)
        request.meta.pop(_SENT_META, None)

    async def wait(self, request: Request, origin: Origin, entry: CacheEntry, agent: str) -> bool:
        """Wait for ``request``'s turn, out of Scrapy's concurrency: True once it came,
        False if the crawl was asked to close meanwhile (the request must not be sent).

        :raises IgnoreRequest: the crawl is closing and ``request`` was handed back at
            close already: it came straight back, from ``engine.download_async`` (a
            callback's inline download), which re-sends what a middleware returns
            (the scheduler hands out nothing once the close began). Handed back
            again, it went round and round, each round reserving a further turn, and
            the close waited for the callback.
        """
        if request.meta.pop(_HELD_META, None) == self._held_mark and self._closing:
            raise IgnoreRequest(
                "robots_async: the crawl is closing; the request waited for its turn"
            )
        self._install()
        unit = pace_unit(origin, self._pacer.settings.pace_by)
        delay = max(robots_delay(entry.robots, product_token(agent)), self._slots.delay(request))
        with self._waiting.waiting(request):
            await self._recorded_first(unit)
            try:
                slept = await self._after_robots_txt(entry, delay)
                slept += await self._pacer.wait(unit, delay)
            except _CrawlClosingError:
                self._inc("robotsasync/pace/held_at_close")
                request.meta[_HELD_META] = self._held_mark
                return False
        # Again: Scrapy drops a slot idle for 60 s (a long wait's own slot) and makes it
        # anew, with a DOWNLOAD_SLOTS entry's own jitter.
        self._slots.delay(request)
        request.meta[PACE_META] = (unit, delay, asyncio.get_running_loop().time())
        self._inc("robotsasync/pace/waits")
        if slept > 0:
            self._inc("robotsasync/pace/delayed")
        return True

    async def _after_robots_txt(self, entry: CacheEntry, delay: float) -> float:
        """Sleep until an interval has passed since the origin's robots.txt was
        fetched (by any worker of the store); the seconds slept.

        Scrapy's slot sends a request its delay after its last send, robots.txt's
        included: a first page whose turn came at once went 0.3-0.9 s after it
        (Crawl-delay 1, DOWNLOAD_DELAY 0.6, the slot's jitter on), 0.55-0.69 s before
        the second page's turn. Taken an interval (at least the slot's delay) after
        the fetch, that turn finds the slot free. (At most an interval: a record
        another machine wrote holds its clock.)
        """
        interval = self._pacer.settings.rule(delay).interval
        left = min(interval, entry.fetched_at + interval - time.time())
        if left <= 0:
            return 0.0
        await self._sleep(left)
        return left

    async def _sleep(self, seconds: float) -> None:
        """The pacer's sleep, cut short when the crawl is asked to close (it raises
        _CrawlClosingError then: the wait ends without a turn)."""
        if self._closing:
            raise _CrawlClosingError
        closed = self._closed
        if closed is None:
            closed = self._closed = asyncio.get_running_loop().create_future()
        # asyncio.wait() leaves the shared future alone when it times out.
        await asyncio.wait((closed,), timeout=seconds)
        if self._closing:
            raise _CrawlClosingError

    def _close_begins(self) -> None:
        """Wake every sleep for a turn: the crawl is closing (see the module)."""
        self._closing = True
        if self._closed is not None and not self._closed.done():
            self._closed.set_result(None)

    async def _checked_at_send(self, request: Request) -> tuple[bool, float]:
        """Whether a pause of the request's unit began after its turn (the slot held it
        meanwhile) and still holds: it must not be sent now; and, for a request held
        RECHECK_AFTER or more, the seconds short of an interval after another
        worker's page of its unit (``Pacer.left_at_send``)."""
        paced = request.meta.get(PACE_META)
        if paced is None:
            return False, 0.0
        unit, delay, turn = paced
        await self._recorded_first(unit)
        held_since_turn = asyncio.get_running_loop().time() - turn
        if held_since_turn < RECHECK_AFTER:
            return self._pacer.paused_here(unit, delay), 0.0  # Pacer.wait's own rule
        pause, short = await self._pacer.left_at_send(unit, delay, held_since_turn)
        return pause > 0, short

    async def _late_at_send(self, request: Request, elsewhere: float) -> None:
        """Mark a paced request sent now, unless its unit's last page went less than an
        interval ago, in this process or (``elsewhere``: seconds short of it) in
        another: its slot held it past its turn, and its turn was taken an interval
        after the turn before, not after that page's send.

        A slot of CONCURRENT_REQUESTS_PER_DOMAIN 1 behind a 2.5 s page sent the pages
        whose turns came meanwhile as it freed, 0.001 s apart (Crawl-delay 1). A
        shortfall under RECHECK_AFTER (the loop's lag) is slept here; a longer one
        sends the request back for a new turn (:class:`LateAtSendError`): sleeping
        it out would hold the slot, the host's, for up to an interval.

        :raises LateAtSendError: the request must not be sent now.
        """
        unit, delay, turn = request.meta[PACE_META]
        interval = self._pacer.settings.rule(delay).interval
        loop = asyncio.get_running_loop()
        last = self._last_sent.get(unit)
        short = elsewhere if last is None else max(elsewhere, last + interval - loop.time())
        if short >= RECHECK_AFTER:
            raise LateAtSendError(
                f"{request.url}: held past its turn, {short:.3f} s short of the "
                "interval after its unit's last page; a new turn"
            )
        if short > 0:
            await asyncio.sleep(short)
        now = loop.time()
        request.meta[_SENT_META] = now
        # Sent after its turn: every worker's next turn keeps an interval after it
        # (another crawl's page, on its own turn, came 0.48 s after such a page).
        await self._pacer.sent(unit, delay, late=now - turn)
        sent = self._last_sent
        sent[unit] = now
        sent.move_to_end(unit)  # loop times only grow: the oldest send stays first
        # Only a unit sent within its interval matters (at most the longest one): the
        # older sends go from the front, O(1) each (a table pruned by whole passes
        # needed a threshold, or it paid a pass per send in a broad crawl).
        horizon = now - self._pacer.settings.max_delay
        while sent and next(iter(sent.values())) <= horizon:
            sent.popitem(last=False)

    def rescheduled(self, request: Request, exception: BaseException) -> Request | None:
        """The request again, to take a new turn, if ``exception`` is its
        :class:`PausedAtSendError` (it was not sent); else None."""
        if not isinstance(exception, PausedAtSendError):
            return None
        if isinstance(exception, LateAtSendError):
            self._inc("robotsasync/pace/late_at_send")
        else:
            self._inc("robotsasync/pace/held_at_send")
        return request.replace(dont_filter=True)  # the same request, not a duplicate

    async def _recorded_first(self, unit: str) -> None:
        """Wait for an observation of ``unit`` still being recorded (a 429's pause)."""
        recording = self._recording.get(unit)
        if recording is not None:
            await asyncio.shield(recording)

    def _opened(self, spider: Any = None) -> None:
        """``spider_opened``: install (see :meth:`_install`)."""
        self._install()

    def _install(self) -> None:
        """Put the send-time check in front of Scrapy's download handlers, and the end
        of the waits in front of the engine's close, once."""
        if self._installed is not None:
            return
        try:
            engine: Any = self._crawler.engine
        except (AttributeError, RuntimeError):
            return  # not crawling yet (Scrapy 2.19 raises then): try on the next request
        if engine is None:
            return
        self._wrap_close(engine)
        downloader: Any = getattr(engine, "downloader", None)
        self._slots.steady(downloader)
        handlers: Any = getattr(downloader, "handlers", None)
        send: Callable[[Request], Awaitable[Response]] | None = getattr(
            handlers, "download_request_async", None
        )
        if send is None:
            logger.warning(
                "robots_async: Scrapy's download handlers have no download_request_async "
                "here; a request waiting in a download slot is not held for a back-off "
                "that began after its turn"
            )
            self._installed = False
            return

        async def download_request_async(request: Request) -> Response:
            paused, short = await self._checked_at_send(request)
            if paused:
                raise PausedAtSendError(f"{request.url}: its pace unit is paused; a new turn")
            if PACE_META in request.meta:
                await self._late_at_send(request, short)
            return await send(request)

        handlers.download_request_async = download_request_async
        self._installed = True

    def _wrap_close(self, engine: Any) -> None:
        """End the waits for a turn as soon as the engine is asked to close (its slot
        waits for the requests in progress, and a waiting request is one)."""
        close: Callable[..., Awaitable[None]] | None = getattr(engine, "close_spider_async", None)
        if close is None:
            logger.warning(
                "robots_async: Scrapy's engine has no close_spider_async here; a crawl "
                "asked to close waits for its paced requests' turns"
            )
            return

        async def close_spider_async(*args: Any, **kwargs: Any) -> None:
            self._close_begins()
            await close(*args, **kwargs)

        engine.close_spider_async = close_spider_async

    def _downloaded(self, response: Response, request: Request, spider: Any = None) -> None:
        """Record a page response of a paced request (429/503, or a success ending a
        back-off) without holding the downloader: a task, waited for by the next
        request of that unit."""
        paced = request.meta.get(PACE_META)
        if paced is None:
            return
        unit, delay, _ = paced
        if response.status in BUSY_STATUSES:
            self._inc(f"robotsasync/pace/busy/{response.status}")
        # How long it took tells a slow 429 sent before a back-off from a new one.
        sent = request.meta.get(_SENT_META)
        elapsed = None if sent is None else max(0.0, asyncio.get_running_loop().time() - sent)
        task = asyncio.ensure_future(
            self._pacer.observe(unit, delay, response.status, response.headers, elapsed=elapsed)
        )
        self._recording[unit] = task
        task.add_done_callback(lambda done: self._recorded(unit, done))

    def _recorded(self, unit: str, task: asyncio.Task[None]) -> None:
        if self._recording.get(unit) is task:
            del self._recording[unit]
        if not task.cancelled() and task.exception() is not None:
            logger.error("pacing observation failed", exc_info=task.exception())

    async def close(self) -> None:
        """Let observations under way finish; record the pacing stats."""
        if self._recording:
            await asyncio.gather(*self._recording.values(), return_exceptions=True)
        pacer = self._pacer
        self._set("robotsasync/pace/waited_seconds", round(pacer.waited, 3))
        self._set("robotsasync/pace/pauses", pacer.pauses)
        self._set("robotsasync/pace/backoffs", pacer.backoffs)
        self._set("robotsasync/pace/store_errors", pacer.store_errors)
        self._set("robotsasync/pace/shared", pacer.shared)

    def _inc(self, key: str) -> None:
        stats = self._crawler.stats
        if stats is not None:
            stats.inc_value(key)

    def _set(self, key: str, value: object) -> None:
        stats = self._crawler.stats
        if stats is not None:
            stats.set_value(key, value)
