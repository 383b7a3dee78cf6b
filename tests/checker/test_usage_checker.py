"""AI usage preferences through the checker, against a real local site that serves
both the Content-Usage rule (robots.txt) and the Content-Usage header (pages)."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

import aiohttp

import robots_async as ra

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from tests.servers import Server

ROBOTS = """User-Agent: *
Allow: /
Disallow: /never/
Content-Usage: train-ai=n
Content-Usage: /ai-ok/ train-ai=y

User-Agent: ExampleBot
Allow: /
Content-Usage: train-ai=y
"""


async def test_checker_usage_and_decision(server: Server) -> None:
    """checker.usage() and Decision.usage give the robots.txt preference per crawler."""
    server.text("/robots.txt", ROBOTS)
    async with ra.RobotsChecker("OtherBot/1.0") as checker:
        usage = await checker.usage(server.url("/test"))
        assert usage is not None
        assert (usage.train_ai, usage.lines) == ("disallowed", (4,))
        assert await checker.usage(server.url("/never/x")) is None
        decision = await checker.explain(server.url("/ai-ok/page"))
        assert decision.usage is not None
        assert decision.usage.train_ai == "allowed"
        assert (await checker.explain(server.url("/never/x"))).usage is None
        mine = await checker.usage(server.url("/test"), user_agent="ExampleBot/2")
        assert mine is not None
        assert mine.train_ai == "allowed"
    assert server.count("/robots.txt") == 1


async def test_header_combines_with_robots_rule(server: Server) -> None:
    """A page's Content-Usage header and the robots.txt rule combine, n winning."""
    server.text("/robots.txt", ROBOTS)
    server.text("/ai-ok/page", "hello", headers={"Content-Usage": "train-ai=n, search=y"})
    async with ra.RobotsChecker("OtherBot/1.0") as checker, aiohttp.ClientSession() as session:
        robots = await checker.usage(server.url("/ai-ok/page"))
        assert robots is not None
        async with session.get(server.url("/ai-ok/page")) as response:
            header = ra.usage_from_header(response.headers.getall("Content-Usage", []))
        both = ra.combine_usage(robots, header)
        assert (robots.train_ai, header.train_ai) == ("allowed", "disallowed")
        assert (both.train_ai, both.search) == ("disallowed", "allowed")


async def test_60_large_content_usage_files_never_stall_the_loop(
    make_server: Callable[[int], Awaitable[Server]],
) -> None:
    """60 origins, each a 500 KB robots.txt of distinct Content-Usage lines, fetched
    and asked at once: no step of the event loop takes 0.5 s of CPU (4.2-5.4 s of
    stall when every line was parsed and every question scanned every rule)."""
    server = await make_server(60)
    lines = "".join(f"Content-Usage: /s{i}/ train-ai=n, search=y\n" for i in range(14_000))
    server.text("/robots.txt", ("User-agent: *\nAllow: /\n" + lines)[:500_000])
    stalls: list[float] = []
    done = asyncio.Event()

    async def watch() -> None:
        # The loop thread's CPU time between two ticks: wall time also counted the
        # moments a busy machine left the process off its cores (0.505 s, with four
        # test workers on two cores), which no step of ours caused.
        while not done.is_set():
            before = time.thread_time()
            await asyncio.sleep(0.01)
            stalls.append(time.thread_time() - before)

    watcher = asyncio.create_task(watch())
    async with ra.RobotsChecker("OtherBot/1.0") as checker:
        readings = await asyncio.gather(
            *(checker.usage(server.url(f"/s{i * 7}/page", i)) for i in range(60))
        )
    done.set()
    await watcher
    assert all(r is not None and r.train_ai == "disallowed" for r in readings)
    assert len(stalls) > 5
    assert max(stalls) < 0.5, max(stalls)
