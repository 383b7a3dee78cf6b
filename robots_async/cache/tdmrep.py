"""TdmRepCache: each origin's ``/.well-known/tdmrep.json``, fetched once and kept.

The second resource kind per origin beside robots.txt. It fetches through the robots
cache's own fetcher (redirect rules, SSRF guard, byte and time limits) and its fetch
lanes, so tdmrep.json requests count against the same socket bound; concurrent
questions for one origin share one fetch (single flight), which outlives a cancelled
waiter as robots.txt fetches do.

Outcomes (TDMRep §4.4; never failing open): a 2xx body is parsed; a 4xx but 429, or a
2xx body that cannot begin a JSON file (an HTML page: a soft 404), means no file, so
nothing is reserved by it; a 429 or 5xx, an unasked 206, a network error, a redirect
fault or a body over the cap is "unknown" and kept only ``error_ttl`` (the robots.txt
policy's), then asked again.

Shared through the robots cache's store when it has the resource methods
(``cache.resources``; MemoryStore, SQLiteStore and RedisStore do): the fleet fetches
each origin's file once (``cache.shared_resources``: the lease holder fetches, the
others wait for its record within one fetch's time). The record is the observation
(status or failure kind, body, fetch time); each reader parses the body and applies
its own ``ttl``/``error_ttl`` from the fetch time (never past the writer's expiry).
A failing store means a local fetch; a record that does not conform, a refetch. A
store without those methods: each process fetches once.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from ..core.errors import ClosedError, ConfigurationError
from ..core.tdmrep import (
    SNIFF_BYTES,
    TDMREP_MAX_BYTES,
    TdmAnswer,
    TdmRep,
    absent_status,
    not_a_file,
    parse_tdmrep,
)
from ..core.url import Origin
from ..core.validate import integer
from ..fetch.body import StreamingFetcher
from .records import LOCAL_ERRORS
from .resources import StoredResource, resource_url
from .shared_resources import ResourceSharing, resource_store

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..fetch.fetcher import Fetcher
    from ..fetch.outcome import ErrorKind, FetchOutcome
    from .cache import RobotsCache

__all__ = ["TdmRecord", "TdmRepCache", "TdmRepStats"]

#: Bytes of records kept by default: 64 files of TDMREP_MAX_ENTRIES entries, or far
#: more real ones (a few hundred bytes each).
DEFAULT_MAX_MEMORY = 16 * 1024 * 1024
# A record's estimated bytes: a base and per entry (its object, index, reservation)
# plus its strings' characters; tracemalloc measured 172-252 bytes an entry for
# 8,000-entry files of valid, "{}" and invalid entries (estimate 1.0-1.2x).
_RECORD = 300
_PER_ENTRY = 210
#: Seconds past total_timeout before the lanes stop a fetch (the fetcher's fires first).
_GRACE = 0.25
#: Seconds a peer waits beyond one fetch's deadline for the lease holder's record
#: (its store calls: a put and a few reads).
_STORE_MARGIN = 1.0


@dataclass(frozen=True, slots=True)
class TdmRecord:
    """One origin's tdmrep.json as last fetched: parsed file, HTTP status, when."""

    rep: TdmRep
    status: int | None
    fetched_at: float
    expires: float


@dataclass(frozen=True, slots=True)
class TdmRepStats:
    """A TdmRepCache's counters since it was created."""

    #: tdmrep.json requests this process made (a fetch the lanes start again counts once).
    fetches: int = 0
    #: Of those, read as "unknown" (5xx, network error, over the cap, unreadable JSON,
    #: one of our own limits): kept ``error_ttl``, refusing nothing meanwhile.
    unknown: int = 0
    #: Origins whose record is held.
    entries: int = 0
    #: Estimated bytes those records hold (at most ``max_memory``, or one record).
    memory: int = 0
    #: Records read from the shared store instead of fetching.
    store_hits: int = 0
    #: Store calls that failed (this process fetched instead).
    store_errors: int = 0
    #: Shared records refused (not conforming): fetched again and overwritten.
    store_invalid: int = 0


