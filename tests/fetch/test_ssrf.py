"""The SSRF guard (issue 10 §2): a robots.txt redirect may not go from a public address
to a non-public one, checked on the address the connection uses (DNS rebinding).

Every server is on 127.0.0.0/8. The "public" site listens on 127.0.0.2 and the tests
declare that one address public (``public_address=``); the default classifier is
tested on its own. Names are answered by a scripted resolver: what a real one cannot
do on demand (answer differently on each lookup).
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pytest
from aiohttp import web
from aiohttp.abc import AbstractResolver, ResolveResult

import robots_async as ra
from robots_async.fetch.addresses import is_public
from robots_async.fetch.http import _leaves_public

from .conftest import USER_AGENT

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

    from robots_async.fetch.addresses import IPAddress

RULES = "User-agent: *\nDisallow: /private\n"
PUBLIC_TWIN = "127.0.0.2"


def declared_public(address: IPAddress) -> bool:
    """The default classifier, with 127.0.0.2 standing in for a public address."""
    return address == ipaddress.ip_address(PUBLIC_TWIN) or is_public(address)


@dataclass
class ScriptedResolver(AbstractResolver):
    """Answers each name from a script: the i-th lookup gets the i-th answer (the last
    one repeats); records every lookup."""

    script: dict[str, list[list[str]]]
    lookups: list[str] = field(default_factory=list)

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        seen = self.lookups.count(host)
        self.lookups.append(host)
        answers = self.script.get(host)
        if answers is None:
            raise OSError(None, f"no such name {host!r}")
        flags = socket.AI_NUMERICHOST | socket.AI_NUMERICSERV
        return [
            ResolveResult(
                hostname=host, host=addr, port=port, family=socket.AF_INET, proto=0, flags=flags
            )
            for addr in answers[min(seen, len(answers) - 1)]
        ]

    async def close(self) -> None:
        """Nothing to release."""


@dataclass
class Site:
    """An aiohttp site on one address: fixed robots.txt routes, hits counted."""

    host: str
    port: int = 0
    routes: dict[str, web.Response] = field(default_factory=dict)
    hits: list[str] = field(default_factory=list)

    def url(self, path: str = "/robots.txt", host: str | None = None) -> str:
        """``path`` on this site, optionally under another host name."""
        return f"http://{host or self.host}:{self.port}{path}"

    async def handle(self, request: web.Request) -> web.Response:
        self.hits.append(request.path)
        route = self.routes.get(request.path)
        if route is None:
            return web.Response(status=404)
        return web.Response(body=route.body, status=route.status, headers=route.headers)

    def redirect(self, location: str, path: str = "/robots.txt") -> None:
        self.routes[path] = web.Response(status=302, headers={"Location": location})

    def rules(self, body: str = RULES) -> None:
        self.routes["/robots.txt"] = web.Response(text=body)


@pytest.fixture
async def make_site() -> AsyncIterator[Callable[..., Awaitable[Site]]]:
    """Factory: ``await make_site(host, port=0)`` -> a running :class:`Site`."""
    runners: list[web.AppRunner] = []

    async def start(host: str, port: int = 0) -> Site:
        site = Site(host)
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", site.handle)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.2)
        await runner.setup()
        runners.append(runner)
        tcp = web.TCPSite(runner, host, port)
        await tcp.start()
        site.port = tcp._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return site

    yield start
    for runner in runners:
        await runner.cleanup()


@pytest.fixture
async def make_guarded() -> AsyncIterator[Callable[..., ra.AiohttpFetcher]]:
    """Factory: a fetcher whose names come from ``script`` and for which 127.0.0.2 is
    public; policy keywords go to FetchPolicy (closed at teardown)."""
    fetchers: list[ra.AiohttpFetcher] = []

    def build(
        script: dict[str, list[list[str]]] | None = None, **changes: object
    ) -> ra.AiohttpFetcher:
        fetcher = ra.AiohttpFetcher(
            user_agent=USER_AGENT,
            policy=ra.FetchPolicy.rfc9309(**changes),
            resolver=ScriptedResolver(script or {}),
            public_address=declared_public,
        )
        fetchers.append(fetcher)
        return fetcher

    yield build
    for fetcher in fetchers:
        await fetcher.aclose()


async def test_public_origin_cannot_redirect_to_a_loopback_literal(
    make_site: Callable[..., Awaitable[Site]], make_guarded: Callable[..., ra.AiohttpFetcher]
) -> None:
    """Public -> http://127.0.0.1:.../admin: blocked-redirect, nothing sent there; the
    outcome is unreachable (disallow all), never the target's content."""
    public, private = await make_site(PUBLIC_TWIN), await make_site("127.0.0.1")
    private.rules("User-agent: *\nAllow: /\n")
    public.redirect(private.url("/admin/delete?all=1"))
    outcome = await make_guarded().fetch(public.url())
    assert outcome.error == "blocked-redirect"
    assert outcome.category == "unreachable"
    assert "127.0.0.1" in outcome.error_detail
    assert public.hits == ["/robots.txt"]
    assert private.hits == []


