"""Turning a fetch outcome into a cache entry: the fetch policy applied, revalidation
(RFC 9111 §4.3), the last good copy, and what an entry is estimated to retain.

Memory (``max_memory``): an entry is sized once its match index for the checker's
token is built, with an estimate calibrated by tracemalloc (bench/isolation.py);
a kept last good copy and its body count too.
"""

from __future__ import annotations

import inspect
import logging
from dataclasses import replace
from functools import cache
from typing import TYPE_CHECKING

from ..core.sizing import retained_size
from ..fetch.http import max_age
from ..fetch.outcome import FetchOutcome, Validators, observed_headers
from .entry import CacheEntry
from .records import MAX_CLOCK_SKEW

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..core.url import Origin
    from ..fetch.fetcher import Fetcher
    from ..fetch.policy import FetchPolicy, Resolution

__all__ = ["OutcomeResolver", "same_observation"]

logger = logging.getLogger("robots_async")

#: Bytes an entry holds besides its rules and bodies: the entry, its outcome and
#: resolution, URLs, the LRU slot (tracemalloc, tests/pipeline/test_memory.py), the
#: origin's text key with its slot in _texts (~110 bytes: sys.getsizeof), and its
#: hot index and expiry heap items (128 bytes, 88 once hit: tracemalloc over 2,000
#: and 10,000 entries).
_ENTRY_OVERHEAD = 1776


class OutcomeResolver:
    """Entries from outcomes under the cache's FetchPolicy (a base of RobotsCache)."""

    _fetcher: Fetcher
    _policy: FetchPolicy
    _clock: Callable[[], float]
    _robots_token: str

    if TYPE_CHECKING:

        def _count(self, name: str) -> None: ...

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
        # them, the raw bodies kept for a shared store. An HTML page's hundred
        # warnings are packed first (~14 -> ~5 KB).
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


def _bytes_size(body: bytes | None) -> int:
    return 0 if body is None else 33 + len(body)  # sys.getsizeof(b"") == 33


def _applied(resolution: Resolution) -> str:
    """What an unreachable outcome leaves in force, for log messages."""
    if resolution.source == "stale":
        return "using the last good copy"
    if resolution.robots.synthetic == "disallow-all":
        return "disallowing all until it can be fetched"
    return "allowing all (policy)"


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


def same_observation(previous: CacheEntry, outcome: FetchOutcome, fetched_at: float) -> bool:
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
