"""RobotsCache: per-origin entries with TTL, an LRU and memory bound, single-flight.

However many tasks ask for one origin at once, exactly one fetch runs: a task per
origin that its waiters await through a shield. It outlives the cancellation of
every waiter (up to its own deadline) and its result is cached, so a caller's
short timeout retried still gets an answer; :meth:`RobotsCache.aclose` turns it
into :class:`ClosedError` in every waiter. Expiry, error back-off and the last good
copy live in the entries, because they differ per origin and per outcome.

Isolation (``fetch/lanes``): only the network fetch holds a slot, never the wait for
a shared-store lease. It starts in a fast lane of ``max_concurrent_fetches`` slots and,
still running after ``SLOW_AFTER`` (1 s), moves to a larger slow lane; with that full it
is queued for a slow slot instead of being cut. No limit of ours answers for a site:
waiting for a slot is bounded by the caller's own deadline, and a fetch ends only by
its answer or its own ``total_timeout`` (from its start). Robots.txt sockets are
bounded by the two lanes together (``RobotsCache.lanes.capacity``).

Memory (``max_memory``): an entry is sized once its match index for the checker's
token is built, with an estimate calibrated by tracemalloc (bench/isolation.py);
a kept last good copy and its body count too.

Eviction (``max_entries``, ``max_memory``) is least recently used, approximated for
the checker's hot path (:meth:`RobotsCache.fresh_robots`): such a hit only marks its
entry, and the eviction scan gives a marked entry a second chance (moved to the back,
mark cleared) instead of evicting it (CLOCK). So an entry used since the scan last
passed it outlives every unmarked one, even one used more recently; both bounds hold
exactly. Moving an entry to the back on every hit (relinking its neighbours: cache
misses) cost 3% of a cached check at 10,000 origins (paired, interleaved runs).
"""

from __future__ import annotations

import asyncio
import heapq
import inspect
import logging
import time
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from functools import cache, partial
from typing import TYPE_CHECKING, TypeVar

from ..core.errors import ClosedError, EventLoopError, InvalidRecordError, StoreError
from ..core.parser import RobotsParser
from ..core.robots import RobotsTxt
from ..core.sizing import retained_size
from ..fetch.http import max_age, retry_after
from ..fetch.lanes import FetchLanes, slow_lane_size
from ..fetch.outcome import FetchOutcome, Validators
from ..fetch.policy import FetchPolicy, Resolution, Source
from .records import (
    LOCAL_ERRORS,
    MAX_CLOCK_SKEW,
    StoredRobots,
    check_clock,
    check_size,
    check_url,
    observed_headers,
    unlike_own_fetch,
    validate,
)
from .settings import check_cache

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from ..core.policy import MatchPolicy, PolicyName
    from ..core.url import Origin
    from ..fetch.fetcher import Fetcher
    from .store import Lease, RobotsStore

__all__ = ["CacheEntry", "CacheStats", "RobotsCache"]

logger = logging.getLogger("robots_async")

#: Parsed bodies kept per process, keyed by content hash (shared-store mode).
_PARSED_BODIES = 256
#: Bytes an entry holds besides its rules and bodies: the entry, its outcome and
#: resolution, URLs, the LRU slot (tracemalloc, tests/pipeline/test_memory.py), the
#: origin's text key with its slot in _texts (~110 bytes: sys.getsizeof), and its
#: hot index and expiry heap items (128 bytes, 88 once hit: tracemalloc over 2,000
#: and 10,000 entries).
_ENTRY_OVERHEAD = 1776
#: Seconds past total_timeout before the lanes cut a fetch: the fetcher's own
#: timeout (same length, started a little later) normally fires first.
_DEADLINE_GRACE = 0.25
_NEVER = float("inf")
_OVERRAN = "still running at its deadline (total_timeout from its start)"


