"""What Scrapy users rely on, after Scrapy's own robots.txt tests
(tests/test_robotstxt_interface.py, tests/test_downloadermiddleware_robotstxt.py),
written again here for our backend and drop-in middleware, with real crawls.

Where we deliberately differ from Scrapy the test says so: a robots.txt that cannot be
fetched (network error, 5xx) disallows the origin (RFC 9309 §2.3.1.4) where Scrapy
allows everything, and bytes that are not UTF-8 are kept, not dropped (Google)."""

from __future__ import annotations

import importlib.util
import re
import socket
import ssl
from typing import TYPE_CHECKING

import pytest
from OpenSSL import SSL
from scrapy import exceptions as scrapy_errors
from twisted.internet import error as tx
from twisted.python.failure import Failure
from twisted.web.client import ResponseFailed, ResponseNeverReceived

import robots_async as ra
from robots_async.contrib.scrapy import RobotParser, classify_scrapy_error

from ..helpers import HTML_PAGE, bytes_kept_by
from ..servers import free_port  # noqa: F401 (a fixture: found by name)
from .conftest import SCRAPY_UA, run_crawl
from .scrapy_cli import runspider

if TYPE_CHECKING:
    from pathlib import Path

    from .conftest import Site

DISALLOW_PRIVATE = "User-agent: *\nDisallow: /private\n"
QUIET = {"REMOTE_CONTROL_ENABLED": False}


def backend(body: bytes) -> RobotParser:
    """The backend built as Scrapy's common backend tests build it: no crawler."""
    return RobotParser.from_crawler(None, body)  # type: ignore[arg-type]


# --- the backend, without a crawler ----------------------------------------------------


def test_backend_without_crawler_uses_defaults() -> None:
    """from_crawler(None, body) works (every Scrapy backend accepts it), Google policy."""
    rp = backend(b"User-agent: * \nDisallow: /disallowed \nAllow: /allowed \nCrawl-delay: 10")
    assert rp.allowed("https://www.site.local/allowed", "*")
    assert not rp.allowed("https://www.site.local/disallowed", "*")
    assert rp.crawl_delay("*") == 10.0
    # Google's policy accepts a misspelt key that RFC 9309 would ignore.
    assert not backend(b"User-agent: *\nDisalow: /x\n").allowed("https://a.local/x", "*")


def test_backend_keeps_an_html_page_small() -> None:
    """Scrapy holds a parser per domain for the crawl: a soft-404 HTML page's hundred
    warnings are kept packed (a third of the memory, 4,793 of 14,117 bytes), and read
    back the same."""
    backend(HTML_PAGE), ra.parse(HTML_PAGE)  # one-time allocations (settings, text)
    kept, packed = bytes_kept_by(lambda: backend(HTML_PAGE))
    plain, unpacked = bytes_kept_by(lambda: ra.parse(HTML_PAGE))
    assert packed < 0.4 * unpacked, (packed, unpacked)
    assert kept.robots.warnings == plain.warnings
    assert kept.allowed("https://www.site.local/p/1", "*")


def test_backend_wildcards() -> None:
    """``*`` and ``$`` in paths, per group."""
    rp = backend(
        b"User-agent: first\nDisallow: /disallowed/*/end$\n\n"
        b"User-agent: second\nAllow: /*allowed\nDisallow: /\n"
    )
    assert rp.allowed("https://www.site.local/disallowed", "first")
    assert not rp.allowed("https://www.site.local/disallowed/xyz/end", "first")
    assert rp.allowed("https://www.site.local/disallowed/xyz/endinglater", "first")
    assert rp.allowed("https://www.site.local/is_still_allowed", "second")
    assert not rp.allowed("https://www.site.local/other", "second")


@pytest.mark.parametrize(
    ("policy", "page_allowed"),
    [("google", True), ("rfc9309", True), ("google-reference", True), ("first-match", False)],
)
def test_precedence_under_each_matching_policy(policy: str, page_allowed: bool) -> None:
    """``Disallow: /`` then ``Allow: /page``: the longest match wins (RFC 9309, Google);
    the first match in file order wins under first-match (the 1997 draft)."""
    from scrapy.utils.test import get_crawler

    crawler = get_crawler(settings_dict={"ROBOTSASYNC_POLICY": policy})
    rp = RobotParser.from_crawler(crawler, b"User-agent: * \nDisallow: / \nAllow: /page")
    assert rp.allowed("https://www.site.local/page", "*") is page_allowed
    assert not rp.allowed("https://www.site.local/other", "*")


