"""ROBOTSASYNC_PACE and a crawl asked to close while its requests wait out a pause."""

from __future__ import annotations

import itertools
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .conftest import BASE_SETTINGS, CRAWL_SCRIPT, SCRAPY_UA, run_crawl, run_json_script

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
    took = _closed_holding(_four_busy_pages(site), tmp_path, held=3)
    assert took < CLOSE_AFTER + RETRY_AFTER, took


def _closed_holding(host: Host, tmp_path: Path, *, held: int) -> float:
    """Crawl /p0../p3 of ``host``, asked to close at CLOSE_AFTER: ``held`` pages held
    at close, the others sent; the seconds the crawl took from its spider's opening to
    its close (Scrapy's ``elapsed_time_seconds``: the subprocess's own start-up, which
    a loaded CI machine stretched to 2 s, is not the close's doing)."""
    settings = {"ROBOTSASYNC_PACE": True, "CLOSESPIDER_TIMEOUT": CLOSE_AFTER}
    crawl = run_crawl(tmp_path, [host.url(f"/p{i}") for i in range(4)], settings=settings)
    assert crawl.stats.get("finish_reason") == "closespider_timeout"
    assert sum(host.count(f"/p{i}") for i in range(4)) == 4 - held
    assert crawl.stat("robotsasync/pace/held_at_close") == held
    took = crawl.stats["elapsed_time_seconds"]
    assert isinstance(took, float)
    return took


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
INLINE_DELAY = 2
#: /a goes INLINE_DELAY after robots.txt, /b INLINE_DELAY later: the close falls between.
INLINE_CLOSE = 3.0


def test_an_inline_download_waiting_at_close_ends(site: Site, tmp_path: Path) -> None:
    """A callback downloads /b through ``engine.download_async`` (Scrapy's idiom for
    a request awaited in a callback), which waits for /b's turn (Crawl-delay 2: /a
    goes 2 s after robots.txt, /b 2 s later); the crawl is asked to close 3 s in.
    download_async sends back to the middleware any request it returns, so /b held at
    close came straight back: it must not go round (each round reserved a further
    turn, and the close waited on the callback)."""
    host = site.host()
    host.serve("/robots.txt", f"User-agent: *\nCrawl-delay: {INLINE_DELAY}\n".encode())
    host.serve("/a", b"a")
    host.serve("/b", b"b")
    settings = {**BASE_SETTINGS, "ROBOTSASYNC_PACE": True, "CLOSESPIDER_TIMEOUT": INLINE_CLOSE}
    args = {"first": host.url("/a"), "inline": host.url("/b"), "settings": settings}
    args["out"] = str(tmp_path / "inline.json")
    report = run_json_script(INLINE_SCRIPT, args, timeout=30)[0]
    took = report["stats"]["elapsed_time_seconds"]  # the spider's open to its close
    assert report["stats"].get("finish_reason") == "closespider_timeout"
    assert report["inline"] == "IgnoreRequest"
    assert host.count("/b") == 0
    assert report["stats"].get("robotsasync/pace/held_at_close") == 1
    assert took < INLINE_CLOSE + INLINE_DELAY, took


TWO_CRAWLS_SCRIPT = Path(__file__).with_name("scrapy_two_crawls.py")


def _closing_beside_another(
    tmp_path: Path, closing: list[str], other: list[str], settings: dict[str, object]
) -> dict[str, object]:
    """Two spiders in one process with ``settings``: the first crawls ``closing`` and
    is asked to close at CLOSE_AFTER, the second crawls ``other`` to its end, holding
    nothing at close; the first one's stats."""
    args = {
        "settings": {**BASE_SETTINGS, **settings},
        "crawls": [
            {"start_urls": closing, "settings": {"CLOSESPIDER_TIMEOUT": CLOSE_AFTER}},
            {"start_urls": other, "settings": {}},
        ],
        "out": str(tmp_path / "two.json"),
    }
    first, second = run_json_script(TWO_CRAWLS_SCRIPT, args)[0]
    assert first.get("finish_reason") == "closespider_timeout"
    assert second.get("finish_reason") == "finished"
    assert second.get("robotsasync/pace/held_at_close") is None
    return first


