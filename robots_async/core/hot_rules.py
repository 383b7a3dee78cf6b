"""HotRules: the fresh rules of cached origins by origin text, and the cached check.

The index a cache keeps for its hottest question, "may this URL be fetched?" when the
origin's robots.txt is cached and fresh. Sans-I/O (a cache gives it its clock, the
matcher of URLs a client sends as written, and each entry's current expiry) so that
a compiled build runs the whole cached check natively: a compiled ``verdict()``
calls ``RobotsTxt.allowed()`` without Python's argument parsing in between.

Expiry is checked against one watermark, the soonest expiry in the index (a heap of
``(expires_at, text)``; items of entries replaced or gone are skipped when popped),
not against each entry: that float cost 2.4% of a cached check at 10,000 origins, a
holder object per entry 1-3.5% (paired, interleaved). Nothing is served at or after
its ``expires_at``.

A rule set not hit since it joined, or since the eviction scan last passed it, is
held wrapped (:class:`Unused`): a hit is told by the value's type alone (the rules'
header, read by the match anyway) and marks it by unwrapping. The cache's eviction
gives a marked entry a second chance (:meth:`HotRules.second_chance`, CLOCK).
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import re
    from collections.abc import Callable

    from .robots import RobotsTxt

__all__ = ["HotRules"]

_NEVER: Final = float("inf")


class Unused:
    """Rules in the index not hit since they joined or since the eviction scan."""

    __slots__ = ("robots",)

    def __init__(self, robots: RobotsTxt) -> None:
        self.robots = robots


class HotRules:
    """Fresh rules by origin text (``str(Origin)``), with the expiry watermark."""

    __slots__ = ("_clock", "_expires_of", "_expiries", "_plain", "_rules", "_soonest", "hits")

    def __init__(
        self,
        clock: Callable[[], float],
        plain: Callable[[str], re.Match[str] | None],
        expires_of: Callable[[str], float | None],
    ) -> None:
        """``plain`` matches a URL the client sends as written, its group 1 the text
        of its origin; ``expires_of`` gives an origin's current expiry (None: gone)."""
        self._clock = clock
        self._plain = plain
        self._expires_of = expires_of
        self._rules: dict[str, RobotsTxt | Unused] = {}
        self._expiries: list[tuple[float, str]] = []
        self._soonest = _NEVER
        #: Hits counted here (an attribute's ``+= 1``: half a dict item's cost).
        self.hits = 0

    def __len__(self) -> int:
        return len(self._rules)

    def verdict(self, url: str, token: str) -> bool | None:
        """True if ``url`` may be fetched by ``token``, False if not, None when not
        answered here (not sent as written, uncached, stale or expired): ask the cache.

        ``url`` with no "/." (so no dot segment either) that ``plain`` matches is
        sent as written, and names its entry by its origin's text: no URL parse, no
        Origin built. rules() is inlined (a call is ~3% of a cached check).
        """
        if "/." in url:
            return None
        plain = self._plain(url)
        if plain is None:
            return None
        now = self._clock()
        if now >= self._soonest:
            self._expire(now)
        text = plain[1]
        robots = self._rules.get(text)
        if robots is None:
            return None
        if type(robots) is Unused:
            robots = self._rules[text] = robots.robots
        self.hits += 1
        return robots.allowed(url, robots_token=token)  # type: ignore[union-attr]

    def rules(self, text: str) -> RobotsTxt | None:
        """The fresh rules of the origin whose ``str()`` is ``text`` (a hit), or None."""
        now = self._clock()
        if now >= self._soonest:
            self._expire(now)
        robots = self._rules.get(text)
        if robots is None:
            return None
        if type(robots) is Unused:
            robots = self._rules[text] = robots.robots
        self.hits += 1
        return robots  # type: ignore[return-value]

    def add(self, text: str, robots: RobotsTxt, expires_at: float) -> None:
        """Index ``robots`` for ``text`` until ``expires_at`` (unmarked)."""
        self._rules[text] = Unused(robots)
        heapq.heappush(self._expiries, (expires_at, text))
        self._soonest = min(self._soonest, expires_at)
        if len(self._expiries) > 2 * len(self._rules) + 64:
            self._reindex()

    def discard(self, text: str) -> None:
        """Take ``text`` out of the index (its heap item is skipped when popped)."""
        self._rules.pop(text, None)

    def second_chance(self, text: str) -> bool:
        """True if ``text`` was hit since it joined or the scan last passed: it is
        unmarked and stays. False if it was not hit, or is not indexed."""
        robots = self._rules.get(text)
        if robots is None or type(robots) is Unused:
            return False
        self._rules[text] = Unused(robots)  # type: ignore[arg-type]
        return True

    def clear(self) -> None:
        """Forget everything (a closed cache serves nothing from here)."""
        self._rules.clear()
        self._expiries.clear()
        self._soonest = _NEVER

    def _expire(self, now: float) -> None:
        """Take rules expired at ``now`` out of the index; raise the watermark."""
        expiries, rules = self._expiries, self._rules
        while expiries and expiries[0][0] <= now:
            _, text = heapq.heappop(expiries)
            current = self._expires_of(text)
            if current is None or current <= now:
                rules.pop(text, None)
        self._soonest = expiries[0][0] if expiries else _NEVER

    def _reindex(self) -> None:
        """Rebuild the heap from the index: items of replaced or removed entries
        would otherwise pile up (kept under 2x plus 64)."""
        expiries, gone = [], []
        for text in self._rules:
            expires_at = self._expires_of(text)
            if expires_at is None:
                gone.append(text)  # (never in a cache's index: kept out all the same)
            else:
                expiries.append((expires_at, text))
        for text in gone:
            del self._rules[text]
        heapq.heapify(expiries)
        self._expiries = expiries
        self._soonest = expiries[0][0] if expiries else _NEVER
