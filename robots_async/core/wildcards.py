"""The rules of a bucket that are not plain literal prefixes.

- *Raised* literals (``/a*``: the literal ``/a`` with priority 3) are sorted and
  found by bisect as plain literals are, in one index whatever their count of
  trailing stars (a file may list hundreds: ``Disallow: /apps/*``).
- *Globs* (any other rule with a ``*``) are a list in decision order (score, highest
  first), so the first match is the best. The target must start with one of their
  heads, and a glob is tried only if its tail (its longest later segment, for a
  glob of three or more) occurs in the target. Past
  _GRAM_INDEX_MIN globs that test is itself the cost (35 ns a glob), so they are
  then found through a piece of a segment that the target must contain
  (_GramIndex): a question costs the same with 100 or 10,000 unrelated ``/*`` rules.
"""

from __future__ import annotations

from collections import Counter
from itertools import compress, repeat
from operator import contains, itemgetter
from sys import intern
from typing import TYPE_CHECKING, Final

from .prefixes import RaisedLiterals
from .scores import ALLOW_LOW, LINE_MAX

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

__all__ = ["SCANS_BEFORE_INDEX", "GlobEntry", "SpecialRules", "Wildcards", "glob_match"]


#: A wildcard rule: (score, head, tail, middle segments or None, anchored, minimum
#: target size, pattern). With middle segments (every segment, then), "tail" is
#: the longest segment after the head instead: only a needle that a match contains.
#: The pattern is None when it is ``head*tail`` (with ``$`` when anchored), as most
#: are: rebuilt for explain() rather than kept (~75 bytes a glob, 5 a queried file).
GlobEntry = tuple[int, str, str, "tuple[str, ...] | None", bool, int, "str | None"]

#: Globs in a bucket from which they are found through the piece index.
_GRAM_INDEX_MIN: Final = 96
_GRAM: Final = 4
#: Pieces of a glob weighed when choosing its index key.
_MAX_PIECES: Final = 8
#: Targets longer than this are walked piece by piece rather than collecting all
#: their pieces in one set first (a 1 MB URL: 85 MB at once, 1 MB walked).
_MAX_GRAM_SET: Final = 4096
#: Scans of a large glob list (for short targets) before its piece index is built.
#: Building costs about as much as 65-120 such scans (measured: 1.3-2.5 us a glob to
#: index, ~21 ns to test), so building once scans have cost this much keeps a file's
#: questions within about twice the cost of the better choice in hindsight (ski
#: rental). After 4 scans, www.uab.edu's 319 globs took 1 ms to index on its fifth
#: question: 55% of its 20-question one-shot.
SCANS_BEFORE_INDEX: Final = 128
#: A scan costs ~0.4 ns a glob per character of the target besides the ~21 ns (each
#: tail is searched for in it): a target counts 1 + len // this scans. Counted as one,
#: 128 scans of a 100 KB URL against 3,000 globs took 16 s (123 ms each; the index
#: is built in 4 ms).
_CHARS_PER_SCAN: Final = 50
#: Raised literals tested at once with one startswith() before their index.
_MAX_QUICK_HEADS: Final = 32


#: A glob entry's score (the sort key of decision order) and head, in C.
_score_of: Final = itemgetter(0)
_head_of: Final = itemgetter(1)


class SpecialRules:
    """A bucket's rules that are not plain literal prefixes, sorted by kind in the
    pass that sets them apart from a group's plain rules (set_apart). One pass: a
    pass per step (apart, then exact or wild, then glob or raised) made compiling
    the corpus's buckets with wildcards 8-10% slower (paired)."""

    __slots__ = ("exact", "globs", "heads", "raised")

    def __init__(self) -> None:
        #: ``$``-anchored literals: literal -> score of the best rule.
        self.exact: dict[str, int] = {}
        self.globs: list[GlobEntry] = []
        #: Raised literals (``/a*``): literal -> (score, stars) of the best rule.
        self.raised: dict[str, tuple[int, int]] = {}
        #: The literal of each Disallow here other than a glob (see Bucket.heads).
        self.heads: list[str] = []

    def set_apart(self, patterns: list[str], lines: Iterable[int]) -> tuple[list[str], list[int]]:
        """Take the wildcard and ``$`` rules of one group's normalised ``patterns``
        (``lines``: their signed lines); return the plain rest and its lines."""
        kept: list[str] = []
        kept_lines: list[int] = []
        exact, globs, raised, heads = self.exact, self.globs, self.raised, self.heads
        for pattern, signed_line in zip(patterns, lines, strict=True):
            if "*" not in pattern and "$" not in pattern:
                kept.append(pattern)
                kept_lines.append(signed_line)
                continue
            # The score from the signed line (see _scores), inline: no call per rule.
            rule = (len(pattern) << 33) | (
                ALLOW_LOW + signed_line if signed_line < 0 else LINE_MAX - signed_line
            )
            # "$" is special only as the last character (google_semantics.md item 34);
            # an unanchored trailing "*" adds nothing to the match, only priority.
            anchored = pattern[-1] == "$"
            body = pattern[:-1] if anchored else pattern.rstrip("*")
            if "*" in body:
                segments = body.split("*")
                # Segments repeat across files (".jpg", ".php", "?"): interned, a cache
                # holding many files keeps one copy (corpus: 10,522 -> 10,207 bytes a
                # queried file).
                if len(segments) == 2:  # head*tail, most globs: _entry() inlined
                    head, tail = segments
                    size = len(body) - 1
                    # (Rebuilt exactly unless trailing stars were cut: see GlobEntry.)
                    kept_pattern = None if anchored or size + 1 == len(pattern) else pattern
                    globs.append(
                        (rule, intern(head), intern(tail), None, anchored, size, kept_pattern)
                    )
                else:
                    globs.append(_entry(pattern, segments, anchored, rule))
                continue
            if signed_line > 0:
                heads.append(body)
            if anchored:
                if rule > exact.get(body, -1):
                    exact[body] = rule
            else:
                known = raised.get(body)
                if known is None or rule > known[0]:
                    raised[body] = (rule, len(pattern) - len(body))
        return kept, kept_lines


