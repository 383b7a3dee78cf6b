"""The SSRF guard in Scrapy (issue 10 §2), in real crawls: a robots.txt redirect from a
public address to a non-public one is refused by default, before the GET when a lookup
shows it, else on the address the connection used (``Response.ip_address``).

Every server is on 127.0.0.0/8: the "public" site listens on 127.0.0.2, which the
crawl's middleware (``scrapy_ssrf.DeclaredPublicMiddleware``) declares public.
"""

from __future__ import annotations

import errno
import ipaddress
from typing import TYPE_CHECKING

import pytest
from aiohttp import web
from scrapy import Request
from scrapy.http import Response

from robots_async.contrib._scrapy_guard import PeerGuard, peer_address
from robots_async.contrib.scrapy import RobotsTxtMiddleware
from robots_async.fetch.addresses import is_public

from .conftest import Host, run_crawl
from .scrapy_ssrf import PUBLIC_TWIN, DeclaredPublicMiddleware, declared_public

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from robots_async.fetch.addresses import IPAddress

    from .conftest import CrawlResult, LoopThread, Site

RULES = "User-agent: *\nDisallow: /private\n"
ALLOW_ALL = "User-agent: *\nAllow: /\n"
#: Scrapy's default resolver, with the test's scripted names (scrapy_ssrf.py).
RESOLVER = {"TWISTED_DNS_RESOLVER": "scrapy_ssrf.MappedResolver"}
SETTINGS = {
    "REMOTE_CONTROL_ENABLED": False,
    "DOWNLOADER_MIDDLEWARES": {
        "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
        "scrapy_ssrf.DeclaredPublicMiddleware": 100,
    },
}


class PublicHost:
    """A :class:`Host` listening on ``address`` (127.0.0.2, declared public, unless
    told), on a free port or the one given."""

    def __init__(self, thread: LoopThread, address: str = PUBLIC_TWIN) -> None:
        self._thread = thread
        self.address = address
        self.host = Host()
        self._runner: web.AppRunner | None = None

    async def start(self, port: int = 0) -> None:
        """Listen on ``port`` (0: a free one)."""
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self.host.dispatch)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.2)
        await self._runner.setup()
        tcp = web.TCPSite(self._runner, self.address, port)
        await tcp.start()
        self.host.port = tcp._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    def url(self, path: str) -> str:
        """An absolute URL on this origin."""
        return f"http://{self.address}:{self.host.port}{path}"

    def close(self) -> None:
        """Stop the server."""
        if self._runner is not None:
            self._thread.run(self._runner.cleanup())


@pytest.fixture
def public(loop_thread: LoopThread) -> Iterator[PublicHost]:
    """An origin on 127.0.0.2, stopped at teardown."""
    server = PublicHost(loop_thread)
    loop_thread.run(server.start())
    yield server
    server.close()


@pytest.fixture
def twin_inside(loop_thread: LoopThread, public: PublicHost) -> Iterator[PublicHost]:
    """An origin on 127.0.0.1 with the same port as ``public``: where a name that
    rebinds from 127.0.0.2 to 127.0.0.1 leads, on the same URL."""
    server = PublicHost(loop_thread, "127.0.0.1")
    for _ in range(_PORT_TRIES):
        try:
            loop_thread.run(server.start(public.host.port))
            break
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                raise
            # Another process listens on 127.0.0.1 at that port (CI runs two suites at
            # once): move ``public`` to another free port and try again.
            server.close()
            public.close()
            loop_thread.run(public.start())
    else:
        pytest.fail(f"no port free on both 127.0.0.2 and 127.0.0.1 in {_PORT_TRIES} tries")
    yield server
    server.close()


#: Ports tried for ``twin_inside`` (a port free on 127.0.0.2 may be taken on 127.0.0.1).
_PORT_TRIES = 20


def crawl(tmp_path: Path, urls: list[str], **settings: object) -> CrawlResult:
    """A real crawl with the declared-public middleware."""
    return run_crawl(tmp_path, urls, settings={**SETTINGS, **settings})