async def test_public_origin_cannot_redirect_to_a_name_of_a_private_address(
    make_site: Callable[..., Awaitable[Site]], make_guarded: Callable[..., ra.AiohttpFetcher]
) -> None:
    """A redirect to a name resolving to 127.0.0.1: refused at the connection's lookup."""
    public, private = await make_site(PUBLIC_TWIN), await make_site("127.0.0.1")
    private.rules()
    public.redirect(private.url(host="intranet.test"))
    fetcher = make_guarded({"intranet.test": [["127.0.0.1"]]})
    outcome = await fetcher.fetch(public.url())
    assert outcome.error == "blocked-redirect"
    assert private.hits == []


async def test_dns_rebinding_cannot_reach_the_private_address(
    make_site: Callable[..., Awaitable[Site]], make_guarded: Callable[..., ra.AiohttpFetcher]
) -> None:
    """rebind.test answers public first, 127.0.0.1 second. A guard with its own lookup
    would pass the first and connect to the second; here every connection uses the
    answer that was checked: first fetch to the public twin, second fetch refused. The
    private server never sees a request."""
    private = await make_site("127.0.0.1")
    private.rules("User-agent: *\nAllow: /\n")
    twin = await make_site(PUBLIC_TWIN, private.port)  # same port, public address
    twin.rules()
    public = await make_site(PUBLIC_TWIN)
    public.redirect(private.url(host="rebind.test"))
    fetcher = make_guarded({"rebind.test": [[PUBLIC_TWIN], ["127.0.0.1"]]})
    first = await fetcher.fetch(public.url())
    assert first.error is None
    assert first.robots is not None
    assert not first.robots.allowed("/private", user_agent="Bot")  # the twin's rules
    second = await fetcher.fetch(public.url())
    assert second.error == "blocked-redirect"
    resolver = fetcher._resolver
    assert isinstance(resolver, ScriptedResolver)
    assert resolver.lookups == ["rebind.test", "rebind.test"]  # one per connection
    assert twin.hits == ["/robots.txt"]
    assert private.hits == []


async def test_mixed_answers_are_pinned_to_the_public_ones(
    make_site: Callable[..., Awaitable[Site]], make_guarded: Callable[..., ra.AiohttpFetcher]
) -> None:
    """A target resolving to [127.0.0.1, public]: the connector only gets the public
    address, so the connection cannot pick the private one."""
    private = await make_site("127.0.0.1")
    private.rules("User-agent: *\nAllow: /\n")
    twin = await make_site(PUBLIC_TWIN, private.port)
    twin.rules()
    public = await make_site(PUBLIC_TWIN)
    public.redirect(private.url(host="mixed.test"))
    fetcher = make_guarded({"mixed.test": [["127.0.0.1", PUBLIC_TWIN]]})
    outcome = await fetcher.fetch(public.url())
    assert outcome.error is None
    assert twin.hits == ["/robots.txt"]
    assert private.hits == []


