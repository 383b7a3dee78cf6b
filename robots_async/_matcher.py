"""Pattern matching and the decision: compiled per agent bucket, linear worst case.

A pattern is ``*``-separated literal segments, optionally anchored by a final ``$``.
Segments are found left to right with ``str.find`` (leftmost placement never loses a
match), so a hostile pattern costs O(len(path) x len(pattern)) at most, no regex and
no backtracking (google_semantics.md item 39).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, NamedTuple

from ._policy import normalise_patterns
from ._rules import Rule

if TYPE_CHECKING:
    from ._policy import MatchPolicy
    from ._rules import RawGroup

__all__ = ["Bucket", "CompiledRule", "compile_bucket", "decide", "glob_match", "rule_matches"]

EMPTY, PREFIX, EXACT, GLOB = 0, 1, 2, 3
_INDEX_HTM: Final = "/index.htm"
_MAX_QUICK_HEADS: Final = 64

#: Decision order as a sort key: longest pattern first, then allow, then file order.
Rank = tuple[int, bool, int]


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


def compile_bucket(groups: list[RawGroup], indices: tuple[int, ...], policy: MatchPolicy) -> Bucket:
    """Compile the rules of the groups at ``indices`` into a :class:`Bucket`."""
    compiled: list[CompiledRule] = []
    add = compiled.append
    agents: list[str] = []
    index_html = policy.index_html
    for index in indices:
        group = groups[index]
        agents.extend(group.agent_names)
        if not group.lines:
            continue
        patterns = normalise_patterns(policy, group.blob)
        for pattern, signed_line in zip(patterns, group.lines, strict=True):
            allow = signed_line < 0
            line = -signed_line if allow else signed_line
            if pattern and "*" not in pattern and "$" not in pattern:
                # Most rules are plain prefixes: built inline (this loop is hot).
                rank = (-len(pattern), not allow, line)
                add(_new(CompiledRule, (rank, PREFIX, pattern, (), False, pattern, index)))
            else:
                add(compile_rule(pattern, allow, line, index))
            # Google: an Allow ending in /index.htm* also allows its directory exactly.
            if allow and index_html and _INDEX_HTM in pattern:
                slash = pattern.rfind("/")
                if pattern.startswith(_INDEX_HTM, slash):
                    add(compile_rule(pattern[: slash + 1] + "$", True, line, index))
    if policy.first_match:
        compiled.sort(key=_file_order)
    else:
        compiled.sort()  # by rank: RFC 9309 §2.2.2 longest match, allow on a tie
    return Bucket(compiled, tuple(dict.fromkeys(agents)))


def _file_order(rule: CompiledRule) -> tuple[int, bool]:
    return (rule.rank[2], rule.rank[1])


class Bucket:
    """The rules that apply to one agent, indexed so the best match is found fast.

    ``rules`` is every rule in decision order (or file order for first-match). For
    the longest-match policies they are also indexed: literal prefixes by length
    (one slice and one dict lookup per distinct length), ``$``-anchored literals by
    text, and wildcard rules by head (the literal before the first ``*``).
    """

    __slots__ = (
        "agents",
        "disallow_heads",
        "empty",
        "exact",
        "glob_head_lengths",
        "glob_heads",
        "globs",
        "prefix_bounds",
        "prefix_lengths",
        "prefix_tables",
        "prefixes",
        "prefixes_by_length",
        "rules",
    )

    def __init__(self, rules: list[CompiledRule], agents: tuple[str, ...]) -> None:
        self.rules = rules
        self.agents = agents
        self.empty: CompiledRule | None = None
        self.exact: dict[str, CompiledRule] = {}
        self.prefixes: dict[int, dict[str, CompiledRule]] = {}
        self.globs: dict[str, list[GlobEntry]] = {}
        self.prefixes_by_length = True
        self._index(rules)
        self.glob_heads = tuple(self.globs)
        self.glob_head_lengths = sorted({len(head) for head in self.globs})
        self.prefix_lengths = sorted(self.prefixes, reverse=True)
        self.prefix_tables = [(n, self.prefixes[n]) for n in self.prefix_lengths]
        self.prefix_bounds = [] if self.prefixes_by_length else self._prefix_bounds()

    def _index(self, rules: list[CompiledRule]) -> None:
        prefixes, exact, globs = self.prefixes, self.exact, self.globs
        heads: dict[str, None] = {}
        # Walk against decision order: for equal patterns the best rule is written last.
        for rule in reversed(rules):
            rank, kind, literal = rule[0], rule[1], rule[2]
            if kind == PREFIX:
                table = prefixes.get(len(literal))
                if table is None:
                    table = prefixes[len(literal)] = {}
                table[literal] = rule
                if rank[0] != -len(literal):
                    self.prefixes_by_length = False
            elif kind == EXACT:
                exact[literal] = rule
            elif kind == GLOB:
                literal = rule[3][0]
                globs.setdefault(literal, []).append(_glob_entry(rule))
            else:
                self.empty = rule
                continue
            # What a non-empty Disallow needs the target to start with: its literal
            # (an anchored literal matches only a target that starts with it) or head.
            if rank[1]:
                heads[literal] = None
        for entries in globs.values():
            entries.reverse()  # back to decision order
        # RobotsTxt.allowed() answers most URLs with one startswith() over these heads;
        # that is linear in the tuple's size, so past a few dozen heads the indexes in
        # best() answer faster (None: no pre-check).
        self.disallow_heads = tuple(heads) if len(heads) <= _MAX_QUICK_HEADS else None

    def _prefix_bounds(self) -> list[Rank]:
        """bounds[i]: the best rank among literals no longer than prefix_lengths[i].

        Needed only when some literal's priority exceeds its length (a trailing
        ``*``), so that a shorter literal can outrank a longer one.
        """
        bounds: list[Rank] = []
        for length in reversed(self.prefix_lengths):
            best = min(rule.rank for rule in self.prefixes[length].values())
            bounds.append(min(best, bounds[-1]) if bounds else best)
        return bounds[::-1]

    def best(self, target: str) -> CompiledRule | None:
        """The highest-ranked rule matching ``target`` (longest-match policies)."""
        # An anchored literal that matches has priority len(target) + 1: no literal
        # prefix outranks it unless a trailing "*" raised that prefix's priority.
        best = self.exact.get(target)
        if best is None or not self.prefixes_by_length:
            prefix = self._best_prefix(target)
            if prefix is not None and (best is None or prefix.rank < best.rank):
                best = prefix
        if self.globs and target.startswith(self.glob_heads):
            best = self._best_glob(target, best)
        return best if best is not None else self.empty

    def _best_prefix(self, target: str) -> CompiledRule | None:
        size = len(target)
        prefixes = self.prefixes
        if self.prefixes_by_length:
            for length, table in self.prefix_tables:
                if length <= size:
                    hit = table.get(target[:length])
                    if hit is not None:
                        return hit
            return None
        best: CompiledRule | None = None
        for length, bound in zip(self.prefix_lengths, self.prefix_bounds, strict=True):
            if best is not None and bound >= best.rank:
                break
            if length <= size:
                hit = prefixes[length].get(target[:length])
                if hit is not None and (best is None or hit.rank < best.rank):
                    best = hit
        return best

    def _best_glob(self, target: str, best: CompiledRule | None) -> CompiledRule | None:
        globs = self.globs
        size = len(target)
        for length in self.glob_head_lengths:
            entries = globs.get(target[:length])
            if entries is None:
                continue
            # In decision order, so the first hit is the best of this head; the head
            # itself is known to match, and too-short targets are skipped cheaply.
            for rank, tail, middle, anchored, min_size, rule in entries:
                if best is not None and rank >= best[0]:
                    break
                if size < min_size:
                    continue
                if middle is not None:
                    hit = glob_match(target, middle, anchored)
                elif anchored:
                    hit = target.endswith(tail)
                else:
                    hit = target.find(tail, length) >= 0
                if hit:
                    best = rule
                    break
        return best


#: (rank, tail, segments if more than two else None, anchored, minimum size, rule)
GlobEntry = tuple[Rank, str, "tuple[str, ...] | None", bool, int, CompiledRule]


def _glob_entry(rule: CompiledRule) -> GlobEntry:
    segments = rule.segments
    middle = segments if len(segments) > 2 else None
    return (rule.rank, segments[-1], middle, rule.anchored, sum(map(len, segments)), rule)


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
    if policy.first_match:
        for rule in bucket.rules:
            if rule.kind != EMPTY and rule_matches(rule, target):
                return rule
        return None
    return bucket.best(target)