@dataclass(frozen=True, slots=True)
class CacheEntry:
    """The rules in force for one origin, how they were obtained and until when.

    Times are on the cache's clock (``time.time`` unless another was injected).
    """

    origin: Origin
    robots: RobotsTxt
    #: "fetched", "unavailable" (4xx: allow all), "unreachable" or "stale".
    source: Source
    outcome: FetchOutcome
    fetched_at: float
    expires_at: float
    #: The fetch policy's state for this origin (failures, last good copy).
    resolution: Resolution = field(repr=False)
    generation: int = field(default=1, repr=False)
    size: int = field(default=0, repr=False)
    #: The raw body behind ``resolution.last_good`` (kept only with a shared store).
    last_good_body: bytes | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True)
class CacheStats:
    """Counters since the cache was created."""

    hits: int = 0
    misses: int = 0
    fetches: int = 0
    #: Fetches answered 304 Not Modified: the entry renewed, nothing downloaded or parsed.
    revalidated: int = 0
    coalesced: int = 0
    errors: int = 0
    stale_served: int = 0
    evictions: int = 0
    store_hits: int = 0
    store_errors: int = 0
    #: Shared records refused (bad schema, version or values): read as a miss.
    store_invalid: int = 0
    #: Fetches refused or cut short by our own limits (fetch lanes, descriptors).
    local_limits: int = 0
    entries: int = 0
    memory: int = 0


class _Unused:
    """A hot-index entry not hit since it joined or since the eviction scan passed
    it: its rules wrapped, so that a hit is told by the value's type alone (the
    rules' header, read by the match anyway) and marks by unwrapping them."""

    __slots__ = ("robots",)

    def __init__(self, robots: RobotsTxt) -> None:
        self.robots = robots


