"""combine_sources: the mapping table of docs/opt-outs.md, source by source and combined."""

from __future__ import annotations

import json

import pytest

from robots_async import page_directives, parse, parse_tdmrep, usage_from_header
from robots_async.core.usage_answer import combine_sources

URL = "https://x.test/a"
TDM = parse_tdmrep(json.dumps([{"location": "/a", "tdm-reservation": 1}]).encode())
TDM_FREE = parse_tdmrep(json.dumps([{"location": "/a", "tdm-reservation": 0}]).encode())


def _signals(line: str) -> object:
    return parse(f"User-agent: *\n{line}\nAllow: /\n").content_signals(URL, robots_token="bot")


def _robots_usage(line: str) -> object:
    return parse(f"User-agent: *\n{line}\nAllow: /\n").usage(URL, robots_token="bot")


CASES = [
    # (sources, label, expected)
    ({"signals": "Content-Signal: ai-train=no"}, "train-ai", "disallowed"),
    ({"signals": "Content-Signal: search=yes"}, "search", "allowed"),
    ({"signals": "Content-Signal: ai-input=no"}, "ai-use", "disallowed"),
    ({"signals": "Content-Signal: ai-retrieval=no"}, "ai-retrieval", "disallowed"),
    ({"usage": "Content-Usage: train-ai=y"}, "train-ai", "allowed"),
    (
        {"usage": "Content-Usage: train-ai=y", "signals": "Content-Signal: ai-train=no"},
        "train-ai",
        "disallowed",
    ),
    ({"tdm": TDM}, "train-ai", "disallowed"),
    ({"tdm": TDM_FREE}, "train-ai", "allowed"),
    ({"tdm": parse_tdmrep(b"[]")}, "train-ai", "unknown"),  # no entry: says nothing
    ({"tdm": parse_tdmrep(b"{")}, "train-ai", "unknown"),
    ({"tdm": parse_tdmrep(b"{")} | {"header": "train-ai=y"}, "train-ai", "unknown"),
    ({"tdm": TDM, "page": ({"tdm-reservation": "0"}, b"")}, "train-ai", "allowed"),
    ({"tdm": TDM_FREE, "page": ({"tdm-reservation": "1"}, b"")}, "train-ai", "disallowed"),
    ({"page": ({"X-Robots-Tag": "noai"}, b"")}, "train-ai", "disallowed"),
    ({"page": ({"X-Robots-Tag": "bot: noai"}, b"")}, "train-ai", "disallowed"),
    ({"page": ({"X-Robots-Tag": "other: noai"}, b"")}, "train-ai", "unknown"),
    ({"page": ({"X-Robots-Tag": "none"}, b"")}, "search", "disallowed"),
    (
        {"page": ({"Content-Type": "text/html"}, b"<head><meta name=robots content=noai></head>")},
        "train-ai",
        "disallowed",
    ),
    ({"header": "train-ai=n, search=y"}, "search", "allowed"),
    (
        {"header": "train-ai=n, search=y", "page": ({"X-Robots-Tag": "noindex"}, b"")},
        "search",
        "disallowed",
    ),
    ({"header": "future=n"}, "future", "disallowed"),
    ({}, "train-ai", "unknown"),
]


@pytest.mark.parametrize(("given", "label", "expected"), CASES)
def test_mapping_table(given: dict[str, object], label: str, expected: str) -> None:
    page = given.get("page")
    answer = combine_sources(
        robots_usage=_robots_usage(given["usage"]) if "usage" in given else None,  # type: ignore[arg-type]
        signals=_signals(given["signals"]) if "signals" in given else None,  # type: ignore[arg-type]
        tdm_file=given["tdm"].lookup(URL) if "tdm" in given else None,  # type: ignore[attr-defined]
        page=page_directives(*page, user_agent="bot") if page else None,  # type: ignore[misc]
        header_usage=usage_from_header(given["header"]) if "header" in given else None,  # type: ignore[arg-type]
    )
    assert answer.get(label) == expected
    assert answer.disallows(label) == (expected == "disallowed")
