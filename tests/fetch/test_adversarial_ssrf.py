"""Adversarial pass over the SSRF guard (issue 10 §2): odd spellings of loopback,
userinfo and IDNA tricks, rebinding between hops, chains, the first hop's rule, and a
caller's session. Every attempt must leave the private server untouched.

Servers listen on 127.0.0.0/8 only; 127.0.0.2 is declared public (``declared_public``).
The default resolver (c-ares) and getaddrinfo (``ThreadedResolver``, which also
accepts ``0x7f.1`` and ``127.1``) are both tried.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import aiohttp
import pytest

import robots_async as ra

from . import test_ssrf
from .conftest import USER_AGENT
from .test_ssrf import PUBLIC_TWIN, Site, declared_public

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

ALLOW_ALL = "User-agent: *\nAllow: /\n"
#: test_ssrf's fixtures, shared (pytest finds them by their names here).
make_site = test_ssrf.make_site
make_guarded = test_ssrf.make_guarded

#: Spellings of the private server's address (``{port}`` filled in). A guard that
#: missed one would send the request to 127.0.0.1 (or fail to connect for [::1]).
SPELLINGS = {
    "decimal": "http://2130706433:{port}/admin",
    "hex-dotted": "http://0x7f.1:{port}/admin",
    "hex-whole": "http://0x7f000001:{port}/admin",
    "short": "http://127.1:{port}/admin",
    "octal": "http://0177.0.0.1:{port}/admin",
    "padded": "http://127.000.000.001:{port}/admin",
    "trailing-dot": "http://127.0.0.1.:{port}/admin",
    "mapped-v6": "http://[::ffff:127.0.0.1]:{port}/admin",
    "mapped-v6-hex": "http://[0:0:0:0:0:ffff:7f00:1]:{port}/admin",
    "compat-v6": "http://[::127.0.0.1]:{port}/admin",
    "zone-id": "http://[::ffff:7f00:1%25lo]:{port}/admin",
    "loopback-v6": "http://[::1]:{port}/admin",
    "userinfo": "http://public.example@127.0.0.1:{port}/admin",
    "userinfo-colon": "http://127.0.0.2:80@127.0.0.1:{port}/admin",
    "percent-host": "http://%31%32%37.0.0.1:{port}/admin",
    "fullwidth-idna": "http://\uff11\uff12\uff17\uff0e\uff10\uff0e\uff10\uff0e\uff11:{port}/admin",
    "ideographic-dots": "http://127\u30020\u30020\u30021:{port}/admin",
    "localhost": "http://localhost:{port}/admin",
    "localhost-upper-dot": "http://LOCALHOST.:{port}/admin",
    "scheme-relative": "//127.0.0.1:{port}/admin",
}


@pytest.fixture(params=["c-ares", "getaddrinfo"])
async def real_guarded(request: pytest.FixtureRequest) -> AsyncIterator[ra.AiohttpFetcher]:
    """A fetcher on a real resolver (127.0.0.2 public), closed at teardown."""
    resolver = aiohttp.AsyncResolver() if request.param == "c-ares" else aiohttp.ThreadedResolver()
    fetcher = ra.AiohttpFetcher(
        user_agent=USER_AGENT, resolver=resolver, public_address=declared_public
    )
    yield fetcher
    await fetcher.aclose()


@pytest.mark.parametrize("spelling", list(SPELLINGS.values()), ids=list(SPELLINGS))
async def test_odd_spellings_of_loopback_are_never_reached(
    make_site: Callable[..., Awaitable[Site]],
    real_guarded: ra.AiohttpFetcher,
    spelling: str,
) -> None:
    """Public -> any spelling of 127.0.0.1: refused (blocked-redirect: disallow all) or
    invalid (aiohttp refuses non-canonical IPv4: bad-redirect, which RFC 9309 reads as
    unavailable), never sent; never the private server's rules."""
    public, private = await make_site(PUBLIC_TWIN), await make_site("127.0.0.1")
    private.rules(ALLOW_ALL)
    private.routes["/admin"] = private.routes["/robots.txt"]
    public.redirect(spelling.format(port=private.port))
    outcome = await real_guarded.fetch(public.url())
    assert private.hits == []
    assert outcome.robots is None
    assert outcome.status is None
    assert outcome.error in {"blocked-redirect", "bad-redirect", "dns"}


