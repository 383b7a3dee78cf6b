"""Scrapy adapter: real crawls (CrawlerProcess in a subprocess) against local sites,
plus in-process checks of the ROBOTSTXT_PARSER backend and middleware setup."""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

import pytest
from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from robots_async.contrib.scrapy import ConfigurationError, RobotParser, RobotsTxtMiddleware
from robots_async.fetch.policy import Source

from .conftest import BASE_SETTINGS, SCRAPY_UA, CrawlResult, Host, LoopThread, Site, run_crawl

if TYPE_CHECKING:
    from collections.abc import Iterator

DISALLOW_PRIVATE = "User-agent: *\nDisallow: /private\n"
needs_robots_parsed = pytest.mark.skipif(
    not hasattr(signals, "robots_parsed"), reason="robots_parsed needs Scrapy >= 2.18"
)


def parser(body: bytes, **settings: Any) -> RobotParser:
    """A RobotParser built the way Scrapy builds one, with ``settings``."""
    crawler = get_crawler(settings_dict={"ROBOTSTXT_OBEY": True, **settings})
    return RobotParser.from_crawler(crawler, body)


# --- real crawls ----------------------------------------------------------------------


@dataclass(frozen=True)
class MainCrawl:
    """Two origins, 30 start URLs each (20 allowed, 10 disallowed), crawled at once."""

    hosts: tuple[Host, Host]
    allowed: list[str]
    disallowed: list[str]
    result: CrawlResult


@pytest.fixture(scope="module")
def main_crawl(
    loop_thread: LoopThread, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[MainCrawl]:
    """Crawl two origins whose (slow) robots.txt disallows /private."""
    site = Site(loop_thread)
    hosts = (site.host(), site.host())
    for host in hosts:
        # A slow robots.txt: every start request is waiting on the one fetch.
        host.serve("/robots.txt", DISALLOW_PRIVATE, delay=0.3)
    allowed = [h.url(f"/page/{i}") for h in hosts for i in range(20)]
    disallowed = [h.url(f"/private/{i}") for h in hosts for i in range(10)]
    result = run_crawl(
        tmp_path_factory.mktemp("main"),
        allowed + disallowed,
        probes=["/page/1", "/private/1"],
    )
    yield MainCrawl(hosts, allowed, disallowed, result)
    site.close()


@pytest.mark.slow
def test_disallowed_pages_are_never_requested(main_crawl: MainCrawl) -> None:
    """No /private page reaches the server; every allowed page is requested and scraped."""
    for host in main_crawl.hosts:
        assert not [p for p in host.paths() if p.startswith("/private")]
        assert sorted(p for p in host.paths() if p.startswith("/page/")) == sorted(
            f"/page/{i}" for i in range(20)
        )
    assert main_crawl.result.scraped == set(main_crawl.allowed)
    ignored = {e["url"] for e in main_crawl.result.errors if e["error"] == "IgnoreRequest"}
    assert ignored == set(main_crawl.disallowed)


@pytest.mark.slow
def test_forbidden_and_request_count_stats(main_crawl: MainCrawl) -> None:
    """robotstxt/forbidden counts the disallowed start URLs; request_count the origins."""
    result = main_crawl.result
    assert result.stat("robotstxt/forbidden") == len(main_crawl.disallowed)
    assert result.stat("robotsasync/forbidden/rules") == len(main_crawl.disallowed)
    assert result.stat("robotstxt/request_count") == 2


def test_forbidden_causes_in_the_docs_are_the_code_s() -> None:
    """docs/operations.md lists every robotsasync/forbidden/<cause> the middleware counts:
    "rules" for a fetched file, else the entry's source."""
    text = (Path(__file__).parents[2] / "docs" / "operations.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `(\w+)` \| ", text, flags=re.MULTILINE))
    causes = {"rules" if source == "fetched" else source for source in get_args(Source)}
    assert causes <= documented, causes - documented


@pytest.mark.slow
def test_robots_txt_fetched_once_per_origin(main_crawl: MainCrawl) -> None:
    """30 start URLs per origin scheduled at once share one robots.txt request."""
    for host in main_crawl.hosts:
        assert host.count("/robots.txt") == 1


@pytest.mark.slow
@needs_robots_parsed
def test_robots_parsed_signal_once_per_origin(main_crawl: MainCrawl) -> None:
    """robots_parsed fires once per origin with an .allowed() parser and its request."""
    calls = main_crawl.result.robots_parsed
    assert len(calls) == 2
    bases = {h.base for h in main_crawl.hosts}
    assert {call["request_url"].rsplit("/", 2)[0] for call in calls} == bases
    for call in calls:
        assert call["type"] == "RobotParser"
        assert call["module"] == "robots_async.contrib.scrapy"
        assert call["request_url"] in main_crawl.allowed + main_crawl.disallowed
        assert call["allowed"] == {"/page/1": True, "/private/1": False}


