"""Closing a checker ends its waits for a turn: a wait lasts up to max_retry_after (an
hour), and one that outlived aclose() sent its request after the close."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

import pytest

import robots_async as ra

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..servers import Server


async def test_aclose_ends_a_wait_for_a_crawl_delay_turn(
    server: Server, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """The second visit's wait (Crawl-delay: 20) raises ClosedError as the checker
    closes, not 20 s later (it was still sleeping 3 s after aclose())."""
    server.text("/robots.txt", "User-agent: *\nCrawl-delay: 20\n")
    checker = make_checker()
    assert await checker.wait(server.url("/a")) == 0.0
    waiting = asyncio.ensure_future(checker.wait(server.url("/b")))
    await asyncio.sleep(0.2)
    assert not waiting.done()
    started = time.monotonic()
    await checker.aclose()
    with pytest.raises(ra.ClosedError):
        await asyncio.wait_for(waiting, 5)
    assert time.monotonic() - started < 1.0
    with pytest.raises(ra.ClosedError):
        await checker.wait(server.url("/c"))


async def test_aclose_ends_a_retry_after_pause(
    server: Server, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """A 503 with Retry-After: 60 pauses the origin; a wait in that pause ends with
    ClosedError at close (a pause may last max_retry_after, an hour by default)."""
    server.text("/robots.txt", "User-agent: *\nAllow: /\n")
    checker = make_checker()
    await checker.wait(server.url("/a"))
    await checker.observe(server.url("/a"), 503, {"Retry-After": "60"})
    waiting = asyncio.ensure_future(checker.wait(server.url("/b")))
    await asyncio.sleep(0.2)
    assert not waiting.done()
    await checker.aclose()
    with pytest.raises(ra.ClosedError):
        await asyncio.wait_for(waiting, 5)


async def test_a_wait_cancelled_by_its_caller_is_cancelled(
    server: Server, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """Cancelling wait() cancels its sleep (no sleep left behind), and the checker
    still waits for later turns."""
    server.text("/robots.txt", "User-agent: *\nCrawl-delay: 0.3\n")
    checker = make_checker()
    await checker.wait(server.url("/a"))
    waiting = asyncio.ensure_future(checker.wait(server.url("/b")))
    await asyncio.sleep(0.05)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    assert not [t for t in pending if "sleep" in repr(t.get_coro())]
    assert await checker.wait(server.url("/c")) > 0.0