async def test_public_public_private_chain_is_refused(
    make_site: Callable[..., Awaitable[Site]],
    make_guarded: Callable[..., ra.AiohttpFetcher],
) -> None:
    """Public -> public (by name) -> private: the second hop reached a public address,
    so its redirect is held to public too."""
    first, second = await make_site(PUBLIC_TWIN), await make_site(PUBLIC_TWIN)
    private = await make_site("127.0.0.1")
    private.rules(ALLOW_ALL)
    first.redirect(second.url(host="cdn.test"))
    second.redirect(private.url())
    outcome = await make_guarded({"cdn.test": [[PUBLIC_TWIN]]}).fetch(first.url())
    assert outcome.error == "blocked-redirect"
    assert (first.hits, second.hits, private.hits) == (["/robots.txt"], ["/robots.txt"], [])


async def test_public_private_private_chain_stops_at_the_first_private_hop(
    make_site: Callable[..., Awaitable[Site]],
    make_guarded: Callable[..., ra.AiohttpFetcher],
) -> None:
    """Public -> private (by name) -> private: refused at the first private hop; the
    second private server is never reached either."""
    public = await make_site(PUBLIC_TWIN)
    inner, deeper = await make_site("127.0.0.1"), await make_site("127.0.0.1")
    deeper.rules(ALLOW_ALL)
    public.redirect(inner.url(host="inner.test"))
    inner.redirect(deeper.url())
    outcome = await make_guarded({"inner.test": [["127.0.0.1"]]}).fetch(public.url())
    assert outcome.error == "blocked-redirect"
    assert (inner.hits, deeper.hits) == ([], [])


async def test_rebinding_between_hops_of_one_name(
    make_site: Callable[..., Awaitable[Site]],
    make_guarded: Callable[..., ra.AiohttpFetcher],
) -> None:
    """flip.test is public for the origin's request and private for the redirect to
    another path on the same name: the second connection's lookup is checked too."""
    private = await make_site("127.0.0.1")
    private.rules(ALLOW_ALL)
    twin = await make_site(PUBLIC_TWIN, private.port)
    twin.redirect(twin.url("/moved.txt", host="flip.test"))
    fetcher = make_guarded({"flip.test": [[PUBLIC_TWIN], ["127.0.0.1"]]})
    outcome = await fetcher.fetch(twin.url(host="flip.test"))
    assert outcome.error == "blocked-redirect"
    assert twin.hits == ["/robots.txt"]
    assert private.hits == []


async def test_first_hop_rule_origin_public_by_name_private_by_address(
    make_site: Callable[..., Awaitable[Site]],
    make_guarded: Callable[..., ra.AiohttpFetcher],
) -> None:
    """The documented rule: an origin's own robots.txt is fetched wherever its name
    points, and an origin that reached only non-public addresses may redirect within
    non-public space (an intranet crawl). So evil.test -> 127.0.0.1 is followed to
    another loopback port: by design, not a bypass (the crawler was asked to crawl a
    name that is, for this network, inside)."""
    entry, target = await make_site("127.0.0.1"), await make_site("127.0.0.1")
    target.rules()
    entry.redirect(target.url())
    outcome = await make_guarded({"evil.test": [["127.0.0.1"]]}).fetch(entry.url(host="evil.test"))
    assert outcome.error is None
    assert (entry.hits, target.hits) == (["/robots.txt"], ["/robots.txt"])