@pytest.mark.parametrize("body", [b"", b"GIF89a\xd3\x00\xfe\x00\xa2"], ids=["empty", "garbage"])
def test_empty_and_garbage_bodies_allow_all(body: bytes) -> None:
    """An empty or binary body is "allow all" for every agent and path."""
    rp = backend(body)
    for path in ("/", "/index.html", "/disallowed"):
        assert rp.allowed(f"https://site.local{path}", "*")
        assert rp.allowed(f"https://site.local{path}", "chrome")
    assert rp.crawl_delay("*") is None


def test_unicode_urls_and_agents() -> None:
    """Raw and %-encoded non-ASCII paths match each other; a non-ASCII agent name
    selects its own group."""
    rp = backend(
        "User-Agent: *\nDisallow: /admin/\nDisallow: /wiki/K%C3%A4ytt%C3%A4j%C3%A4:\n"
        "Disallow: /wiki/Käyttäjä:\n\nUser-Agent: UnicödeBöt\n"
        "Disallow: /some/randome/page.html\n".encode()
    )
    assert not rp.allowed("https://site.local/admin/", "*")
    assert rp.allowed("https://site.local/admin/", "UnicödeBöt")
    assert not rp.allowed("https://site.local/wiki/K%C3%A4ytt%C3%A4j%C3%A4:", "*")
    assert not rp.allowed("https://site.local/wiki/Käyttäjä:", "*")
    assert rp.allowed("https://site.local/some/randome/page.html", "*")
    assert not rp.allowed("https://site.local/some/randome/page.html", "UnicödeBöt")


def test_non_utf8_bytes_are_kept_not_dropped() -> None:
    """Deliberate difference: Scrapy's decode_robotstxt drops invalid UTF-8, turning
    ``\\xffDisallow: /`` into ``Disallow: /`` (disallow all); Google's parser (ours) reads
    the key ``\\xffDisallow``, which is no key, so the line is ignored. A non-UTF-8 byte in
    a path is matched as its %-escape."""
    assert backend(b"User-agent: *\n\xffDisallow: /\n").allowed("https://a.local/x", "*")
    rp = backend(b"User-agent: *\nDisallow: /caf\xe9\n")
    assert not rp.allowed("https://a.local/caf%E9", "*")
    assert rp.allowed("https://a.local/cafe", "*")


# --- classification of Scrapy and Twisted errors ----------------------------------------


def scrapy_error(name: str, inner: BaseException | None = None) -> BaseException | None:
    """Scrapy's exception ``name`` (2.15+; None on older Scrapy), raised from ``inner``."""
    cls = getattr(scrapy_errors, name, None)
    if cls is None:
        return None
    try:
        raise cls(f"{name} (test)") from inner
    except cls as exc:
        return exc


ERROR_CASES: list[tuple[BaseException | None, str]] = [
    (scrapy_error("CannotResolveHostError"), "dns"),
    (scrapy_error("DownloadTimeoutError"), "timeout"),
    (scrapy_error("DownloadConnectionRefusedError"), "connect"),
    (scrapy_error("CannotResolveHostError", tx.DNSLookupError("x")), "dns"),
    (scrapy_error("ResponseDataLossError"), "reset"),
    (scrapy_error("DownloadFailedError", ResponseFailed([])), "reset"),
    (scrapy_error("DownloadFailedError", ssl.SSLError(1, "bad certificate")), "tls"),
    (tx.DNSLookupError("address 'x' not found"), "dns"),
    (socket.gaierror(-2, "Name or service not known"), "dns"),
    (tx.TimeoutError("User timeout caused connection failure."), "timeout"),
    (tx.TCPTimedOutError(), "timeout"),
    (TimeoutError(), "timeout"),
    (tx.ConnectionRefusedError("Connection was refused by other side"), "connect"),
    (tx.NoRouteError(), "connect"),
    (ConnectionRefusedError(111, "Connection refused"), "connect"),
    (ssl.SSLError(1, "certificate verify failed"), "tls"),
    (SSL.Error([("SSL routines", "", "wrong version number")]), "tls"),
    (ResponseNeverReceived([Failure(SSL.Error([("SSL routines", "", "bad")]))]), "tls"),
    (ResponseFailed([Failure(tx.ConnectionLost("lost"))]), "reset"),
    (tx.ConnectionLost(), "reset"),
    (ValueError("something else"), "protocol"),
]


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        pytest.param(exc, kind, marks=pytest.mark.skip(reason="Scrapy < 2.15"))
        if exc is None
        else (exc, kind)
        for exc, kind in ERROR_CASES
    ],
    ids=[f"{type(exc).__name__}-{kind}" for exc, kind in ERROR_CASES],
)
def test_errors_classified_by_type(exc: BaseException, kind: str) -> None:
    """Scrapy's own error types (2.15+), the Twisted ones they wrap, and those inside
    ResponseFailed/ResponseNeverReceived are classified with isinstance."""
    assert classify_scrapy_error(exc) == kind


