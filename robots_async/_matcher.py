"""Pattern matching and the decision: compiled per agent bucket, linear worst case.

A pattern is ``*``-separated literal segments, optionally anchored by a final ``$``.
Segments are found left to right with ``str.find`` (leftmost placement never loses a
match), so a hostile pattern costs O(len(path) x len(pattern)) at most, no regex and
no backtracking (google_semantics.md item 39).

Longest-match buckets hold no object per rule but the pattern's own string: literal
prefixes sit in one sorted list searched with ``bisect`` (the longest matching
prefix is found through each literal's longest prefix in the list), and every rule
is reduced to one integer *score* that orders rules as Google decides between them.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from typing import TYPE_CHECKING, Final, NamedTuple

from ._policy import normalise_patterns
from ._rules import Rule

if TYPE_CHECKING:
    from ._policy import MatchPolicy
    from ._rules import RawGroup

__all__ = [
    "Bucket",
    "CompiledRule",
    "compile_bucket",
    "compile_rule",
    "decide",
    "glob_match",
    "rule_matches",
]

EMPTY, PREFIX, EXACT, GLOB = 0, 1, 2, 3
_INDEX_HTM: Final = "/index.htm"

#: Decision order as a sort key: longest pattern first, then allow, then file order.
Rank = tuple[int, bool, int]

# A score is (priority << 33) | (allow << 32) | (_LINE_MAX - line): the larger score
# is the better rule (RFC 9309 §2.2.2 longest match, Allow on a tie, then the first
# line, which only explain() reports). A score below _NON_EMPTY is an empty pattern.
_LINE_MAX: Final = (1 << 31) - 1
_ALLOW: Final = 1 << 32
_NON_EMPTY: Final = 1 << 33
_LOW: Final = (1 << 32) - 1


def score(priority: int, allow: bool, line: int) -> int:
    """The score of a rule (see above)."""
    return (priority << 33) | (allow << 32) | (_LINE_MAX - line)


def allows(best: int) -> bool:
    """Whether the best score found (-1: no rule) lets the URL through."""
    return best < _NON_EMPTY or best & _ALLOW != 0


class CompiledRule(NamedTuple):
    """A rule ready to match. Tuples of these sort into decision order by ``rank``."""

    rank: Rank
    kind: int
    literal: str
    segments: tuple[str, ...]
    anchored: bool
    pattern: str
    group: int

    @property
    def priority(self) -> int:
        """The normalised pattern's length (google_semantics.md item 37)."""
        return -self.rank[0]

    @property
    def allow(self) -> bool:
        """True for an Allow rule."""
        return not self.rank[1]

    @property
    def line(self) -> int:
        """The line of the rule in the file."""
        return self.rank[2]

    @property
    def rule(self) -> Rule:
        """The public form of this rule."""
        return Rule(self.allow, self.pattern, self.line)


_new = tuple.__new__  # builds CompiledRule without NamedTuple's Python-level __new__


def compile_rule(pattern: str, allow: bool, line: int, group: int) -> CompiledRule:
    """Compile one normalised pattern."""
    rank = (-len(pattern), not allow, line)
    if not pattern:
        return _new(CompiledRule, ((0, not allow, line), EMPTY, "", (), False, "", group))
    # "$" is special only as the last character (google_semantics.md item 34).
    anchored = pattern[-1] == "$"
    body = pattern[:-1] if anchored else pattern.rstrip("*")
    # (An unanchored trailing "*" adds nothing to the match; it keeps its priority.)
    if "*" not in body:
        kind = EXACT if anchored else PREFIX
        return _new(CompiledRule, (rank, kind, body, (), anchored, pattern, group))
    segments = body.split("*")
    if len(segments) > 2:
        # "**" and other empty middle segments match anything; drop them.
        segments = [segments[0], *(s for s in segments[1:-1] if s), segments[-1]]
    entry = (rank, GLOB, "", tuple(segments), anchored, pattern, group)
    return _new(CompiledRule, entry)


def _rules_of(
    groups: list[RawGroup], indices: tuple[int, ...], policy: MatchPolicy
) -> list[CompiledRule]:
    """Every rule of the groups at ``indices`` (plus Google's index.html rules)."""
    compiled: list[CompiledRule] = []
    for index in indices:
        group = groups[index]
        if not group.lines:
            continue
        patterns = normalise_patterns(policy, group.blob)
        for pattern, signed_line in zip(patterns, group.lines, strict=True):
            allow = signed_line < 0
            line = -signed_line if allow else signed_line
            compiled.append(compile_rule(pattern, allow, line, index))
            if allow and policy.index_html and _INDEX_HTM in pattern:
                extra = _index_html(pattern)
                if extra:
                    compiled.append(compile_rule(extra, True, line, index))
    return compiled


