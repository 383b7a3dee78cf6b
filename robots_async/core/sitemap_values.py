"""Values of sitemap fields: lastmod (W3C Datetime or RFC 822), changefreq, priority.

A value that does not parse is None, never an error: a sitemap's optional fields are
hints (sitemaps.org), and one bad date must not cost the URL.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Final, Literal, get_args

__all__ = ["ChangeFreq", "parse_changefreq", "parse_lastmod", "parse_priority"]

#: sitemaps.org's closed set of change frequencies.
ChangeFreq = Literal["always", "hourly", "daily", "weekly", "monthly", "yearly", "never"]
_CHANGEFREQS: Final = frozenset(get_args(ChangeFreq))
#: W3C Datetime's reduced forms (year, year-month) that fromisoformat refuses.
_YEAR_MONTH = re.compile(r"(\d{4})(?:-(\d{2}))?")
#: Longer than any date we read: not a date (bounds the work on hostile text).
_MAX_DATE = 64


def parse_lastmod(text: str) -> datetime | None:
    """A W3C Datetime (sitemaps) or RFC 822 date (RSS) as an aware datetime.

    A date without a zone is read as UTC, so every lastmod compares with every other.
    """
    text = text.strip()
    if not text or len(text) > _MAX_DATE:
        return None
    when = _iso(text) or _rfc822(text)
    if when is not None and when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when


def _iso(text: str) -> datetime | None:
    reduced = _YEAR_MONTH.fullmatch(text)
    try:
        if reduced:
            return datetime(int(reduced[1]), int(reduced[2] or 1), 1)
        return datetime.fromisoformat(text[:-1] + "+00:00" if text[-1] in "zZ" else text)
    except ValueError:
        return None


def _rfc822(text: str) -> datetime | None:
    try:
        return parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def parse_changefreq(text: str) -> ChangeFreq | None:
    """One of sitemaps.org's change frequencies (any case), else None."""
    value = text.strip().lower()
    return value if value in _CHANGEFREQS else None  # type: ignore[return-value]


def parse_priority(text: str) -> float | None:
    """A priority between 0.0 and 1.0 (sitemaps.org), else None."""
    text = text.strip()
    if not text or len(text) > 16:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if 0.0 <= value <= 1.0 else None
