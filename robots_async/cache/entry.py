"""What the cache keeps per origin (:class:`CacheEntry`) and counts (:class:`CacheStats`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..core.robots import RobotsTxt
    from ..core.url import Origin
    from ..fetch.outcome import FetchOutcome
    from ..fetch.policy import Resolution, Source

__all__ = ["CacheEntry", "CacheStats"]


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
    #: Fetch attempts our own process could not make (no descriptor or socket buffer).
    local_limits: int = 0
    #: Of those, attempts made again after a back-off, within the fetch's total_timeout.
    local_limit_retries: int = 0
    entries: int = 0
    memory: int = 0
