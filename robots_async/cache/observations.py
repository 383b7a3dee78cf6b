"""Shared records read and written: what a worker observed, never its verdict.

A record is what another worker observed (status, headers, body, fetch time), never
its verdict: this cache applies its own fetch and match policy to it, on its own
clock, so a worker with laxer settings or a fast clock cannot loosen what this one
answers. Identical bodies are parsed once per process (a bounded memo by content hash).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ..core.errors import InvalidRecordError
from ..core.parser import parse
from ..core.robots import RobotsTxt
from ..fetch.http import max_age, retry_after
from ..fetch.outcome import FetchOutcome
from ..fetch.policy import Resolution
from .records import LOCAL_ERRORS, StoredRobots, validate
from .resolve import OutcomeResolver, same_observation

if TYPE_CHECKING:
    from collections import OrderedDict

    from ..core.policy import MatchPolicy, PolicyName
    from ..core.url import Origin
    from .entry import CacheEntry

__all__ = ["RecordTranslation"]

logger = logging.getLogger("robots_async")

#: Parsed bodies kept per process, keyed by content hash (shared-store mode).
_PARSED_BODIES = 256


class RecordTranslation(OutcomeResolver):
    """Entries to records and back (a base of RobotsCache; entries are made by the
    OutcomeResolver it extends)."""

    _match_policy: PolicyName | MatchPolicy
    _parsed: OrderedDict[str, RobotsTxt]

    #: Failures counted at most from a record: 2**63 error TTLs exceed any
    #: max_error_ttl, and a larger count from a record would only overflow a float.
    _MAX_SHARED_FAILURES = 64

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
        if previous is not None and same_observation(previous, outcome, record.fetched_at):
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
            robots = parse(body, policy=self._match_policy, max_bytes=self._policy.max_bytes)
            self._parsed[key] = robots
            if len(self._parsed) > _PARSED_BODIES:
                self._parsed.popitem(last=False)
        else:
            self._parsed.move_to_end(key)
        return robots
