"""RobotsCache: per-origin entries with TTL, an LRU and memory bound, single-flight.

However many tasks ask for one origin at once, exactly one fetch runs (async-lru's
shielded task with a waiter count: cancelling one waiter never cancels the fetch
for the others; cancelling all of them does). Expiry, error back-off and the last
good copy live in the entries, because they differ per origin and per outcome.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeGuard

from async_lru import alru_cache

from ._errors import ClosedError, StoreError
from ._fetch_policy import FetchPolicy, Resolution, Source
from ._outcome import FetchOutcome
from ._parser import RobotsParser
from ._robots import RobotsTxt
from ._store import RulesKind, StoredRobots

if TYPE_CHECKING:
    from collections.abc import Callable

    from ._fetcher import Fetcher
    from ._policy import MatchPolicy
    from ._store import Lease, RobotsStore
    from ._url import Origin

__all__ = ["CacheEntry", "CacheStats", "RobotsCache"]

logger = logging.getLogger("robots_async")

#: Parsed bodies kept per process, keyed by content hash (shared-store mode).
_PARSED_BODIES = 256
#: Rough bytes of memory per body byte once parsed and queried (bench/bench_core.py).
_BYTES_PER_BODY_BYTE = 3
_ENTRY_OVERHEAD = 1024


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
    coalesced: int = 0
    errors: int = 0
    stale_served: int = 0
    evictions: int = 0
    store_hits: int = 0
    store_errors: int = 0
    entries: int = 0
    memory: int = 0


class RobotsCache:
    """Per-origin robots.txt cache in front of a :class:`Fetcher`.

    :param fetcher: what fetches on a miss.
    :param policy: status semantics and TTLs (:class:`FetchPolicy`).
    :param max_entries: LRU bound on origins kept.
    :param max_memory: approximate bytes of parsed rules kept (LRU eviction).
    :param max_concurrent_fetches: fetches running at once, all origins together.
    :param clock: seconds; inject a fake one to test expiry without sleeping.
    :param store: a shared :class:`RobotsStore` (records and fetch leases).
    :param match_policy: how bodies from the store are parsed.
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
        match_policy: str | MatchPolicy = "google",
    ) -> None:
        if max_entries < 1 or max_memory < 1 or max_concurrent_fetches < 1:
            raise ValueError("max_entries, max_memory and max_concurrent_fetches must be >= 1")
        self._fetcher = fetcher
        self._policy = policy or FetchPolicy()
        self._max_entries = max_entries
        self._max_memory = max_memory
        self._clock = clock
        self._store = store
        self._match_policy = match_policy
        self._entries: OrderedDict[Origin, CacheEntry] = OrderedDict()
        self._memory = 0
        self._counts: dict[str, int] = dict.fromkeys(CacheStats.__slots__, 0)
        self._slots = asyncio.Semaphore(max_concurrent_fetches)
        self._parsed: OrderedDict[str, RobotsTxt] = OrderedDict()
        # Single-flight per (origin, attempt): every new fetch gets a key never used
        # before, so the clean-up of a finished or cancelled fetch cannot remove the
        # slot of the one that replaced it.
        self._refresh = alru_cache(maxsize=None)(self._refresh_entry)
        self._attempts = itertools.count(1)
        self._inflight: dict[Origin, int] = {}
        self._closed = False

    @property
    def stats(self) -> CacheStats:
        """A snapshot of the counters."""
        counts = {**self._counts, "entries": len(self._entries), "memory": self._memory}
        return CacheStats(**counts)

    @property
    def policy(self) -> FetchPolicy:
        """The fetch policy in force."""
        return self._policy

    def peek(self, origin: Origin) -> CacheEntry | None:
        """The entry for ``origin`` if one is cached (fresh or not); no fetch."""
        return self._entries.get(origin)

    def invalidate(self, origin: Origin) -> bool:
        """Forget ``origin``: the next question fetches again. True if it was cached."""
        entry = self._entries.pop(origin, None)
        if entry is None:
            return False
        self._memory -= entry.size
        return True

    def fresh(self, origin: Origin) -> CacheEntry | None:
        """The entry for ``origin`` if it is cached and not expired (counted as a hit)."""
        entry = self._entries.get(origin)
        if entry is None or self._clock() >= entry.expires_at or self._closed:
            return None
        self._entries.move_to_end(origin)
        self._counts["hits"] += 1
        if entry.source == "stale":
            self._counts["stale_served"] += 1
        return entry

    async def get(self, origin: Origin) -> tuple[CacheEntry, bool]:
        """The entry in force for ``origin`` and whether it came from the cache.

        A missing or expired entry is fetched; concurrent callers share that fetch.
        :raises ClosedError: after :meth:`aclose`.
        """
        if self._closed:
            raise ClosedError("cache is closed")
        entry = self.fresh(origin)
        if entry is not None:
            return entry, True
        entry = self._entries.get(origin)
        self._count("misses")
        attempt = self._inflight.get(origin)
        if attempt is not None and self._refresh.cache_contains(origin, attempt):
            self._count("coalesced")
        else:
            attempt = self._inflight[origin] = next(self._attempts)
        entry = await self._refresh(origin, attempt)
        if entry.source == "stale":
            self._count("stale_served")
        return entry, False

    async def aclose(self) -> None:
        """Cancel fetches in flight and refuse further use; idempotent."""
        self._closed = True
        await self._refresh.cache_close()

    async def _refresh_entry(self, origin: Origin, attempt: int) -> CacheEntry:
        try:
            previous = self._entries.get(origin)
            generation = previous.generation + 1 if previous is not None else 1
            async with self._slots:
                if self._store is None:
                    entry = await self._fetch_locally(origin, previous, generation)
                else:
                    entry = await self._fetch_shared(origin, previous, generation)
            self._keep(entry)
            return entry
        finally:
            # The result now lives in _entries: drop this attempt's single-flight slot.
            self._refresh.cache_invalidate(origin, attempt)
            if self._inflight.get(origin) == attempt:
                del self._inflight[origin]

    async def _fetch_locally(
        self, origin: Origin, previous: CacheEntry | None, generation: int
    ) -> CacheEntry:
        # With a shared store the body is kept even here: it may become the last
        # good copy that a later record shares.
        keep_body = self._store is not None
        outcome = await self._fetcher.fetch(origin.robots_url, keep_body=keep_body)
        return self._resolve(origin, outcome, previous, generation)

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
        size = _ENTRY_OVERHEAD + _BYTES_PER_BODY_BYTE * outcome.bytes_read
        if resolution.last_good is not None and resolution.last_good is not resolution.robots:
            size += _ENTRY_OVERHEAD  # a kept last good copy (its size is not known here)
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
        """Store ``entry`` and evict least recently used entries beyond the bounds."""
        old = self._entries.pop(entry.origin, None)
        if old is not None:
            self._memory -= old.size
        self._entries[entry.origin] = entry
        self._memory += entry.size
        while len(self._entries) > 1 and (
            len(self._entries) > self._max_entries or self._memory > self._max_memory
        ):
            _, evicted = self._entries.popitem(last=False)
            self._memory -= evicted.size
            self._count("evictions")

    def _count(self, name: str) -> None:
        self._counts[name] += 1

    # --- shared store -------------------------------------------------------------

    async def _fetch_shared(
        self, origin: Origin, previous: CacheEntry | None, generation: int
    ) -> CacheEntry:
        """Use a fresh shared record, else fetch under the lease (or wait for it)."""
        store = self._store
        assert store is not None
        lease: Lease | None = None
        try:  # whatever happens, a lease we took is given back
            try:
                record = await store.get(origin)
                if self._usable(record):
                    return self._from_store(origin, record, generation)
                lease = await store.acquire(origin, self._lease_ttl())
                if lease is None:
                    fresh, lease = await self._wait_for_holder(store, origin)
                    if self._usable(fresh):
                        return self._from_store(origin, fresh, generation)
                if lease is not None:
                    # The previous holder may have written its record and released
                    # the lease between our read and our acquire: read once more.
                    record = await store.get(origin) or record
                    if self._usable(record):
                        return self._from_store(origin, record, generation)
                if previous is None and record is not None:
                    previous = self._from_record(origin, record, generation)
            except StoreError as exc:
                self._store_failed(origin, exc)
            entry = await self._fetch_locally(origin, previous, generation)
            await self._share(store, entry)
            return entry
        finally:
            if lease is not None:
                await self._release(store, lease)

    def _usable(self, record: StoredRobots | None) -> TypeGuard[StoredRobots]:
        """True for a record that has not expired yet."""
        return record is not None and self._clock() < record.expires_at

    def _from_store(self, origin: Origin, record: StoredRobots, generation: int) -> CacheEntry:
        self._count("store_hits")
        return self._from_record(origin, record, generation)

    async def _wait_for_holder(
        self, store: RobotsStore, origin: Origin
    ) -> tuple[StoredRobots | None, Lease | None]:
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
            record = await store.get(origin)
            if self._usable(record):
                return record, None
            lease = await store.acquire(origin, self._lease_ttl())
            if lease is not None:  # released without a record, or expired
                return None, lease
        return None, None

    async def _share(self, store: RobotsStore, entry: CacheEntry) -> None:
        try:
            await store.put(entry.origin, self._to_record(entry))
        except StoreError as exc:
            self._store_failed(entry.origin, exc)

    def _store_failed(self, origin: Origin, exc: StoreError) -> None:
        self._count("store_errors")
        logger.warning("shared robots store failed for %s (%s); carrying on locally", origin, exc)

    async def _release(self, store: RobotsStore, lease: Lease) -> None:
        try:
            await store.release(lease)
        except StoreError as exc:
            self._count("store_errors")
            logger.warning("could not release the robots lease for %s: %s", lease.origin, exc)

    def _lease_ttl(self) -> float:
        # Long enough for one whole fetch; a dead holder blocks others no longer.
        return self._policy.total_timeout + 5.0

    def _to_record(self, entry: CacheEntry) -> StoredRobots:
        outcome, resolution = entry.outcome, entry.resolution
        body = outcome.body or b""
        return StoredRobots(
            url=outcome.url,
            final_url=outcome.final_url,
            status=outcome.status,
            error=outcome.error,
            hops=outcome.hops,
            bytes_read=outcome.bytes_read,
            truncated=outcome.truncated,
            source=resolution.source,
            rules=_rules_kind(entry),
            fetched_at=entry.fetched_at,
            expires_at=entry.expires_at,
            failures=resolution.failures,
            unreachable_since=resolution.unreachable_since,
            last_good_at=resolution.last_good_at,
            body=body if resolution.source == "fetched" else b"",
            last_good_body=entry.last_good_body,
        )

    def _from_record(self, origin: Origin, record: StoredRobots, generation: int) -> CacheEntry:
        last_good = self._parse(record.last_good_body) if record.last_good_body else None
        if record.rules == "body":
            robots = self._parse(record.body)
        elif record.rules == "last-good":
            # A stale record must never turn into allow-all (RFC 9309 §2.3.1.4).
            robots = last_good if last_good is not None else RobotsTxt.disallow_all()
        elif record.rules == "disallow-all":
            robots = RobotsTxt.disallow_all()
        else:
            robots = RobotsTxt.allow_all()
        outcome = FetchOutcome(
            url=record.url,
            final_url=record.final_url,
            status=record.status,
            hops=record.hops,
            bytes_read=record.bytes_read,
            truncated=record.truncated,
            error=record.error,  # type: ignore[arg-type]
            robots=robots if record.rules == "body" else None,
            body=record.body or None,
        )
        source: Source = record.source  # type: ignore[assignment]
        resolution = Resolution(
            robots,
            source,
            record.expires_at - record.fetched_at,
            record.failures,
            record.unreachable_since,
            last_good,
            record.last_good_at,
        )
        size = _ENTRY_OVERHEAD + _BYTES_PER_BODY_BYTE * len(record.body)
        return CacheEntry(
            origin,
            robots,
            source,
            outcome,
            record.fetched_at,
            record.expires_at,
            resolution,
            generation,
            size,
            record.last_good_body,
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


def _applied(resolution: Resolution) -> str:
    """What an unreachable outcome leaves in force, for log messages."""
    if resolution.source == "stale":
        return "using the last good copy"
    if resolution.robots.synthetic == "disallow-all":
        return "disallowing all until it can be fetched"
    return "allowing all (policy)"


def _rules_kind(entry: CacheEntry) -> RulesKind:
    if entry.source == "fetched":
        return "body"
    if entry.source == "stale":
        # Without the body there is nothing to share: others fail closed instead.
        return "last-good" if entry.last_good_body else "disallow-all"
    return "disallow-all" if entry.robots.synthetic == "disallow-all" else "allow-all"
