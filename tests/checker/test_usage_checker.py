"""AI usage preferences through the checker, against a real local site that serves
both the Content-Usage rule (robots.txt) and the Content-Usage header (pages)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import aiohttp

import robots_async as ra

if TYPE_CHECKING:
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
