"""ROBOTSASYNC_PACE and a 429 without Retry-After: requests that took their turn
before it and wait in Scrapy's download slot (CONCURRENT_REQUESTS_PER_DOMAIN = 1)."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import TYPE_CHECKING

import pytest
from scrapy.utils.test import get_crawler

from robots_async import SQLiteStore
from robots_async.checker.pacing import FIRST_BACKOFF, PaceSettings
from robots_async.contrib.scrapy import RobotsTxtMiddleware

from .conftest import run_crawl

if TYPE_CHECKING:
    from pathlib import Path

    from .conftest import Site

pytestmark = pytest.mark.slow

#: Each page answers 429 (no Retry-After) after this many seconds.
ANSWER = 0.3
#: The site's Crawl-delay: the later pages take their turns while the first is in flight.
CRAWL_DELAY = 0.1
#: A 429 slower than the first back-off (2 s, at most 2.5 with jitter).
SLOW = 2.7


@pytest.mark.parametrize("store", ["", "shared.sqlite"], ids=["this process", "sqlite store"])
def test_requests_queued_in_the_download_slot_wait_out_a_backoff(
    site: Site, tmp_path: Path, store: str
) -> None:
    """Three pages, one at a time per domain, turns CRAWL_DELAY apart: the second and
    third take theirs while the first is in flight and queue in Scrapy's slot. The
    first 429 begins a 2 s back-off; both meet it as the slot sends them and take new
    turns after it. Before the send-time check they went as the slot freed, 0.01 s
    into the back-off. With a store, the one that waited RECHECK_AFTER or more reads
    the pause there."""
    host = site.host()
    host.serve("/robots.txt", f"User-agent: *\nCrawl-delay: {CRAWL_DELAY}\n".encode())
    for i in range(3):
        host.serve(f"/p{i}", b"busy", status=429, delay=ANSWER)
    settings = {
        "ROBOTSASYNC_PACE": True,
        "ROBOTSASYNC_STORE": str(tmp_path / store) if store else "",
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
    }
    crawl = run_crawl(tmp_path, [host.url(f"/p{i}") for i in range(3)], settings=settings)
    first, *later = sorted(host.times("/p"))
    assert len(later) == 2
    assert crawl.stat("robotsasync/pace/busy/429") == 3
    # Each was sent after the first 429 came back (ANSWER after the first request),
    # so the back-off from then applies to it.
    assert min(later) - first >= ANSWER + FIRST_BACKOFF, (first, later)
    # Each met a pause at send at least once (then took a new turn; the first of them
    # to go answered 429 again, so the other could meet the next back-off too).
    assert crawl.stat("robotsasync/pace/held_at_send") >= 2


@pytest.mark.parametrize("handlers", [object(), None], ids=["no method", "no handlers"])
def test_a_scrapy_without_the_handlers_method_is_warned_of_and_left_as_it_is(
    caplog: pytest.LogCaptureFixture, handlers: object
) -> None:
    """Where a Scrapy version's downloader has no ``handlers.download_request_async``
    (a stand-in engine: no real Scrapy lacks it), the send-time check is not put in
    place, one warning says so, and nothing else is touched."""
    crawler = get_crawler(
        settings_dict={"ROBOTSTXT_OBEY": True, "ROBOTSASYNC_PACE": True, "ROBOTSASYNC_STORE": ""}
    )
    pacing = RobotsTxtMiddleware.from_crawler(crawler)._pacing
    assert pacing is not None
    pacing._install()  # before the crawl: no engine yet, tried again later
    assert pacing._installed is None
    crawler.engine = SimpleNamespace(downloader=SimpleNamespace(handlers=handlers))
    with caplog.at_level(logging.WARNING, logger="robots_async.contrib.scrapy"):
        pacing._install()
        pacing._install()
    assert pacing._installed is False
    assert [r.getMessage() for r in caplog.records].count(
        "robots_async: Scrapy's download handlers have no download_request_async here; "
        "a request waiting in a download slot is not held for a back-off that began "
        "after its turn"
    ) == 1


async def test_a_slow_429_sent_with_the_first_leaves_one_backoff(
    site: Site, tmp_path: Path
) -> None:
    """Two pages sent together answer 429, one at once, one after SLOW seconds (past
    the first 2-2.5 s back-off): the same overload. The crawl passes each response's
    time since it was sent, so the store keeps one failure; judged by arrival, the
    slow one doubled the back-off (two)."""
    host = site.host()
    host.serve("/robots.txt", b"User-agent: *\nAllow: /\n")
    host.serve("/fast", b"busy", status=429)
    host.serve("/slow", b"busy", status=429, delay=SLOW)
    store = tmp_path / "pace.sqlite"
    settings = {
        "ROBOTSASYNC_PACE": True,
        "ROBOTSASYNC_STORE": str(store),
        "CONCURRENT_REQUESTS_PER_DOMAIN": 2,
    }
    crawl = run_crawl(tmp_path, [host.url("/fast"), host.url("/slow")], settings=settings)
    assert crawl.stat("robotsasync/pace/busy/429") == 2
    fast, slow = host.times("/fast"), host.times("/slow")
    assert abs(fast[0] - slow[0]) < 0.5, (fast, slow)  # sent together
    async with SQLiteStore(store) as shared:
        rule = PaceSettings().rule(0.0)
        assert (await shared.reserve(host.base, rule, 0.0)).failures == 1
