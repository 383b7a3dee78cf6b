"""The audit record: why one response was used or not, as one JSON line (issue 29).

The EU GPAI Code of Practice (Measure 1.3) asks crawler operators to be able to show
that they followed robots.txt and other machine-readable opt-outs; this is the record
per response. Format (one JSON object a line, keys always present, ``null`` unknown)::

    {"v": 1, "time": 1764198000.1, "url": "https://example.com/a",
     "allowed": true, "reason": "allow", "rule": "Allow: /", "line": 3,
     "robots_url": "https://example.com/robots.txt", "robots_source": "fetched",
     "robots_status": 200, "robots_sha256": "9f86...", "robots_fetched_at": 1764197000.0,
     "usage": {"train-ai": "disallowed"},
     "sources": [{"source": "page-directives", "label": "train-ai",
                  "value": "disallowed", "detail": "noai"}]}

``robots_sha256`` is the SHA-256 of the robots.txt bytes parsed (null when no body
was fetched here: no file, an error, or a record read from a shared store).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .results import Verdict
    from .usage_answer import UsageAnswer

__all__ = ["AUDIT_VERSION", "audit_line"]

#: Bumped when a key changes meaning or goes away (new keys may be added).
AUDIT_VERSION = 1


def audit_line(
    *,
    time: float,
    url: str,
    verdict: Verdict,
    robots_url: str,
    robots_source: str,
    robots_status: int | None,
    robots_sha256: str | None,
    robots_fetched_at: float | None,
    answer: UsageAnswer | None,
) -> str:
    """One record as a JSON line (with its newline)."""
    record: dict[str, Any] = {
        "v": AUDIT_VERSION,
        "time": round(time, 3),
        "url": url,
        "allowed": verdict.allowed,
        "reason": verdict.reason,
        "rule": str(verdict.rule) if verdict.rule is not None else None,
        "line": verdict.line or None,
        "robots_url": robots_url,
        "robots_source": robots_source,
        "robots_status": robots_status,
        "robots_sha256": robots_sha256,
        "robots_fetched_at": robots_fetched_at,
        "usage": dict(answer.labels) if answer is not None else {},
        "sources": [
            {"source": s.source, "label": s.label, "value": s.value, "detail": s.detail}
            for s in (answer.sources if answer is not None else ())
        ],
    }
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    if not line.isascii():
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:
            # A lone surrogate (aiohttp decodes a header's non-UTF-8 byte as one, and a
            # tdm-policy URL is logged as sent) cannot be written as UTF-8: JSON's
            # \uXXXX escape keeps it, where the file write would fail and lose the batch.
            line = json.dumps(record, separators=(",", ":"))
    return line + "\n"