def test_declared_public_widens_only_the_subclass() -> None:
    """What the crawls below rely on: 127.0.0.2 is public for the subclass only."""
    twin = ipaddress.ip_address(PUBLIC_TWIN)
    assert DeclaredPublicMiddleware.public_address is declared_public
    assert DeclaredPublicMiddleware.public_address(twin)
    assert not RobotsTxtMiddleware.public_address(twin)


@pytest.mark.slow
def test_public_to_private_is_refused_before_sending(
    public: PublicHost, site: Site, tmp_path: Path
) -> None:
    """127.0.0.2 -> 127.0.0.1 is "blocked-redirect": no GET reaches 127.0.0.1, the
    public site is disallowed and the refusal counted. In the same crawl a private
    origin redirecting within private space is followed (intranet crawls work)."""
    inside, intranet, target = site.host(), site.host(), site.host()
    inside.serve("/robots.txt", RULES)
    public.host.redirect("/robots.txt", inside.url("/robots.txt"))
    target.serve("/robots.txt", RULES)
    intranet.redirect("/robots.txt", target.url("/robots.txt"))
    urls = [public.url("/page"), intranet.url("/page"), intranet.url("/private/x")]
    result = crawl(tmp_path, urls)
    assert inside.count("/robots.txt") == 0
    assert public.host.count("/page") == 0
    assert result.scraped == {intranet.url("/page")}
    assert target.count("/robots.txt") == 1
    assert intranet.count("/private/x") == 0  # the followed file's rules apply
    assert result.stat("robotsasync/blocked_redirect") == 1
    assert result.stat("robotsasync/forbidden/unreachable") == 1
    assert "refused before sending" in result.stderr


@pytest.mark.slow
def test_a_private_answer_of_scrapys_resolver_is_refused_before_sending(
    public: PublicHost, site: Site, tmp_path: Path
) -> None:
    """A name the system resolver does not know and Scrapy's resolver answers with
    127.0.0.1: the lookup through Scrapy's resolver refuses it, nothing is sent."""
    inside = site.host()
    inside.serve("/robots.txt", ALLOW_ALL)
    public.host.redirect("/robots.txt", f"http://inside.test:{inside.port}/robots.txt")
    hosts = {"inside.test": ["127.0.0.1"]}
    result = crawl(tmp_path, [public.url("/page")], **RESOLVER, SSRF_TEST_HOSTS=hosts)
    assert inside.count("/robots.txt") == 0
    assert public.host.count("/page") == 0
    assert result.stat("robotsasync/blocked_redirect") == 1
    assert result.stat("robotsasync/forbidden/unreachable") == 1
    assert "resolves to non-public 127.0.0.1: refused before sending" in result.stderr


@pytest.mark.slow
def test_rebinding_is_pinned_by_scrapys_dns_cache(
    public: PublicHost, twin_inside: PublicHost, tmp_path: Path
) -> None:
    """A name answering 127.0.0.2 (public), then 127.0.0.1: the check before sending
    sees the public answer, and Scrapy's DNS cache (on by default) makes the
    connection use that same answer: 127.0.0.1 never gets the GET."""
    public.host.redirect("/robots.txt", f"http://rebind.test:{public.host.port}/moved.txt")
    public.host.serve("/moved.txt", RULES)
    twin_inside.host.serve("/moved.txt", ALLOW_ALL)
    hosts = {"rebind.test": [PUBLIC_TWIN, "127.0.0.1"]}
    urls = [public.url("/page"), public.url("/private/x")]
    result = crawl(tmp_path, urls, **RESOLVER, SSRF_TEST_HOSTS=hosts)
    assert twin_inside.host.count("/moved.txt") == 0
    assert public.host.count("/moved.txt") == 1
    assert result.scraped == {public.url("/page")}
    assert result.stat("robotsasync/blocked_redirect") == 0