class Wildcards:
    """A bucket's wildcard and raised-literal rules (see the module)."""

    __slots__ = ("globs", "grams", "heads", "raised", "raised_heads", "raised_top", "top")

    def __init__(self, globs: list[GlobEntry], raised: dict[str, tuple[int, int]]) -> None:
        """``globs``: the entries of the wildcard rules, in any order; ``raised``:
        literal -> (score, stars) of its best raised rule (see SpecialRules)."""
        globs.sort(key=_score_of, reverse=True)
        self.raised = RaisedLiterals(raised) if raised else None
        # A few raised literals: one C-level test skips their index (a bisect) for
        # most targets; many: "" (always looked up).
        self.raised_heads = tuple(raised) if len(raised) <= _MAX_QUICK_HEADS else ("",)
        self.globs = globs or None
        #: The best score any rule here can give (Bucket.best skips them below it).
        self.raised_top = max(self.raised.scores) if self.raised is not None else -1
        self.top = max(self.raised_top, globs[0][0] if globs else -1)
        heads = tuple(dict.fromkeys(map(_head_of, globs)))
        #: What a target must start with to reach a glob (None: every target does, as
        #: every one starts with "/"; most files: one C call less a question).
        self.heads = None if "" in heads or "/" in heads else heads
        # Built once scans have cost SCANS_BEFORE_INDEX short ones (a negative
        # count): compiling a 100,000-rule file stays linear, questions amortise it.
        self.grams: _GramIndex | int | None = (
            -SCANS_BEFORE_INDEX if len(globs) >= _GRAM_INDEX_MIN else None
        )

    def best(self, target: str, best: int) -> int:
        """The best score of a rule here matching ``target``, if above ``best``."""
        raised = self.raised
        if raised is not None and best < self.raised_top and target.startswith(self.raised_heads):
            i = raised.longest(target)  # (RaisedLiterals.best() inlined: a call less)
            if i >= 0 and raised.chain[i] > best:
                best = raised.chain[i]
        globs = self.globs
        if globs is None or best >= globs[0][0]:
            return best
        heads = self.heads
        if heads is not None and not target.startswith(heads):
            return best
        grams = self.grams
        if grams is not None:
            if isinstance(grams, int):
                grams += 1 + len(target) // _CHARS_PER_SCAN
                if grams < 0:
                    self.grams = grams
                    return _best_candidate(globs, target, best, tails=True)
                grams = self.grams = _GramIndex(globs)
            return _best_candidate(grams.candidates(target), target, best, tails=False)
        return _best_candidate(globs, target, best, tails=True)

    def pattern(self, best: int) -> str | None:
        """The pattern of the rule scored ``best`` here, if it is one of these."""
        for entry in self.globs or ():
            if entry[0] == best:
                pattern = entry[6]
                if pattern is None:
                    pattern = f"{entry[1]}*{entry[2]}{'$' if entry[4] else ''}"
                return pattern
        return self.raised.pattern(best) if self.raised is not None else None


def _best_candidate(found: Iterable[GlobEntry], target: str, best: int, *, tails: bool) -> int:
    """The best score of the globs ``found`` (in decision order) matching ``target``,
    if above ``best``. With ``tails``, a glob is tried only if its tail (see GlobEntry)
    occurs in target, tested first in bytecode (a glob 20 ns; map(contains, ...) over the
    tails cost 190 ns more a question to set up: paired, files with globs 1.14x
    faster). Not for the piece index's candidates: each search reads the target, and
    a 100 KB URL holding the tails of 3,000 ``$`` globs, none at its end, cost 28x
    the piece walk (``endswith`` decides each in O(1))."""
    size = len(target)
    for entry in found:
        if tails and entry[2] not in target:
            continue
        rule, head, tail, middle, anchored, min_size, _ = entry
        if rule <= best:
            break
        if size < min_size or not target.startswith(head):
            continue
        if middle is not None:
            hit = glob_match(target, middle, anchored)
        elif anchored:
            hit = target.endswith(tail)
        else:
            hit = target.find(tail, len(head)) >= 0
        if hit:
            return rule
    return best


