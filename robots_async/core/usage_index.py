"""Content-Usage rules indexed so that a question costs what an Allow/Disallow one does.

A linear scan of a group's Content-Usage rules cost 4.6 ms a question on a 500 KB file
of them (issue 26). Here plain prefixes are found by their length (one dict read per
distinct length no longer than the target), exact paths (``/x$``) by a dict read, and
only globs and empty patterns are scanned. The answer is the scan's: the highest
priority (the normalised pattern's length) among matching rules, all rules of that
priority in file order (draft-ietf-aipref-attach §4).

Rules are ordinals into the caller's columns; equal literals are chained through an
array, so the index holds a few containers whatever the number of rules (objects the
garbage collector must walk: see ``UsageLines``).
"""

from __future__ import annotations

from array import array
from typing import TYPE_CHECKING

from .matcher import compile_rule, glob_match

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["UsageIndex"]


class UsageIndex:
    """Normalised Content-Usage patterns (file order), ready for questions."""

    __slots__ = ("_exact", "_globs", "_lengths", "_next", "_prefixes", "_priorities")

    def __init__(self, patterns: Sequence[str], texts: Sequence[str] | None = None) -> None:
        # A line equal to an earlier one (same pattern, same value: ``texts``) adds
        # nothing to an answer: only the first is indexed. 18,000 equal lines (within
        # the 500 KB limit) were all chosen and combined on every question: 84 ms.
        repeated = _repeats(patterns, texts) if texts is not None else frozenset()
        prefixes: dict[str, int] = {}
        exact: dict[str, int] = {}
        following = array("q", [-1]) * len(patterns)
        # Globs and empty patterns, tried one by one: (segments, anchored, ordinal).
        globs: list[tuple[tuple[str, ...], bool, int]] = []
        # Chains are built back to front, so each starts at its first ordinal.
        for ordinal in range(len(patterns) - 1, -1, -1):
            if ordinal in repeated:
                continue
            pattern = patterns[ordinal]
            anchored = pattern.endswith("$")
            body = pattern[:-1] if anchored else pattern.rstrip("*")
            if not pattern or "*" in body:
                rule = compile_rule(pattern, True, 0, 0)
                globs.append((rule.segments, rule.anchored, ordinal))
                continue
            table = exact if anchored else prefixes
            following[ordinal] = table.get(body, -1)
            table[body] = ordinal
        globs.reverse()
        self._prefixes = prefixes
        self._exact = exact
        self._next = following
        self._globs = globs
        self._lengths = sorted({len(literal) for literal in prefixes})
        # The priority of a rule: its normalised pattern's length (trailing * included).
        self._priorities = array("q", map(len, patterns))

    def best(self, target: str) -> list[int]:
        """Ordinals of the highest-priority rules matching ``target``, ascending (file
        order); empty when none matches."""
        found: list[int] = []
        prefixes = self._prefixes
        for length in self._lengths:
            if length > len(target):
                break
            self._chain(prefixes.get(target[:length], -1), found)
        self._chain(self._exact.get(target, -1), found)
        for segments, anchored, ordinal in self._globs:
            if not segments or glob_match(target, segments, anchored):
                found.append(ordinal)
        if not found:
            return []
        priorities = self._priorities
        top = max(priorities[ordinal] for ordinal in found)
        return sorted(ordinal for ordinal in found if priorities[ordinal] == top)

    def _chain(self, ordinal: int, found: list[int]) -> None:
        following = self._next
        while ordinal >= 0:
            found.append(ordinal)
            ordinal = following[ordinal]


def _repeats(patterns: Sequence[str], texts: Sequence[str]) -> frozenset[int]:
    """Ordinals whose (pattern, value) pair appeared at a lower ordinal."""
    seen: set[tuple[str, str]] = set()
    repeated: list[int] = []
    for ordinal, pair in enumerate(zip(patterns, texts, strict=True)):
        if pair in seen:
            repeated.append(ordinal)
        else:
            seen.add(pair)
    return frozenset(repeated)
