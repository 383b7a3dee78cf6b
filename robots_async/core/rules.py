"""Directive events -> the groups and facts of a robots.txt (the parser builds the
:class:`RobotsTxt`; the result types are in ``results``).

Grouping follows Google's reference and RFC 9309 §2.1: consecutive user-agent lines
share the rules that follow; a user-agent line starts a new group only after an
Allow/Disallow line. Other lines (sitemap, unknown, extensions) never end a group.
"""

from __future__ import annotations

import math
import re
from array import array
from datetime import time
from operator import itemgetter
from typing import TYPE_CHECKING, Final, NamedTuple

from .agent import crawler_name
from .content_signals import SignalLines, cached_signals
from .results import (
    CleanParam,
    RequestRate,
    VisitTime,
    W,
    WarningRecord,
)
from .usage import UsageLines, read_preference

if TYPE_CHECKING:
    from collections.abc import Callable

    from .policy import MatchPolicy

__all__ = ["CollectedRules", "RawGroup", "RulesBuilder", "agent_token"]

# Facts about the whole file: never crowded out by the cap on line warnings.
_FILE_LEVEL: Final = frozenset({W.TRUNCATED, W.TRUNCATED_LINE, W.TOO_MANY_RULES})

# Directive kinds; the tokenizer maps key spellings to them. DISALLOW and ALLOW are
# the two smallest so that "is a rule" is one comparison on the hot path.
DISALLOW, ALLOW, USER_AGENT, SITEMAP = 0, 1, 2, 3
CRAWL_DELAY, REQUEST_RATE, VISIT_TIME, HOST, CLEAN_PARAM, CONTENT_USAGE = 4, 5, 6, 7, 8, 9
CONTENT_SIGNAL = 10
UNKNOWN = 99

#: Line warnings kept per file by default (``parse(max_warnings=)``). Of 2,090 corpus
#: files 46 give more, 45 of them HTML pages without a rule: beyond 100 a file's
#: warnings say nothing new, and 1,000 of them took 58% of parsing the corpus (each
#: junk line through the full loop) and ~40 KB a page in a cache, packed.
MAX_WARNINGS: Final = 100
#: Rules kept per file (all groups together, since groups merge into one bucket);
#: only reachable with max_bytes=None (512,000 bytes hold at most ~73,000 rules),
#: it bounds the memory and compile time of a hostile file.
MAX_RULES: Final = 100_000
#: Bytes of a junk line kept in its warning.
DETAIL_BYTES: Final = 80
#: The largest Crawl-delay taken as given; larger values are clamped (with a warning).
MAX_CRAWL_DELAY: Final = 86_400.0


_AGENT_TOKEN = re.compile(rb"[A-Za-z_-]*")
_NUMBER = re.compile(rb"\d+(?:\.\d*)?|\.\d+")
# Digits are bounded so that int()/float() never meet a hostile 16,000-digit number.
_RATE = re.compile(
    rb"(\d{1,9})(?!\d)\s*/\s*(\d{1,9}(?:\.\d{1,9})?)(?![\d.])\s*([smhd]?)", re.IGNORECASE
)
# "0200-0630", "02:00 - 06:30" and the space-separated "0200 0630" seen in real files.
_VISIT = re.compile(rb"(\d\d):?(\d\d)\s*(?:-|\s)\s*(\d\d):?(\d\d)")
_UNITS = {b"": 1, b"s": 1, b"m": 60, b"h": 3600, b"d": 86400}


