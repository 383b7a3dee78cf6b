"""The limit on page requests waiting outside CONCURRENT_REQUESTS counts page
requests only: robots.txt requests, always exempt, once used it up, so a few hung
robots.txt held the whole crawl again (review of issue 26)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest

from .conftest import DROP_IN, HungRobotsFleet, hung_robots_fleet, run_crawl

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from .conftest import LoopThread

pytestmark = pytest.mark.slow

HUNG = 10  # pages waiting: 10 < the limit of 8 x CONCURRENT_REQUESTS = 16; with
HEALTHY = 20  # their 10 robots.txt requests counted too, 20 >= 16


@pytest.fixture
def fleet(loop_thread: LoopThread) -> Iterator[HungRobotsFleet]:
    """The first HUNG origins never answer robots.txt."""
    with hung_robots_fleet(loop_thread, HUNG + HEALTHY, HUNG, "127.0.2") as started:
        yield started


@pytest.mark.timeout(120)
@pytest.mark.scenario
def test_robots_requests_do_not_use_up_the_waiting_limit(
    fleet: HungRobotsFleet, tmp_path: Path
) -> None:
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
        min(fleet.page_times[base]) - started for base in healthy if base in fleet.page_times
    )
    assert len(arrivals) == HEALTHY
    assert arrivals[-1] < 5.0, arrivals
