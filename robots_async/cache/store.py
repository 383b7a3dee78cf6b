"""Shared-store protocol: robots.txt records that several workers can share.

A record (:class:`StoredRobots`, see ``_records``) is what a worker observed when it
fetched an origin (status, the headers that matter, the body), never a verdict and
never a pickle: each reader applies its own policies to it. A *lease* (``SET NX PX``
in Redis) lets one worker fetch an origin while the others wait. :class:`MemoryStore`
implements the protocol in-process (for tests and for several caches in one process);
:class:`SQLiteStore` (``_sqlite``) across the processes of one machine and across
restarts; ``robots_async.contrib.redis.RedisStore`` across machines. A checker never
closes a store it is given: use ``async with`` or call ``aclose()``.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol, TypeVar, runtime_checkable

from ..core.errors import StoreError
from .closing import AsyncClosing
from .pace_table import PaceTable, Reservation
from .records import StoredRobots
from .resources import validate_resource

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..core.pacing import PaceRule
    from ..core.url import Origin
    from .resources import ResourceKind, StoredResource

__all__ = [
    "Lease",
    "MemoryStore",
    "ResourceLease",
    "RobotsStore",
    "StoreSchemaError",
    "StoredRobots",
]


_K = TypeVar("_K")
_L = TypeVar("_L", bound="Lease")


class StoreSchemaError(StoreError):
    """Raised when a store's file or keys were laid out by a newer robots_async (or
    are not a robots_async store at all): refused when the store is opened, since
    writing to it could break the crawlers that made it."""


@dataclass(frozen=True, slots=True)
class Lease:
    """The right to fetch one origin for a while; the token proves ownership."""

    origin: Origin
    token: str
    expires_at: float


@dataclass(frozen=True, slots=True)
class ResourceLease(Lease):
    """The right to fetch one of an origin's other resources (tdmrep.json)."""

    kind: ResourceKind


@runtime_checkable
class RobotsStore(Protocol):
    """Where records are shared. A method that fails raises ``robots_async.StoreError``
    (``InvalidRecordError`` for a record that does not conform); the cache then
    carries on with its own fetch. The cache bounds every call with a timeout.

    Optional: a ``retry_failures`` attribute that is True when failures may be
    transient (a Redis Cluster failing over); the cache then retries the store for up
    to 5 s before fetching by itself, so the fleet still fetches each origin once."""

    async def get(self, origin: Origin) -> StoredRobots | None:
        """The record for ``origin``, or None."""
        ...

    async def put(self, origin: Origin, record: StoredRobots) -> None:
        """Store ``record``, replacing the previous one; it may be dropped once it is
        of no use (older than any policy's stale_max_age)."""
        ...

    async def acquire(self, origin: Origin, ttl: float) -> Lease | None:
        """Take the fetch lease for ``origin`` for ``ttl`` seconds; None if it is held."""
        ...

    async def release(self, lease: Lease) -> bool:
        """Give a lease back; False if it had expired or belongs to someone else."""
        ...

    # Optional: ``async def renew(lease, ttl) -> Lease | None``, which extends a lease
    # still held by its token to ``ttl`` seconds from now (None if it was lost). With
    # it, the cache holds short leases renewed while its fetch runs, so a dead
    # holder frees an origin in seconds; without it, a lease lasts a whole fetch.
    #
    # Optional, for pacing shared by every worker (RobotsChecker.wait/observe), each
    # one atomic on the store's own clock (see core.pacing and cache.pace_table):
    # ``async def reserve(unit, rule, jitter) -> Reservation``,
    # ``async def pause_left(unit, rule, jitter) -> float`` and
    # ``async def observe(unit, rule, *, busy, retry_after, elapsed=None) -> None``
    # (``elapsed``: seconds since the response's request was sent, None if unknown; a
    # store whose observe() takes no ``elapsed`` is called without it). Without them
    # a checker paces within its own process only. With ``async def sent_late(unit,
    # rule) -> None`` too, a page sent after its turn (now, on the store's clock)
    # keeps every worker's next visit an interval after it; without it, only this
    # process's. With ``async def left_at_send(unit, rule, held, jitter) -> tuple[float,
    # float]`` too (``core.pacing.left_at_send``), a page its download slot held past
    # its turn is not sent within an interval of another worker's page.
    #
    # Optional, for an origin's other resources (``cache.resources``: tdmrep.json),
    # so a fleet fetches each once: ``async def get_resource(origin, kind) ->
    # StoredResource | None``, ``async def put_resource(origin, record) -> None``,
    # ``async def acquire_resource(origin, kind, ttl) -> ResourceLease | None`` and
    # ``async def release_resource(lease) -> bool``; the record and the lease live
    # apart from robots.txt's, and expire at the record's ``expires``. Without them
    # each process fetches tdmrep.json once. With ``async def renew_resource(lease,
    # ttl) -> ResourceLease | None`` too (as ``renew``, for those leases), a dead
    # holder frees an origin's tdmrep.json in seconds rather than a whole fetch.

    async def aclose(self) -> None:
        """Release connections."""
        ...