class RawGroup:
    """A group as parsed: raw bytes, compacted at build time, normalised on first use.

    While parsing, ``patterns`` and ``lines`` grow in step (a negative line number
    marks an Allow). :meth:`freeze` packs patterns into one newline-joined blob (a
    value can never contain a line break) and lines into an int array.
    """

    __slots__ = (
        "_agent_names",
        "agents",
        "blob",
        "crawl_delay",
        "line",
        "lines",
        "patterns",
        "request_rate",
        "signals",
        "usage",
        "visit_time",
    )

    def __init__(self, line: int, agent: bytes) -> None:
        self.line = line
        self.agents: list[bytes] = [agent]
        self._agent_names: tuple[str, ...] | None = None
        self.patterns: list[bytes] = []
        self.lines: list[int] | array[int] = []
        self.blob = b""
        self.crawl_delay: float | None = None
        self.request_rate: RequestRate | None = None
        self.visit_time: VisitTime | None = None
        #: Content-Usage lines (raw path, preference as written, its reading, line).
        self.usage: UsageLines | None = None
        #: Content-Signal lines; a group without any shares the file's default ones.
        self.signals: SignalLines | None = None

    def freeze(self, room: int) -> bool:
        """Pack the rules, keeping at most ``room``; read-only afterwards.

        Returns False if rules beyond ``room`` were dropped.
        """
        complete = len(self.lines) <= room
        if not complete:
            del self.patterns[room:], self.lines[room:]
        # The parser appends values unstripped: stripped here in one C-level pass,
        # or one call for the usual "Disallow: /" group (-110 ns a group).
        patterns = self.patterns
        if len(patterns) == 1:
            self.blob = patterns[0].strip()
        else:
            self.blob = b"\n".join(map(bytes.strip, patterns))
        self.patterns = _NO_PATTERNS
        self.lines = array("i", self.lines)
        return complete

    @property
    def agent_names(self) -> tuple[str, ...]:
        """The user-agent values as written (decoded on first use, then kept)."""
        if self._agent_names is None:
            self._agent_names = tuple(a.decode("utf-8", "replace") for a in self.agents)
        return self._agent_names

    @property
    def tokens(self) -> list[str | None]:
        """Lower-cased product tokens of the agents; None stands for ``*``."""
        return [agent_token(a) for a in self.agents]

    @property
    def names(self) -> list[str]:
        """Lower-cased names of the agents up to the first space or ``/`` (non-empty)."""
        # Decoded here, not through agent_names: the agent index would keep a second
        # copy of every agent line in each group (127 bytes a file asked by 5 names).
        names = (crawler_name(a.decode("utf-8", "replace")).lower() for a in self.agents)
        return [name for name in names if name and name != "*"]


_NO_PATTERNS: list[bytes] = []