async def test_private_origin_may_redirect_within_private_space(
    make_site: Callable[..., Awaitable[Site]], make_guarded: Callable[..., ra.AiohttpFetcher]
) -> None:
    """An intranet crawl keeps working: a non-public origin (by name or literal) may
    redirect to another non-public address."""
    entry, target = await make_site("127.0.0.1"), await make_site("127.0.0.1")
    target.rules()
    entry.redirect(target.url(host="db.intranet.test"))
    fetcher = make_guarded({"intranet.test": [["127.0.0.1"]], "db.intranet.test": [["127.0.0.1"]]})
    by_name = await fetcher.fetch(entry.url(host="intranet.test"))
    by_literal = await fetcher.fetch(entry.url())
    assert (by_name.error, by_literal.error) == (None, None)
    assert by_name.hops == by_literal.hops == 1
    assert target.hits == ["/robots.txt", "/robots.txt"]


async def test_private_public_private_chain_is_refused_at_the_last_hop(
    make_site: Callable[..., Awaitable[Site]], make_guarded: Callable[..., ra.AiohttpFetcher]
) -> None:
    """Each hop is judged by the one before: private -> public is fine, the public
    hop's redirect into private space is not."""
    entry, target = await make_site("127.0.0.1"), await make_site("127.0.0.1")
    middle = await make_site(PUBLIC_TWIN)
    target.rules()
    entry.redirect(middle.url())
    middle.redirect(target.url())
    outcome = await make_guarded().fetch(entry.url())
    assert outcome.error == "blocked-redirect"
    assert outcome.final_url == target.url()  # the refused hop
    assert middle.hits == ["/robots.txt"]
    assert target.hits == []


async def test_allow_follows_public_to_private(
    make_site: Callable[..., Awaitable[Site]], make_guarded: Callable[..., ra.AiohttpFetcher]
) -> None:
    """private_redirects="allow" turns the guard off."""
    public, private = await make_site(PUBLIC_TWIN), await make_site("127.0.0.1")
    private.rules()
    public.redirect(private.url(host="intranet.test"))
    fetcher = make_guarded({"intranet.test": [["127.0.0.1"]]}, private_redirects="allow")
    outcome = await fetcher.fetch(public.url())
    assert outcome.error is None
    assert private.hits == ["/robots.txt"]


async def test_checker_disallows_an_origin_whose_redirect_is_refused(
    make_site: Callable[..., Awaitable[Site]], make_guarded: Callable[..., ra.AiohttpFetcher]
) -> None:
    """Through the checker: a refused hop fails closed (disallow all, "unreachable")
    and the target is never contacted, also on the next check."""
    public, private = await make_site(PUBLIC_TWIN), await make_site("127.0.0.1")
    private.rules("User-agent: *\nAllow: /\n")
    public.redirect(private.url())
    checker = ra.RobotsChecker(USER_AGENT, fetcher=make_guarded())
    try:
        decision = await checker.explain(public.url("/page"))
        assert decision.allowed is False
        assert decision.source == "unreachable"
        assert decision.outcome.error == "blocked-redirect"
        assert await checker.allowed(public.url("/other")) is False
    finally:
        await checker.aclose()
    assert private.hits == []


