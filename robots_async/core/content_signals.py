"""Cloudflare Content Signals: ``Content-Signal: search=yes, ai-train=no`` in robots.txt.

contentsignals.org (2025) and draft-romm-aipref-contentsignals: a comma-separated list
of ``label=yes|no`` written inside a user-agent group, so it applies to that group's
crawlers (crawler-commons settled on the same reading, PR 604). Labels: ``search``,
``ai-input``, ``ai-train``; others seen in the wild (``ai-retrieval``) are kept. A
label that is absent, or whose value is neither ``yes`` nor ``no``, says nothing
("neither grants nor restricts", the policy text). Several lines that apply
combine per label, ``no`` winning. Lines before the first group are the file's
default: they apply to a crawler whose groups have no Content-Signal line.
"""

from __future__ import annotations

import re
from array import array
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

__all__ = ["ContentSignals", "SignalLines", "cached_signals", "combine_signals"]

_LABEL: Final = re.compile(r"[a-z0-9_.*-]+")
_VALUES: Final = {"yes": True, "no": False}


@dataclass(frozen=True, slots=True)
class ContentSignals:
    """The Content-Signal labels that apply to a crawler, and where they were written.

    ``signals`` are ``(label, allowed)`` pairs in the order first written; ``line``
    is the first Content-Signal line that applied, ``lines`` all of them.
    """

    signals: tuple[tuple[str, bool], ...]
    line: int
    lines: tuple[int, ...]

    def get(self, label: str) -> bool | None:
        """True (``yes``), False (``no``) or None when the label is not given."""
        for name, allowed in self.signals:
            if name == label:
                return allowed
        return None

    def disallows(self, label: str) -> bool:
        """True if ``label`` is ``no`` (``"ai-train"``, ``"search"``, ``"ai-input"``)."""
        return self.get(label) is False


#: Longest value kept in the memo, as Content-Usage's (usage._MEMO_MAX): the memo is
#: process-wide, and hostile 16 KB lines of 1,600 labels kept ~177 KB apiece there
#: after their files were gone (~700 MB at 4,096 of them). Real lines: a few dozen.
_MEMO_BYTES: Final = 256


def cached_signals(value: bytes) -> tuple[tuple[tuple[str, bool], ...], tuple[str, ...]]:
    """One line's ``(label, allowed)`` pairs and a linter's problems, memoised: a file
    repeats one value (Cloudflare writes the same line in every group), so each
    distinct value is read once and its immutable reading shared."""
    return _memo(value) if len(value) <= _MEMO_BYTES else _read(value)


@lru_cache(maxsize=4096)
def _memo(value: bytes) -> tuple[tuple[tuple[str, bool], ...], tuple[str, ...]]:
    return _read(value)


def _read(value: bytes) -> tuple[tuple[tuple[str, bool], ...], tuple[str, ...]]:
    text = value.decode("utf-8", "replace").strip()
    problems: list[str] = []
    head = text.split(None, 1)[0] if text else ""
    path = head.startswith("/")
    if path:
        # No Content-Signal text defines a path. Applying its "yes" site-wide
        # would grant what the site did not; its "no" is kept (never fail open).
        problems.append(f"path {head!r} is not part of Content-Signal: only its 'no' labels kept")
        text = text[len(head) :]
    found: dict[str, bool] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        label, equals, raw = part.partition("=")
        label, raw = label.strip().lower(), raw.strip().lower()
        allowed = _VALUES.get(raw)
        if not equals or _LABEL.fullmatch(label) is None or allowed is None:
            problems.append(f"{part.strip()!r} is not label=yes|no: ignored")
            continue
        if path and allowed:
            continue
        # One label twice on a line: "no" wins, as across lines.
        found[label] = found.get(label, True) and allowed
    return tuple(found.items()), tuple(problems)


def combine_signals(readings: list[tuple[int, tuple[tuple[str, bool], ...]]]) -> ContentSignals:
    """Combine ``(line, pairs)`` readings (in line order): per label ``no`` wins."""
    found: dict[str, bool] = {}
    for _, pairs in readings:
        for label, allowed in pairs:
            found[label] = found.get(label, True) and allowed
    lines = tuple(line for line, _ in readings)
    return ContentSignals(tuple(found.items()), lines[0], lines)


class SignalLines:
    """A group's Content-Signal lines in two columns: line numbers and readings
    (equal values share one reading object; see ``UsageLines`` for why columns)."""

    __slots__ = ("lines", "readings")

    def __init__(self) -> None:
        self.lines = array("q")
        self.readings: list[tuple[tuple[str, bool], ...]] = []

    def append(self, line: int, reading: tuple[tuple[str, bool], ...]) -> None:
        """Add one line."""
        self.lines.append(line)
        self.readings.append(reading)

    def numbered(self) -> list[tuple[int, tuple[tuple[str, bool], ...]]]:
        """``(line, reading)`` pairs in line order."""
        return list(zip(self.lines, self.readings, strict=True))

    def __len__(self) -> int:
        return len(self.lines)
