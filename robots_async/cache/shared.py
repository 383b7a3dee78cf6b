"""The shared-store protocol: one fetch per origin across a fleet.

A fresh record is used as is; otherwise one worker takes the origin's lease and
fetches while the others wait for its record (or take the lease once it is free).
Every store call is bounded by a timeout; a record that does not conform is a miss
(fetched here and overwritten), counted in ``stats.store_invalid``; a store that fails
is left alone for the rest of that refresh and the answer comes from a local fetch.
"""

from __future__ import annotations

import asyncio
import logging
from functools import partial
from typing import TYPE_CHECKING, TypeVar

from ..core.errors import InvalidRecordError, StoreError
from ..fetch.deadline import within
from .observations import RecordTranslation
from .records import check_clock, check_size, check_url, unlike_own_fetch, validate

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from ..core.url import Origin
    from .entry import CacheEntry
    from .records import StoredRobots
    from .store import Lease, RobotsStore

__all__ = ["LEASE_TTL", "SharedStoreProtocol", "keep_renewed"]

#: Seconds a fetch lease lasts without renewal, with a store that renews (robots.txt's
#: leases, and tdmrep.json's in ``shared_resources``); its holder renews it every third
#: of that while it fetches. A holder that dies (SIGKILL, power loss) blocks its peers
#: this long at most, not a whole fetch's 35 s (issue 26).
LEASE_TTL = 3.0

logger = logging.getLogger("robots_async")
_T = TypeVar("_T")
_L = TypeVar("_L", bound="Lease")


class SharedStoreProtocol(RecordTranslation):
    """Records and leases through a RobotsStore (a base of RobotsCache; records are
    read and written by the RecordTranslation it extends)."""

    _store: RobotsStore | None
    _invalid_logged: set[str]

    if TYPE_CHECKING:

        async def _fetch_locally(
            self, origin: Origin, previous: CacheEntry | None, generation: int
        ) -> CacheEntry: ...

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
            renewing = self._keep_renewed(store, lease) if lease is not None else None
            try:
                entry = await self._fetch_locally(origin, previous, generation)
            finally:
                if renewing is not None:
                    renewing.cancel()
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

        Polls with back-off; gives up after a whole fetch's time (on the event loop's
        clock: the injected clock may be a fake that never moves) and fetches. A dead
        holder's lease lapses within ``LEASE_TTL`` (it is renewed only while its holder
        lives), so the lease is taken over then.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._holder_patience()
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
            async with within(timeout):
                result = await call
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
        """Short with a store that renews leases: a dead holder frees the origin within
        it; else long enough for one whole fetch (a dead holder blocks that long)."""
        if callable(getattr(self._store, "renew", None)):
            return LEASE_TTL
        return self._holder_patience()

    def _holder_patience(self) -> float:
        """How long a waiter waits for a live holder: one whole fetch and a margin."""
        return self._policy.total_timeout + 5.0

    def _keep_renewed(self, store: RobotsStore, lease: Lease) -> asyncio.Task[None] | None:
        """A task renewing ``lease`` while the fetch runs (None when the store cannot
        renew: its leases last a whole fetch)."""
        renew = getattr(store, "renew", None)
        if not callable(renew):
            return None
        return keep_renewed(renew, lease, self._store_call, "robots")


def keep_renewed(
    renew: Callable[[_L, float], Awaitable[_L | None]],
    lease: _L,
    call: Callable[[Awaitable[_L | None]], Awaitable[_L | None]],
    what: str,
) -> asyncio.Task[None]:
    """A task renewing ``lease`` for ``LEASE_TTL`` every third of it until cancelled,
    each ``renew`` bounded by ``call`` (the caller's store timeout). It stops once the
    lease is lost or a renewal fails: the lease then lapses and at worst a peer fetches
    too, never a verdict of ours. ``what`` names the resource in the debug log."""

    async def keep() -> None:
        current: _L | None = lease
        while current is not None:
            await asyncio.sleep(LEASE_TTL / 3)
            try:
                current = await call(renew(current, LEASE_TTL))
            except StoreError as exc:
                logger.debug("%s lease for %s not renewed: %s", what, lease.origin, exc)
                return
            if current is None:
                logger.debug("%s lease for %s lost before the fetch ended", what, lease.origin)

    return asyncio.get_running_loop().create_task(keep())