def test_one_crawl_closing_leaves_another_in_the_process_paced(site: Site, tmp_path: Path) -> None:
    """Two spiders in one CrawlerProcess: the first, on the four busy pages, is asked
    to close at 1 s; the second, on another origin (Crawl-delay 1), goes on: its
    waits are not cut by the first one's close (each crawl has its own engine and
    pacing), so it sends its three pages a turn apart and holds none."""
    busy = _four_busy_pages(site)
    calm = site.host()
    calm.serve("/robots.txt", b"User-agent: *\nCrawl-delay: 1\n")
    first = _closing_beside_another(
        tmp_path,
        [busy.url(f"/p{i}") for i in range(4)],
        [calm.url(f"/c{i}") for i in range(3)],
        {"ROBOTSASYNC_PACE": True},
    )
    assert first.get("robotsasync/pace/held_at_close") == 3
    assert sorted(path for path in calm.paths() if path.startswith("/c")) == ["/c0", "/c1", "/c2"]
    sent = calm.times("/c")
    assert min(b - a for a, b in itertools.pairwise(sent)) > 0.9, sent


def test_ctrl_c_ends_the_waits(site: Site, tmp_path: Path) -> None:
    """SIGINT (Ctrl-C: Scrapy's graceful stop, engine.stop_async) while three requests
    wait out a 10 s Retry-After: the crawl shuts down at once, the three unsent."""
    host = site.host()
    host.serve("/robots.txt", b"User-agent: *\nCrawl-delay: 0.5\n")
    for i in range(4):
        host.serve(f"/p{i}", b"busy", status=429, headers={"Retry-After": "10"})
    out = tmp_path / "sigint.json"
    args = {
        "start_urls": [host.url(f"/p{i}") for i in range(4)],
        "settings": {**BASE_SETTINGS, "ROBOTSASYNC_PACE": True},
        "meta": {},
        "probes": [],
        "user_agent": SCRAPY_UA,
        "out": str(out),
    }
    proc = subprocess.Popen(
        [sys.executable, str(CRAWL_SCRIPT), json.dumps(args)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not any(path.startswith("/p") for path in host.paths()):
            assert time.monotonic() < deadline, "no page was requested"
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.05)
        time.sleep(0.5)  # the 429 came back: the other three wait for the pause
        signalled = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
        took = time.monotonic() - signalled
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, stderr[-4000:]
    stats = json.loads(out.read_text(encoding="utf-8"))["stats"]
    assert stats.get("finish_reason") == "shutdown"
    assert stats.get("robotsasync/pace/held_at_close") == 3
    assert sum(host.count(f"/p{i}") for i in range(4)) == 1
    assert took < 5, took


def test_a_held_request_resumed_into_a_closing_crawl_is_held_again(
    site: Site, tmp_path: Path
) -> None:
    """The three requests held by a first run (JOBDIR) carry its mark. A second run
    resumes them, fetches robots.txt anew (its own store: 2 s to answer) and is asked
    to close at 1 s, so they reach their turns while it closes: another run's mark is
    no return from ``download_async``, so each is sent (a turn due at once) or held
    again, never dropped; a third run sends the rest. Each page goes out once."""
    host = _four_busy_pages(site)
    jobdir = str(tmp_path / "job")
    urls = [host.url(f"/p{i}") for i in range(4)]
    first = run_crawl(
        tmp_path,
        urls,
        settings={
            "ROBOTSASYNC_PACE": True,
            "JOBDIR": jobdir,
            "ROBOTSASYNC_STORE": str(tmp_path / "first.sqlite"),
            "CLOSESPIDER_TIMEOUT": CLOSE_AFTER,
        },
    )
    assert first.stat("robotsasync/pace/held_at_close") == 3
    held = {"/p0", "/p1", "/p2", "/p3"} - {p for p in host.paths() if p.startswith("/p")}
    before = len(host.paths())
    for i in range(4):
        host.serve(f"/p{i}", b"ok")
    host.serve("/robots.txt", b"User-agent: *\nCrawl-delay: 0.5\n", delay=2.0)
    later = {"ROBOTSASYNC_PACE": True, "JOBDIR": jobdir}
    later["ROBOTSASYNC_STORE"] = str(tmp_path / "later.sqlite")
    second = run_crawl(tmp_path, [], settings={**later, "CLOSESPIDER_TIMEOUT": CLOSE_AFTER})
    run_crawl(tmp_path, [], settings=later)
    assert second.stat("robotsasync/pace/held_at_close") >= 1
    again = [p for p in host.paths()[before:] if p.startswith("/p")]
    assert sorted(again) == sorted(held)


def test_a_crawl_asked_to_close_before_its_first_turn_does_not_wait_them_out(
    site: Site, tmp_path: Path
) -> None:
    """Four pages of an origin whose robots.txt takes 2 s (Crawl-delay 3); the crawl
    is asked to close at 1 s, before any request began to wait for its turn (the
    first is due 3 s after robots.txt). All four are held, not sent 5, 8, 11 and 14 s
    in: the close is cut from the crawl's start, not from its first wait for a turn
    (cut from there, the crawl took 11.9 s and sent all four, the first turn then due
    at once)."""
    host = site.host()
    host.serve("/robots.txt", b"User-agent: *\nCrawl-delay: 3\n", delay=2.0)
    took = _closed_holding(host, tmp_path, held=4)
    assert took < 2.0 + 3.0 * 2, took


def test_the_send_time_check_during_close_holds_the_request(site: Site, tmp_path: Path) -> None:
    """One request at a time per host, two pages answering 429 (Retry-After 30)
    after 1.5 s: the first holds the download slot while the second, its turn taken
    0.2 s in, waits there; the crawl is asked to close at 1 s. The second, next out
    of the slot, meets the first one's pause (PausedAtSendError, process_exception)
    and goes back to the scheduler unsent: the close ends then, not 30 s later."""
    host = site.host()
    host.serve("/robots.txt", b"User-agent: *\nCrawl-delay: 0.2\n")
    for path in ("/a", "/b"):
        host.serve(path, b"busy", status=429, headers={"Retry-After": "30"}, delay=1.5)
    settings = {
        "ROBOTSASYNC_PACE": True,
        "CLOSESPIDER_TIMEOUT": CLOSE_AFTER,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
    }
    began = time.monotonic()
    crawl = run_crawl(tmp_path, [host.url("/a"), host.url("/b")], settings=settings)
    took = time.monotonic() - began
    assert crawl.stats.get("finish_reason") == "closespider_timeout"
    assert len([p for p in host.paths() if p != "/robots.txt"]) == 1
    assert crawl.stat("robotsasync/pace/held_at_send") == 1
    assert crawl.stat("robotsasync/pace/held_at_close") == 0
    assert took < 10, took


def test_a_crawl_closing_on_a_shared_store_costs_the_other_one_turn_at_most(
    site: Site, tmp_path: Path
) -> None:
    """Two spiders pacing one origin (Crawl-delay 1) through one SQLite store; the
    first is asked to close at 1 s while its pages wait for turns. The turn it had
    reserved goes unused, and the second crawl's pages still go a turn apart, with
    one turn lost at most: all four of them within 4 + 1 turns, none held."""
    host = site.host()
    host.serve("/robots.txt", b"User-agent: *\nCrawl-delay: 1\n")
    store = str(tmp_path / "shared.sqlite")
    first = _closing_beside_another(
        tmp_path,
        [host.url(f"/a{i}") for i in range(4)],
        [host.url(f"/b{i}") for i in range(4)],
        {"ROBOTSASYNC_PACE": True, "ROBOTSASYNC_STORE": store},
    )
    assert first.get("robotsasync/pace/held_at_close", 0) >= 1
    pages = host.times("/a") + host.times("/b")
    pages.sort()
    assert min(b - a for a, b in itertools.pairwise(pages)) > 0.9, pages
    b_times = host.times("/b")
    assert len(b_times) == 4
    # (b0..b3 went 2, 3, 4, 5 s after a0: turn 1, reserved by the first crawl, lost.)
    assert b_times[-1] - min(pages) < 4 + 1 + 0.9, pages
