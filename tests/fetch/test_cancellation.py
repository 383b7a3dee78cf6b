"""A cancellation is never lost (issue 26, item 3).

``asyncio.wait_for`` on Python 3.10/3.11 returns the awaited call's result when a
cancellation arrives in the loop iteration in which that call completes (CPython
gh-86296): the canceller then waits out the whole fetch and the request is sent anyway.
These tests land the cancellation exactly there, with a resolver whose answer the test
hands back (a real resolver cannot be timed to the loop iteration).
"""

from __future__ import annotations

import asyncio
import socket
import sys
from typing import TYPE_CHECKING, Any

import pytest
from aiohttp.abc import AbstractResolver, ResolveResult

import robots_async as ra
from robots_async.fetch.resolver import GuardedResolver

from .conftest import USER_AGENT

if TYPE_CHECKING:
    from .conftest import Server


class HandBackResolver(AbstractResolver):
    """Answers each lookup when the test calls :meth:`answer` (127.0.0.1, ``port``)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.asked = asyncio.Event()
        self.pending: list[asyncio.Future[list[ResolveResult]]] = []

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        future: asyncio.Future[list[ResolveResult]] = asyncio.get_running_loop().create_future()
        self.pending.append(future)
        self.asked.set()
        return await future

    def answer(self) -> None:
        """Complete every pending lookup now (their awaiters resume next iteration)."""
        for future in self.pending:
            if not future.done():
                future.set_result([self.result(future)])

    def result(self, _: Any) -> ResolveResult:
        return {
            "hostname": "robots-async-test.invalid",
            "host": "127.0.0.1",
            "port": self.port,
            "family": socket.AF_INET,
            "proto": 0,
            "flags": socket.AI_NUMERICHOST,
        }

    async def close(self) -> None:
        """Nothing to release."""


async def test_cancel_landing_with_the_answer_propagates() -> None:
    """The lookup's answer and the cancellation in one iteration: CancelledError wins."""
    inner = HandBackResolver(80)
    resolver = GuardedResolver(inner, lookup_timeout=5.0)
    task = asyncio.create_task(resolver.resolve("robots-async-test.invalid", 80))
    await inner.asked.wait()
    inner.answer()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_wait_for_loses_it_on_this_python() -> None:
    """The reproduction itself: with asyncio.wait_for the same sequence returns the
    answer on 3.10/3.11 (the bug this module exists for); 3.12+ propagates."""

    async def scenario() -> str:
        inner = HandBackResolver(80)

        async def lookup() -> list[ResolveResult]:
            return await asyncio.wait_for(inner.resolve("h", 80), 5.0)

        task = asyncio.create_task(lookup())
        await inner.asked.wait()
        inner.answer()
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            return "cancelled"
        return "lost"

    expected = "lost" if sys.version_info < (3, 12) else "cancelled"
    assert asyncio.run(scenario()) == expected


async def test_aclose_during_a_lookup_hand_back_is_prompt(server: Server) -> None:
    """aclose() as DNS answers: the waiter gets ClosedError at once and robots.txt is
    never requested (with wait_for: 8.5 s and the request sent, on 3.11)."""
    server.text("/robots.txt", "User-agent: *\nDisallow: /private\n")
    inner = HandBackResolver(server.ports[0])
    policy = ra.FetchPolicy(total_timeout=8.0, connect_timeout=8.0)
    fetcher = ra.AiohttpFetcher(
        user_agent=USER_AGENT,
        policy=policy,
        resolver=inner,
        public_address=lambda _: True,
    )
    checker = ra.RobotsChecker(USER_AGENT, fetcher=fetcher, fetch_policy=policy)
    await checker.__aenter__()
    loop = asyncio.get_running_loop()
    url = f"http://robots-async-test.invalid:{server.ports[0]}/page"
    waiter = asyncio.create_task(checker.allowed(url))
    await asyncio.wait_for(inner.asked.wait(), 5.0)
    started = loop.time()
    inner.answer()
    closing = asyncio.create_task(checker.aclose())
    with pytest.raises(ra.ClosedError):
        await waiter
    await closing
    await fetcher.aclose()
    assert loop.time() - started < 1.0
    await asyncio.sleep(0.2)
    assert server.count("/robots.txt") == 0