class RulesBuilder:
    """Collects directives into groups and file-wide records.

    The parser appends Allow/Disallow lines to :attr:`group` itself (the hot path);
    everything else arrives through :meth:`user_agent` or a handler.
    """

    __slots__ = (
        "_clean_params",
        "_file_level",
        "_groups",
        "_host",
        "_long_lines",
        "_policy",
        "_signals",
        "group",
        "max_warnings",
        "sitemaps",
        "warnings",
    )

    def __init__(self, policy: MatchPolicy, max_warnings: int = MAX_WARNINGS) -> None:
        self._policy = policy
        #: Line warnings kept; the parser appends junk-line records up to it itself.
        self.max_warnings = max_warnings
        self._groups: list[RawGroup] = []
        #: The group rules are added to; None before the first user-agent line.
        self.group: RawGroup | None = None
        #: Sitemap URLs as written, in order, once each; the parser adds absolute
        #: ones itself (decoded at build time).
        self.sitemaps: dict[bytes, None] = {}
        self._host: str | None = None
        self._clean_params: list[CleanParam] = []
        #: Content-Signal lines before the first group: the file's default.
        self._signals: SignalLines | None = None
        #: (line, code, detail) records; the parser appends junk-line records itself.
        self.warnings: list[WarningRecord] = []
        # Over-long lines are found per chunk, ahead of the lines before them: kept
        # apart and merged by line at the end, so the cap keeps the same warnings
        # however the body was chunked.
        self._long_lines: list[WarningRecord] = []
        # Facts about the whole file (truncation, cut groups) are never crowded out
        # by junk-line warnings: they bypass the cap.
        self._file_level: list[WarningRecord] = []

    def warn(self, line: int, code: str, detail: str | bytes) -> None:
        """Record a warning (details are decoded and formatted only when read)."""
        if code in _FILE_LEVEL:
            self._file_level.append((line, code, detail))
        # One past the cap is kept: it tells _final_warnings that some were dropped.
        elif len(self.warnings) <= self.max_warnings:
            self.warnings.append((line, code, detail[:DETAIL_BYTES]))

    def long_line(self, line: int, length: int) -> None:
        """Record a line longer than the cap (kept apart: see __init__)."""
        if len(self._long_lines) <= self.max_warnings:
            self._long_lines.append((line, W.LINE_TOO_LONG, str(length)))

    def handle(self, kind: int, line: int, value: bytes) -> None:
        """Take a directive other than Allow/Disallow/User-agent (a table lookup:
        binding seven handlers per parse cost ~1 us a file)."""
        _HANDLERS[kind](self, line, value)

    def directive(self, kind: int, line: int, value: bytes) -> None:
        """Take one directive of any kind (the parser's slow path)."""
        if kind <= ALLOW:
            group = self.group
            if group is None:
                self.outside_group(line, kind)
            else:
                group.patterns.append(value)
                group.lines.append(-line if kind == ALLOW else line)
        elif kind == USER_AGENT:
            self.user_agent(line, value)
        elif kind != UNKNOWN:
            self.handle(kind, line, value)

    def outside_group(self, line: int, kind: int) -> None:
        """RFC 9309 §2.2.2: rules before any user-agent line SHOULD be ignored."""
        self.warn(line, W.RULE_OUTSIDE_GROUP, "Allow" if kind == ALLOW else "Disallow")

    def rule_outside_group(self, signed_line: int) -> None:
        """:meth:`outside_group` for a line number that is negative for an Allow."""
        self.outside_group(abs(signed_line), ALLOW if signed_line < 0 else DISALLOW)

    def user_agent(self, line: int, value: bytes) -> RawGroup:
        """Add an agent; a new group starts only after the current one has rules."""
        group = self.group
        if group is None or group.lines:
            group = self.group = RawGroup(line, value)
            self._groups.append(group)
        else:
            group.agents.append(value)
        return group

    def _sitemap(self, line: int, value: bytes) -> None:
        if not value:
            return
        if b"://" not in value:
            self.warn(line, W.RELATIVE_SITEMAP, value)
        self.sitemaps[value] = None

    def _host_line(self, line: int, value: bytes) -> None:
        if self._host is None and value:
            self._host = value.decode("utf-8", "replace")

    def _group_for_extension(self, line: int, name: str) -> RawGroup | None:
        if self.group is None:
            self.warn(line, W.RULE_OUTSIDE_GROUP, name)
        return self.group

    def _crawl_delay(self, line: int, value: bytes) -> None:
        group = self._group_for_extension(line, "Crawl-delay")
        match = _NUMBER.match(value)
        delay = float(match.group()) if match else math.nan
        if not math.isfinite(delay):
            self.warn(line, W.INVALID_VALUE, f"Crawl-delay {_shown(value)}")
            return
        if delay > MAX_CRAWL_DELAY:
            self.warn(line, W.INVALID_VALUE, f"Crawl-delay {delay} clamped to {MAX_CRAWL_DELAY}")
            delay = MAX_CRAWL_DELAY
        if group is not None:
            # Several Crawl-delay lines in one group: the most polite one is kept.
            current = group.crawl_delay
            group.crawl_delay = delay if current is None else max(current, delay)

    def _request_rate(self, line: int, value: bytes) -> None:
        group = self._group_for_extension(line, "Request-rate")
        rate = _parse_rate(value)
        if rate is None:
            self.warn(line, W.INVALID_VALUE, f"Request-rate {_shown(value)}")
        elif group is not None:
            # Several Request-rate lines in one group: the slowest is kept, as for
            # Crawl-delay (the most polite reading).
            current = group.request_rate
            if current is None or rate.delay > current.delay:
                group.request_rate = rate

    def _visit_time(self, line: int, value: bytes) -> None:
        group = self._group_for_extension(line, "Visit-time")
        window = _parse_window(value)
        if window is None:
            self.warn(line, W.INVALID_VALUE, f"Visit-time {_shown(value)}")
            return
        if group is not None:
            group.visit_time = window

    def _content_usage(self, line: int, value: bytes) -> None:
        """``Content-Usage: [path] preference`` (draft-ietf-aipref-attach §4).

        A value starting with ``/`` has a path up to the first space or tab; the rest
        is the preference. Unlike Allow/Disallow the line never closes a group's
        agent list, so Allow/Disallow verdicts are exactly what they were without it.
        """
        group = self._group_for_extension(line, "Content-Usage")
        if value[:1] == b"/":
            path, _, preference = value.replace(b"\t", b" ").partition(b" ")
            preference = value[len(path) :].strip()
        else:
            path, preference = b"", value
            head = value.split(None, 1)[0] if value else b""
            if b"/" in head:
                self.warn(line, W.USAGE_PATH, head)
        reading, problems, text = read_preference(preference)
        for problem in problems:
            self.warn(line, W.CONTENT_USAGE, problem)
        if group is not None:
            if group.usage is None:
                group.usage = UsageLines()
            group.usage.append(path, text, reading, line)

    def _content_signal(self, line: int, value: bytes) -> None:
        """``Content-Signal: label=yes|no, ...`` (contentsignals.org): kept per group;
        before the first group, the file's default (see ``content_signals``)."""
        reading, problems = cached_signals(value)
        for problem in problems:
            self.warn(line, W.CONTENT_SIGNAL, problem)
        group = self.group
        if group is None:
            if self._signals is None:
                self._signals = SignalLines()
            self._signals.append(line, reading)
            return
        if group.signals is None:
            group.signals = SignalLines()
        group.signals.append(line, reading)

    def _clean_param(self, line: int, value: bytes) -> None:
        text = value.decode("utf-8", "replace")
        params, _, path = text.partition(" ")
        names = tuple(p for p in params.split("&") if p)
        if not names:
            self.warn(line, W.INVALID_VALUE, f"Clean-param {text!r}")
            return
        self._clean_params.append(CleanParam(names, path.strip() or None, line))

    def _final_warnings(self) -> list[WarningRecord]:
        """The first ``max_warnings`` line warnings and every file-level one, in line order.

        A "too-many-warnings" marker ends the list when line warnings were dropped.
        """
        warnings, cap = self.warnings, self.max_warnings
        if not (self._long_lines or self._file_level or len(warnings) > cap):
            return warnings  # already in line order: recorded as the lines came
        if self._long_lines:
            warnings = sorted(warnings + self._long_lines, key=_line_of)
        # Judged on the merged list: each part may be under the cap and their sum over.
        overflow = len(warnings) > cap
        kept = sorted(warnings[:cap] + self._file_level, key=_line_of)
        if overflow:
            kept.append(((kept[-1] if kept else warnings[0])[0], W.TOO_MANY_WARNINGS, str(cap)))
        return kept

    def build(self) -> CollectedRules:
        """Freeze what was collected; the parser wraps it in a RobotsTxt.

        RobotsTxt is built by the parser, not here: that module imports this one,
        and the layout allows no import circle (tests/test_layering.py).
        """
        room, cut = MAX_RULES, False
        for group in self._groups:
            if not group.freeze(room) and not cut:
                cut = True  # one warning, at the first group that lost rules
                self.warn(group.line, W.TOO_MANY_RULES, str(MAX_RULES))
            room -= len(group.lines)
        return CollectedRules(
            self._groups,
            self._policy,
            _decoded(self.sitemaps) if self.sitemaps else (),
            self._host,
            tuple(self._clean_params),
            self._final_warnings(),
            self._signals,
        )


