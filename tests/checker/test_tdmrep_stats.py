"""CheckerStats.tdmrep: what tdmrep.json cost a checker, and what the store spared it."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

import robots_async as ra

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from ..servers import Server

TDM = "/.well-known/tdmrep.json"
FILE = json.dumps([{"location": "/reserved/*", "tdm-reservation": 1}])


async def test_no_counters_before_a_response_is_read(
    server: Server, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """A checker asked robots.txt questions only has read no tdmrep.json: None."""
    server.text("/robots.txt", "User-agent: *\nAllow: /\n")
    checker = make_checker()
    assert await checker.allowed(server.url("/a"))
    await checker.usage(server.url("/a"))  # robots.txt's Content-Usage only
    assert checker.stats.tdmrep is None
    assert server.count(TDM) == 0


async def test_two_checkers_on_one_store_count_one_fetch_and_one_shared_record(
    make_server: Callable[[int], Awaitable[Server]], make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """Two origins, two checkers sharing a MemoryStore, 40 questions each: every file
    fetched once by one of them and read from the store by the other."""
    server = await make_server(2)
    server.text("/robots.txt", "User-agent: *\nAllow: /\n")
    server.text(TDM, FILE, delay=0.1)  # (both ports: one origin each)
    store = ra.MemoryStore()
    checkers = [make_checker(store=store) for _ in range(2)]
    urls = [server.url(f"/reserved/{n}", i) for n in range(20) for i in (0, 1)]
    answers = await asyncio.gather(
        *(checker.usage(url, headers={}) for url in urls for checker in checkers)
    )
    assert {answer.get("train-ai") for answer in answers} == {"disallowed"}
    stats = [checker.stats.tdmrep for checker in checkers]
    assert all(s is not None for s in stats)
    fetched = sum(s.fetches for s in stats if s is not None)
    shared = sum(s.store_hits for s in stats if s is not None)
    assert (fetched, shared) == (2, 2)
    assert [s.entries for s in stats if s is not None] == [2, 2]
    assert all(s.memory > 0 for s in stats if s is not None)
    assert [s.unknown + s.store_errors + s.store_invalid for s in stats if s is not None] == [0, 0]
    assert server.count(TDM, 0) == server.count(TDM, 1) == 1


async def test_a_failing_file_is_counted_unknown(
    server: Server, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """A 503 for tdmrep.json: one fetch, read as unknown (and refusing nothing)."""
    server.text("/robots.txt", "User-agent: *\nAllow: /\n")
    server.text(TDM, "busy", status=503)
    checker = make_checker()
    answer = await checker.usage(server.url("/reserved/1"), headers={})
    assert answer.get("train-ai") != "disallowed"
    stats = checker.stats.tdmrep
    assert stats is not None
    assert (stats.fetches, stats.unknown, stats.entries) == (1, 1, 1)


async def test_a_soft_404_leaves_the_sites_own_allowance(
    server: Server, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """A site that allows training in robots.txt and answers tdmrep.json with its HTML
    page: train-ai stays allowed (an unreadable file's unknown would outrank it)."""
    server.text("/robots.txt", "User-agent: *\nContent-Signal: ai-train=yes\nAllow: /\n")
    server.text(TDM, "<!DOCTYPE html><title>Not found</title>")
    checker = make_checker()
    answer = await checker.usage(server.url("/books/1"), headers={})
    assert answer.get("train-ai") == "allowed"
    assert [s.source for s in answer.sources if s.label == "train-ai"] == ["robots-content-signal"]
    stats = checker.stats.tdmrep
    assert stats is not None
    assert (stats.fetches, stats.unknown) == (1, 0)
