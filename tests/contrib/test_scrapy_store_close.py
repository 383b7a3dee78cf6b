"""The drop-in middleware closes the shared store it created when the spider closes."""

from __future__ import annotations

import contextlib
import os
import uuid

from scrapy import signals
from scrapy.utils.test import get_crawler

from robots_async.contrib.scrapy import RobotsTxtMiddleware
from robots_async.core.url import Origin


def open_sockets() -> int:
    """Sockets this process holds, from /proc/self/fd."""
    links = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # closed between listdir and readlink
            links.append(os.readlink(f"/proc/self/fd/{fd}"))
    return sum(link.startswith("socket:") for link in links)


async def test_spider_closed_closes_the_redis_store(redis_url: str) -> None:
    """The store's connection is released on spider_closed (sent through Scrapy's signal
    manager), so no ResourceWarning is left for the garbage collector (filterwarnings
    is "error": an unclosed connection would fail this test at collection)."""
    crawler = get_crawler(
        settings_dict={
            "ROBOTSTXT_OBEY": True,
            "ROBOTSASYNC_REDIS_URL": redis_url,
            "ROBOTSASYNC_REDIS_PREFIX": f"close-{uuid.uuid4().hex}",
        }
    )
    middleware = RobotsTxtMiddleware.from_crawler(crawler)
    store = middleware._store
    assert store is not None
    baseline = open_sockets()
    assert await store.get(Origin.from_url("http://a.example/")) is None
    assert open_sockets() == baseline + 1
    await crawler.signals.send_catch_log_async(signal=signals.spider_closed, spider=None)
    assert open_sockets() == baseline
    assert crawler.stats.get_value("robotsasync/cache/fetches") == 0


async def test_no_store_nothing_to_close() -> None:
    """Without ROBOTSASYNC_REDIS_URL there is no store; closing still records the stats."""
    crawler = get_crawler(settings_dict={"ROBOTSTXT_OBEY": True})
    middleware = RobotsTxtMiddleware.from_crawler(crawler)
    assert middleware._store is None
    await crawler.signals.send_catch_log_async(signal=signals.spider_closed, spider=None)
    assert crawler.stats.get_value("robotsasync/cache/entries") == 0
