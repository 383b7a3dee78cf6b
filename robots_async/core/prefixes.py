"""Sorted literal prefixes: the longest literal that a target starts with, by bisect.

The literal found by ``bisect`` (the largest one not above the target) is the answer
or sorts after it; then the answer is one of that literal's own prefixes, reached
through ``parents``. Parents are found when a question first needs one: on the
corpus 20 questions a file needed 0.9 of them, and linking all 32 literals of a file
up front was a fifth of the first question's cost (35 -> 27 us a file).
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from typing import Final

__all__ = ["UNKNOWN", "LiteralPrefixes", "RaisedLiterals"]

#: parents[i] before the parent of literal i is first needed.
UNKNOWN: Final = -2
_UNLINKED: Final = (UNKNOWN,)
#: Before any parent is looked for; never written (parent() allocates first).
_NO_PARENTS: Final = array("i")
#: Steps of a parent search before linking every literal (see parent()).
_MAX_STEPS: Final = 16


class LiteralPrefixes:
    """Distinct literals, sorted, and ``parents[i]``: the index of the longest other
    literal that is a prefix of ``prefixes[i]`` (-1: none; UNKNOWN: not found yet)."""

    __slots__ = ("parents", "prefixes")

    def __init__(self, literals: list[str]) -> None:
        """``literals``: distinct and sorted."""
        self.prefixes = literals
        # Allocated when a first parent is looked for (most files never need one).
        self.parents = _NO_PARENTS

    def longest(self, target: str) -> int:
        """Index of the longest literal that ``target`` starts with (-1: none)."""
        prefixes = self.prefixes
        i = bisect_right(prefixes, target) - 1
        while i >= 0 and not target.startswith(prefixes[i]):
            up = self.parents[i] if self.parents else UNKNOWN
            i = self.parent(i) if up == UNKNOWN else up
        return i

    def parent(self, i: int) -> int:
        """The longest literal that is a proper prefix of ``prefixes[i]`` (-1: none).

        It is the longest literal prefix of ``prefixes[i][:-1]``: bisect for it. If
        the literal found (``j``) is no prefix, the answer is a prefix of what the two
        have in common, so it is ``j``'s parent (a jump, when known) or found by
        bisecting for that common part: siblings in between cost nothing. A walk back
        over them, linking every literal past 48 steps, was 3% of one-shot time on
        the corpus (50 files linked all). Each step shortens the search; a search
        longer than _MAX_STEPS (built to be: ``a0``, ``aa0``, ``aaa0``...) links every
        literal at once instead (linear), so no question costs more.
        """
        prefixes, parents = self.prefixes, self.parents
        if not parents:
            parents = self.parents = array("i", _UNLINKED) * len(prefixes)
        text = prefixes[i][:-1]
        j = bisect_right(prefixes, text, 0, i) - 1
        for _ in range(_MAX_STEPS):
            if j < 0 or text.startswith(prefixes[j]):
                # Returned, not read back: another thread may have replaced
                # ``parents`` meanwhile (an UNKNOWN there reads as "no parent").
                parents[i] = j
                return j
            up = parents[j]
            if up != UNKNOWN:
                j = up
            else:
                text = text[: _common_length(text, prefixes[j])]
                j = bisect_right(prefixes, text, 0, j) - 1
        # The answer is read from the array linked, for the same reason.
        return self.link_all()[i]

    def link_all(self) -> array[int]:
        """Find every literal's parent in one pass over the sorted literals; return
        the array filled (``parents``, unless another thread has replaced it since)."""
        parents = self.parents
        if not parents:
            parents = self.parents = array("i", _UNLINKED) * len(self.prefixes)
        # In sorted order every prefix of a literal comes before it, and no literal
        # between the two drops it from this stack of nested literals: linear time.
        # (The sentinel "" is a prefix of everything: no emptiness test per pop.)
        stack = [""]
        where = [-1]
        for j, literal in enumerate(self.prefixes):
            while not literal.startswith(stack[-1]):
                stack.pop()
                where.pop()
            parents[j] = where[-1]
            stack.append(literal)
            where.append(j)
        return parents


def _common_length(a: str, b: str) -> int:
    """The length of the longest common prefix of ``a`` and ``b``: a binary search of
    C-level compares, each on the part not yet known to agree."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) >> 1
        if a.startswith(b[low:middle], low):
            low = middle
        else:
            high = middle - 1
    return low


class RaisedLiterals(LiteralPrefixes):
    """Literals written with trailing ``*`` (``/a**``: the literal ``/a`` with
    priority 4), every count of stars in one index, each literal with the score and
    stars of its best rule. The rules matching a target are those whose literal is
    one of its prefixes: the longest such literal and its chain of parents. ``chain[i]``
    is the best score along literal i's chain, so one bisect answers (a file giving
    each of 900 rules its own count of stars cost 900 of them with one index per
    count: 150 us a question). Linked at compile: the chain needs every parent."""

    __slots__ = ("chain", "scores", "stars")

    def __init__(self, rules: dict[str, tuple[int, int]]) -> None:
        """``rules``: literal -> (score, stars) of its best rule."""
        literals = sorted(rules)
        LiteralPrefixes.__init__(self, literals)
        best = [rules[literal] for literal in literals]
        self.scores = array("q", [score for score, _ in best])
        self.stars = array("i", [stars for _, stars in best])
        chain = array("q", self.scores)
        # Parents come before their literals in sorted order: one pass.
        for i, up in enumerate(self.link_all()):
            if up >= 0 and chain[up] > chain[i]:
                chain[i] = chain[up]
        self.chain = chain

    def pattern(self, best: int) -> str | None:
        """The pattern of the rule scored ``best``, if it is one of these."""
        for literal, score, stars in zip(self.prefixes, self.scores, self.stars, strict=True):
            if score == best:
                return literal + "*" * stars
        return None