@pytest.mark.slow
def test_unreachable_robots_stops_only_that_origin(site: Site, tmp_path: Path) -> None:
    """A 503 robots.txt blocks its origin's pages; a healthy origin is still crawled."""
    down, healthy = site.host(), site.host()
    down.serve("/robots.txt", "oops", status=503)
    healthy.serve("/robots.txt", DISALLOW_PRIVATE)
    urls = [h.url(f"/page/{i}") for h in (down, healthy) for i in range(5)]
    result = run_crawl(tmp_path, urls)
    assert down.paths() == ["/robots.txt"]
    assert sorted(healthy.paths()) == sorted(["/robots.txt", *(f"/page/{i}" for i in range(5))])
    assert result.stat("robotsasync/forbidden/unreachable") == 5
    assert result.stat("robotstxt/forbidden") == 5
    assert result.scraped == {healthy.url(f"/page/{i}") for i in range(5)}


@pytest.mark.slow
def test_missing_robots_allows_everything(site: Site, tmp_path: Path) -> None:
    """A 404 robots.txt leaves every page crawlable."""
    host = site.host()  # /robots.txt is 404 by default
    urls = [host.url("/private/a"), host.url("/page/1")]
    result = run_crawl(tmp_path, urls)
    assert host.count("/private/a") == 1
    assert host.count("/page/1") == 1
    assert result.stat("robotstxt/forbidden") == 0
    assert result.stat("robotsasync/source/unavailable") == 1


def chain(host: Host, hops: int, target: str) -> None:
    """/robots.txt -> /hop1 -> ... -> target: ``hops`` redirects in all."""
    steps = ["/robots.txt", *(f"/hop{i}" for i in range(1, hops))]
    locations = [*(f"/hop{i}" for i in range(1, hops)), target]
    for path, location in zip(steps, locations, strict=True):
        host.redirect(path, location)


@pytest.mark.slow
def test_three_redirect_hops_are_followed(site: Site, tmp_path: Path) -> None:
    """robots.txt reached after 3 redirects (to another origin) governs the first origin."""
    start, elsewhere = site.host(), site.host()
    elsewhere.serve("/rules.txt", DISALLOW_PRIVATE)
    chain(start, 3, elsewhere.url("/rules.txt"))
    result = run_crawl(tmp_path, [start.url("/private/a"), start.url("/page/1")])
    assert elsewhere.paths() == ["/rules.txt"]
    assert start.count("/private/a") == 0
    assert start.count("/page/1") == 1
    assert result.stat("robotstxt/forbidden") == 1


@pytest.mark.slow
def test_six_redirect_hops_mean_no_robots_txt(site: Site, tmp_path: Path) -> None:
    """Past 5 redirects robots.txt is unavailable: the last hop is not taken, all allowed."""
    start, elsewhere = site.host(), site.host()
    elsewhere.serve("/rules.txt", DISALLOW_PRIVATE)
    chain(start, 6, elsewhere.url("/rules.txt"))
    result = run_crawl(tmp_path, [start.url("/private/a"), start.url("/page/1")])
    assert start.count("/hop5") == 1
    assert elsewhere.paths() == []
    assert start.count("/private/a") == 1
    assert start.count("/page/1") == 1
    assert result.stat("robotstxt/forbidden") == 0


@pytest.mark.slow
def test_crawl_delay_spaces_requests(site: Site, tmp_path: Path) -> None:
    """Crawl-delay: 1 spaces page requests >= ~1 s apart despite per-domain concurrency 8."""
    host = site.host()
    host.serve("/robots.txt", "User-agent: *\nCrawl-delay: 1\nDisallow: /private\n")
    urls = [host.url(f"/page/{i}") for i in range(4)]
    result = run_crawl(
        tmp_path, urls, settings={"CONCURRENT_REQUESTS_PER_DOMAIN": 8, "DOWNLOAD_DELAY": 0}
    )
    times = host.times("/page/")
    assert len(times) == 4
    gaps = [b - a for a, b in pairwise(times)]
    assert min(gaps) >= 0.7, gaps  # generous: the machine is shared
    assert times[-1] - times[0] >= 2.4, gaps
    assert result.stat("robotsasync/crawl_delay_applied") >= 1


@pytest.mark.slow
def test_crawl_delay_is_capped(site: Site, tmp_path: Path) -> None:
    """ROBOTSASYNC_MAX_CRAWL_DELAY=0.2 caps a Crawl-delay of 5 (still applied, not 5 s)."""
    host = site.host()
    host.serve("/robots.txt", "User-agent: *\nCrawl-delay: 5\n")
    urls = [host.url(f"/page/{i}") for i in range(4)]
    result = run_crawl(
        tmp_path,
        urls,
        settings={
            "CONCURRENT_REQUESTS_PER_DOMAIN": 8,
            "DOWNLOAD_DELAY": 0,
            "ROBOTSASYNC_MAX_CRAWL_DELAY": 0.2,
        },
    )
    times = host.times("/page/")
    assert len(times) == 4
    gaps = [b - a for a, b in pairwise(times)]
    assert max(gaps) < 2.0, gaps
    assert times[-1] - times[0] >= 0.4, gaps  # the capped 0.2 s delay still applies
    assert result.stat("robotsasync/crawl_delay_applied") >= 1


