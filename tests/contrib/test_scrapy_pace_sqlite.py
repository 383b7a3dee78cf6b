"""ROBOTSASYNC_PACE through an SQLite file (issue 27): two Scrapy crawls in separate
processes sharing ROBOTSASYNC_STORE take turns on a Crawl-delay site, leave a site
that asks no delay alone, and a 429 seen by one crawl holds the other."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

import pytest
from aiohttp import web

from .conftest import run_crawls_at_once

if TYPE_CHECKING:
    from pathlib import Path

    from .conftest import CrawlResult, Site

FAST = {"CONCURRENT_REQUESTS_PER_DOMAIN": 8, "DOWNLOAD_DELAY": 0, "ROBOTSASYNC_PACE": True}


def gaps(times: list[float]) -> list[float]:
    return [b - a for a, b in itertools.pairwise(sorted(times))]


def two_crawls(tmp_path: Path, starts: list[list[str]], pace: bool = True) -> list[CrawlResult]:
    """Two crawler processes at once, sharing one SQLite store file."""
    settings: dict[str, Any] = {**FAST, "ROBOTSASYNC_STORE": str(tmp_path / "shared.sqlite")}
    settings["ROBOTSASYNC_PACE"] = pace
    return run_crawls_at_once(tmp_path, dict(enumerate(starts)), settings=settings)


@pytest.mark.scenario
def test_two_crawls_sharing_sqlite_take_turns_and_leave_a_fast_site_alone(
    site: Site, tmp_path: Path
) -> None:
    """4 pages each on a Crawl-delay: 1 site arrive >= 0.8 s apart between both crawls;
    8 pages each on a site asking no delay all arrive within 2 s of its first."""
    slow, fast = site.host(), site.host()
    slow.serve("/robots.txt", "User-agent: *\nCrawl-delay: 1\n")
    fast.serve("/robots.txt", "User-agent: *\nAllow: /\n")
    starts = [
        [slow.url(f"/c{n}/p{i}") for i in range(4)] + [fast.url(f"/c{n}/p{i}") for i in range(8)]
        for n in (0, 1)
    ]
    crawls = two_crawls(tmp_path, starts)
    slow_times, fast_times = slow.times("/c"), fast.times("/c")
    assert len(slow_times) == 8
    assert min(gaps(slow_times)) >= 0.8, gaps(slow_times)
    assert len(fast_times) == 16
    assert max(fast_times) - min(fast_times) < 2.0, gaps(fast_times)
    for crawl in crawls:
        assert len(crawl.scraped) == 12
        assert crawl.stat("robotsasync/pace/waits") == 12
        assert crawl.stat("robotsasync/pace/shared") is True
        assert crawl.stat("robotsasync/pace/store_errors") == 0


@pytest.mark.scenario
def test_a_429_in_one_crawl_holds_the_other(site: Site, tmp_path: Path) -> None:
    """The first page request answers 429 with Retry-After: 3: apart from a request
    already on its way, neither crawl requests the site again for 3 s."""
    host = site.host()
    host.serve("/robots.txt", "User-agent: *\nCrawl-delay: 0.3\n")
    answered: list[int] = []

    async def page(request: web.Request) -> web.Response:
        status = 200 if answered else 429
        answered.append(status)
        return web.Response(status=status, headers={"Retry-After": "3"}, text="page")

    starts = [[host.url(f"/c{n}/p{i}") for i in range(3)] for n in (0, 1)]
    for url in itertools.chain(*starts):
        host.routes[url.removeprefix(host.base)] = page
    crawls = two_crawls(tmp_path, starts)
    times = host.times("/c")
    assert len(times) == 6
    assert answered[0] == 429
    during = [t - times[0] for t in times[1:] if t < times[0] + 3.0]
    # The other crawl's turn may have begun (0.3 s later) before the 429 was seen.
    assert len(during) <= 1, during
    assert all(t <= 0.5 for t in during), during
    assert sum(c.stat("robotsasync/pace/pauses") for c in crawls) == 1
