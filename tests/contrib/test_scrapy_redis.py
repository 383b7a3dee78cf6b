"""Scrapy crawls sharing robots.txt through Redis (ROBOTSASYNC_REDIS_URL)."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

import pytest

from .conftest import run_crawls_at_once

if TYPE_CHECKING:
    from pathlib import Path

    from .conftest import Site

pytestmark = pytest.mark.slow


def test_two_crawls_share_each_robots_txt_fetch(site: Site, tmp_path: Path, redis_url: str) -> None:
    """Two crawler processes on one Redis fetch each origin's robots.txt once in all."""
    hosts = [site.host() for _ in range(3)]
    for host in hosts:
        host.serve("/robots.txt", body=b"User-agent: *\nDisallow: /private\n", delay=0.5)
    starts = [f"{h.base}/{p}{i}" for h in hosts for p in ("page", "private/") for i in range(5)]
    settings = {
        "ROBOTSASYNC_REDIS_URL": redis_url,
        "ROBOTSASYNC_REDIS_PREFIX": f"scrapy-{uuid.uuid4().hex}",
    }
    crawls = run_crawls_at_once(tmp_path, {1: starts, 2: starts}, settings=settings)
    robots_requests = sum(host.count("/robots.txt") for host in hosts)
    assert robots_requests == len(hosts)
    fetches = sum(c.stat("robotsasync/cache/fetches") for c in crawls)
    store_hits = sum(c.stat("robotsasync/cache/store_hits") for c in crawls)
    assert (fetches, store_hits) == (len(hosts), len(hosts))
    for crawl in crawls:
        assert crawl.stat("robotstxt/forbidden") == 3 * 5
        assert not any("/private/" in url for url in crawl.scraped)
        assert crawl.stat("robotsasync/cache/store_errors") == 0