class _Bytes:
    """A BodySink that keeps a body up to a cap (one past it marks it too large)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.parts: list[bytes] = []
        self.size = 0

    def feed(self, data: bytes) -> bool:
        self.parts.append(data)
        self.size += len(data)
        return self.size > self.cap


class TdmRepCache:
    """Per-origin tdmrep.json records in front of a robots cache's fetcher and lanes."""

    def __init__(
        self,
        cache: RobotsCache,
        fetcher: Fetcher,
        *,
        max_entries: int = 10_000,
        max_memory: int = DEFAULT_MAX_MEMORY,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if max_entries < 1:
            raise ConfigurationError("TdmRepCache(max_entries=)", max_entries, "an int >= 1")
        self._cache = cache
        self._fetcher = fetcher
        self._max_entries = max_entries
        self._max_memory = integer("TdmRepCache(max_memory=)", max_memory, minimum=1)
        self._clock = clock
        self._records: dict[Origin, TdmRecord] = {}
        self._sizes: dict[Origin, int] = {}
        #: Estimated bytes of the records kept (at most max_memory, or one record).
        self.memory = 0
        self._inflight: dict[Origin, asyncio.Task[TdmRecord]] = {}
        self._closed = False
        self.fetches = 0
        self._unknown = 0
        store = resource_store(cache.store)
        self._sharing: ResourceSharing[TdmRecord] | None = None
        if store is not None:
            patience = cache.policy.total_timeout + _GRACE + _STORE_MARGIN
            self._sharing = ResourceSharing(
                store, "tdmrep", use=self._from_stored, patience=patience, clock=clock
            )

    @property
    def sharing(self) -> ResourceSharing[TdmRecord] | None:
        """The shared-store protocol (its counters: hits, errors, invalid), if any."""
        return self._sharing

    @property
    def stats(self) -> TdmRepStats:
        """A snapshot of the counters (the shared store's three are 0 without one)."""
        sharing = self._sharing
        return TdmRepStats(
            self.fetches,
            self._unknown,
            len(self._records),
            self.memory,
            sharing.hits if sharing is not None else 0,
            sharing.errors if sharing is not None else 0,
            sharing.invalid if sharing is not None else 0,
        )

    async def lookup(self, url: object) -> tuple[TdmAnswer, TdmRecord]:
        """TDMRep's answer for ``url`` and the record it came from."""
        record = await self.get(Origin.from_url(url))
        return record.rep.lookup(url), record

    async def get(self, origin: Origin) -> TdmRecord:
        """The record in force for ``origin``, fetched (once, however many ask) if needed."""
        if self._closed:
            raise ClosedError("tdmrep cache is closed")
        record = self._records.get(origin)
        if record is not None and record.expires > self._clock():
            return record
        task = self._inflight.get(origin)
        if task is None:
            task = asyncio.get_running_loop().create_task(self._obtain(origin))
            self._inflight[origin] = task
            task.add_done_callback(partial(self._landed, origin))
        return await asyncio.shield(task)

    async def aclose(self) -> None:
        """Cancel fetches in flight (their waiters get ClosedError) and refuse further
        use; idempotent."""
        self._closed = True
        tasks = list(self._inflight.values())
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)

    def _landed(self, origin: Origin, task: asyncio.Task[TdmRecord]) -> None:
        if self._inflight.get(origin) is task:
            del self._inflight[origin]
        if not task.cancelled() and task.exception() is None:
            self._keep(origin, task.result())

    def _keep(self, origin: Origin, record: TdmRecord) -> None:
        self._forget(origin)
        size = _size(record.rep)
        records = self._records
        while records and (  # oldest inserted first
            len(records) >= self._max_entries or self.memory + size > self._max_memory
        ):
            self._forget(next(iter(records)))
        records[origin] = record
        self._sizes[origin] = size
        self.memory += size

    def _forget(self, origin: Origin) -> None:
        if self._records.pop(origin, None) is not None:
            self.memory -= self._sizes.pop(origin)

    async def _obtain(self, origin: Origin) -> TdmRecord:
        try:
            if self._sharing is None:
                record, _ = await self._fetch(origin)
                return record
            return await self._sharing.obtain(origin, partial(self._fetch, origin))
        except asyncio.CancelledError:
            if self._closed:  # aclose(): every waiter learns why, not a bare cancellation
                raise ClosedError(
                    "tdmrep cache closed while tdmrep.json was being fetched"
                ) from None
            raise

    def _from_stored(self, stored: StoredResource) -> TdmRecord | None:
        """This reader's record from a shared observation, None if stale here: its own
        TTL from the fetch time, never beyond the writer's expiry."""
        rep = _reading(stored.status, stored.error, "", stored.truncated, stored.body)
        policy = self._cache.policy
        ttl = policy.error_ttl if rep.error is not None else policy.ttl
        expires = min(stored.expires, stored.fetched_at + ttl)
        if expires <= self._clock():
            return None
        return TdmRecord(rep, stored.status, stored.fetched_at, expires)

    async def _fetch(self, origin: Origin) -> tuple[TdmRecord, StoredResource | None]:
        """Fetch here: the record, and the observation to share (None when the fetch
        ended by a limit of this process, which says nothing about the site)."""
        url = resource_url(origin, "tdmrep")
        sinks: list[_Bytes] = []

        async def attempt() -> FetchOutcome:
            sink = _Bytes(TDMREP_MAX_BYTES)
            sinks.append(sink)  # the lanes may start a fetch again: the last one counts
            if isinstance(self._fetcher, StreamingFetcher):
                return await self._fetcher.fetch_into(url, sink)
            # A fetcher without streaming (Scrapy's engine) keeps the body instead; it
            # also reads it as robots.txt, wasted work on a file of a few entries.
            outcome = await self._fetcher.fetch(url, keep_body=True)
            sink.feed(outcome.body or b"")
            return outcome

        self.fetches += 1
        policy = self._cache.policy
        outcome = await self._cache.lanes.run(attempt, policy.total_timeout + _GRACE)
        now = self._clock()
        if isinstance(outcome, str) or not sinks:
            self._unknown += 1
            rep = TdmRep.unknown("tdmrep.json still loading at its deadline")
            stored = StoredResource("tdmrep", url, None, "timeout", now, now + policy.error_ttl)
            return TdmRecord(rep, None, now, stored.expires), stored
        sink = sinks[-1]
        body = b"".join(sink.parts)
        limit = policy.max_bytes
        ours = limit is not None and limit < sink.cap and sink.size <= sink.cap
        success = 200 <= (outcome.status or 0) < 300
        if outcome.truncated and ours and success and not_a_file(body, cut=True) is None:
            # A fetcher keeping bodies (Scrapy's) stopped at robots.txt's max_bytes,
            # below this cap: how long the file is, nobody saw. Our limit: not shared.
            # (A page shows in its first bytes: that observation is the site's.)
            self._unknown += 1
            why = f"tdmrep.json cut at max_bytes={limit}, below its {sink.cap}-byte cap"
            return TdmRecord(TdmRep.unknown(why), outcome.status, now, now + policy.error_ttl), None
        cut = sink.size > sink.cap or outcome.truncated
        rep = _reading(outcome.status, outcome.error, outcome.error_detail, cut, body)
        if rep.error is not None:
            self._unknown += 1
        ttl = policy.error_ttl if rep.error is not None else policy.ttl
        record = TdmRecord(rep, outcome.status, now, now + ttl)
        if outcome.error in LOCAL_ERRORS:
            return record, None
        kept = body if outcome.error is None and success and not cut else b""
        if rep.not_a_file is not None and body:
            # Of a page, cut short or not, what tells it is one: no file (see _reading).
            kept, cut = body[:SNIFF_BYTES], False
        stored = StoredResource(
            "tdmrep", url, outcome.status, outcome.error, now, now + ttl, cut, kept
        )
        return record, stored