def _entry(pattern: str, segments: list[str], anchored: bool, score: int) -> GlobEntry:
    """A wildcard rule of three or more ``segments`` (see SpecialRules.set_apart) as
    a GlobEntry, its segments interned as there. (No generator and no sum over the
    segments: -0.5 us a glob, a third of compiling www.riverisland.com's 40.)"""
    # "**" and other empty middle segments match anything; drop them.
    if "" in segments[1:-1]:
        segments = [segments[0], *filter(None, segments[1:-1]), segments[-1]]
    segments = list(map(intern, segments))
    # The segments' total size: the pattern less its stars and its "$".
    size = len(pattern) - pattern.count("*") - anchored
    if len(segments) == 2:
        return (score, segments[0], segments[-1], None, anchored, size, pattern)
    # The needle tested before a glob is tried (_best_candidate): the last segment
    # of /*/wall/*/*/roses/ is "/", in every target (www.lingq.com: 73 such globs,
    # 5.1 us a question); its longest, "/roses/", rules out most (the first of the
    # longest, as max() would).
    if len(segments) == 3:
        middle, last = segments[1], segments[2]
        needle = middle if len(middle) >= len(last) else last
    else:
        needle = max(segments[1:], key=len)
    return (score, segments[0], needle, tuple(segments), anchored, size, pattern)


class _GramIndex:
    """Globs by the rarest four-character piece of their segments (every match
    contains it): 10,000 ``/*q{n}z`` rules then leave a question a few candidates.
    Globs with no such piece are tested as _best_glob tests every glob."""

    __slots__ = ("always", "always_tails", "by_gram", "globs")

    def __init__(self, globs: list[GlobEntry]) -> None:
        self.globs = globs
        pieces = [_pieces(entry) for entry in globs]
        counts = Counter(gram for grams in pieces for gram in grams)
        by_gram: dict[str, list[int]] = {}
        always: list[int] = []
        for i, grams in enumerate(pieces):
            if grams:
                by_gram.setdefault(min(grams, key=counts.__getitem__), []).append(i)
            else:
                always.append(i)
        self.by_gram = by_gram
        self.always = always
        self.always_tails = tuple(globs[i][2] for i in always)

    def candidates(self, target: str) -> Iterator[GlobEntry]:
        """The globs that could match ``target``, in decision order."""
        by_gram = self.by_gram
        found = list(compress(self.always, map(contains, repeat(target), self.always_tails)))
        if len(target) > _MAX_GRAM_SET:
            found += self._walk(target)
        else:
            grams = {target[i : i + _GRAM] for i in range(len(target) - _GRAM + 1)}
            for gram in grams & by_gram.keys():
                found += by_gram[gram]
        found.sort()
        return map(self.globs.__getitem__, found)

    def _walk(self, target: str) -> list[int]:
        """The globs found through a long target's pieces, taken one at a time: the
        memory is the index's (pieces seen), not the target's."""
        by_gram = self.by_gram
        seen: set[str] = set()
        found: list[int] = []
        for i in range(len(target) - _GRAM + 1):
            gram = target[i : i + _GRAM]
            if gram in by_gram and gram not in seen:
                seen.add(gram)
                found += by_gram[gram]
        return found


def _pieces(entry: GlobEntry) -> tuple[str, ...]:
    """Up to _MAX_PIECES distinct _GRAM-character pieces of a glob's segments, the
    last segment's first (".php", "/feed/": more telling than a shared head). A match
    contains every piece, so any of them may stand for the glob. The bound and the
    tuple keep a hostile file cheap: 100,000 globs of 36 characters took 489 MB while
    their index was built with 32 pieces in a set each (now 8 in a tuple)."""
    pieces: dict[str, None] = {}
    for segment in reversed(entry[3] or (entry[1], entry[2])):
        for i in range(min(len(segment) - _GRAM + 1, _MAX_PIECES)):
            pieces[segment[i : i + _GRAM]] = None
        if len(pieces) >= _MAX_PIECES:
            break
    return tuple(pieces)[:_MAX_PIECES]


def glob_match(target: str, segments: tuple[str, ...], anchored: bool) -> bool:
    """Match ``*``-separated ``segments`` against ``target`` from its first character."""
    first = segments[0]
    if not target.startswith(first):
        return False
    pos = len(first)
    last = len(segments) - 1
    for i in range(1, last):
        segment = segments[i]
        found = target.find(segment, pos)
        if found < 0:
            return False
        pos = found + len(segment)
    tail = segments[last]
    if anchored:
        return target.endswith(tail) and len(target) - len(tail) >= pos
    return target.find(tail, pos) >= 0