# --- real crawls ------------------------------------------------------------------------


@pytest.mark.slow
def test_robotstxt_user_agent_setting(site: Site, tmp_path: Path) -> None:
    """ROBOTSTXT_USER_AGENT picks the group; robots.txt and pages go out with USER_AGENT."""
    host = site.host()
    host.serve(
        "/robots.txt",
        "User-agent: Examplebot\nDisallow: /eb\n\nUser-agent: *\nDisallow: /all\n",
    )
    urls = [host.url("/eb/1"), host.url("/all/1"), host.url("/page")]
    result = run_crawl(
        tmp_path,
        urls,
        settings={
            **QUIET,
            "ROBOTSTXT_USER_AGENT": "Examplebot",
            "USER_AGENT": "Mozilla/5.0 (X11; Linux x86_64)",
        },
    )
    assert host.count("/eb/1") == 0
    assert host.count("/all/1") == 1
    assert result.scraped == {host.url("/all/1"), host.url("/page")}
    assert result.stat("robotstxt/forbidden") == 1


@pytest.mark.slow
def test_data_and_file_urls_need_no_robots_txt(site: Site, tmp_path: Path) -> None:
    """data: and file: URLs are crawled without asking any robots.txt."""
    local = tmp_path / "page.html"
    local.write_text("<html><body>local</body></html>", encoding="utf-8")
    host = site.host()
    host.serve("/robots.txt", "User-agent: *\nDisallow: /\n")
    urls = ["data:text/plain,Hello%20World", local.as_uri(), host.url("/page")]
    result = run_crawl(tmp_path, urls, settings=QUIET)
    assert result.scraped == {"data:text/plain,Hello%20World", local.as_uri()}
    assert host.paths() == ["/robots.txt"]
    assert result.stat("robotstxt/request_count") == 1


@pytest.mark.slow
def test_empty_garbage_and_non_utf8_robots_txt(site: Site, tmp_path: Path) -> None:
    """Real responses: empty and binary bodies allow all; a body with invalid UTF-8
    still applies its valid rules (and, deliberately unlike Scrapy, ignores the
    ``\\xffDisallow`` line rather than reading it as ``Disallow``)."""
    empty, garbage, latin = site.host(), site.host(), site.host()
    empty.serve("/robots.txt", b"")
    garbage.serve("/robots.txt", b"GIF89a\xd3\x00\xfe\x00\xa2")
    latin.serve("/robots.txt", b"User-agent: *\n\xffDisallow: /\nDisallow: /caf\xe9\n")
    urls = [h.url("/private/x") for h in (empty, garbage, latin)]
    urls += [latin.url("/caf%E9"), latin.url("/cafe")]
    result = run_crawl(tmp_path, urls, settings=QUIET)
    assert result.scraped == {*urls[:3], latin.url("/cafe")}
    assert latin.count("/caf%E9") == 0
    assert result.stat("robotstxt/forbidden") == 1
    assert result.stat("robotstxt/response_status_count/200") == 3


@pytest.mark.slow
def test_redirected_robots_txt_counts_one_response(site: Site, tmp_path: Path) -> None:
    """Stats as Scrapy counts them: one request and one response per robots.txt, with
    the final status, however many redirect hops."""
    host, other = site.host(), site.host()
    host.redirect("/robots.txt", "/hop")
    host.redirect("/hop", other.url("/rules.txt"))
    other.serve("/rules.txt", DISALLOW_PRIVATE)
    result = run_crawl(tmp_path, [host.url("/private/x"), host.url("/page")], settings=QUIET)
    assert host.count("/private/x") == 0
    assert result.stat("robotstxt/request_count") == 1
    assert result.stat("robotstxt/response_count") == 1
    assert result.stat("robotstxt/response_status_count/200") == 1
    assert result.stat("robotstxt/response_status_count/301") == 0


