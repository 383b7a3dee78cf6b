"""ROBOTSASYNC_PACE and a crawl asked to close while its requests wait out a pause."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .conftest import BASE_SETTINGS, run_crawl, run_json_script

if TYPE_CHECKING:
    from .conftest import Host, Site

pytestmark = pytest.mark.slow

#: The Retry-After of every page; the crawl is asked to close well before it ends.
RETRY_AFTER = 2
CLOSE_AFTER = 1.0


def _four_busy_pages(site: Site) -> Host:
    """One origin, Crawl-delay 0.5, whose /p0../p3 answer 429 with Retry-After: 2."""
    host = site.host()
    host.serve("/robots.txt", b"User-agent: *\nCrawl-delay: 0.5\n")
    for i in range(4):
        host.serve(f"/p{i}", b"busy", status=429, headers={"Retry-After": f"{RETRY_AFTER}"})
    return host


def test_a_crawl_asked_to_close_does_not_wait_out_the_pauses(site: Site, tmp_path: Path) -> None:
    """The four pages, turns 0.5 s apart. The crawl is asked to close 1 s in
    (CLOSESPIDER_TIMEOUT), while three requests wait for the first pause: it closes
    then, not after it, and the three go back to the scheduler unsent. Before: a 20 s
    Retry-After kept such a crawl open 21.4 s, and it sent a page at the pause's end."""
    host = _four_busy_pages(site)
    settings = {"ROBOTSASYNC_PACE": True, "CLOSESPIDER_TIMEOUT": CLOSE_AFTER}
    began = time.monotonic()
    crawl = run_crawl(tmp_path, [host.url(f"/p{i}") for i in range(4)], settings=settings)
    took = time.monotonic() - began
    assert crawl.stats.get("finish_reason") == "closespider_timeout"
    assert sum(host.count(f"/p{i}") for i in range(4)) == 1
    assert crawl.stat("robotsasync/pace/held_at_close") == 3
    assert took < CLOSE_AFTER + RETRY_AFTER, took


def test_requests_held_at_close_are_kept_by_jobdir_for_the_next_run(
    site: Site, tmp_path: Path
) -> None:
    """With a JOBDIR the three requests held at close are in the scheduler's queue on
    disk: the next run (no start URLs, the pages now answering 200) sends each once,
    after the pause the first run recorded in the JOBDIR's store."""
    host = _four_busy_pages(site)
    jobdir = str(tmp_path / "job")
    settings = {"ROBOTSASYNC_PACE": True, "JOBDIR": jobdir}
    first = run_crawl(
        tmp_path,
        [host.url(f"/p{i}") for i in range(4)],
        settings={**settings, "CLOSESPIDER_TIMEOUT": CLOSE_AFTER},
    )
    assert first.stat("robotsasync/pace/held_at_close") == 3
    sent = [path for path in host.paths() if path.startswith("/p")]
    assert len(sent) == 1
    for i in range(4):
        host.serve(f"/p{i}", b"ok")
    second = run_crawl(tmp_path, [], settings=settings)
    again = [path for path in host.paths() if path.startswith("/p")][1:]
    assert sorted(again) == sorted({"/p0", "/p1", "/p2", "/p3"} - set(sent))
    assert second.stat("robotsasync/pace/held_at_close") == 0


INLINE_SCRIPT = Path(__file__).with_name("scrapy_pace_inline.py")
INLINE_DELAY = 4


def test_an_inline_download_waiting_at_close_ends(site: Site, tmp_path: Path) -> None:
    """A callback downloads /b through ``engine.download_async`` (Scrapy's idiom for
    a request awaited in a callback), which waits for /b's turn (Crawl-delay 4); the
    crawl is asked to close 1 s in. download_async sends back to the middleware any
    request it returns, so /b held at close came straight back: it must not go
    round (each round reserved a further turn, and the close waited on the callback)."""
    host = site.host()
    host.serve("/robots.txt", f"User-agent: *\nCrawl-delay: {INLINE_DELAY}\n".encode())
    host.serve("/a", b"a")
    host.serve("/b", b"b")
    settings = {**BASE_SETTINGS, "ROBOTSASYNC_PACE": True, "CLOSESPIDER_TIMEOUT": CLOSE_AFTER}
    args = {"first": host.url("/a"), "inline": host.url("/b"), "settings": settings}
    args["out"] = str(tmp_path / "inline.json")
    began = time.monotonic()
    report = run_json_script(INLINE_SCRIPT, args, timeout=30)[0]
    took = time.monotonic() - began
    assert report["stats"].get("finish_reason") == "closespider_timeout"
    assert report["inline"] == "IgnoreRequest"
    assert host.count("/b") == 0
    assert report["stats"].get("robotsasync/pace/held_at_close") == 1
    assert took < CLOSE_AFTER + INLINE_DELAY, took