class RobotsCache:
    """Per-origin robots.txt cache in front of a :class:`Fetcher`.

    :param fetcher: what fetches on a miss.
    :param policy: status semantics and TTLs (:class:`FetchPolicy`).
    :param max_entries: bound on origins kept (least recently used evicted first,
        with a second chance for hot-path hits: see the module docstring).
    :param max_memory: approximate bytes of parsed rules kept (evicted likewise).
    :param max_concurrent_fetches: the fast lane: fetches in their first second, all
        origins together; the slow lane holds half as many more (the socket cap).
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
            policy=policy,
            match_policy=match_policy,
            max_entries=max_entries,
            max_memory=max_memory,
            max_concurrent_fetches=max_concurrent_fetches,
            robots_token=robots_token,
        )
        self._fetcher = fetcher
        self._policy = policy or FetchPolicy()
        self._max_entries = max_entries
        self._max_memory = max_memory
        self._robots_token = robots_token
        self._clock = clock
        self._store = store
        self._invalid_logged: set[str] = set()  # record faults logged (shared store)
        self._match_policy = match_policy
        # Entries keyed by their origin's text (``str(origin)``), least recently used
        # first (hot-path hits mark instead: _evict_one()), and that text by origin
        # (the same str object: one key per entry), kept in step by _keep() and
        # invalidate(). The text is the key so that the checker finds a usual URL's
        # entry without building an Origin, and the hit touches one table: 1.0 ->
        # 0.7 us per cached hit at 10,000 origins (an OrderedDict by Origin plus a
        # dict by text before).
        self._entries: OrderedDict[str, CacheEntry] = OrderedDict()
        self._texts: dict[Origin, str] = {}
        # The hot path's index: the rules of entries not yet expired and not stale,
        # by text (stale ones take fresh_text(), which counts them); _Unused-wrapped
        # until hit. Expiry is checked against one watermark, the soonest expiry in
        # it (a heap of (expires_at, text), those of entries gone or renewed skipped
        # when popped), not against each entry's expires_at: that float cost 2.4%
        # of a cached check at 10,000 origins, a holder object per entry 1-3.5%
        # (paired, interleaved). An entry is never served at or after its expires_at.
        self._hot: dict[str, RobotsTxt | _Unused] = {}
        self._expiries: list[tuple[float, str]] = []
        self._soonest = _NEVER
        self._memory = 0
        self._counts: dict[str, int] = dict.fromkeys(CacheStats.__slots__, 0)
        # The hit counters are plain ints: the hot path's `+= 1` on an attribute
        # costs about half a dict item's (16 vs 32 ns).
        self._hits = 0
        self._stale_served = 0
        self._lanes = FetchLanes(max_concurrent_fetches, slow_lane_size(max_concurrent_fetches))
        self._parsed: OrderedDict[str, RobotsTxt] = OrderedDict()
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
            "hits": self._hits,
            "stale_served": self._stale_served,
            "entries": len(self._entries),
            "memory": self._memory,
        }
        return CacheStats(**counts)

    @property
    def policy(self) -> FetchPolicy:
        """The fetch policy in force."""
        return self._policy

    def peek(self, origin: Origin) -> CacheEntry | None:
        """The entry for ``origin`` if one is cached (fresh or not); no fetch."""
        text = self._texts.get(origin)
        return None if text is None else self._entries[text]

    def invalidate(self, origin: Origin) -> bool:
        """Forget ``origin``: the next question fetches again. True if it was cached."""
        text = self._texts.pop(origin, None)
        if text is None:
            return False
        self._hot.pop(text, None)
        self._drop(self._entries.pop(text))
        return True

    def fresh(self, origin: Origin) -> CacheEntry | None:
        """The entry for ``origin`` if it is cached and not expired (counted as a hit)."""
        text = self._texts.get(origin)
        return None if text is None else self.fresh_text(text)

    def fresh_text(self, origin_text: str) -> CacheEntry | None:
        """:meth:`fresh` for the origin whose ``str()`` is ``origin_text`` (entries are
        kept by that text). Any other text (``https://h:443``, upper case) names no
        entry and answers None, like an uncached origin.
        """
        entry = self._entries.get(origin_text)
        if entry is None or self._clock() >= entry.expires_at or self._closed:
            return None
        self._entries.move_to_end(origin_text)
        self._hits += 1
        if entry.source == "stale":
            self._stale_served += 1
        return entry

    def fresh_robots(self, origin_text: str) -> RobotsTxt | None:
        """The rules of :meth:`fresh_text`'s entry if it is not stale (counted as a hit).

        The checker's hot path: one clock read against the soonest expiry, one
        lookup, a mark for eviction's second chance (see the module docstring).
        None (ask :meth:`fresh_text`) for a stale, expired or uncached entry.
        """
        now = self._clock()
        if now >= self._soonest:
            self._expire(now)
        robots = self._hot.get(origin_text)
        if robots is None:
            return None
        if type(robots) is _Unused:
            robots = self._hot[origin_text] = robots.robots  # marked: hit since the scan
        self._hits += 1
        return robots  # type: ignore[return-value]

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
        self._expiries.clear()
        tasks = list(self._inflight.values())
        running = asyncio.get_running_loop()
        if not tasks or self._loop is not running:
            return  # tasks of another (finished) loop cannot be awaited here
        for task in tasks:
            task.cancel()
        await asyncio.wait(tasks)

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
        result = await self._lanes.run(fetch, self._policy.total_timeout + _DEADLINE_GRACE)
        if isinstance(result, str):
            outcome = _overran(url, loop.time() - started)
        else:
            outcome = result
        if outcome.error == "local-limit":
            self._count("local_limits")
        if outcome.status == 304 and outcome.error is None:
            outcome = self._not_modified(outcome, previous, validators)
        return self._resolve(origin, outcome, previous, generation)

    # --- conditional refresh (RFC 9111 §4.3) ----------------------------------------

    def _validators(self, previous: CacheEntry | None) -> Validators | None:
        """What makes the refetch of ``previous`` conditional, if the fetcher can."""
        if previous is None or previous.source != "fetched":
            return None
        if not _takes_validators(type(self._fetcher)):
            return None
        return Validators.of(previous.outcome)

    def _not_modified(
        self, answer: FetchOutcome, previous: CacheEntry | None, validators: Validators | None
    ) -> FetchOutcome:
        """The stored response renewed by a 304, or a protocol error for a 304 that
        was not asked for (a fetcher without validators: never "allow all")."""
        if previous is None or validators is None:
            detail = "304 Not Modified to a request without validators"
            return replace(answer, error="protocol", error_detail=detail)
        self._count("revalidated")
        return _renewed(previous.outcome, answer)

    def _resolve(
        self,
        origin: Origin,
        outcome: FetchOutcome,
        previous: CacheEntry | None,
        generation: int,
    ) -> CacheEntry:
        now = self._clock()
        state = previous.resolution if previous is not None else None
        resolution = self._policy.resolve(outcome, state, now)
        self._count("fetches")
        if outcome.category == "unreachable":
            self._count("errors")
            logger.warning(
                "robots.txt of %s unreachable (%s): %s",
                origin,
                outcome.error or f"HTTP {outcome.status}",
                _applied(resolution),
            )
        if resolution.source == "fetched":
            last_good_body = outcome.body
        else:
            last_good_body = previous.last_good_body if previous is not None else None
        return self._entry(
            origin,
            outcome=outcome,
            resolution=resolution,
            now=now,
            generation=generation,
            last_good_body=last_good_body,
        )

    def _entry(
        self,
        origin: Origin,
        *,
        outcome: FetchOutcome,
        resolution: Resolution,
        now: float,
        generation: int,
        last_good_body: bytes | None,
    ) -> CacheEntry:
        # What the entry keeps alive: the rules in force, a last good copy behind
        # them, the raw bodies kept for a shared store. An HTML page's thousand
        # warnings are packed first (~205 -> ~40 KB).
        resolution.robots._pack_warnings()
        size = _ENTRY_OVERHEAD + retained_size(resolution.robots, self._robots_token)
        last_good = resolution.last_good
        if last_good is not None and last_good is not resolution.robots:
            last_good._pack_warnings()
            size += retained_size(last_good, self._robots_token)
        size += _bytes_size(outcome.body)
        if last_good_body is not outcome.body:
            size += _bytes_size(last_good_body)
        return CacheEntry(
            origin,
            resolution.robots,
            resolution.source,
            outcome,
            now,
            now + resolution.ttl,
            resolution,
            generation,
            size,
            last_good_body,
        )

    def _keep(self, entry: CacheEntry) -> None:
        """Store ``entry``, evicting least recently used entries beyond the bounds
        first (second chance for those marked by the hot path)."""
        text = self._texts.get(entry.origin)
        if text is None:
            text = self._texts[entry.origin] = str(entry.origin)
        else:
            self._hot.pop(text, None)
            self._drop(self._entries.pop(text), kept=entry)
        # Evicted before the entry joins, so that the scan never reaches it: after a
        # whole pass over marked entries the oldest goes, not the newest.
        while self._entries and (
            len(self._entries) >= self._max_entries or self._memory + entry.size > self._max_memory
        ):
            self._evict_one()
        self._entries[text] = entry
        self._memory += entry.size
        if entry.source != "stale" and not self._closed:
            self._hot[text] = _Unused(entry.robots)
            heapq.heappush(self._expiries, (entry.expires_at, text))
            self._soonest = min(self._soonest, entry.expires_at)
            if len(self._expiries) > 2 * len(self._hot) + 64:
                self._reindex_expiries()

    def _evict_one(self) -> None:
        """Evict the oldest entry not hit on the hot path since the scan last passed;
        those hit on the way are unmarked and go to the back (at most one pass)."""
        entries, hot = self._entries, self._hot
        while True:
            text, entry = entries.popitem(last=False)
            robots = hot.get(text)
            if robots is None or isinstance(robots, _Unused):
                break
            hot[text] = _Unused(robots)
            entries[text] = entry
        hot.pop(text, None)
        del self._texts[entry.origin]
        self._drop(entry)
        self._count("evictions")

    def _expire(self, now: float) -> None:
        """Take entries expired at ``now`` out of the hot index; raise the watermark."""
        expiries, hot, entries = self._expiries, self._hot, self._entries
        while expiries and expiries[0][0] <= now:
            _, text = heapq.heappop(expiries)
            entry = entries.get(text)
            if entry is not None and entry.expires_at <= now:
                hot.pop(text, None)
        self._soonest = expiries[0][0] if expiries else _NEVER

    def _reindex_expiries(self) -> None:
        """Rebuild the expiry heap from the hot index: the items of replaced, evicted
        or invalidated entries would otherwise pile up (kept under 2x plus 64)."""
        entries = self._entries
        self._expiries = [(entries[text].expires_at, text) for text in self._hot]
        heapq.heapify(self._expiries)
        self._soonest = self._expiries[0][0] if self._expiries else _NEVER

    def _drop(self, entry: CacheEntry, kept: CacheEntry | None = None) -> None:
        """Account for an entry leaving the cache (``kept``: the one replacing it).

        Its rules leave the shared store's parse memo too: kept alive there, they
        would escape max_memory (a parse is shared only while an entry holds it).
        """
        self._memory -= entry.size
        parsed = self._parsed
        if parsed:
            gone = {id(entry.robots), id(entry.resolution.last_good)}
            if kept is not None:
                gone -= {id(kept.robots), id(kept.resolution.last_good)}
            for key in [key for key, robots in parsed.items() if id(robots) in gone]:
                del parsed[key]

    def _count(self, name: str) -> None:
        self._counts[name] += 1

    # --- shared store -------------------------------------------------------------
    # A record is what another worker observed (status, headers, body, fetch time),
    # never its verdict: this cache applies its own fetch and match policy to it, on
    # its own clock, so a worker with laxer settings or a fast clock cannot loosen
    # what this one answers. Every store call is bounded by a timeout; a record that
    # does not conform is a miss (fetched here and overwritten), counted in
    # stats.store_invalid.

    #: Seconds one store call may take (at most the fetch's total_timeout).
    _STORE_TIMEOUT = 2.0
    #: Seconds a refresh (and, apart, the holder's record write) keeps trying a store whose
    #: failures may be transient (its ``retry_failures`` is true: a Redis Cluster
    #: failing over, which takes seconds) before answering locally; at most
    #: total_timeout, counted from the first failure, and not at all once every
    #: store call has failed for that long (a dead store then costs one call).
    _STORE_PATIENCE = 5.0
    _RETRY_FIRST = 0.1
    _RETRY_MAX = 1.0
    #: Failures counted at most from a record: 2**63 error TTLs exceed any
    #: max_error_ttl, and a larger count from a record would only overflow a float.
    _MAX_SHARED_FAILURES = 64
    #: Since when (event loop clock) every store call failed; None after a success.
    _store_down_since: float | None = None

    async def _fetch_shared(
        self, origin: Origin, previous: CacheEntry | None, generation: int
    ) -> CacheEntry:
        """Use a fresh shared record, else fetch under the lease (or wait for it).

        A store that fails or does not answer in time is left alone for the rest of
        this refresh (after retries within _STORE_PATIENCE if its error is
        transient): the answer comes from a local fetch.
        """
        store = self._store
        assert store is not None
        faults: set[str] = set()  # invalid records seen by this refresh (counted once)
        try:
            return await self._patiently(
                partial(self._use_store, store, origin, previous, generation, faults)
            )
        except StoreError as exc:
            self._store_failed(origin, exc)
            return await self._fetch_locally(origin, previous, generation)

    async def _use_store(
        self,
        store: RobotsStore,
        origin: Origin,
        previous: CacheEntry | None,
        generation: int,
        faults: set[str],
    ) -> CacheEntry:
        """One pass of the shared protocol; a StoreError before the fetch escapes."""
        lease: Lease | None = None
        try:  # whatever happens, a lease we took is given back
            record = await self._read_record(store, origin, faults)
            entry = self._fresh_entry(origin, record, previous, generation)
            if entry is None:
                lease = await self._store_call(store.acquire(origin, self._lease_ttl()))
                if lease is None:
                    entry, lease = await self._wait_for_holder(
                        store, origin, previous, generation, faults
                    )
            if entry is None and lease is not None:
                # The previous holder may have written its record and released
                # the lease between our read and our acquire: read once more.
                record = await self._read_record(store, origin, faults) or record
                entry = self._fresh_entry(origin, record, previous, generation)
            if entry is not None:
                self._count("store_hits")
                return entry
            usable_state = record is not None and unlike_own_fetch(record, self._policy) is None
            if previous is None and record is not None and usable_state:
                previous = self._from_record(origin, record, None, generation)
            entry = await self._fetch_locally(origin, previous, generation)
            await self._share(store, entry)
            return entry
        finally:
            if lease is not None:
                await self._release(store, lease)

    async def _patiently(self, attempt: Callable[[], Awaitable[_T]]) -> _T:
        """``attempt()``, tried again with back-off after a transient store error
        until the patience (from the first failure) runs out.
        :raises StoreError: the last failure."""
        loop = asyncio.get_running_loop()
        patience = min(self._STORE_PATIENCE, self._policy.total_timeout)
        until: float | None = None
        delay = self._RETRY_FIRST
        while True:
            try:
                return await attempt()
            except StoreError as exc:
                now = loop.time()
                until = now + patience if until is None else until
                down = self._store_down_since
                limit = until if down is None else min(until, down + patience)
                transient = getattr(self._store, "retry_failures", False) is True
                if not transient or isinstance(exc, InvalidRecordError) or now + delay >= limit:
                    raise
            await asyncio.sleep(delay)
            delay = min(delay * 2, self._RETRY_MAX)

    async def _read_record(
        self, store: RobotsStore, origin: Origin, faults: set[str]
    ) -> StoredRobots | None:
        """The store's record for ``origin`` if it conforms; one that does not is a miss
        (counted once per refresh in ``faults``, logged at WARNING once per field)."""
        try:
            found = await self._store_call(store.get(origin))
            if found is None:
                return None
            record = validate(found)
            check_url(record, origin.robots_url)
            check_size(record, self._policy.max_bytes)
            check_clock(record, self._clock())
        except InvalidRecordError as exc:
            if str(exc) in faults:
                return None
            faults.add(str(exc))
            self._count("store_invalid")
            level = logging.DEBUG if exc.field in self._invalid_logged else logging.WARNING
            self._invalid_logged.add(exc.field)
            logger.log(level, "shared robots record for %s ignored (%s); fetching", origin, exc)
            return None
        return record

    def _fresh_entry(
        self,
        origin: Origin,
        record: StoredRobots | None,
        previous: CacheEntry | None,
        generation: int,
    ) -> CacheEntry | None:
        """The entry ``record`` makes under this cache's policy, if not yet expired
        and if this cache's own fetch would have observed the same."""
        if record is None:
            return None
        unlike = unlike_own_fetch(record, self._policy)
        if unlike is not None:
            logger.debug("shared robots record for %s not used: %s", origin, unlike)
            return None
        entry = self._from_record(origin, record, previous, generation)
        return entry if self._clock() < entry.expires_at else None

    async def _wait_for_holder(
        self,
        store: RobotsStore,
        origin: Origin,
        previous: CacheEntry | None,
        generation: int,
        faults: set[str],
    ) -> tuple[CacheEntry | None, Lease | None]:
        """Wait for the lease holder's record, or take the lease once it is free.

        Polls with back-off; gives up after one lease TTL (on the event loop's
        clock: the injected clock may be a fake that never moves) and fetches.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._lease_ttl()
        delay = 0.05
        while loop.time() < deadline:
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)
            record = await self._read_record(store, origin, faults)
            entry = self._fresh_entry(origin, record, previous, generation)
            if entry is not None:
                return entry, None
            lease = await self._store_call(store.acquire(origin, self._lease_ttl()))
            if lease is not None:  # released without a record, or expired
                return None, lease
        return None, None

    async def _share(self, store: RobotsStore, entry: CacheEntry) -> None:
        record = self._to_record(entry)
        if record is None:
            return
        try:
            # Retried through a failover: the workers waiting on our lease need it.
            await self._patiently(lambda: self._store_call(store.put(entry.origin, record)))
        except StoreError as exc:
            self._store_failed(entry.origin, exc)

    def _store_failed(self, origin: Origin, exc: StoreError) -> None:
        self._count("store_errors")
        logger.warning("shared robots store failed for %s (%s); carrying on locally", origin, exc)

    async def _release(self, store: RobotsStore, lease: Lease) -> None:
        try:
            # One try: after a shared record a lapsed lease costs nothing.
            await self._store_call(store.release(lease))
        except StoreError as exc:
            self._count("store_errors")
            logger.warning("could not release the robots lease for %s: %s", lease.origin, exc)

    async def _store_call(self, call: Awaitable[_T]) -> _T:
        """Await one store call within the store timeout, whatever the store's client.

        :raises StoreError: also when the call does not answer in time.
        """
        timeout = min(self._STORE_TIMEOUT, self._policy.total_timeout)
        try:
            result = await asyncio.wait_for(call, timeout)
        except asyncio.TimeoutError as exc:
            self._store_down()
            raise StoreError(f"no answer within {timeout:g} s") from exc
        except InvalidRecordError:
            self._store_down_since = None  # the store answered
            raise
        except StoreError:
            self._store_down()
            raise
        self._store_down_since = None
        return result

    def _store_down(self) -> None:
        if self._store_down_since is None:
            self._store_down_since = asyncio.get_running_loop().time()

    def _lease_ttl(self) -> float:
        # Long enough for one whole fetch; a dead holder blocks others no longer.
        return self._policy.total_timeout + 5.0

    def _to_record(self, entry: CacheEntry) -> StoredRobots | None:
        """What this cache observed, for others to judge; None if it cannot be shared."""
        outcome, resolution = entry.outcome, entry.resolution
        category = outcome.category
        if category == "ok" and outcome.body is None:
            return None  # a fetcher that did not keep the body: nothing true to share
        if outcome.error in LOCAL_ERRORS:
            return None  # this worker's own limit, not a fact about the origin
        last_good_body = entry.last_good_body
        last_good_at = resolution.last_good_at if last_good_body is not None else None
        unreachable = category == "unreachable"
        record = StoredRobots(
            url=outcome.url,
            final_url=outcome.final_url,
            status=outcome.status,
            error=outcome.error,
            fetched_at=entry.fetched_at,
            headers=outcome.headers,
            hops=outcome.hops,
            bytes_read=outcome.bytes_read,
            truncated=outcome.truncated,
            failures=resolution.failures if unreachable else 0,
            unreachable_since=resolution.unreachable_since if unreachable else None,
            body=(outcome.body or b"") if category == "ok" else b"",
            last_good_body=last_good_body if last_good_at is not None else None,
            last_good_at=last_good_at,
        )
        try:
            return validate(record)
        except InvalidRecordError as exc:  # e.g. a status outside 1xx-5xx: others refuse it
            logger.debug("not sharing the robots.txt fetch of %s: %s", entry.origin, exc)
            return None

    def _from_record(
        self,
        origin: Origin,
        record: StoredRobots,
        previous: CacheEntry | None,
        generation: int,
    ) -> CacheEntry:
        """The entry this cache's policies make of ``record``, on this cache's clock.

        A fetch time ahead of this clock (within MAX_CLOCK_SKEW; further is refused
        on reading) counts as now, or as when this cache first saw the same
        observation, so that no record is served beyond this cache's own TTL from
        the fetch or from first sight. The TTL is capped at this policy's max_ttl.
        """
        now = self._clock()
        outcome = self._observed(record)
        fetched_at = min(record.fetched_at, now)
        if previous is not None and _same_observation(previous, outcome, record.fetched_at):
            fetched_at = min(fetched_at, previous.fetched_at)
        shift = fetched_at - record.fetched_at
        resolution = self._policy.resolve(outcome, self._prior(record, shift), fetched_at)
        resolution = Resolution(
            robots=resolution.robots,
            source=resolution.source,
            ttl=min(resolution.ttl, self._policy.max_ttl),
            failures=resolution.failures,
            unreachable_since=resolution.unreachable_since,
            last_good=resolution.last_good,
            last_good_at=resolution.last_good_at,
        )
        fetched = resolution.source == "fetched"
        return self._entry(
            origin,
            outcome=outcome,
            resolution=resolution,
            now=fetched_at,
            generation=generation,
            last_good_body=record.body if fetched else record.last_good_body,
        )

    def _observed(self, record: StoredRobots) -> FetchOutcome:
        """The FetchOutcome ``record`` describes, its body parsed by this cache's parser."""
        headers = dict(record.headers)
        robots = self._parse(record.body) if record.category == "ok" else None
        return FetchOutcome(
            url=record.url,
            final_url=record.final_url,
            status=record.status,
            hops=record.hops,
            # What was read is at most the body at hand (memory accounting uses it).
            bytes_read=min(record.bytes_read, len(record.body)),
            truncated=record.truncated or (robots is not None and robots.truncated),
            error=record.error,
            max_age=max_age(headers),
            retry_after=retry_after(headers),
            robots=robots,
            body=record.body or None,
            headers=record.headers,
        )

    def _prior(self, record: StoredRobots, shift: float) -> Resolution | None:
        """The state before ``record``'s fetch: failures so far and the last good copy."""
        body = record.last_good_body
        last_good = self._parse(body) if body is not None else None
        unreachable = record.category == "unreachable"
        if last_good is None and not unreachable:
            return None
        failures = min(max(record.failures, 1), self._MAX_SHARED_FAILURES) if unreachable else 1
        since = record.unreachable_since if unreachable else None
        return Resolution(
            robots=RobotsTxt.disallow_all(),
            source="unreachable",
            ttl=0.0,
            failures=failures - 1,  # resolve() counts the recorded fetch itself
            unreachable_since=since + shift if since is not None else None,
            last_good=last_good,
            last_good_at=record.last_good_at + shift if record.last_good_at is not None else None,
        )

    def _parse(self, body: bytes) -> RobotsTxt:
        """Parse a stored body once per process (identical bodies share one object)."""
        key = StoredRobots.digest(body)
        robots = self._parsed.get(key)
        if robots is None:
            parser = RobotsParser(self._match_policy, max_bytes=self._policy.max_bytes)
            parser.feed(body)
            robots = parser.close()
            self._parsed[key] = robots
            if len(self._parsed) > _PARSED_BODIES:
                self._parsed.popitem(last=False)
        else:
            self._parsed.move_to_end(key)
        return robots


def _bytes_size(body: bytes | None) -> int:
    return 0 if body is None else 33 + len(body)  # sys.getsizeof(b"") == 33


def _overran(url: str, elapsed: float) -> FetchOutcome:
    """A fetch still running at its own deadline: the site did not answer in time."""
    return FetchOutcome(url, url, None, error="timeout", error_detail=_OVERRAN, elapsed=elapsed)


def _applied(resolution: Resolution) -> str:
    """What an unreachable outcome leaves in force, for log messages."""
    if resolution.source == "stale":
        return "using the last good copy"
    if resolution.robots.synthetic == "disallow-all":
        return "disallowing all until it can be fetched"
    return "allowing all (policy)"


_T = TypeVar("_T")


@cache
def _takes_validators(kind: type[Fetcher]) -> bool:
    """True if ``kind.fetch`` accepts ``validators=`` (fetchers written before
    conditional refresh keep working, without it)."""
    try:
        parameters = inspect.signature(kind.fetch).parameters
    except (AttributeError, TypeError, ValueError):
        return False
    return "validators" in parameters or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()
    )


def _renewed(stored: FetchOutcome, answer: FetchOutcome) -> FetchOutcome:
    """``stored`` (a 2xx) as a 304 ``answer`` renews it: the same rules and body, the
    headers updated from the 304 (RFC 9111 §4.3.4), the TTL from those headers."""
    headers = {**dict(stored.headers), **dict(answer.headers)}
    return replace(
        stored,
        hops=answer.hops,
        elapsed=answer.elapsed,
        max_age=max_age(headers),
        retry_after=None,
        headers=observed_headers(headers),
    )


def _same_observation(previous: CacheEntry, outcome: FetchOutcome, fetched_at: float) -> bool:
    """True if ``previous`` came from the observation ``outcome`` describes, first seen
    by this cache before the record's (slightly future) fetch time ``fetched_at``."""
    if not previous.fetched_at < fetched_at <= previous.fetched_at + MAX_CLOCK_SKEW:
        return False
    seen = previous.outcome
    return (seen.status, seen.error, seen.final_url, seen.headers, seen.body) == (
        outcome.status,
        outcome.error,
        outcome.final_url,
        outcome.headers,
        outcome.body,
    )