@pytest.mark.slow
def test_connection_refused_fails_closed_and_is_named(
    site: Site,
    tmp_path: Path,
    free_port: int,  # noqa: F811 (the fixture imported above)
) -> None:
    """Deliberate difference: Scrapy allows a site whose robots.txt cannot be fetched;
    RFC 9309 §2.3.1.4 (and we) disallow it. The error is named by type ("connect"),
    counted under Scrapy's stat key, and its text is logged."""
    port = free_port
    healthy = site.host()
    urls = [f"http://127.0.0.1:{port}/page", healthy.url("/page")]
    result = run_crawl(tmp_path, urls, settings=QUIET)
    assert result.scraped == {healthy.url("/page")}
    assert result.stat("robotsasync/forbidden/unreachable") == 1
    keys = [k for k in result.stats if k.startswith("robotstxt/exception_count/")]
    assert len(keys) == 1, keys
    assert "ConnectionRefused" in keys[0]
    assert re.search(r"robots\.txt request \S+ failed \(connect\): \w+: .*refused", result.stderr)


@pytest.mark.slow
def test_timeout_and_tls_errors_are_named(site: Site, tmp_path: Path) -> None:
    """A robots.txt slower than ROBOTSASYNC_TIMEOUT is a "timeout"; https to a plain
    HTTP server is a "tls" failure. Both disallow their origin (deliberately, as above)."""
    slow, plain = site.host(), site.host()
    slow.serve("/robots.txt", DISALLOW_PRIVATE, delay=3.0)
    tls_url = f"https://127.0.0.1:{plain.port}/page"
    result = run_crawl(
        tmp_path, [slow.url("/page"), tls_url], settings={**QUIET, "ROBOTSASYNC_TIMEOUT": 0.5}
    )
    assert result.scraped == set()
    assert slow.count("/page") == 0
    assert re.search(r"robots\.txt request \S+/robots\.txt failed \(timeout\): \w+", result.stderr)
    assert re.search(r"robots\.txt request https://\S+ failed \(tls\): \w+", result.stderr)
    assert result.stat("robotsasync/forbidden/unreachable") == 2


@pytest.mark.slow
def test_robots_txt_dropped_by_http_cache_allows(site: Site, tmp_path: Path) -> None:
    """An offline crawl from Scrapy's HTTP cache (HTTPCACHE_IGNORE_MISSING): the cache
    drops the robots.txt request it never stored (IgnoreRequest). As in Scrapy, that is
    "no robots.txt" (allow, like a 4xx), counted as robotsasync/robots_ignored, not an
    error; pages come from the cache and the site gets no request at all."""
    host = site.host()
    host.serve("/robots.txt", DISALLOW_PRIVATE)
    urls = [host.url("/page/1"), host.url("/page/2")]
    cache = {"HTTPCACHE_ENABLED": True, "HTTPCACHE_DIR": str(tmp_path / "httpcache"), **QUIET}
    run_crawl(tmp_path, urls, settings={**cache, "ROBOTSTXT_OBEY": False})
    online = host.paths()
    assert sorted(online) == ["/page/1", "/page/2"]
    result = run_crawl(tmp_path, urls, settings={**cache, "HTTPCACHE_IGNORE_MISSING": True})
    assert host.paths() == online  # nothing new reached the site
    assert result.scraped == set(urls)
    assert result.stat("robotsasync/robots_ignored") == 1
    assert result.stat("robotstxt/forbidden") == 0
    assert not [k for k in result.stats if k.startswith("robotstxt/exception_count/")]


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("scrapy.utils.reactorless") is None,
    reason="TWISTED_REACTOR_ENABLED needs Scrapy >= 2.15",
)
def test_works_without_a_twisted_reactor(site: Site, tmp_path: Path) -> None:
    """TWISTED_REACTOR_ENABLED=False (asyncio only, Scrapy >= 2.15) is supported."""
    host = site.host()
    host.serve("/robots.txt", DISALLOW_PRIVATE)
    urls = f"{host.url('/private/x')} {host.url('/page')}"
    proc = runspider(tmp_path, urls, "TWISTED_REACTOR_ENABLED=False")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "'robotstxt/forbidden': 1" in proc.stderr
    assert sorted(host.paths()) == ["/page", "/robots.txt"]


def test_scrapy_ua_reduced_to_product_token() -> None:
    """Scrapy's full User-Agent header selects the "Scrapy" group."""
    rp = backend(b"User-agent: Scrapy\nDisallow: /a\n\nUser-agent: *\nDisallow: /b\n")
    assert not rp.allowed("http://x.local/a", SCRAPY_UA)
    assert rp.allowed("http://x.local/b", SCRAPY_UA)
