"""The limit on page requests waiting outside CONCURRENT_REQUESTS counts page
requests only: robots.txt requests, always exempt, once used it up, so a few hung
robots.txt held the whole crawl again (review of issue 26)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pytest
from aiohttp import web

from .conftest import DROP_IN, run_crawl

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from .conftest import LoopThread

pytestmark = pytest.mark.slow

HUNG = 10  # pages waiting: 10 < the limit of 8 x CONCURRENT_REQUESTS = 16; with
HEALTHY = 20  # their 10 robots.txt requests counted too, 20 >= 16


@dataclass
class Fleet:
    """Origins on their own loopback addresses; the first ``HUNG`` never answer
    robots.txt. Page arrivals are timed."""

    bases: list[str] = field(default_factory=list)
    page_times: dict[str, float] = field(default_factory=dict)
    runner: web.AppRunner | None = None

    async def start(self) -> Fleet:
        app = web.Application()
        app.router.add_get("/{tail:.*}", self._handle)
        self.runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
        await self.runner.setup()
        for n in range(HUNG + HEALTHY):
            address = f"127.0.2.{n + 1}"
            site = web.TCPSite(self.runner, address, 0)
            await site.start()
            port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
            self.bases.append(f"http://{address}:{port}")
        return self

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        base = f"http://{request.host}"
        if request.path == "/robots.txt":
            if self.bases.index(base) < HUNG:
                await asyncio.sleep(60)  # never answers within the crawl
            return web.Response(body=b"User-agent: *\nDisallow: /private\n")
        self.page_times[base] = time.monotonic()
        return web.Response(text="<html><body>page</body></html>", content_type="text/html")


@pytest.fixture
def fleet(loop_thread: LoopThread) -> Iterator[Fleet]:
    """The fleet of origins, stopped at teardown."""
    started: Fleet = loop_thread.run(Fleet().start())
    yield started
    assert started.runner is not None
    loop_thread.run(started.runner.cleanup())


@pytest.mark.timeout(120)
@pytest.mark.scenario
def test_robots_requests_do_not_use_up_the_waiting_limit(fleet: Fleet, tmp_path: Path) -> None:
    """CONCURRENT_REQUESTS=2, 10 hung robots.txt first, then 20 healthy origins: every
    healthy page arrives within 5 s (0.8 s measured), not after the hung fetches time
    out (ROBOTSASYNC_TIMEOUT 8 s: the test's length)."""
    starts = [f"{base}/p" for base in fleet.bases]
    settings = {
        "ROBOTSTXT_OBEY": True,
        "DOWNLOADER_MIDDLEWARES": DROP_IN,
        "LOG_LEVEL": "WARNING",
        "TELNETCONSOLE_ENABLED": False,
        "CONCURRENT_REQUESTS": 2,
        "ROBOTSASYNC_TIMEOUT": 8.0,
    }
    started = time.monotonic()
    run_crawl(tmp_path, starts, settings=settings, replace_settings=True, timeout=100)
    healthy = fleet.bases[HUNG:]
    arrivals = sorted(
        fleet.page_times[base] - started for base in healthy if base in fleet.page_times
    )
    assert len(arrivals) == HEALTHY
    assert arrivals[-1] < 5.0, arrivals