class MemoryStore(AsyncClosing):
    """:class:`RobotsStore` in this process: a dict of records and of leases."""

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self._records: dict[Origin, StoredRobots] = {}
        self._leases: dict[Origin, Lease] = {}
        self._clock = clock
        self._lock = asyncio.Lock()
        self._pacing = PaceTable(clock)
        #: Records and when (on this store's clock) each is dropped.
        self._resources: dict[tuple[Origin, str], tuple[StoredResource, float]] = {}
        self._resource_leases: dict[tuple[Origin, str], ResourceLease] = {}

    async def get(self, origin: Origin) -> StoredRobots | None:
        """The record for ``origin``, or None."""
        return self._records.get(origin)

    async def put(self, origin: Origin, record: StoredRobots) -> None:
        """Store ``record``."""
        self._records[origin] = record

    async def acquire(self, origin: Origin, ttl: float) -> Lease | None:
        """Take the lease unless another unexpired one is held."""
        async with self._lock:
            now = self._clock()
            held = self._leases.get(origin)
            if held is not None and held.expires_at > now:
                return None
            lease = Lease(origin, secrets.token_hex(16), now + ttl)
            self._leases[origin] = lease
            return lease

    async def release(self, lease: Lease) -> bool:
        """Release ``lease`` only if it is still the one held (token check)."""
        async with self._lock:
            held = self._leases.get(lease.origin)
            if held is None or held.token != lease.token:
                return False
            del self._leases[lease.origin]
            return held.expires_at > self._clock()

    async def renew(self, lease: Lease, ttl: float) -> Lease | None:
        """Extend ``lease`` to ``ttl`` seconds from now if it is still the one held."""
        return await self._renewed(self._leases, lease.origin, lease, ttl)

    async def reserve(self, unit: str, rule: PaceRule, jitter: float) -> Reservation:
        """Reserve the next visit of ``unit`` (an origin or a host) under ``rule``."""
        return self._pacing.reserve(unit, rule, jitter)

    async def pause_left(self, unit: str, rule: PaceRule, jitter: float) -> float:
        """Seconds until the pauses ``unit`` asked for end."""
        return self._pacing.pause_left(unit, rule, jitter)

    async def sent_late(self, unit: str, rule: PaceRule) -> None:
        """Record a page of ``unit`` sent now, after its turn."""
        self._pacing.sent_late(unit, rule)

    async def left_at_send(
        self, unit: str, rule: PaceRule, held: float, jitter: float
    ) -> tuple[float, float]:
        """For a page of ``unit`` whose turn began ``held`` seconds ago: the pauses
        left, and the seconds short of an interval after another page."""
        return self._pacing.left_at_send(unit, rule, held, jitter)

    async def observe(
        self,
        unit: str,
        rule: PaceRule,
        *,
        busy: bool,
        retry_after: float | None,
        elapsed: float | None = None,
    ) -> None:
        """Record a page response of ``unit``: 429/503 (``busy``) or a success,
        ``elapsed`` seconds after its request was sent (None: not known)."""
        self._pacing.observe(unit, rule, busy=busy, retry_after=retry_after, elapsed=elapsed)

    async def get_resource(self, origin: Origin, kind: ResourceKind) -> StoredResource | None:
        """The ``kind`` record of ``origin``, or None (also once its lifetime is over).

        :raises InvalidRecordError: whatever was put does not conform.
        """
        kept = self._resources.get((origin, kind))
        if kept is None or kept[1] <= self._clock():
            return None
        return validate_resource(kept[0])

    async def put_resource(self, origin: Origin, record: StoredResource) -> None:
        """Store ``record`` (its ``kind`` names which resource of ``origin`` it is) for
        its lifetime, ``expires - fetched_at``, on this store's clock."""
        lifetime = record.expires - record.fetched_at
        self._resources[origin, record.kind] = (record, self._clock() + lifetime)

    async def acquire_resource(
        self, origin: Origin, kind: ResourceKind, ttl: float
    ) -> ResourceLease | None:
        """Take the fetch lease of ``kind`` on ``origin`` unless one is held."""
        async with self._lock:
            now = self._clock()
            held = self._resource_leases.get((origin, kind))
            if held is not None and held.expires_at > now:
                return None
            lease = ResourceLease(origin, secrets.token_hex(16), now + ttl, kind)
            self._resource_leases[origin, kind] = lease
            return lease

    async def release_resource(self, lease: ResourceLease) -> bool:
        """Release ``lease`` only if it is still the one held (token check)."""
        async with self._lock:
            key = (lease.origin, lease.kind)
            held = self._resource_leases.get(key)
            if held is None or held.token != lease.token:
                return False
            del self._resource_leases[key]
            return held.expires_at > self._clock()

    async def renew_resource(self, lease: ResourceLease, ttl: float) -> ResourceLease | None:
        """Extend ``lease`` to ``ttl`` seconds from now if it is still the one held."""
        return await self._renewed(self._resource_leases, (lease.origin, lease.kind), lease, ttl)

    async def aclose(self) -> None:
        """Nothing to release."""

    async def _renewed(self, leases: dict[_K, _L], key: _K, lease: _L, ttl: float) -> _L | None:
        """``lease`` extended in ``leases``, or None if it lapsed or was taken over."""
        async with self._lock:
            now = self._clock()
            held = leases.get(key)
            if held is None or held.token != lease.token or held.expires_at <= now:
                return None
            leases[key] = renewed = replace(lease, expires_at=now + ttl)
            return renewed
