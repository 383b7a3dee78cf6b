"""AI usage preferences in Scrapy (draft-ietf-aipref-attach): the drop-in middleware
puts robots.txt's Content-Usage rule combined with the response's Content-Usage header
on response.meta["content_usage"], counts them, and with ROBOTSASYNC_REFUSE_USAGE
drops what says "n" for a refused category. Real crawls against a local site."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from .conftest import run_crawl

if TYPE_CHECKING:
    from pathlib import Path

    from .conftest import CrawlResult, Host, Site

pytestmark = pytest.mark.slow

#: The attach draft's worked example (lines 4 and 5 are the Content-Usage rules).
ROBOTS = (
    "User-Agent: *\n"
    "Allow: /\n"
    "Disallow: /never/\n"
    "Content-Usage: train-ai=n\n"
    "Content-Usage: /ai-ok/ train-ai=y\n"
    "\n"
    "User-Agent: ExampleBot\n"
    "Allow: /\n"
    "Content-Usage: train-ai=y\n"
)
QUIET = {"REMOTE_CONTROL_ENABLED": False}


def usage_site(site: Site) -> Host:
    """The draft's robots.txt, plus pages that send Content-Usage headers."""
    host = site.host()
    host.serve("/robots.txt", ROBOTS)
    host.serve("/ai-ok/header-n", "<p>", headers={"Content-Usage": "train-ai=n, search=y"})
    host.serve("/ai-ok/header-search", "<p>", headers={"Content-Usage": "search=n"})
    host.serve("/ai-ok/bad-header", "<p>", headers={"Content-Usage": "TRAIN-AI=y"})
    return host


def by_path(result: CrawlResult, host: Host) -> dict[str, dict[str, object]]:
    """content_usage of each scraped page, by path."""
    return {item["url"].removeprefix(host.base): item["usage"] for item in result.items}


def test_draft_example_table_and_headers(site: Site, tmp_path: Path) -> None:
    """The draft's table for "any other" crawler (Scrapy), and header combination: the
    most restrictive statement wins per category, an invalid header says nothing."""
    host = usage_site(site)
    paths = ["/test", "/never/test", "/ai-ok/test", "/ai-ok/header-n"]
    paths += ["/ai-ok/header-search", "/ai-ok/bad-header"]
    result = run_crawl(tmp_path, [host.url(p) for p in paths], settings=QUIET)
    usage = by_path(result, host)
    assert "/never/test" not in usage  # not crawlable: no page, no preference
    assert host.count("/never/test") == 0
    assert usage["/test"] == {
        "train-ai": "disallowed",
        "search": "unknown",
        "lines": [4],
        "header": [],
    }
    assert usage["/ai-ok/test"]["train-ai"] == "allowed"
    assert usage["/ai-ok/test"]["lines"] == [5]
    # robots.txt says train-ai=y, the header n: n wins; search=y comes from the header.
    assert usage["/ai-ok/header-n"] == {
        "train-ai": "disallowed",
        "search": "allowed",
        "lines": [5],
        "header": ["train-ai=n, search=y"],
    }
    assert usage["/ai-ok/header-search"]["train-ai"] == "allowed"
    assert usage["/ai-ok/header-search"]["search"] == "disallowed"
    assert usage["/ai-ok/bad-header"]["train-ai"] == "allowed"  # upper-case key: invalid
    assert usage["/ai-ok/bad-header"]["search"] == "unknown"
    # Stats per category and value, one per response that reached the spider.
    assert result.stat("robotsasync/content_usage/train-ai/n") == 2
    assert result.stat("robotsasync/content_usage/train-ai/y") == 3
    assert result.stat("robotsasync/content_usage/search/y") == 1
    assert result.stat("robotsasync/content_usage/search/n") == 1
    assert result.stat("robotsasync/content_usage/search/unknown") == 3
    assert result.stat("robotsasync/content_usage/refused/train-ai") == 0


def test_own_group_gives_own_preference(site: Site, tmp_path: Path) -> None:
    """ExampleBot (ROBOTSTXT_USER_AGENT) reads its own group: train-ai=y everywhere."""
    host = usage_site(site)
    result = run_crawl(
        tmp_path,
        [host.url("/test"), host.url("/never/test")],
        settings={**QUIET, "ROBOTSTXT_USER_AGENT": "ExampleBot"},
    )
    usage = by_path(result, host)
    assert usage["/test"]["train-ai"] == "allowed"
    assert usage["/never/test"]["train-ai"] == "allowed"


@pytest.mark.parametrize(
    ("signals", "counted"),
    [
        # Every signal read (the default when a category is refused): the header's
        # refusal, after the download, is the combined answer's.
        (None, {"content_usage": 1, "usage_answer": 1}),
        (False, {"content_usage": 2, "usage_answer": 0}),  # Content-Usage alone
    ],
)
def test_refuse_usage_drops_what_says_n(
    site: Site, tmp_path: Path, signals: bool | None, counted: dict[str, int]
) -> None:
    """ROBOTSASYNC_REFUSE_USAGE=["train-ai"]: a page whose robots.txt rule says
    train-ai=n is never downloaded; one whose header says it is dropped after the
    download; both reach the errback as IgnoreRequest and are counted."""
    host = usage_site(site)
    paths = ["/test", "/ai-ok/test", "/ai-ok/header-n", "/ai-ok/header-search"]
    result = run_crawl(
        tmp_path,
        [host.url(p) for p in paths],
        settings={
            **QUIET,
            "ROBOTSASYNC_REFUSE_USAGE": ["train-ai"],
            "ROBOTSASYNC_USAGE_SIGNALS": signals,
        },
    )
    assert set(by_path(result, host)) == {"/ai-ok/test", "/ai-ok/header-search"}
    assert host.count("/test") == 0  # refused from robots.txt alone: not downloaded
    assert host.count("/ai-ok/header-n") == 1  # the header is only known after download
    ignored = {e["url"] for e in result.errors if e["error"] == "IgnoreRequest"}
    assert ignored == {host.url("/test"), host.url("/ai-ok/header-n")}
    for stat, count in counted.items():
        assert result.stat(f"robotsasync/{stat}/refused/train-ai") == count, stat
    assert result.stat("robotstxt/forbidden") == 0


def test_refuse_search_from_the_command_line_spelling(site: Site, tmp_path: Path) -> None:
    """The ``-s`` spelling (a comma-separated string) works: search=n is refused."""
    host = usage_site(site)
    paths = ["/ai-ok/header-search", "/ai-ok/header-n"]
    result = run_crawl(
        tmp_path,
        [host.url(p) for p in paths],
        settings={
            **QUIET,
            "ROBOTSASYNC_REFUSE_USAGE": "search",
            "ROBOTSASYNC_USAGE_SIGNALS": False,
        },
    )
    assert set(by_path(result, host)) == {"/ai-ok/header-n"}
    assert result.stat("robotsasync/content_usage/refused/search") == 1
