"""What a crawler asks a robots.txt besides "may I fetch this?": why (explain), AI usage
preferences, Crawl-delay, Request-rate, Visit-time, its groups and the file's warnings.

A base class of :class:`RobotsTxt` (a single chain of bases, as a compiled build
needs): its attributes are RobotsTxt's slots.
"""

from __future__ import annotations

from array import array
from typing import TYPE_CHECKING, Literal

from .content_signals import ContentSignals, SignalLines, combine_signals
from .matcher import EMPTY, decide
from .packed_warnings import PACK_FROM, PackedWarnings
from .policy import normalise_patterns
from .results import Group, Reason, Rule, Verdict, WarningRecord, format_warning
from .selection import AgentSelection
from .usage import UsagePreferences, UsageRule, combine_usage
from .usage_index import UsageIndex

if TYPE_CHECKING:
    from .matcher import Bucket
    from .results import ParseWarning, RequestRate, VisitTime

__all__ = ["ROBOTS_PATH", "RobotsQueries"]

#: RFC 9309 §2.2.2: the robots.txt URI itself is implicitly allowed.
ROBOTS_PATH = "/robots.txt"


class RobotsQueries(AgentSelection):
    """The questions besides allowed() (a base class of RobotsTxt)."""

    __slots__ = ("_file_signals", "_public_groups", "_synthetic", "_usage", "_warnings")

    _warnings: list[WarningRecord] | PackedWarnings | tuple[ParseWarning, ...]
    _synthetic: Literal["allow-all", "disallow-all"] | None
    _public_groups: tuple[Group, ...] | None
    _usage: dict[tuple[int, ...], _UsageRules] | None
    _file_signals: SignalLines | None

    # Defined by RobotsTxt. Real methods rather than TYPE_CHECKING stubs: mypyc
    # compiles no conditional statement in a class body.
    def allowed(
        self, url: object, user_agent: str | None = None, *, robots_token: str | None = None
    ) -> bool:
        """Return True if the agent may fetch ``url`` (see RobotsTxt.allowed)."""
        raise NotImplementedError

    def _target(self, url: object) -> str:
        raise NotImplementedError

    def _bucket(self, token: str) -> Bucket | None:
        raise NotImplementedError

    @property
    def warnings(self) -> tuple[ParseWarning, ...]:
        """What a linter would report, in line order (the first 100 line warnings by
        default: ``parse(max_warnings=)``).

        A file with many (16 or more) builds the tuple on each call, so that a cache
        can keep them packed: keep the tuple if you read it more than once.
        """
        warnings = self._warnings
        if isinstance(warnings, tuple):
            return warnings
        # In line order, the "too-many-warnings" marker last (_rules).
        formatted = tuple(format_warning(*w) for w in warnings)
        if len(warnings) < PACK_FROM:  # (never packed: no thread can race a cache)
            self._warnings = formatted
        return formatted

    def _pack_warnings(self) -> None:
        """Keep many warnings in flat buffers (RobotsCache does, for what it keeps).

        An HTML page served as robots.txt has a hundred (the cap): ~14 KB as records,
        ~5 KB packed. Packing costs ~20 us (~0.1 ms for a thousand): only a holder that
        keeps files calls it, not parse() (a thousand each: 4% of the corpus's parse).
        """
        warnings = self._warnings
        if isinstance(warnings, list) and len(warnings) >= PACK_FROM:
            self._warnings = PackedWarnings(warnings)

    @property
    def groups(self) -> tuple[Group, ...]:
        """The groups in file order, rules normalised as the policy matches them."""
        if self._public_groups is None:
            self._public_groups = tuple(self._public_group(i) for i in range(len(self._groups)))
        return self._public_groups

    def explain(
        self, url: object, user_agent: str | None = None, *, robots_token: str | None = None
    ) -> Verdict:
        """Return the :class:`Verdict` for ``url``: the deciding rule, line and group."""
        target = self._target(url)
        token = self._token(user_agent, robots_token)
        bucket = self._bucket(token)
        if target == ROBOTS_PATH and self._policy.robots_txt_allowed:
            return Verdict(True, "robots-txt", token=token)
        if bucket is None:
            reason: Reason = "no-group" if self._synthetic is None else self._synthetic
            return Verdict(reason != "disallow-all", reason, token=token)
        rule = decide(bucket, target, self._policy, self._groups)
        if rule is None:
            return Verdict(True, "no-match", agents=self._agents(bucket.indices), token=token)
        agents = self._groups[rule.group].agent_names
        if rule.kind == EMPTY:
            reason = "empty-rule"
        else:
            reason = "allow" if rule.allow else "disallow"
        return Verdict(reason != "disallow", reason, rule.rule, rule.line, agents, token)

    def usage(
        self, url: object, user_agent: str | None = None, *, robots_token: str | None = None
    ) -> UsagePreferences | None:
        """AI usage preferences for ``url`` (the ``Content-Usage`` rules), or None.

        None when the agent may not fetch ``url`` at all: a URL that may not be
        crawled has no usage preference (draft-ietf-aipref-attach §4). Otherwise the
        longest matching rule's preference (encoded path length, as for Allow/
        Disallow); rules of equal length combine, the most restrictive winning.
        Without a matching rule every category is "unknown".
        """
        token = self._token(user_agent, robots_token)
        if not self.allowed(url, robots_token=token):
            return None
        return self._usage_index(token).answer(self._target(url))

    def content_signals(
        self, url: object, user_agent: str | None = None, *, robots_token: str | None = None
    ) -> ContentSignals | None:
        """The ``Content-Signal`` labels that apply to the agent for ``url``, or None.

        The lines of the agent's groups (merged as for Allow/Disallow), else the
        lines written before the first group; labels combine with ``no`` winning.
        None when no line applies, or when the agent may not fetch ``url`` at all
        (as for :meth:`usage`: what may not be crawled has no usage to signal).
        Readings were made once at parse time: a question reads a few lists.
        """
        token = self._token(user_agent, robots_token)
        if not self.allowed(url, robots_token=token):
            return None
        own = [
            line
            for group in self._groups_for(None, token)
            if group.signals is not None
            for line in group.signals.numbered()
        ]
        if not own and self._file_signals is not None:
            own = self._file_signals.numbered()
        return combine_signals(sorted(own)) if own else None

    def crawl_delay(
        self, user_agent: str | None = None, *, robots_token: str | None = None
    ) -> float | None:
        """Crawl-delay in seconds for the agent (the largest of its merged groups)."""
        groups = self._groups_for(user_agent, robots_token)
        delays = [g.crawl_delay for g in groups if g.crawl_delay is not None]
        return max(delays) if delays else None

    def request_rate(
        self, user_agent: str | None = None, *, robots_token: str | None = None
    ) -> RequestRate | None:
        """Request-rate for the agent (the slowest of its merged groups)."""
        rates = [g.request_rate for g in self._groups_for(user_agent, robots_token)]
        present = [r for r in rates if r is not None]
        return max(present, key=lambda r: r.delay) if present else None

    def visit_time(
        self, user_agent: str | None = None, *, robots_token: str | None = None
    ) -> VisitTime | None:
        """Visit-time window for the agent, if any: within a group the last Visit-time
        line counts (as in Protego); of merged groups, the first that has one."""
        for group in self._groups_for(user_agent, robots_token):
            if group.visit_time is not None:
                return group.visit_time
        return None

    def groups_for(
        self, user_agent: str | None = None, *, robots_token: str | None = None
    ) -> tuple[Group, ...]:
        """The groups whose rules apply to the agent (merged, RFC 9309 §2.2.1)."""
        indices = self._indices(self._token(user_agent, robots_token))
        return tuple(self.groups[i] for i in indices)

    def _usage_unindexed(self, token: str) -> int:
        """How many Content-Usage rules the next usage question for ``token`` would
        index first (0 once indexed): a caller on an event loop indexes many off it."""
        indices = self._indices(token)
        if self._usage is not None and indices in self._usage:
            return 0
        return sum(len(self._groups[index].usage or ()) for index in indices)

    def _usage_index(self, token: str) -> _UsageRules:
        """The agent's Content-Usage rules in file order, normalised and indexed once per
        set of groups (a group's patterns normalised in one pass)."""
        indices = self._indices(token)
        if self._usage is None:
            self._usage = {}
        rules = self._usage.get(indices)
        if rules is None:
            patterns: list[str] = []
            texts: list[str] = []
            readings: list[UsagePreferences] = []
            lines: list[int] = []
            for group in indices:
                raw = self._groups[group].usage
                if raw is None:
                    continue
                normalised = normalise_patterns(self._policy, b"\n".join(raw.paths))
                patterns += [
                    p if path else "" for p, path in zip(normalised, raw.paths, strict=True)
                ]
                texts += raw.texts
                readings += raw.readings
                lines += raw.lines
            rules = self._usage[indices] = _UsageRules(patterns, texts, readings, lines)
        return rules

    def _usage_of(self, index: int) -> list[UsageRule]:
        """A group's Content-Usage rules, path patterns normalised by the policy."""
        raw = self._groups[index].usage
        if raw is None:
            return []
        normalised = normalise_patterns(self._policy, b"\n".join(raw.paths))
        return [
            UsageRule(pattern if path else "", text, line)
            for pattern, path, text, line in zip(
                normalised, raw.paths, raw.texts, raw.lines, strict=True
            )
        ]

    def _public_group(self, index: int) -> Group:
        raw = self._groups[index]
        patterns = normalise_patterns(self._policy, raw.blob) if raw.lines else []
        rules = tuple(
            Rule(signed < 0, pattern, abs(signed))
            for pattern, signed in zip(patterns, raw.lines, strict=True)
        )
        usage = tuple(self._usage_of(index))
        return Group(
            raw.agent_names,
            rules,
            raw.line,
            raw.crawl_delay,
            raw.request_rate,
            raw.visit_time,
            usage,
        )


class _UsageRules:
    """The Content-Usage rules of one set of groups: columns in file order and their
    index (few objects whatever the number of rules: see ``UsageLines``)."""

    __slots__ = ("index", "lines", "patterns", "readings", "texts")

    def __init__(
        self,
        patterns: list[str],
        texts: list[str],
        readings: list[UsagePreferences],
        lines: list[int],
    ) -> None:
        self.patterns = patterns
        self.texts = texts
        self.readings = readings
        self.lines = array("q", lines)
        self.index = UsageIndex(patterns, texts)

    def __len__(self) -> int:
        return len(self.patterns)

    def answer(self, target: str) -> UsagePreferences:
        """The preferences for ``target``: the best rules combined, naming them."""
        chosen = self.index.best(target)
        if not chosen:
            return UsagePreferences()
        return combine_usage(*(self._preferences(ordinal) for ordinal in chosen))

    def _preferences(self, ordinal: int) -> UsagePreferences:
        rule = UsageRule(self.patterns[ordinal], self.texts[ordinal], self.lines[ordinal])
        reading = self.readings[ordinal]
        return UsagePreferences(reading.train_ai, reading.search, reading.unknown_labels, (rule,))