async def test_first_hop_with_a_public_address_in_its_answer_is_held_to_public(
    make_site: Callable[..., Awaitable[Site]],
    make_guarded: Callable[..., ra.AiohttpFetcher],
) -> None:
    """An origin answering [127.0.0.1, public]: the connection may use either, so the
    hop counts as public and its redirect into private space is refused (even though
    the connection went to the private address first)."""
    entry = await make_site("127.0.0.1")
    twin = await make_site(PUBLIC_TWIN, entry.port)
    target = await make_site("127.0.0.1")
    target.rules(ALLOW_ALL)
    for site in (entry, twin):
        site.redirect(target.url())
    fetcher = make_guarded({"both.test": [["127.0.0.1", PUBLIC_TWIN]]})
    outcome = await fetcher.fetch(entry.url(host="both.test"))
    assert outcome.error == "blocked-redirect"
    assert len(entry.hits + twin.hits) == 1
    assert target.hits == []


async def test_mixed_answers_at_every_hop_never_hand_over_a_private_address(
    make_site: Callable[..., Awaitable[Site]],
    make_guarded: Callable[..., ra.AiohttpFetcher],
) -> None:
    """Public -> a.test [private, public] -> b.test [private, public]: each connection
    gets only the public twin, so the private servers on the same ports see nothing."""
    public = await make_site(PUBLIC_TWIN)
    a_private, b_private = await make_site("127.0.0.1"), await make_site("127.0.0.1")
    a_twin = await make_site(PUBLIC_TWIN, a_private.port)
    b_twin = await make_site(PUBLIC_TWIN, b_private.port)
    for site in (a_private, b_private):
        site.rules(ALLOW_ALL)
    b_twin.rules()
    public.redirect(a_twin.url(host="a.test"))
    a_twin.redirect(b_twin.url(host="b.test"))
    script = {"a.test": [["127.0.0.1", PUBLIC_TWIN]], "b.test": [["127.0.0.1", PUBLIC_TWIN]]}
    outcome = await make_guarded(script).fetch(public.url())
    assert outcome.error is None
    assert outcome.hops == 2
    assert (a_private.hits, b_private.hits) == ([], [])
    assert b_twin.hits == ["/robots.txt"]


@pytest.mark.parametrize(
    "spelling",
    [SPELLINGS[name] for name in ("decimal", "hex-dotted", "mapped-v6", "userinfo", "localhost")],
    ids=["decimal", "hex-dotted", "mapped-v6", "userinfo", "localhost"],
)
async def test_callers_session_precheck_refuses_odd_spellings(
    make_site: Callable[..., Awaitable[Site]],
    spelling: str,
) -> None:
    """With a session of the caller's the guard looks hosts up itself (getaddrinfo,
    which maps 0x7f.1 and 2130706433 to 127.0.0.1): still refused before sending."""
    public, private = await make_site(PUBLIC_TWIN), await make_site("127.0.0.1")
    private.rules(ALLOW_ALL)
    public.redirect(spelling.format(port=private.port))
    async with aiohttp.ClientSession() as session:
        fetcher = ra.AiohttpFetcher(session, user_agent=USER_AGENT, public_address=declared_public)
        outcome = await fetcher.fetch(public.url())
        await fetcher.aclose()
    assert private.hits == []
    assert outcome.robots is None
    assert outcome.error in {"blocked-redirect", "bad-redirect"}


@pytest.mark.parametrize(
    "answer",
    [
        "::ffff:127.0.0.1",
        "::1",
        "fe80::1%1",
        "169.254.169.254",
        "100.100.100.200",
        "0.0.0.0",
        "64:ff9b::7f00:1",
        "2002:7f00:1::1",
        "not-an-address",
    ],
)
async def test_dns_answer_shapes_after_a_public_hop_are_refused(
    make_site: Callable[..., Awaitable[Site]],
    make_guarded: Callable[..., ra.AiohttpFetcher],
    answer: str,
) -> None:
    """A redirect target whose lookup answers a mapped, scoped, metadata, unspecified,
    NAT64/6to4-wrapped loopback, or something that is not an address at all: refused
    (blocked-redirect), the connector is given nothing."""
    public = await make_site(PUBLIC_TWIN)
    public.redirect("http://target.test:9/robots.txt")
    outcome = await make_guarded({"target.test": [[answer]]}).fetch(public.url())
    assert outcome.error == "blocked-redirect"
    assert answer in outcome.error_detail


