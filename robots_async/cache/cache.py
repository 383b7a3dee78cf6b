"""RobotsCache: per-origin entries with TTL, an LRU and memory bound, single-flight.

However many tasks ask for one origin at once, exactly one fetch runs: a task per
origin that its waiters await through a shield. It outlives the cancellation of
every waiter (up to its own deadline) and its result is cached, so a caller's
short timeout retried still gets an answer; :meth:`RobotsCache.aclose` turns it
into :class:`ClosedError` in every waiter. Expiry, error back-off and the last good
copy live in the entries, because they differ per origin and per outcome.

The concerns live in their own modules and are combined here: the bounded entry
table and hot index (``table``), outcome to entry (``resolve``), the shared-store
protocol (``shared``) and records read and written (``observations``). This class
coordinates them: single flight, the local fetch through the lanes, statistics.

Isolation (``fetch/lanes``): only the network fetch holds a slot, never the wait for
a shared-store lease. It starts in a fast lane of ``max_concurrent_fetches`` slots and,
still running after ``SLOW_AFTER`` (1 s), moves to a larger slow lane; with that full it
is queued for a slow slot instead of being cut. No limit of ours answers for a site:
waiting for a slot is bounded by the caller's own deadline, and a fetch ends only by
its answer or its own ``total_timeout`` (from its start). Robots.txt sockets are
bounded by the two lanes together (``RobotsCache.lanes.capacity``).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from functools import partial
from typing import TYPE_CHECKING

from ..core.errors import ClosedError, EventLoopError
from ..fetch.lanes import FetchLanes, slow_lane_size
from ..fetch.outcome import FetchOutcome
from ..fetch.policy import FetchPolicy
from .entry import CacheEntry, CacheStats
from .settings import check_cache
from .shared import SharedStoreProtocol
from .table import EntryTable

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..core.policy import MatchPolicy, PolicyName
    from ..core.url import Origin
    from ..fetch.fetcher import Fetcher
    from .store import RobotsStore

__all__ = ["CacheEntry", "CacheStats", "RobotsCache"]

logger = logging.getLogger("robots_async")

#: Seconds past total_timeout before the lanes stop a fetch: the fetcher's own
#: timeout (same length, started a little later) normally fires first.
_DEADLINE_GRACE = 0.25
#: Back-off between attempts of a fetch our own process could not make (no descriptor).
_LOCAL_RETRY_FIRST = 0.05
_LOCAL_RETRY_MAX = 1.0
_OVERRAN = "still running at its deadline (total_timeout from its start)"


class RobotsCache(SharedStoreProtocol, EntryTable):
    """Per-origin robots.txt cache in front of a :class:`Fetcher`.

    The coordinator: single flight and the local fetch are here; each base class is
    one concern in its own module (see the module docstring).

    :param fetcher: what fetches on a miss.
    :param policy: status semantics and TTLs (:class:`FetchPolicy`).
    :param max_entries: bound on origins kept (least recently used evicted first,
        with a second chance for hot-path hits: see ``cache/table.py``).
    :param max_memory: approximate bytes of parsed rules kept (evicted likewise).
    :param max_concurrent_fetches: the fast lane: fetches in their first second, all
        origins together; the slow lane holds eight times as many more, at most a
        quarter of the descriptor limit (together, the socket cap).
    :param clock: seconds; inject a fake one to test expiry without sleeping.
    :param store: a shared :class:`RobotsStore` (records and fetch leases).
    :param match_policy: how bodies from the store are parsed.
    :param robots_token: the product token whose rules an entry is sized for (the
        checker's own; ``"*"``: the groups for any other crawler).
    """

    def __init__(
        self,
        fetcher: Fetcher,
        *,
        policy: FetchPolicy | None = None,
        max_entries: int = 10_000,
        max_memory: int = 256 * 1024 * 1024,
        max_concurrent_fetches: int = 64,
        clock: Callable[[], float] = time.time,
        store: RobotsStore | None = None,
        match_policy: PolicyName | MatchPolicy = "google",
        robots_token: str = "*",
    ) -> None:
        check_cache(
            "RobotsCache",
            fetcher=fetcher,
            store=store,
            clock=clock,
            policy=policy,
            match_policy=match_policy,
            max_entries=max_entries,
            max_memory=max_memory,
            max_concurrent_fetches=max_concurrent_fetches,
            robots_token=robots_token,
        )
        self._init_table(max_entries, max_memory, clock)
        self._fetcher = fetcher
        self._policy = policy or FetchPolicy()
        self._robots_token = robots_token
        self._store = store
        self._invalid_logged: set[str] = set()  # record faults logged (shared store)
        self._match_policy = match_policy
        self._lanes = FetchLanes(max_concurrent_fetches, slow_lane_size(max_concurrent_fetches))
        # Single flight: one fetch task per origin, awaited through a shield. Our own
        # map rather than async-lru's: that cancels the fetch with its last waiter,
        # and we need the fetch to outlive its waiters (a caller's timeout must not
        # waste it) and closing to reach every waiter as ClosedError.
        self._inflight: dict[Origin, asyncio.Task[CacheEntry]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False

    @property
    def stats(self) -> CacheStats:
        """A snapshot of the counters."""
        counts = {
            **self._counts,
            "hits": self._hits + self._hot.hits,
            "stale_served": self._stale_served,
            "entries": len(self._entries),
            "memory": self._memory,
        }
        return CacheStats(**counts)

    @property
    def policy(self) -> FetchPolicy:
        """The fetch policy in force."""
        return self._policy

    async def get(self, origin: Origin) -> tuple[CacheEntry, bool]:
        """The entry in force for ``origin`` and whether it came from the cache.

        A missing or expired entry is fetched; concurrent callers share that fetch,
        which carries on (and is cached) if they are all cancelled.
        :raises ClosedError: after :meth:`aclose`, also in callers waiting then.
        :raises EventLoopError: in an event loop other than the first one used.
        """
        self._bind()
        if self._closed:
            raise ClosedError("cache is closed")
        entry = self.fresh(origin)
        if entry is not None:
            return entry, True
        self._count("misses")
        task = self._inflight.get(origin)
        if task is None:
            task = asyncio.get_running_loop().create_task(self._refresh_entry(origin))
            self._inflight[origin] = task
            task.add_done_callback(partial(self._landed, origin))
        else:
            self._count("coalesced")
        entry = await asyncio.shield(task)
        if entry.source == "stale":
            self._stale_served += 1
        return entry, False

    async def aclose(self) -> None:
        """Stop fetches in flight (their waiters get ClosedError) and refuse further use.

        Idempotent; returns once no fetch task is left.
        """
        self._closed = True
        self._hot.clear()
        tasks = list(self._inflight.values())
        running = asyncio.get_running_loop()
        if not tasks or self._loop is not running:
            return  # tasks of another (finished) loop cannot be awaited here
        for task in tasks:
            task.cancel()
        await asyncio.wait(tasks)

    @property
    def store(self) -> RobotsStore | None:
        """The shared store this cache was given (tdmrep.json is shared through it too)."""
        return self._store

    @property
    def lanes(self) -> FetchLanes:
        """The fetch lanes (slots in use, peak, refusals): for monitoring."""
        return self._lanes

    def _bind(self) -> None:
        """Bind to the running loop on first use; refuse any other loop after."""
        loop = asyncio.get_running_loop()
        if self._loop is None:
            self._loop = loop
        elif self._loop is not loop:
            raise EventLoopError(
                "this RobotsCache (or its RobotsChecker) was first used in another event "
                "loop, e.g. an earlier asyncio.run(); create it in the loop that uses it"
            )

    async def _refresh_entry(self, origin: Origin) -> CacheEntry:
        previous = self.peek(origin)
        generation = previous.generation + 1 if previous is not None else 1
        try:
            if self._store is None:
                entry = await self._fetch_locally(origin, previous, generation)
            else:
                entry = await self._fetch_shared(origin, previous, generation)
        except asyncio.CancelledError:
            if self._closed:  # aclose(): every waiter learns why, not a bare cancellation
                raise ClosedError("cache closed while robots.txt was being fetched") from None
            raise
        self._keep(entry)
        return entry

    def _landed(self, origin: Origin, task: asyncio.Task[CacheEntry]) -> None:
        """Done callback of a fetch task: leave the single-flight map."""
        if self._inflight.get(origin) is task:
            del self._inflight[origin]
        # Retrieve the exception: no waiter may be left to see it.
        exc = None if task.cancelled() else task.exception()
        if exc is not None and not isinstance(exc, ClosedError):
            logger.error("robots.txt fetch for %s failed", origin, exc_info=exc)

    async def _fetch_locally(
        self, origin: Origin, previous: CacheEntry | None, generation: int
    ) -> CacheEntry:
        # With a shared store the body is kept even here: it may become the last
        # good copy that a later record shares.
        keep_body = self._store is not None
        url = origin.robots_url
        loop = asyncio.get_running_loop()
        started = loop.time()
        fetch = partial(self._fetcher.fetch, url, keep_body=keep_body)
        validators = self._validators(previous)
        if validators is not None:
            fetch = partial(fetch, validators=validators)
        # Only the network fetch holds a lane slot. Waiting for one has no deadline of
        # ours (the caller's own bounds it: back-pressure, never a made-up verdict);
        # the fetch's deadline runs from its start, with a little grace so that the
        # fetcher's own timeout fires first.
        deadline = self._policy.total_timeout + _DEADLINE_GRACE
        pause = _LOCAL_RETRY_FIRST
        while True:
            result = await self._lanes.run(fetch, deadline)
            if isinstance(result, str):
                outcome = _overran(url, loop.time() - started)
            else:
                outcome = result
            if outcome.error != "local-limit":
                break
            self._count("local_limits")
            # Our process had no descriptor or socket buffer: nothing was learnt about
            # the site. Try again with back-off (while other fetches give descriptors
            # back) until the fetch's own total_timeout; only then does the short
            # fail-closed "local-limit" entry answer, never a cached "disallow" at once.
            left = started + self._policy.total_timeout - loop.time()
            if left <= pause:
                break
            self._count("local_limit_retries")
            await asyncio.sleep(pause * (0.5 + random.random()))
            pause = min(pause * 2, _LOCAL_RETRY_MAX)
        if outcome.status == 304 and outcome.error is None:
            outcome = self._not_modified(outcome, previous, validators)
        return self._resolve(origin, outcome, previous, generation)


def _overran(url: str, elapsed: float) -> FetchOutcome:
    """A fetch still running at its own deadline: the site did not answer in time."""
    return FetchOutcome(url, url, None, error="timeout", error_detail=_OVERRAN, elapsed=elapsed)
