"""One fetch per origin across a fleet for an origin's other resources (tdmrep.json).

The robots.txt protocol (``shared``) in a smaller form, through a store's optional
resource methods (``cache.resources``): a record that the reader finds fresh is used;
otherwise the worker that takes the origin's lease fetches and puts its observation,
while the others poll the store for it, within one fetch's deadline, then fetch for
themselves. Every store call is bounded by a timeout. A store that fails is never
the answer: the worker fetches locally (after a failed put, its own fetch stands). A
record that does not conform (corrupt, or of a newer layout) is a miss, fetched and
overwritten.

With a store that can renew a resource lease (``renew_resource``), the lease is short
(``shared.LEASE_TTL``) and renewed while its holder fetches, as robots.txt's is: a
holder that dies frees the origin within that TTL, since waiters try the lease at
each look. Without it, a lease lasts one whole fetch (a dead holder blocks its peers
that long).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar, cast

from ..core.errors import InvalidRecordError, StoreError
from ..fetch.deadline import within
from .resources import check_resource
from .shared import LEASE_TTL, keep_renewed

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from ..core.url import Origin
    from .resources import ResourceKind, StoredResource
    from .store import ResourceLease

__all__ = ["ResourceSharing", "ResourceStore", "resource_store"]

logger = logging.getLogger("robots_async")
_T = TypeVar("_T")
_R = TypeVar("_R")
_METHODS = ("get_resource", "put_resource", "acquire_resource", "release_resource")
#: First and longest pause between a waiter's looks at the store.
_POLL_FIRST = 0.05
_POLL_MAX = 0.5


class ResourceStore(Protocol):
    """The optional store methods for an origin's other resources."""

    async def get_resource(self, origin: Origin, kind: ResourceKind) -> StoredResource | None:
        """The record of ``kind`` for ``origin``, or None."""
        ...

    async def put_resource(self, origin: Origin, record: StoredResource) -> None:
        """Replace the record of ``record.kind`` for ``origin``."""
        ...

    async def acquire_resource(
        self, origin: Origin, kind: ResourceKind, ttl: float
    ) -> ResourceLease | None:
        """The fetch lease for ``ttl`` seconds, or None if another is held."""
        ...

    async def release_resource(self, lease: ResourceLease) -> bool:
        """Give the lease back; False if it had lapsed or was taken over."""
        ...

    # Optional: ``async def renew_resource(lease, ttl) -> ResourceLease | None``, which
    # extends a lease still held by its token to ``ttl`` seconds from now (None if it
    # was lost). With it, leases are short and renewed while their fetch runs.


def resource_store(store: object) -> ResourceStore | None:
    """``store`` if it has every resource method, else None (then each process
    fetches for itself, as without a store)."""
    if store is None or not all(callable(getattr(store, name, None)) for name in _METHODS):
        return None
    return cast("ResourceStore", store)  # checked method by method above