LEGACY = ("decimal", "short", "octal", "padded", "trailing-dot")


@pytest.mark.parametrize("spelling", [SPELLINGS[name] for name in LEGACY], ids=list(LEGACY))
async def test_legacy_ipv4_spellings_read_as_a_refused_hop(
    make_site: Callable[..., Awaitable[Site]],
    make_guarded: Callable[..., ra.AiohttpFetcher],
    spelling: str,
) -> None:
    """Found: aiohttp refuses 2130706433, 127.1, 0177.0.0.1, 127.000.000.001 and
    127.0.0.1. as invalid URLs, so the hop was "bad-redirect", read as unavailable:
    allow all. The documented outcome of a public -> non-public hop is
    "blocked-redirect", unreachable (disallow all): a refused file may exist."""
    public, private = await make_site(PUBLIC_TWIN), await make_site("127.0.0.1")
    private.rules(ALLOW_ALL)
    public.redirect(spelling.format(port=private.port))
    outcome = await make_guarded().fetch(public.url())
    assert outcome.error == "blocked-redirect"
    assert outcome.category == "unreachable"
    assert "127.0.0.1" in outcome.error_detail
    assert private.hits == []


async def test_legacy_ipv4_spelling_of_a_public_address_is_still_invalid(
    make_site: Callable[..., Awaitable[Site]],
    make_guarded: Callable[..., ra.AiohttpFetcher],
) -> None:
    """The guard only judges: 2130706434 (127.0.0.2, declared public) is not refused by
    it. aiohttp 3.14 will not connect to such a host (bad-redirect); 3.12 resolves it
    and the hop reaches the public twin (its /x answers 404)."""
    public = await make_site(PUBLIC_TWIN)
    public.redirect(f"http://2130706434:{public.port}/x")
    outcome = await make_guarded().fetch(public.url())
    assert outcome.error != "blocked-redirect"
    if outcome.error is None:
        assert (outcome.status, public.hits) == (404, ["/robots.txt", "/x"])
    else:
        assert (outcome.error, public.hits) == ("bad-redirect", ["/robots.txt"])


async def test_callers_session_precheck_lookup_ends_at_the_fetch_deadline(
    make_site: Callable[..., Awaitable[Site]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The precheck's own lookup (getaddrinfo) is held to the fetch's total_timeout: a
    redirect to a name whose lookup hangs (a fake: a real one would need a silent
    system resolver) ends as a timeout at the deadline (unreachable). It ran unbounded:
    a 10 s lookup made a 1 s fetch take 10 s, a thread of the loop's executor held."""
    public = await make_site(PUBLIC_TWIN)
    public.redirect("http://slow.test/robots.txt")
    loop = asyncio.get_running_loop()
    real = loop.getaddrinfo

    async def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "slow.test":
            await asyncio.sleep(10)
        return await real(host, *args, **kwargs)

    monkeypatch.setattr(loop, "getaddrinfo", getaddrinfo)
    policy = ra.FetchPolicy(total_timeout=1.0)
    async with aiohttp.ClientSession() as session:
        fetcher = ra.AiohttpFetcher(
            session, user_agent=USER_AGENT, policy=policy, public_address=declared_public
        )
        started = loop.time()
        outcome = await fetcher.fetch(public.url())
        elapsed = loop.time() - started
    assert elapsed < 3.0
    assert (outcome.error, outcome.category) == ("timeout", "unreachable")
    assert outcome.robots is None
