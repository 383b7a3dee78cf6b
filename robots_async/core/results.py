"""What parsing a robots.txt produces for its readers: warning codes and messages, and
the frozen result types (rules, groups, verdicts, rates, windows, warnings)."""

from __future__ import annotations

from dataclasses import dataclass

# At run time, not under TYPE_CHECKING: a mypyc-compiled dataclass resolves its
# fields' annotations when the module is imported.
from datetime import time  # noqa: TC003
from typing import TYPE_CHECKING, Final, Literal, TypeAlias

if TYPE_CHECKING:
    from .usage import UsageRule

__all__ = [
    "CleanParam",
    "Group",
    "ParseWarning",
    "Reason",
    "RequestRate",
    "Rule",
    "Verdict",
    "VisitTime",
    "W",
    "WarningRecord",
    "format_warning",
]


class W:
    """Warning codes (``ParseWarning.code``)."""

    UNKNOWN_KEY: Final = "unknown-key"
    TYPO: Final = "typo"
    MISSING_COLON: Final = "missing-colon"
    NO_SEPARATOR: Final = "no-separator"
    RULE_OUTSIDE_GROUP: Final = "rule-outside-group"
    LINE_TOO_LONG: Final = "line-too-long"
    TRUNCATED: Final = "truncated"
    TRUNCATED_LINE: Final = "truncated-line"
    INVALID_VALUE: Final = "invalid-value"
    RELATIVE_SITEMAP: Final = "relative-sitemap"
    TOO_MANY_WARNINGS: Final = "too-many-warnings"
    TOO_MANY_RULES: Final = "too-many-rules"
    CONTENT_USAGE: Final = "content-usage"
    USAGE_PATH: Final = "usage-path"
    CONTENT_SIGNAL: Final = "content-signal"


#: A warning as the parser records it: (line, code, detail).
WarningRecord: TypeAlias = tuple[int, str, str | bytes]

# Facts about the whole file: never crowded out by the cap on line warnings.
_FILE_LEVEL: Final = frozenset({W.TRUNCATED, W.TRUNCATED_LINE, W.TOO_MANY_RULES})

_MESSAGES = {
    W.UNKNOWN_KEY: "unknown directive {!r} ignored",
    W.TYPO: "misspelt directive {!r} accepted",
    W.MISSING_COLON: "no colon after the key; whitespace taken as separator",
    W.NO_SEPARATOR: "line without a key/value separator ignored: {!r}",
    W.RULE_OUTSIDE_GROUP: "{} before any user-agent line ignored",
    W.LINE_TOO_LONG: "line longer than 16663 bytes cut to 16663 bytes",
    W.TRUNCATED: "body longer than {} bytes; the rest was ignored",
    W.TRUNCATED_LINE: "line cut by the size limit dropped",
    W.INVALID_VALUE: "invalid value ignored: {}",
    W.RELATIVE_SITEMAP: "sitemap URL is not absolute: {!r}",
    W.TOO_MANY_WARNINGS: "more than {} warnings; the rest were not recorded",
    W.TOO_MANY_RULES: "more than {} rules in the file; the rest were ignored",
    W.CONTENT_USAGE: "Content-Usage: {}",
    W.USAGE_PATH: "Content-Usage path must start with '/'; read as a preference: {!r}",
    W.CONTENT_SIGNAL: "Content-Signal: {}",
}


@dataclass(frozen=True, slots=True)
class ParseWarning:
    """Something a linter would report: line number, code (see ``W``) and message."""

    line: int
    code: str
    message: str


@dataclass(frozen=True, slots=True)
class Rule:
    """One Allow/Disallow line; ``pattern`` is normalised as the policy matches it."""

    allow: bool
    pattern: str
    line: int

    def __str__(self) -> str:
        return f"{'Allow' if self.allow else 'Disallow'}: {self.pattern}"


@dataclass(frozen=True, slots=True)
class RequestRate:
    """``Request-rate: n/T [HHMM-HHMM]``: at most ``requests`` per ``seconds``.

    ``window`` is the optional UTC time window the rate applies in.
    """

    requests: int
    seconds: float
    window: VisitTime | None = None

    @property
    def delay(self) -> float:
        """Seconds between requests that keep to this rate."""
        return self.seconds / self.requests


@dataclass(frozen=True, slots=True)
class VisitTime:
    """``Visit-time: HHMM-HHMM``: the UTC window in which visits are welcome."""

    start: time
    end: time


@dataclass(frozen=True, slots=True)
class CleanParam:
    """Yandex ``Clean-param: p1&p2 [/path-prefix]``: query parameters to ignore."""

    params: tuple[str, ...]
    path_prefix: str | None
    line: int


@dataclass(frozen=True, slots=True)
class Group:
    """A group: its user-agent values as written, its rules and per-group extensions."""

    agents: tuple[str, ...]
    rules: tuple[Rule, ...]
    line: int
    crawl_delay: float | None = None
    request_rate: RequestRate | None = None
    visit_time: VisitTime | None = None
    #: Content-Usage rules (AI usage preferences), path patterns normalised.
    usage: tuple[UsageRule, ...] = ()


Reason = Literal[
    "allow",
    "disallow",
    "empty-rule",
    "no-match",
    "no-group",
    "robots-txt",
    "allow-all",
    "disallow-all",
]


@dataclass(frozen=True, slots=True)
class Verdict:
    """Why a URL is allowed or not: the deciding rule, its line and group.

    ``line`` is the line Google's reference reports (0 when no rule matched).
    ``reason`` is one of: ``allow``/``disallow`` (a rule decided), ``empty-rule``
    (only an empty Allow/Disallow matched), ``no-match`` (groups apply, no rule
    matched), ``no-group`` (no group for this agent), ``robots-txt`` (/robots.txt is
    always allowed), ``allow-all``/``disallow-all`` (no file: fetch outcome decided).
    """

    allowed: bool
    reason: Reason
    rule: Rule | None = None
    line: int = 0
    agents: tuple[str, ...] = ()
    token: str = ""


def format_warning(line: int, code: str, detail: str | bytes) -> ParseWarning:
    """Turn a recorded warning into its public form."""
    if isinstance(detail, bytes):
        detail = detail.decode("utf-8", "replace")
    template = _MESSAGES[code]
    message = template.format(detail) if "{" in template else template
    return ParseWarning(line, code, message)