def _index_html(pattern: str) -> str:
    """Google: an Allow ending in /index.htm* also allows its directory exactly."""
    slash = pattern.rfind("/")
    return pattern[: slash + 1] + "$" if pattern.startswith(_INDEX_HTM, slash) else ""


def compile_bucket(groups: list[RawGroup], indices: tuple[int, ...], policy: MatchPolicy) -> Bucket:
    """Compile the rules of the groups at ``indices`` into a :class:`Bucket`."""
    starts = array("i", (groups[i].line for i in indices))
    if policy.first_match:
        rules = _rules_of(groups, indices, policy)
        rules.sort(key=_file_order)
        return Bucket(indices, starts, rules=rules)
    prefix: dict[str, int] = {}
    exact: dict[str, int] = {}
    others: list[tuple[str, int]] = []  # (pattern, score): wildcard and empty rules
    index_html = policy.index_html
    for index in indices:
        group = groups[index]
        if not group.lines:
            continue
        patterns = normalise_patterns(policy, group.blob)
        for pattern, signed_line in zip(patterns, group.lines, strict=True):
            if signed_line < 0:
                rule = (len(pattern) << 33) | _ALLOW | (_LINE_MAX + signed_line)
                if index_html and _INDEX_HTM in pattern:
                    extra = _index_html(pattern)
                    if extra:
                        others.append((extra, score(len(extra), True, -signed_line)))
            else:
                rule = (len(pattern) << 33) | (_LINE_MAX - signed_line)
            if "*" not in pattern and "$" not in pattern and pattern:
                # Most rules are plain prefixes: one dict update each (this loop is hot).
                if rule > prefix.get(pattern, -1):
                    prefix[pattern] = rule
            else:
                others.append((pattern, rule))
    bucket = Bucket(indices, starts)
    bucket.index(prefix, exact, others)
    return bucket


def _file_order(rule: CompiledRule) -> tuple[int, bool]:
    return (rule.rank[2], rule.rank[1])


_NO_INTS: Final = array("i")  # shared by buckets without prefix rules; never mutated
#: A wildcard rule: (score, head, tail, middle segments or None, anchored, minimum
#: target size, pattern).
GlobEntry = tuple[int, str, str, "tuple[str, ...] | None", bool, int, str]