class CollectedRules(NamedTuple):
    """What a RulesBuilder collected from one file, ready for RobotsTxt."""

    groups: list[RawGroup]
    policy: MatchPolicy
    sitemaps: tuple[str, ...]
    host: str | None
    clean_params: tuple[CleanParam, ...]
    warnings: list[WarningRecord]
    #: Content-Signal lines before the first group (the file's default).
    file_signals: SignalLines | None


#: Directive kind -> the RulesBuilder method that takes it.
_HANDLERS: Final[dict[int, Callable[[RulesBuilder, int, bytes], None]]] = {
    SITEMAP: RulesBuilder._sitemap,
    CRAWL_DELAY: RulesBuilder._crawl_delay,
    REQUEST_RATE: RulesBuilder._request_rate,
    VISIT_TIME: RulesBuilder._visit_time,
    HOST: RulesBuilder._host_line,
    CLEAN_PARAM: RulesBuilder._clean_param,
    CONTENT_USAGE: RulesBuilder._content_usage,
    CONTENT_SIGNAL: RulesBuilder._content_signal,
}


def _parse_rate(value: bytes) -> RequestRate | None:
    """``n/T[smhd]`` as a RequestRate, or None when malformed, zero or absurd."""
    match = _RATE.match(value)
    if match is None:
        return None
    requests, seconds = int(match.group(1)), float(match.group(2))
    seconds *= _UNITS[match.group(3).lower()]
    if requests == 0 or seconds == 0 or not math.isfinite(seconds):
        return None
    rest = value[match.end() :].strip()
    window = _parse_window(rest) if rest else None
    return RequestRate(requests, seconds, window)


def _parse_window(value: bytes) -> VisitTime | None:
    """``HHMM-HHMM`` (or ``HH:MM - HH:MM``, ``HHMM HHMM``) as a VisitTime, else None."""
    match = _VISIT.match(value)
    if match is None:
        return None
    h1, m1, h2, m2 = (int(g) for g in match.groups())
    try:
        return VisitTime(time(h1, m1), time(h2, m2))
    except ValueError:  # 2500-9999 and the like
        return None


def _shown(value: bytes) -> str:
    """A directive value for a warning message: text, not a bytes repr."""
    return repr(value[:DETAIL_BYTES].decode("utf-8", "replace"))


def _decoded(values: dict[bytes, None]) -> tuple[str, ...]:
    """The values as text, once each (two byte strings can decode alike)."""
    # A dict comprehension: 263 ns for one value, 489 with map() and dict.fromkeys.
    return tuple({value.decode("utf-8", "replace"): None for value in values})


#: Sort key of a warning record: its line, in C. The sort is stable: a line's own
#: warnings keep the order they were recorded in, as where nothing is merged. By
#: (line, code) they were reordered only in files with a long line or a file-level
#: warning, and a cap then kept other first warnings than the uncapped list's.
_line_of: Final = itemgetter(0)


def agent_token(value: bytes) -> str | None:
    """Google's reading of a robots.txt user-agent value; None for the global ``*``.

    ``*`` alone or followed by whitespace is global; anything else is cut to its
    leading ``[A-Za-z_-]`` run (``Googlebot/2.1`` -> ``googlebot``, ``*bot`` -> ``""``).
    """
    if value[:1] == b"*" and (len(value) == 1 or value[1:2].isspace()):
        return None
    match = _AGENT_TOKEN.match(value)
    return match.group().decode("ascii").lower() if match else ""
