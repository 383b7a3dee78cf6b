"""Shared-store protocol: robots.txt records that several workers can share.

A record is the raw body plus metadata (never a pickle), so it survives library
upgrades and can be shared by crawlers with different user agents. A *lease*
(``SET NX PX`` in Redis) lets one worker fetch an origin while the others wait.
:class:`MemoryStore` implements the protocol in-process (for tests and for several
caches in one process); ``robots_async.contrib.redis.RedisStore`` across machines.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
import time
from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    from collections.abc import Callable

    from ._url import Origin

__all__ = ["Lease", "MemoryStore", "RobotsStore", "StoredRobots"]

#: Which rules a record stands for: its body, its last good body, or a verdict.
RulesKind = Literal["body", "last-good", "allow-all", "disallow-all"]


@dataclass(frozen=True, slots=True)
class StoredRobots:
    """One origin's robots.txt as kept in a shared store (JSON-safe but the bodies)."""

    url: str
    final_url: str
    status: int | None
    error: str | None
    hops: int
    bytes_read: int
    truncated: bool
    source: str
    rules: RulesKind
    fetched_at: float
    expires_at: float
    failures: int
    unreachable_since: float | None
    last_good_at: float | None
    #: The body of the 2xx response (b"" otherwise), at most max_bytes.
    body: bytes = b""
    #: The body of the last 2xx response, kept for the stale-if-error rule.
    last_good_body: bytes | None = None

    def metadata(self) -> dict[str, Any]:
        """Everything but the bodies, as JSON-safe values."""
        data = asdict(self)
        del data["body"], data["last_good_body"]
        return data

    @classmethod
    def from_parts(
        cls, metadata: dict[str, Any], body: bytes, last_good_body: bytes | None
    ) -> StoredRobots:
        """Rebuild a record from :meth:`metadata` and its bodies (unknown keys ignored)."""
        known = {f.name for f in fields(cls)} - {"body", "last_good_body"}
        values = {k: v for k, v in metadata.items() if k in known}
        return cls(**values, body=body, last_good_body=last_good_body)

    @staticmethod
    def digest(body: bytes) -> str:
        """Content hash of a body: the key of the per-process parsed-rules cache."""
        return hashlib.blake2b(body, digest_size=16).hexdigest()


@dataclass(frozen=True, slots=True)
class Lease:
    """The right to fetch one origin for a while; the token proves ownership."""

    origin: Origin
    token: str
    expires_at: float


@runtime_checkable
class RobotsStore(Protocol):
    """Where records are shared. A method that fails raises ``robots_async.StoreError``;
    the cache then carries on with its own fetch."""

    async def get(self, origin: Origin) -> StoredRobots | None:
        """The record for ``origin``, or None."""
        ...

    async def put(self, origin: Origin, record: StoredRobots) -> None:
        """Store ``record``; it may be dropped once it is no use (see stale_max_age)."""
        ...

    async def acquire(self, origin: Origin, ttl: float) -> Lease | None:
        """Take the fetch lease for ``origin`` for ``ttl`` seconds; None if it is held."""
        ...

    async def release(self, lease: Lease) -> bool:
        """Give a lease back; False if it had expired or belongs to someone else."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


class MemoryStore:
    """:class:`RobotsStore` in this process: a dict of records and of leases."""

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self._records: dict[Origin, StoredRobots] = {}
        self._leases: dict[Origin, Lease] = {}
        self._clock = clock
        self._lock = asyncio.Lock()

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

    async def aclose(self) -> None:
        """Nothing to release."""