class ResourceSharing(Generic[_T]):
    """Records and leases of one resource kind in one store, for one reader.

    :param use: the reader's own reading of a record, or None when it is not fresh
        under the reader's policy and clock.
    :param patience: seconds one fetch may take (waiters wait that long, and a
        lease lasts that long unless the store renews leases).
    """

    #: Seconds one store call may take (at most ``patience``).
    STORE_TIMEOUT = 2.0

    def __init__(
        self,
        store: ResourceStore,
        kind: ResourceKind,
        *,
        use: Callable[[StoredResource], _T | None],
        patience: float,
        clock: Callable[[], float],
    ) -> None:
        self._store = store
        self._kind: ResourceKind = kind
        self._use = use
        self._patience = patience
        self._clock = clock
        self._timeout = min(self.STORE_TIMEOUT, patience)
        renew = getattr(store, "renew_resource", None)
        self._renew: Callable[[ResourceLease, float], Awaitable[ResourceLease | None]] | None
        self._renew = renew if callable(renew) else None
        #: Short when the holder renews it: a dead holder frees the origin that soon.
        self._lease_ttl = patience if self._renew is None else min(LEASE_TTL, patience)
        self.hits = 0
        self.errors = 0
        self.invalid = 0
        self._logged: set[str] = set()

    async def obtain(
        self, origin: Origin, fetch: Callable[[], Awaitable[tuple[_T, StoredResource | None]]]
    ) -> _T:
        """A fresh shared answer, else ``fetch()`` (under the lease when this worker has
        it) with its observation shared; a failing store means a local fetch."""
        lease: ResourceLease | None = None
        faults: set[str] = set()  # bad records seen by this call (counted once each)
        try:
            try:
                found = await self._read(origin, faults)
                if found is None:
                    lease = await self._acquire(origin)
                    if lease is None:
                        found, lease = await self._wait(origin, faults)
                    else:  # the last holder may have shared and left since our read
                        found = await self._read(origin, faults)
            except StoreError as exc:
                self._failed(origin, exc)
                found = None
            if found is not None:
                self.hits += 1
                return found
            answer, record = await self._fetch_renewing(lease, fetch)
            if record is not None:
                await self._share(origin, record)
            return answer
        finally:
            if lease is not None:
                await self._release(lease)

    async def _acquire(self, origin: Origin) -> ResourceLease | None:
        return await self._call(self._store.acquire_resource(origin, self._kind, self._lease_ttl))

    async def _fetch_renewing(
        self,
        lease: ResourceLease | None,
        fetch: Callable[[], Awaitable[tuple[_T, StoredResource | None]]],
    ) -> tuple[_T, StoredResource | None]:
        """``fetch()``, with ``lease`` (if any) renewed while it runs when the store can."""
        if lease is None or self._renew is None:
            return await fetch()
        renewing = keep_renewed(self._renew, lease, self._call, self._kind)
        try:
            return await fetch()
        finally:
            renewing.cancel()

    async def _read(self, origin: Origin, faults: set[str]) -> _T | None:
        """The reader's answer from the stored record, if there is a fresh one; a bad
        record is a miss, counted in ``invalid`` once per fault in ``faults``."""
        try:
            record = await self._call(self._store.get_resource(origin, self._kind))
            if record is None:
                return None
            return self._use(check_resource(record, origin, self._kind, self._clock()))
        except InvalidRecordError as exc:
            if str(exc) in faults:
                return None
            faults.add(str(exc))
            self.invalid += 1
            # Once per field at WARNING: waiters polling one bad record would repeat it.
            level = logging.DEBUG if exc.field in self._logged else logging.WARNING
            self._logged.add(exc.field)
            logger.log(level, "shared %s record for %s ignored (%s)", self._kind, origin, exc)
            return None

    async def _wait(
        self, origin: Origin, faults: set[str]
    ) -> tuple[_T | None, ResourceLease | None]:
        """The holder's answer, or the lease once the holder left without one (None,
        None: one fetch's time went by; on the loop's clock, since the injected one
        may be a fake that never moves)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._patience
        pause = _POLL_FIRST
        while loop.time() + pause < deadline:
            await asyncio.sleep(pause)
            pause = min(pause * 2, _POLL_MAX)
            found = await self._read(origin, faults)
            if found is not None:
                return found, None
            lease = await self._acquire(origin)
            if lease is not None:
                return None, lease
        return None, None

    async def _share(self, origin: Origin, record: StoredResource) -> None:
        try:
            await self._call(self._store.put_resource(origin, record))
        except StoreError as exc:  # the fetch stands; peers fetch when their wait ends
            self._failed(origin, exc)

    async def _release(self, lease: ResourceLease) -> None:
        try:
            await self._call(self._store.release_resource(lease))
        except StoreError as exc:  # it lapses within its TTL
            self._failed(lease.origin, exc)

    async def _call(self, call: Awaitable[_R]) -> _R:
        """One store call within the timeout.

        :raises StoreError: also when it does not answer in time.
        """
        try:
            async with within(self._timeout):
                return await call
        except asyncio.TimeoutError as exc:
            raise StoreError(f"no answer within {self._timeout:g} s") from exc

    def _failed(self, origin: Origin, exc: StoreError) -> None:
        self.errors += 1
        logger.warning(
            "shared %s store failed for %s (%s); carrying on locally", self._kind, origin, exc
        )
