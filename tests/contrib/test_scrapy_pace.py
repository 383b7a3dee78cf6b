"""ROBOTSASYNC_PACE (issue 27): Scrapy crawls sharing a store take turns per origin,
and a 429 with Retry-After pauses the origin before RetryMiddleware's retry."""

from __future__ import annotations

import itertools
import uuid
from typing import TYPE_CHECKING

import pytest
from aiohttp import web

from .conftest import run_crawl, run_crawls_at_once

if TYPE_CHECKING:
    from pathlib import Path

    from .conftest import Site

pytestmark = pytest.mark.slow

SLOW_ROBOTS = b"User-agent: *\nCrawl-delay: 1\n"


def gaps(times: list[float]) -> list[float]:
    return [b - a for a, b in itertools.pairwise(sorted(times))]


@pytest.mark.scenario
def test_two_crawls_sharing_redis_take_turns_on_a_crawl_delay_site(
    site: Site, tmp_path: Path, redis_url: str
) -> None:
    """Two crawler processes, 4 pages each, on a Crawl-delay: 1 site: its pages arrive
    >= 0.8 s apart between both (each process raising only its own slot's delay,
    they came 0.09 s apart)."""
    host = site.host()
    host.serve("/robots.txt", SLOW_ROBOTS)
    settings = {
        "ROBOTSASYNC_REDIS_URL": redis_url,
        "ROBOTSASYNC_REDIS_PREFIX": f"pace-{uuid.uuid4().hex}",
        "ROBOTSASYNC_PACE": True,
    }
    starts = {n: [host.url(f"/crawl{n}/page{i}") for i in range(4)] for n in (1, 2)}
    crawls = run_crawls_at_once(tmp_path, starts, settings=settings)
    times = host.times("/crawl")
    assert len(times) == 8
    assert min(gaps(times)) >= 0.8, gaps(times)
    for crawl in crawls:
        assert len(crawl.scraped) == 4
        assert crawl.stat("robotsasync/pace/waits") == 4
        assert crawl.stat("robotsasync/pace/shared") is True
        assert crawl.stat("robotsasync/pace/store_errors") == 0


def test_a_429_with_retry_after_pauses_before_the_retry(site: Site, tmp_path: Path) -> None:
    """RetryMiddleware retries a 429 at once; with ROBOTSASYNC_PACE the retry waits
    out its Retry-After: 2 (observed as the response arrives, before the retry)."""
    host = site.host()
    host.serve("/robots.txt", b"User-agent: *\nAllow: /\n")
    answered: list[int] = []

    async def busy_once(request: web.Request) -> web.StreamResponse:
        if not answered:
            answered.append(429)
            return web.Response(status=429, headers={"Retry-After": "2"}, text="busy")
        answered.append(200)
        return web.Response(text="<html><body>ok</body></html>")

    host.routes["/busy"] = busy_once
    settings = {"ROBOTSASYNC_PACE": True, "RETRY_ENABLED": True, "ROBOTSASYNC_STORE": ""}
    crawl = run_crawl(tmp_path, [host.url("/busy")], settings=settings)
    first, retry = host.times("/busy")
    assert answered == [429, 200]
    assert retry - first >= 2.0, retry - first
    assert crawl.scraped == {host.url("/busy")}
    assert crawl.stat("robotsasync/pace/pauses") == 1
    assert crawl.stat("robotsasync/pace/busy/429") == 1
