"""ROBOTSASYNC_USAGE_SIGNALS: a real Scrapy crawl honours TDMRep, Content-Signal and page
noai besides Content-Usage, and fetches tdmrep.json once per origin."""

from __future__ import annotations

import hashlib
import json
import time
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import pytest

from .conftest import run_crawl

if TYPE_CHECKING:
    from pathlib import Path

    from .conftest import Site

pytestmark = pytest.mark.slow

TDM = "/.well-known/tdmrep.json"
SETTINGS = {
    "REMOTE_CONTROL_ENABLED": False,
    "ROBOTSASYNC_USAGE_SIGNALS": True,
    "ROBOTSASYNC_REFUSE_USAGE": ["train-ai"],
}
HTML = {"Content-Type": "text/html"}
PLAIN_ROBOTS = "User-agent: *\nAllow: /\n"
SIGNAL_ROBOTS = "User-agent: *\nContent-Signal: ai-train=no\nAllow: /\n"


def test_refuse_train_ai_from_every_source(site: Site, tmp_path: Path) -> None:
    pages = site.host()
    pages.serve("/robots.txt", PLAIN_ROBOTS)
    pages.serve(TDM, json.dumps([{"location": "/reserved/*", "tdm-reservation": 1}]))
    pages.serve("/plain", "<html><head><title>t</title></head></html>", headers=HTML)
    pages.serve("/noai", '<html><head><meta name="robots" content="noai"></head>', headers=HTML)
    pages.serve("/reserved/a", "<p>", headers=HTML)
    pages.serve("/reserved/b", "<p>", headers=HTML)
    signals = site.host()
    signals.serve("/robots.txt", SIGNAL_ROBOTS)
    signals.serve("/page", "<p>", headers=HTML)
    urls = [pages.url(p) for p in ("/plain", "/noai", "/reserved/a", "/reserved/b")]
    audit = tmp_path / "audit.jsonl"
    settings = {**SETTINGS, "ROBOTSASYNC_AUDIT_LOG": str(audit)}
    result = run_crawl(tmp_path, [*urls, signals.url("/page")], settings=settings)
    assert [item["url"] for item in result.items] == [pages.url("/plain")]
    ignored = {e["url"] for e in result.errors if e["error"] == "IgnoreRequest"}
    assert ignored == {*urls[1:], signals.url("/page")}
    assert result.stat("robotsasync/usage_answer/refused/train-ai") == 4
    assert pages.count(TDM) == 1
    assert signals.count(TDM) == 1
    # The crawl's stats count them: one fetch per origin. The second host answers every
    # path with an HTML page (a soft 404): no TDMRep file there, so not unknown.
    assert result.stat("robotsasync/tdmrep/fetches") == 2
    assert result.stat("robotsasync/tdmrep/entries") == 2
    assert result.stat("robotsasync/tdmrep/unknown") == 0
    # The audit log: one line per response (refused ones too), with robots.txt's sha256.
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    assert sorted(line["url"] for line in lines) == sorted([*urls, signals.url("/page")])
    sha = {
        urlsplit(pages.url("/")).netloc: hashlib.sha256(PLAIN_ROBOTS.encode()).hexdigest(),
        urlsplit(signals.url("/")).netloc: hashlib.sha256(SIGNAL_ROBOTS.encode()).hexdigest(),
    }
    for line in lines:
        assert line["robots_sha256"] == sha[urlsplit(line["url"]).netloc]
        assert line["allowed"] is True
    refused = {line["url"] for line in lines if line["usage"].get("train-ai") == "disallowed"}
    assert refused == {*urls[1:], signals.url("/page")}


@pytest.mark.parametrize(
    ("settings", "refused"),
    [
        # Refusing a use turns every signal on by default: a noai page is an opt-out.
        ({"ROBOTSASYNC_REFUSE_USAGE": ["train-ai"]}, True),
        ({"ROBOTSASYNC_REFUSE_USAGE": ["train-ai"], "ROBOTSASYNC_USAGE_SIGNALS": False}, False),
        ({}, False),  # nothing refused: nothing new fetched
    ],
    ids=["refuse", "refuse-signals-off", "neither"],
)
def test_the_default_follows_the_refusal(
    site: Site, tmp_path: Path, settings: dict[str, object], refused: bool
) -> None:
    host = site.host()
    host.serve("/robots.txt", PLAIN_ROBOTS)
    host.serve("/noai", '<html><head><meta name="robots" content="noai"></head>', headers=HTML)
    result = run_crawl(
        tmp_path, [host.url("/noai")], settings={"REMOTE_CONTROL_ENABLED": False, **settings}
    )
    assert [item["url"] for item in result.items] == ([] if refused else [host.url("/noai")])
    assert host.count(TDM) == (1 if refused else 0)


NOFOLLOW_PAGE = '<html><head><meta name="robots" content="nofollow"></head><a href="/b">b</a>'
FOLLOW_PAGE = '<html><head><meta name="otherbot" content="nofollow"></head><a href="/d">d</a>'


def test_nofollow_middleware_follows_no_link_of_a_nofollow_page(site: Site, tmp_path: Path) -> None:
    host = site.host()
    host.serve("/robots.txt", PLAIN_ROBOTS)
    host.serve("/a", NOFOLLOW_PAGE, headers=HTML)
    host.serve("/b", "<p>", headers=HTML)
    host.serve("/c", FOLLOW_PAGE, headers=HTML)  # scoped to another crawler: followed
    host.serve("/d", "<p>", headers=HTML)
    host.serve("/e", '<a href="/b">b</a>', headers={**HTML, "X-Robots-Tag": "nofollow"})
    settings = {
        "REMOTE_CONTROL_ENABLED": False,
        "SPIDER_MIDDLEWARES": {"robots_async.contrib.scrapy.NofollowMiddleware": 50},
    }
    starts = [host.url(p) for p in ("/a", "/c", "/e")]
    meta = {url: {"follow_links": True} for url in starts}
    result = run_crawl(tmp_path, starts, settings=settings, meta=meta)
    assert sorted(item["url"] for item in result.items) == sorted([*starts, host.url("/d")])
    assert host.count("/b") == 0
    assert result.stat("robotsasync/nofollow/dropped") == 2


@pytest.mark.parametrize(
    "tdmrep",
    [
        {"body": "[]", "delay": 10.0},  # hangs past ROBOTSASYNC_TIMEOUT
        {"body": "[]", "status": 503},
        {"body": "[" + " " * 600_000 + "]"},  # over the cap
    ],
    ids=["hung", "503", "huge"],
)
def test_an_unknown_tdmrep_file_neither_refuses_nor_stalls_the_crawl(
    site: Site, tmp_path: Path, tdmrep: dict[str, object]
) -> None:
    """tdmrep.json that cannot be had leaves train-ai "unknown": the page is kept, and
    a hung file costs the crawl one ROBOTSASYNC_TIMEOUT (2 s), not the server's 10 s."""
    host = site.host()
    host.serve("/robots.txt", PLAIN_ROBOTS)
    host.serve(TDM, **tdmrep)  # type: ignore[arg-type]
    host.serve("/page", "<p>", headers=HTML)
    settings = {**SETTINGS, "ROBOTSASYNC_TIMEOUT": 2.0}
    started = time.monotonic()
    result = run_crawl(tmp_path, [host.url("/page")], settings=settings)
    assert time.monotonic() - started < 9.0
    assert [item["url"] for item in result.items] == [host.url("/page")]
    assert result.stat("robotsasync/usage_answer/refused/train-ai") == 0