def test_fetcher_refuses_a_resolver_with_a_session_of_yours() -> None:
    """resolver= only applies to the fetcher's own session: both is a loud error."""
    with pytest.raises(ValueError, match="resolver="):
        ra.AiohttpFetcher(
            object(),  # type: ignore[arg-type]
            user_agent=USER_AGENT,
            resolver=ScriptedResolver({}),
        )


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",  # cloud metadata (AWS, GCP, Azure)
        "100.64.0.1",  # carrier-grade NAT
        "100.100.100.200",  # Alibaba metadata
        "192.0.0.192",  # 192.0.0.0/24 (Oracle metadata)
        "0.0.0.0",
        "224.0.0.1",
        "255.255.255.255",
        "::",
        "::1",
        "fd00:ec2::254",  # AWS metadata over IPv6 (unique-local)
        "fe80::1",
        "ff02::1",
        "::ffff:127.0.0.1",  # IPv4-mapped
        "::ffff:169.254.169.254",
        "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
        "2002:7f00:1::1",  # 6to4 of 127.0.0.1
    ],
)
def test_non_public_addresses(address: str) -> None:
    """The default classifier's non-public set, on every interpreter alike."""
    assert not is_public(ipaddress.ip_address(address))


@pytest.mark.parametrize(
    "address", ["8.8.8.8", "1.1.1.1", "100.128.0.1", "2606:4700::1111", "::ffff:8.8.8.8"]
)
def test_public_addresses(address: str) -> None:
    """Ordinary global addresses (just outside CGNAT too) are public."""
    assert is_public(ipaddress.ip_address(address))


async def test_lookup_precheck_for_fetchers_that_cannot_pin() -> None:
    """The best-effort check (Scrapy, a caller's session): public -> private only."""
    assert await _leaves_public("8.8.8.8", "127.0.0.1") is True
    assert await _leaves_public("8.8.8.8", "1.1.1.1") is False
    assert await _leaves_public("10.0.0.1", "127.0.0.1") is False


async def test_sitemap_index_children_are_guarded_like_their_index(
    make_site: Callable[..., Awaitable[Site]], make_guarded: Callable[..., ra.AiohttpFetcher]
) -> None:
    """A public origin's robots.txt names an index on another host, b.test: its fetch
    is guarded as a redirect's. b.test then answers 127.0.0.1 (DNS rebinding) for the
    index's child on that same host: guarded as well, never sent (it reached the
    private server before: the guard followed host names, not the chain)."""
    private = await make_site("127.0.0.1")
    private.routes["/child.xml"] = web.Response(text="<urlset><url><loc>/x</loc></url></urlset>")
    twin = await make_site(PUBLIC_TWIN, private.port)  # b.test's public answer
    origin = await make_site(PUBLIC_TWIN)
    child = twin.url("/child.xml", host="b.test")
    twin.routes["/index.xml"] = web.Response(
        text=f"<sitemapindex><sitemap><loc>{child}</loc></sitemap></sitemapindex>"
    )
    origin.rules(f"User-agent: *\nAllow: /\nSitemap: {twin.url('/index.xml', host='b.test')}\n")
    fetcher = make_guarded({"b.test": [[PUBLIC_TWIN], ["127.0.0.1"]]})
    checker = ra.RobotsChecker(USER_AGENT, fetcher=fetcher)
    try:
        walk = checker.sitemap_urls(origin.url("/"))
        assert [item async for item in walk] == []
    finally:
        await checker.aclose()
    assert twin.hits == ["/index.xml"]
    assert private.hits == []
    assert walk.stats.sitemaps_failed == 1
    assert "blocked-redirect" in walk.stats.warnings[0]


async def test_a_resolver_answering_no_address_is_a_dns_failure(
    make_guarded: Callable[..., ra.AiohttpFetcher],
) -> None:
    """A resolver of the caller's that answers an empty list (a hosts-file resolver
    for a name it lacks): a DNS failure, unreachable. aiohttp's connector, handed no
    address, failed ``assert last_exc is not None``: an AssertionError escaped
    fetch() and the checker."""
    fetcher = make_guarded({"empty.test": [[]]})
    outcome = await fetcher.fetch("http://empty.test/robots.txt")
    assert (outcome.error, outcome.category) == ("dns", "unreachable")