@pytest.mark.slow
def test_rules_past_500_kib_are_ignored(site: Site, tmp_path: Path) -> None:
    """In a ~2 MB robots.txt, /early (first line) blocks; /late (past 600 kB) does not."""
    head = b"User-agent: *\nDisallow: /early\n"
    filler = b"# " + b"x" * 97 + b"\n"  # 100-byte comment lines
    late = b"Disallow: /late\n"
    body = head + filler * 6_000 + late + filler * 14_000
    assert body.index(late) > 600_000
    assert len(body) > 1_900_000
    host = site.host()
    host.serve("/robots.txt", body)
    result = run_crawl(tmp_path, [host.url("/early"), host.url("/late"), host.url("/page")])
    assert host.count("/early") == 0
    assert host.count("/late") == 1
    assert host.count("/page") == 1
    assert result.stat("robotsasync/truncated") == 1
    assert result.stat("robotstxt/forbidden") == 1


@pytest.mark.slow
def test_dont_obey_robotstxt_meta(site: Site, tmp_path: Path) -> None:
    """A request with meta dont_obey_robotstxt is sent even though it is disallowed."""
    host = site.host()
    host.serve("/robots.txt", DISALLOW_PRIVATE)
    exempt, blocked = host.url("/private/exempt"), host.url("/private/blocked")
    result = run_crawl(tmp_path, [exempt, blocked], meta={exempt: {"dont_obey_robotstxt": True}})
    assert host.count("/private/exempt") == 1
    assert host.count("/private/blocked") == 0
    assert result.scraped == {exempt}
    assert result.stat("robotstxt/forbidden") == 1


@pytest.mark.slow
@needs_robots_parsed
def test_backend_with_scrapy_middleware(site: Site, tmp_path: Path) -> None:
    """ROBOTSTXT_PARSER alone (Scrapy's middleware) obeys Disallow: /*.pdf$ Google-style."""
    host = site.host()
    host.serve("/robots.txt", "User-agent: *\nDisallow: /*.pdf$\n")
    urls = [host.url(p) for p in ("/doc/a.pdf", "/doc/a.pdf?page=2", "/doc/a.pdfx", "/b.html")]
    # (ROBOTSASYNC_TIMEOUT is our middleware's: the backend alone refuses it.)
    dropped = ("DOWNLOADER_MIDDLEWARES", "ROBOTSASYNC_TIMEOUT")
    settings = {k: v for k, v in BASE_SETTINGS.items() if k not in dropped}
    settings["ROBOTSTXT_PARSER"] = "robots_async.contrib.scrapy.RobotParser"
    result = run_crawl(tmp_path, urls, settings=settings, replace_settings=True, probes=["/x.pdf"])
    assert host.count("/doc/a.pdf") == 0
    assert host.count("/doc/a.pdf?page=2") == 1
    assert host.count("/doc/a.pdfx") == 1
    assert host.count("/b.html") == 1
    assert result.stat("robotstxt/forbidden") == 1
    assert [(c["module"], c["type"]) for c in result.robots_parsed] == [
        ("robots_async.contrib.scrapy", "RobotParser")
    ]
    assert result.robots_parsed[0]["allowed"] == {"/x.pdf": False}


# --- RobotParser backend, in-process --------------------------------------------------


@pytest.mark.parametrize("as_bytes", [False, True])
def test_parser_allowed_str_and_bytes(as_bytes: bool) -> None:
    """allowed() answers the same for str and bytes URL and User-Agent."""
    rp = parser(b"User-agent: *\nDisallow: /private\n")

    def arg(value: str) -> str | bytes:
        return value.encode() if as_bytes else value

    assert rp.allowed(arg("http://example.com/private/x"), arg(SCRAPY_UA)) is False
    assert rp.allowed(arg("http://example.com/public"), arg(SCRAPY_UA)) is True


def test_parser_full_scrapy_ua_matches_product_token() -> None:
    """Scrapy's full UA header selects the "Scrapy" group, never a "Scrap" group."""
    exact = parser(b"User-agent: Scrapy\nDisallow: /a\n\nUser-agent: *\nAllow: /\n")
    prefix = parser(b"User-agent: Scrap\nDisallow: /a\n\nUser-agent: *\nAllow: /\n")
    assert exact.allowed("http://example.com/a", SCRAPY_UA) is False
    assert prefix.allowed("http://example.com/a", SCRAPY_UA) is True
    assert exact.allowed("http://example.com/a", "Other/1.0") is True