class Bucket:
    """The rules that apply to one agent, indexed so the best match is found fast.

    Longest-match policies: ``prefixes`` are the distinct literal prefixes, sorted;
    ``parents[i]`` is the index of the longest other literal that is a prefix of
    ``prefixes[i]`` (-1: none) and ``scores[i]`` the best score of its rules.
    ``$``-anchored literals are a dict, wildcard rules a list in decision order.
    First-match (the 1997 draft) keeps ``rules`` in file order instead.
    """

    __slots__ = (
        "chain",
        "empty",
        "exact",
        "glob_heads",
        "globs",
        "indices",
        "parents",
        "prefixes",
        "rules",
        "scores",
        "starts",
    )

    def __init__(
        self,
        indices: tuple[int, ...],
        starts: array[int],
        rules: list[CompiledRule] | None = None,
    ) -> None:
        self.indices = indices
        self.starts = starts
        self.rules = rules
        self.prefixes: list[str] = []
        self.parents = _NO_INTS
        self.scores = _NO_INTS
        #: chain[i]: the best-scored literal among prefixes[i] and its own prefixes;
        #: None when that is always prefixes[i] (no trailing "*" raised a priority).
        self.chain: array[int] | None = None
        self.exact: dict[str, int] | None = None
        self.globs: list[GlobEntry] | None = None
        self.glob_heads: tuple[str, ...] = ()
        self.empty = -1

    def index(
        self, prefix: dict[str, int], exact: dict[str, int], others: list[tuple[str, int]]
    ) -> None:
        """Build the indexes from plain prefixes and the other rules (compile time)."""
        globs: list[GlobEntry] = []
        for pattern, rule in others:
            if not pattern:
                self.empty = max(self.empty, rule)
                continue
            anchored = pattern[-1] == "$"
            body = pattern[:-1] if anchored else pattern.rstrip("*")
            if "*" in body:
                globs.append(_glob_entry(body, anchored, pattern, rule))
            elif anchored:
                if rule > exact.get(body, -1):
                    exact[body] = rule
            elif rule > prefix.get(body, -1):  # "/a*": the literal "/a", priority 3
                prefix[body] = rule
        if prefix:
            self._index_prefixes(prefix)
        if exact:
            self.exact = exact
        if globs:
            globs.sort(key=_score_of, reverse=True)
            self.globs = globs
            self.glob_heads = tuple(dict.fromkeys(entry[1] for entry in globs))

    def _index_prefixes(self, best: dict[str, int]) -> None:
        literals = sorted(best)
        scores = array("q", map(best.__getitem__, literals))
        parents = array("i", bytes(4 * len(literals)))
        # In sorted order every prefix of a literal comes before it, and no literal
        # between the two drops it from this stack of nested literals: linear time.
        stack: list[int] = []
        raised = False
        for j, literal in enumerate(literals):
            while stack and not literal.startswith(literals[stack[-1]]):
                stack.pop()
            parents[j] = stack[-1] if stack else -1
            stack.append(j)
            raised = raised or scores[j] >> 33 != len(literal)
        self.prefixes, self.scores, self.parents = literals, scores, parents
        if raised:
            # A trailing "*" counts in the priority: a shorter literal can outrank a
            # longer one, so each literal also records the best along its prefixes.
            chain = array("i", range(len(literals)))
            for j in range(len(literals)):
                up = parents[j]
                if up >= 0 and scores[chain[up]] > scores[j]:
                    chain[j] = chain[up]
            self.chain = chain

    def best(self, target: str) -> int:
        """The best score among rules matching ``target``; -1 when none matches."""
        best = -1
        prefixes = self.prefixes
        if prefixes:
            i = bisect_right(prefixes, target) - 1
            if i >= 0:
                # prefixes[i] is the largest literal <= target: the longest literal
                # that is a prefix of target is it or one of its own prefixes.
                parents = self.parents
                while not target.startswith(prefixes[i]):
                    i = parents[i]
                    if i < 0:
                        break
                else:
                    chain = self.chain
                    best = self.scores[chain[i] if chain is not None else i]
        exact = self.exact
        if exact is not None:
            hit = exact.get(target, -1)
            if hit > best:  # noqa: PLR1730 (max() costs a call on the hot path)
                best = hit
        globs = self.globs
        if globs is not None and target.startswith(self.glob_heads):
            best = _best_glob(globs, target, best)
        return best if best >= 0 else self.empty

    def allows(self, target: str) -> bool:
        """True unless the best rule matching ``target`` is a non-empty Disallow."""
        best = self.best(target)
        return best < _NON_EMPTY or best & _ALLOW != 0

    def deciding(self, target: str) -> CompiledRule | None:
        """The deciding rule for ``target`` as a :class:`CompiledRule` (for explain)."""
        best = self.best(target)
        if best < 0:
            return None
        allow = best & _ALLOW != 0
        line = _LINE_MAX - (best & _LOW)
        group = self.indices[bisect_right(self.starts, line) - 1]
        return compile_rule(self._pattern(target, best), allow, line, group)

    def _pattern(self, target: str, best: int) -> str:
        """The pattern of the rule scored ``best`` (it matches ``target``)."""
        if best < _NON_EMPTY:
            return ""
        for entry in self.globs or ():
            if entry[0] == best:
                return entry[6]
        if self.exact is not None and self.exact.get(target) == best:
            return target + "$"
        priority = best >> 33
        i = self.scores.index(best)
        literal = self.prefixes[i]
        return literal + "*" * (priority - len(literal))


def _best_glob(globs: list[GlobEntry], target: str, best: int) -> int:
    """The best score of a wildcard rule matching ``target`` if above ``best``."""
    size = len(target)
    # In decision order: the first match is the best wildcard rule.
    for rule, head, tail, middle, anchored, min_size, _ in globs:
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


def _score_of(entry: GlobEntry) -> int:
    return entry[0]


def _glob_entry(body: str, anchored: bool, pattern: str, rule: int) -> GlobEntry:
    segments = body.split("*")
    if len(segments) > 2:
        # "**" and other empty middle segments match anything; drop them.
        segments = [segments[0], *(s for s in segments[1:-1] if s), segments[-1]]
    middle = tuple(segments) if len(segments) > 2 else None
    return (rule, segments[0], segments[-1], middle, anchored, sum(map(len, segments)), pattern)


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


def rule_matches(rule: CompiledRule, target: str) -> bool:
    """Return True if ``rule`` matches ``target``."""
    kind = rule.kind
    if kind == PREFIX:
        return target.startswith(rule.literal)
    if kind == EXACT:
        return target == rule.literal
    if kind == GLOB:
        return glob_match(target, rule.segments, rule.anchored)
    return True


def decide(bucket: Bucket, target: str, policy: MatchPolicy) -> CompiledRule | None:
    """Return the deciding rule for ``target``, or None when no rule matches.

    Longest-match policies: the best-ranked match decides; an empty pattern
    (priority 0) matches but never disallows (google_semantics.md item 36).
    First-match: empty patterns are skipped, as the 1997 draft reads ``Disallow:``
    as "nothing disallowed".
    """
    if bucket.rules is not None:
        for rule in bucket.rules:
            if rule.kind != EMPTY and rule_matches(rule, target):
                return rule
        return None
    return bucket.deciding(target)
