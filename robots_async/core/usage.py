"""AI usage preferences (IETF aipref): the ``Content-Usage`` rule and header.

draft-ietf-aipref-attach adds a ``Content-Usage: [path] preference`` rule to robots.txt
groups and a ``Content-Usage`` response header; draft-ietf-aipref-vocab defines the
preference: an RFC 9651 Dictionary whose keys are category labels (``train-ai``,
``search``) and whose Token values ``y``/``n`` mean allowed/disallowed. Anything else,
a missing key or a Dictionary that does not parse, is "unknown" (never an error).
Statements combine per category: any ``n`` wins, then any ``y``, else unknown.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Final, Literal

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "CATEGORIES",
    "Preference",
    "UsageCategory",
    "UsagePreferences",
    "UsageRule",
    "combine_usage",
    "usage_from_header",
    "UsageLines",
    "cached_preference",
    "read_preference",
    "parse_preference",
]

#: The vocabulary's categories (vocab draft §3).
UsageCategory = Literal["train-ai", "search"]
CATEGORIES: Final[tuple[UsageCategory, ...]] = ("train-ai", "search")
#: What a statement says about one category.
Preference = Literal["allowed", "disallowed", "unknown"]

_VALUES: Final[dict[str, Preference]] = {"y": "allowed", "n": "disallowed"}
_RANK: Final[dict[Preference, int]] = {"unknown": 0, "allowed": 1, "disallowed": 2}


@dataclass(frozen=True, slots=True)
class UsageRule:
    """One ``Content-Usage`` line of robots.txt: its path pattern, preference and line."""

    path: str
    preference: str
    line: int

    def __str__(self) -> str:
        return f"Content-Usage: {self.path} {self.preference}".replace(":  ", ": ")


@dataclass(frozen=True, slots=True)
class UsagePreferences:
    """The preference per category, the unknown labels seen, and where they came from.

    ``rules`` are the robots.txt rules that applied (several with the same path are
    combined); ``header`` is the Content-Usage header value(s) combined in, if any.
    """

    train_ai: Preference = "unknown"
    search: Preference = "unknown"
    #: Labels outside the vocabulary, with their values as written (kept, not used).
    unknown_labels: tuple[tuple[str, str], ...] = ()
    rules: tuple[UsageRule, ...] = ()
    header: tuple[str, ...] = ()

    def get(self, category: UsageCategory) -> Preference:
        """The preference for ``category`` (``"train-ai"`` or ``"search"``)."""
        if category == "train-ai":
            return self.train_ai
        if category == "search":
            return self.search
        raise ValueError(f"unknown usage category {category!r}; known: {', '.join(CATEGORIES)}")

    def disallows(self, category: UsageCategory) -> bool:
        """True if the preference for ``category`` is "disallowed" (``n``)."""
        return self.get(category) == "disallowed"

    @property
    def lines(self) -> tuple[int, ...]:
        """The robots.txt lines of the rules that gave this preference."""
        return tuple(rule.line for rule in self.rules)

    def as_header(self) -> str:
        """The known preferences as a Content-Usage Dictionary (``train-ai=n, search=y``)."""
        values = {"allowed": "y", "disallowed": "n"}
        parts = [
            f"{category}={values[pref]}"
            for category in CATEGORIES
            if (pref := self.get(category)) != "unknown"
        ]
        return ", ".join(parts)


def _stronger(a: Preference, b: Preference) -> Preference:
    return a if _RANK[a] >= _RANK[b] else b


def combine_usage(*statements: UsagePreferences) -> UsagePreferences:
    """Combine statements per category: disallowed wins, then allowed (vocab §7.1)."""
    train_ai: Preference = "unknown"
    search: Preference = "unknown"
    labels: dict[tuple[str, str], None] = {}
    rules: dict[UsageRule, None] = {}
    header: list[str] = []
    for statement in statements:
        train_ai = _stronger(train_ai, statement.train_ai)
        search = _stronger(search, statement.search)
        labels.update(dict.fromkeys(statement.unknown_labels))
        rules.update(dict.fromkeys(statement.rules))
        header.extend(statement.header)
    return UsagePreferences(train_ai, search, tuple(labels), tuple(rules), tuple(header))


#: Longest preference value kept in the memo (bytes). Real ones are a few dozen bytes;
#: without a bound, hostile files of one long value each filled the 4,096 entries
#: with ~53 KB apiece (~220 MB kept after every file was dropped).
_MEMO_MAX = 256


def read_preference(value: bytes) -> tuple[UsagePreferences, tuple[str, ...], str]:
    """:func:`cached_preference` for a value of usual length; a longer one is read
    each time it is seen, never kept."""
    if len(value) <= _MEMO_MAX:
        return cached_preference(value)
    return cached_preference.__wrapped__(value)


@lru_cache(maxsize=4096)
def cached_preference(value: bytes) -> tuple[UsagePreferences, tuple[str, ...], str]:
    """:func:`parse_preference` of a value seen before, from a bounded memo.

    A file repeats a few preference values on thousands of lines: parsing each line
    took 0.12-0.20 s for 500 KB of Content-Usage lines (13 ms for as many Disallow
    lines), all on the event loop; a value is parsed once now. The result is
    immutable (frozen preferences, a tuple of messages, the value as text), so sharing
    it is safe, and equal lines share one text and one reading.
    """
    preferences, problems = parse_preference(value)
    return preferences, tuple(problems), value.decode("utf-8", "replace")


def parse_preference(value: bytes | str) -> tuple[UsagePreferences, list[str]]:
    """Parse one preference (an RFC 9651 Dictionary) and say what a linter would.

    Never raises: an invalid Dictionary gives every category unknown and a problem
    message. Duplicate keys: the last wins (RFC 9651 §4.2.2), with a message.
    """
    import http_sf  # the maintained RFC 9651 parser; imported only when a rule is seen

    if isinstance(value, str):
        # aiohttp decodes a header's non-UTF-8 bytes as U+DC80-U+DCFF (surrogateescape);
        # any other lone surrogate is kept as bytes the parse refuses (not ASCII).
        value = value.encode("utf-8", "surrogatepass")
    problems: list[str] = []

    def duplicate(key: str, _: str) -> None:
        problems.append(f"duplicate key {key!r} (the last one counts)")

    try:
        parsed = http_sf.parse(value, tltype="dictionary", on_duplicate_key=duplicate)
    except (http_sf.StructuredFieldError, ValueError, TypeError) as exc:
        text = value.decode("utf-8", "replace")
        return UsagePreferences(), [f"invalid preference {text!r}, every category unknown ({exc})"]
    assert isinstance(parsed, dict)  # tltype="dictionary" always gives one
    found: dict[str, Preference] = {}
    unknown: list[tuple[str, str]] = []
    for key, member in parsed.items():
        # A member is (item, parameters) or an inner list; parameters are ignored (vocab §6).
        item = member[0] if isinstance(member, tuple) else member
        outcome = _VALUES.get(str(item)) if isinstance(item, http_sf.Token) else None
        if key in CATEGORIES:
            found[key] = outcome or "unknown"
            if outcome is None:
                problems.append(f"{key} is {_shown(item)}, not y or n: unknown")
        else:
            unknown.append((key, _shown(item)))
            problems.append(f"unknown label {key!r} ignored")
    preferences = UsagePreferences(
        found.get("train-ai", "unknown"), found.get("search", "unknown"), tuple(unknown)
    )
    return preferences, problems


def _shown(item: object) -> str:
    """An RFC 9651 bare item as a linter shows it (a Token as written)."""
    if item is True:
        return "a bare key"
    if type(item).__name__ == "Token":
        return str(item)
    return repr(item)


def usage_from_header(values: Iterable[str] | str | None) -> UsagePreferences:
    """The preferences of a response's ``Content-Usage`` header.

    Several field lines are one field: joined with ``", "`` and parsed once (RFC 9651
    §4.2), so for a key given twice the last line wins; a field that does not parse
    says nothing (every category unknown).
    """
    if values is None:
        return UsagePreferences()
    lines = (values,) if isinstance(values, str) else tuple(values)
    if not lines:
        return UsagePreferences()
    preferences, _ = parse_preference(", ".join(lines))
    return UsagePreferences(
        preferences.train_ai, preferences.search, preferences.unknown_labels, header=lines
    )


class UsageLines:
    """A group's Content-Usage lines, kept in columns: raw paths, preferences as
    written, their readings and line numbers.

    Columns rather than a tuple per line: a 500 KB file of such lines made some
    45,000 objects for the garbage collector to walk, and 60 of them cost 313 ms per
    full collection (the stalls of issue 26); equal preference texts and readings
    are shared objects, so a file holds a few lists whatever its size.
    """

    __slots__ = ("lines", "paths", "readings", "texts")

    def __init__(self) -> None:
        self.paths: list[bytes] = []
        self.texts: list[str] = []
        self.readings: list[UsagePreferences] = []
        self.lines = array("q")

    def append(self, path: bytes, text: str, reading: UsagePreferences, line: int) -> None:
        """Add one line."""
        self.paths.append(path)
        self.texts.append(text)
        self.readings.append(reading)
        self.lines.append(line)

    def __len__(self) -> int:
        return len(self.lines)