def _size(rep: TdmRep) -> int:
    """Estimated bytes a parsed file keeps (see _PER_ENTRY)."""
    return (
        _RECORD
        + len(rep.error or "")
        + len(rep.not_a_file or "")
        + sum(
            _PER_ENTRY + len(e.location or "") + len(e.policy or "") + len(e.problem or "")
            for e in rep.entries
        )
    )


def _reading(
    status: int | None, error: ErrorKind | None, detail: str, cut: bool, body: bytes
) -> TdmRep:
    """The parsed file for one observation (see the module docstring)."""
    if error is not None or status is None:
        why = f"{error} {detail}".strip()
        return TdmRep.unknown(f"tdmrep.json not fetched ({why})")
    if absent_status(status):
        return TdmRep.absent()
    if not 200 <= status < 300:
        return TdmRep.unknown(f"tdmrep.json answered HTTP {status}")
    if status == 206:  # part of a file, though no range is asked (RFC 9110 §15.3.7)
        return TdmRep.unknown("tdmrep.json answered 206 Partial Content, unasked")
    if cut:
        # A page shows in its first bytes, of a body cut short too; a record of a file
        # cut short keeps no body. (parse_tdmrep() tells a whole body, a page's shared
        # 4 KB record included.)
        page = not_a_file(body, cut=True) if body else None
        if page is not None:
            return TdmRep.absent(page)
        return TdmRep.unknown(f"tdmrep.json over {TDMREP_MAX_BYTES} bytes")
    return parse_tdmrep(body)
