"""checker.usage(url, headers, body): every opt-out signal combined, against local sites."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

import robots_async as ra
from robots_async.core.usage_answer import UsageAnswer

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from ..servers import Server

TDM = "/.well-known/tdmrep.json"
ROBOTS = """User-agent: *
Content-Signal: search=yes, ai-train=no, ai-input=no, future-use=yes
Content-Usage: /open/ train-ai=y
Allow: /
"""


def _answer(result: object) -> UsageAnswer:
    assert isinstance(result, UsageAnswer)
    return result


async def _site(make_server: Callable[[int], Awaitable[Server]], robots: str = "") -> Server:
    server = await make_server(1)
    server.text("/robots.txt", robots or "User-agent: *\nAllow: /\n")
    server.text(TDM, json.dumps([{"location": "/reserved/*", "tdm-reservation": 1}]))
    return server


async def test_without_page_usage_keeps_its_old_answer(
    make_server: Callable[[int], Awaitable[Server]], make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    server = await _site(make_server, ROBOTS)
    old = await make_checker().usage(server.url("/open/a"))
    assert isinstance(old, ra.UsagePreferences)
    assert old.train_ai == "allowed"
    assert server.count(TDM) == 0  # nothing new is fetched for the old question


async def test_content_signal_beats_content_usage_and_labels_are_mapped(
    make_server: Callable[[int], Awaitable[Server]], make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    server = await _site(make_server, ROBOTS)
    answer = _answer(await make_checker().usage(server.url("/open/a"), {}))
    assert answer.get("train-ai") == "disallowed"  # ai-train=no beats train-ai=y
    assert answer.get("search") == "allowed"
    assert answer.get("ai-use") == "disallowed"  # ai-input
    assert answer.get("future-use") == "allowed"  # unknown labels kept
    assert {s.source for s in answer.refusing(["train-ai"])} == {"robots-content-signal"}
    assert {(s.source, s.value) for s in answer.sources if s.label == "train-ai"} == {
        ("robots-content-usage", "allowed"),
        ("robots-content-signal", "disallowed"),
    }


@pytest.mark.parametrize(
    "case",
    [
        ("/reserved/a", {}, None, "disallowed", "tdmrep-file"),
        ("/free/a", {}, None, "unknown", None),
        ("/reserved/a", {"tdm-reservation": "0"}, None, "allowed", "tdmrep-page"),
        ("/free/a", {"TDM-Reservation": "1"}, None, "disallowed", "tdmrep-page"),
        ("/free/a", {"X-Robots-Tag": "noai"}, None, "disallowed", "page-directives"),
        (
            "/free/a",
            {"Content-Type": "text/html"},
            b'<html><head><meta name="robots" content="noai"></head>',
            "disallowed",
            "page-directives",
        ),
        ("/free/a", {"X-Robots-Tag": "otherbot: noai"}, None, "unknown", None),
        ("/free/a", {"Content-Usage": "train-ai=n"}, None, "disallowed", "content-usage-header"),
        ("/free/a", [("Content-Usage", "train-ai=y")], None, "allowed", "content-usage-header"),
    ],
)
async def test_each_source_decides_train_ai(
    make_server: Callable[[int], Awaitable[Server]],
    make_checker: Callable[..., ra.RobotsChecker],
    case: tuple[str, object, bytes | None, str, str | None],
) -> None:
    path, headers, body, expected, source = case
    server = await _site(make_server)
    answer = _answer(await make_checker().usage(server.url(path), headers, body))
    assert answer.get("train-ai") == expected
    assert {s.source for s in answer.sources if s.label == "train-ai"} == (
        {source} if source else set()
    )


async def test_unreadable_tdmrep_is_unknown_never_allowed(
    make_server: Callable[[int], Awaitable[Server]], make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    server = await _site(make_server)
    server.text(TDM, "oops", status=503)
    answer = _answer(await make_checker().usage(server.url("/a"), {"Content-Usage": "train-ai=y"}))
    assert answer.get("train-ai") == "unknown"  # an unknown source outranks an allowed one
    assert [s.value for s in answer.sources if s.source == "tdmrep-file"] == ["unknown"]


async def test_noindex_restricts_search_and_tdmrep_is_fetched_once(
    make_server: Callable[[int], Awaitable[Server]], make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    server = await _site(make_server)
    checker = make_checker()
    for i in range(5):
        answer = _answer(await checker.usage(server.url(f"/p{i}"), {"X-Robots-Tag": "noindex"}))
        assert answer.get("search") == "disallowed"
    assert server.count(TDM) == 1