def test_parser_crawl_delay() -> None:
    """crawl_delay() returns the delay of the matching group, None without one."""
    rp = parser(b"User-agent: Scrapy\nCrawl-delay: 2.5\nDisallow: /x\n\nUser-agent: *\nAllow: /\n")
    assert rp.crawl_delay(SCRAPY_UA) == 2.5
    assert rp.crawl_delay(SCRAPY_UA.encode()) == 2.5
    assert rp.crawl_delay("Other/1.0") is None


def test_parser_sitemaps() -> None:
    """sitemaps() lists Sitemap lines in file order, as a list."""
    rp = parser(
        b"Sitemap: https://example.com/a.xml\nUser-agent: *\nDisallow:\n"
        b"Sitemap: https://example.com/b.xml\n"
    )
    assert rp.sitemaps() == ["https://example.com/a.xml", "https://example.com/b.xml"]


def test_parser_empty_body_allows_all() -> None:
    """An empty robots.txt allows every URL."""
    rp = parser(b"")
    assert rp.allowed("http://example.com/anything", SCRAPY_UA) is True
    assert rp.sitemaps() == []
    assert rp.crawl_delay(SCRAPY_UA) is None


@pytest.mark.parametrize(
    "body",
    [
        b"\x00\x01\x02\xff\xfe garbage \x80\x81",
        b"User-agent: *\nDisallow: /\xff\xfe\xc3\n",
        b"<html><body>Not found</body></html>",
        b"\xef\xbb\xbfUser-agent: *\nDisallow: /x\n",
        b"User-agent: *\r\nDisallow: /x\r\n" * 1000 + b"\xc3",
        b"Crawl-delay: lots\nUser-agent: *\nCrawl-delay: -1\nSitemap:\n",
        b":::\n\n\r\r\n::\x00",
    ],
)
def test_parser_never_raises(body: bytes) -> None:
    """Garbage, invalid UTF-8, BOM and odd bodies parse and answer without raising."""
    rp = parser(body)
    assert isinstance(rp.allowed("http://example.com/y", SCRAPY_UA), bool)
    assert isinstance(rp.allowed(b"http://example.com/\xff", b"\xffbot"), bool)
    rp.crawl_delay(SCRAPY_UA)
    assert isinstance(rp.sitemaps(), list)


def test_parser_bom_is_ignored() -> None:
    """A UTF-8 BOM before the first line does not hide its user-agent line."""
    rp = parser(b"\xef\xbb\xbfUser-agent: *\nDisallow: /x\n")
    assert rp.allowed("http://example.com/x", SCRAPY_UA) is False


def test_parser_policy_setting_changes_typo_handling() -> None:
    """ROBOTSASYNC_POLICY=rfc9309 ignores a misspelt "Disalow" that Google accepts."""
    body = b"User-agent: *\nDisalow: /x\n"
    assert parser(body).allowed("http://example.com/x", SCRAPY_UA) is False
    rfc = parser(body, ROBOTSASYNC_POLICY="rfc9309")
    assert rfc.allowed("http://example.com/x", SCRAPY_UA) is True


# --- middleware configuration ---------------------------------------------------------


def test_middleware_not_configured_without_obey() -> None:
    """RobotsTxtMiddleware raises NotConfigured when ROBOTSTXT_OBEY is False."""
    crawler = get_crawler(settings_dict={"ROBOTSTXT_OBEY": False})
    with pytest.raises(NotConfigured):
        RobotsTxtMiddleware.from_crawler(crawler)


def test_middleware_rejects_unknown_fetch_policy() -> None:
    """An unknown ROBOTSASYNC_FETCH_POLICY raises ConfigurationError (not NotConfigured, which
    Scrapy would swallow) naming the setting, the value and the choices."""
    crawler = get_crawler(
        settings_dict={"ROBOTSTXT_OBEY": True, "ROBOTSASYNC_FETCH_POLICY": "bingbot"}
    )
    with pytest.raises(
        ConfigurationError, match=r"ROBOTSASYNC_FETCH_POLICY='bingbot'.*rfc9309"
    ) as info:
        RobotsTxtMiddleware.from_crawler(crawler)
    assert not isinstance(info.value, NotConfigured)


def test_middleware_accepts_known_fetch_policy() -> None:
    """A known ROBOTSASYNC_FETCH_POLICY builds the middleware with that policy."""
    crawler = get_crawler(
        settings_dict={"ROBOTSTXT_OBEY": True, "ROBOTSASYNC_FETCH_POLICY": "googlebot"}
    )
    middleware = RobotsTxtMiddleware.from_crawler(crawler)
    assert middleware.cache.policy.name == "googlebot"