@pytest.mark.slow
def test_rebinding_without_dns_cache_is_refused_on_the_connections_address(
    public: PublicHost, twin_inside: PublicHost, tmp_path: Path
) -> None:
    """The same name with DNSCACHE_ENABLED = False: the connection looks it up again
    and reaches 127.0.0.1. Documented limit: that GET has been sent; its response
    (a permissive robots.txt) is discarded, the verdict is "blocked-redirect"."""
    public.host.redirect("/robots.txt", f"http://rebind.test:{public.host.port}/moved.txt")
    public.host.serve("/moved.txt", RULES)
    twin_inside.host.serve("/moved.txt", ALLOW_ALL)
    hosts = {"rebind.test": [PUBLIC_TWIN, "127.0.0.1"]}
    result = crawl(
        tmp_path,
        [public.url("/page")],
        **RESOLVER,
        SSRF_TEST_HOSTS=hosts,
        DNSCACHE_ENABLED=False,
    )
    assert twin_inside.host.count("/moved.txt") == 1
    assert public.host.count("/moved.txt") == 0
    assert public.host.count("/page") == 0
    assert result.scraped == set()
    assert result.stat("robotsasync/blocked_redirect") == 1
    assert result.stat("robotsasync/forbidden/unreachable") == 1
    assert "non-public 127.0.0.1 (http://rebind.test" in result.stderr
    assert "response discarded" in result.stderr


@pytest.mark.slow
def test_allow_follows_public_to_private(public: PublicHost, site: Site, tmp_path: Path) -> None:
    """ROBOTSASYNC_PRIVATE_REDIRECTS = "allow": the redirect is followed and the
    private file's rules decide."""
    inside = site.host()
    inside.serve("/robots.txt", RULES)
    public.host.redirect("/robots.txt", inside.url("/robots.txt"))
    urls = [public.url("/page"), public.url("/private/x")]
    result = crawl(tmp_path, urls, ROBOTSASYNC_PRIVATE_REDIRECTS="allow")
    assert inside.count("/robots.txt") == 1
    assert result.scraped == {public.url("/page")}
    assert public.host.count("/private/x") == 0
    assert result.stat("robotsasync/blocked_redirect") == 0


def address(text: str) -> IPAddress:
    """``text`` as an address."""
    return ipaddress.ip_address(text)


@pytest.mark.parametrize(
    ("first", "second", "block", "refused"),
    [
        ("93.184.215.14", "127.0.0.1", True, True),  # public -> loopback
        ("93.184.215.14", "169.254.169.254", True, True),  # public -> cloud metadata
        ("93.184.215.14", "100.100.100.200", True, True),  # public -> CGNAT metadata
        ("93.184.215.14", "93.184.215.15", True, False),  # public -> public
        ("10.0.0.1", "127.0.0.1", True, False),  # private origin, within private space
        ("93.184.215.14", "127.0.0.1", False, False),  # private_redirects="allow"
    ],
)
async def test_peer_guard_rule(first: str, second: str, block: bool, refused: bool) -> None:
    """The aiohttp fetcher's rule, on the addresses the connections used."""
    guard = PeerGuard(is_public, block=block)
    assert await guard.refusal("http://a.example/robots.txt", address(first), 1.0) == ""
    why = await guard.refusal("http://b.example/robots.txt", address(second), 1.0)
    assert bool(why) is refused
    if refused:
        assert second in why


async def test_peer_guard_first_hop_and_unknown_peers() -> None:
    """The first hop is never refused (nothing to leave); a hop whose peer is unknown
    is not judged here; an unknown previous peer is judged by its host (a literal
    here, no lookup)."""
    guard = PeerGuard(is_public, block=True)
    assert await guard.refusal("http://127.0.0.1/robots.txt", address("127.0.0.1"), 1.0) == ""
    guard = PeerGuard(is_public, block=True)
    assert await guard.refusal("http://93.184.215.14/robots.txt", None, 1.0) == ""
    assert await guard.refusal("http://x.example/robots.txt", None, 1.0) == ""
    guard = PeerGuard(is_public, block=True)
    assert await guard.refusal("http://93.184.215.14/robots.txt", None, 1.0) == ""
    assert await guard.refusal("http://x.example/robots.txt", address("10.1.2.3"), 1.0) != ""


def test_peer_address_is_the_sites_own() -> None:
    """``Response.ip_address`` is used, except through a proxy (it is the proxy's)."""
    url = "http://x.example/robots.txt"
    plain, proxied = Request(url), Request(url, meta={"proxy": "http://10.0.0.8:3128"})
    response = Response(url, ip_address=address("127.0.0.1"))
    assert peer_address(plain, response) == address("127.0.0.1")
    assert peer_address(proxied, response) is None
    assert peer_address(plain, Response(url)) is None  # no address reported (cache, ftp)
