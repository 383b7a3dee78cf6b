"""A robots.txt our own process could not fetch (no descriptor: "local-limit") never
drops a Scrapy request: it waits the entry out, and goes back to the scheduler if our
shortage lasts (issue 26)."""

from __future__ import annotations

from typing import Any

import pytest
from scrapy import Request
from scrapy.utils.test import get_crawler

import robots_async as ra
from robots_async.contrib.scrapy import RobotsTxtMiddleware
from robots_async.fetch import policy as fetch_policy

from ..helpers import ShortOfDescriptors


def middleware_with(fetcher: ShortOfDescriptors) -> RobotsTxtMiddleware:
    # No Crawl-delay pacing: it needs the engine of a running crawl.
    settings = {"ROBOTSTXT_OBEY": True, "ROBOTSASYNC_CRAWL_DELAY": False}
    crawler = get_crawler(settings_dict=settings)
    middleware = RobotsTxtMiddleware(crawler)
    # A fetch retries our shortage up to its total_timeout: 0.3 s here, not 30.
    middleware.cache = ra.RobotsCache(fetcher, policy=ra.FetchPolicy(total_timeout=0.3))
    return middleware


@pytest.fixture(autouse=True)
def short_local_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Entries made by our own limits kept 0.05 s instead of 5 s (the test's pace)."""
    monkeypatch.setattr(fetch_policy, "LOCAL_LIMIT_TTL", 0.05)


async def test_a_request_waits_out_our_limit_and_gets_the_site_s_answer() -> None:
    """Two fetch attempts short of descriptors, then the real file: the cache tries
    again within the fetch's total_timeout, the allowed page goes on, the private one
    is forbidden by its rule, nothing was dropped for our shortage."""
    fetcher = ShortOfDescriptors(failures=2)
    middleware = middleware_with(fetcher)
    assert await middleware.process_request(Request("http://limit.test/page")) is None
    with pytest.raises(Exception, match=r"Forbidden by robots\.txt"):
        await middleware.process_request(Request("http://limit.test/private/x"))
    assert fetcher.calls == 3
    await middleware.cache.aclose()


async def test_a_lasting_shortage_sends_the_request_back_to_the_scheduler() -> None:
    """Our shortage outlasts the fetch's retries: the request comes back (Scrapy
    reschedules a returned Request), counted, never an IgnoreRequest."""
    fetcher = ShortOfDescriptors(failures=100)
    middleware = middleware_with(fetcher)
    request = Request("http://limit.test/page")
    again = await middleware.process_request(request)
    assert isinstance(again, Request)
    assert again.url == request.url
    assert again.dont_filter
    stats = middleware.crawler.stats
    assert stats is not None
    assert stats.get_value("robotsasync/rescheduled/local_limit") == 1
    assert stats.get_value("robotstxt/forbidden") is None
    await middleware.cache.aclose()


def test_waiting_requests_count_out_of_concurrency_not_out_of_activity() -> None:
    """Downloader.active leaves waiting requests out of its length (needs_backout) but
    not out of its truth value: a crawl whose only requests wait for robots.txt is not
    idle (the engine closed such a spider before its robots.txt arrived)."""
    from robots_async.contrib._scrapy_waiting import _CountedActive

    waiting: set[object] = set()
    page, robots = Request("http://w.test/page"), Request("http://w.test/robots.txt")
    active = _CountedActive([page, robots], waiting)
    waiting.add(robots)
    waiting.add(Request("http://w.test/gone"))  # no longer in flight: not subtracted
    assert len(active) == 1
    assert active
    waiting.add(page)
    assert len(active) == 0
    assert bool(active) is True
    active.discard(page)
    active.discard(robots)
    assert not active


async def test_a_request_refused_without_a_rule_logs_no_line_0(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An unreachable robots.txt (503: disallow all) forbids with no deciding line: the
    log says why and where from, not "line 0" (issue 28, item 11)."""

    class Unreachable(ShortOfDescriptors):
        async def fetch(self, url: str, *, keep_body: bool = False, **_: Any) -> ra.FetchOutcome:
            return ra.FetchOutcome(url, url, 503)

    middleware = middleware_with(Unreachable(0))
    forbidden = pytest.raises(Exception, match=r"Forbidden by robots\.txt")
    with caplog.at_level("DEBUG", logger="robots_async.contrib.scrapy"), forbidden:
        await middleware.process_request(Request("http://down.test/page"))
    [message] = [r.getMessage() for r in caplog.records if "Forbidden" in r.getMessage()]
    assert "(disallow-all, unreachable)" in message
    assert "line 0" not in message
    await middleware.cache.aclose()
