"""AiohttpFetcher against a real server: redirects, size limit, encodings, headers."""

from __future__ import annotations

import asyncio
import gzip
import time
import zlib
from email.utils import formatdate
from typing import TYPE_CHECKING

import aiohttp
import brotli
import pytest

import robots_async as ra

from .conftest import TOKEN, USER_AGENT

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from .conftest import Server

RULES = "User-agent: *\nDisallow: /private\n"
LIMIT = 512_000


# --- redirects ----------------------------------------------------------------------


def chain(server: Server, redirects: int) -> None:
    """/robots.txt -> /r1 -> ... -> /r<redirects - 1> -> /final.txt (200, RULES)."""
    paths = ["/robots.txt", *(f"/r{i}" for i in range(1, redirects))]
    for here, there in zip(paths, [*paths[1:], "/final.txt"], strict=True):
        server.redirect(here, there, status=302)
    server.text("/final.txt", RULES)


async def test_five_redirect_hops_are_followed(
    server: Server, make_fetcher: Callable[..., ra.AiohttpFetcher]
) -> None:
    """Exactly max_hops (5) redirects are followed to the file."""
    chain(server, 5)
    outcome = await make_fetcher().fetch(server.url("/robots.txt"))
    assert outcome.error is None
    assert outcome.status == 200
    assert outcome.hops == 5
    assert outcome.final_url == server.url("/final.txt")
    assert outcome.robots is not None
    assert not outcome.robots.allowed("/private", robots_token=TOKEN)


async def test_sixth_redirect_is_not_followed(
    server: Server, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """A 6th redirect is refused ("redirect-limit", unavailable: allow all)."""
    chain(server, 6)
    checker = make_checker()
    decision = await checker.explain(server.url("/private"))
    assert decision.outcome.error == "redirect-limit"
    assert decision.outcome.category == "unavailable"
    assert decision.allowed
    assert decision.source == "unavailable"
    assert server.count("/final.txt") == 0
    assert server.count("/r5") == 1


async def test_max_hops_is_configurable(
    server: Server, make_fetcher: Callable[..., ra.AiohttpFetcher]
) -> None:
    """max_hops=1: one redirect followed, the second refused."""
    chain(server, 2)
    outcome = await make_fetcher(max_hops=1).fetch(server.url("/robots.txt"))
    assert outcome.error == "redirect-limit"
    assert server.count("/r1") == 1
    assert server.count("/final.txt") == 0


async def test_one_deadline_covers_all_hops(
    server: Server, make_fetcher: Callable[..., ra.AiohttpFetcher]
) -> None:
    """total_timeout bounds the whole chain: three 0.3 s hops under 0.5 s time out."""
    server.text("/robots.txt", status=302, headers={"Location": "/r1"}, delay=0.3)
    server.text("/r1", status=302, headers={"Location": "/r2"}, delay=0.3)
    server.text("/r2", RULES, delay=0.3)
    loop = asyncio.get_running_loop()
    started = loop.time()
    outcome = await make_fetcher(total_timeout=0.5).fetch(server.url("/robots.txt"))
    assert loop.time() - started < 5.0
    assert outcome.error == "timeout"
    assert outcome.hops == 1
    assert server.count("/r2") == 0


async def test_redirect_loop(server: Server, make_checker: Callable[..., ra.RobotsChecker]) -> None:
    """A -> B -> A is a "redirect-loop" (unavailable: allow all), detected without looping."""
    server.redirect("/robots.txt", "/b.txt")
    server.redirect("/b.txt", "/robots.txt")
    checker = make_checker()
    decision = await checker.explain(server.url("/private"))
    assert decision.outcome.error == "redirect-loop"
    assert decision.allowed
    assert decision.source == "unavailable"
    assert server.count("/robots.txt") == 1
    assert server.count("/b.txt") == 1


async def test_redirect_to_itself(
    server: Server, make_fetcher: Callable[..., ra.AiohttpFetcher]
) -> None:
    """A 301 to its own URL is a loop, found on the first hop."""
    server.redirect("/robots.txt", server.url("/robots.txt"))
    outcome = await make_fetcher().fetch(server.url("/robots.txt"))
    assert outcome.error == "redirect-loop"
    assert outcome.category == "unavailable"
    assert server.count("/robots.txt") == 1


async def test_relative_location(
    server: Server, make_fetcher: Callable[..., ra.AiohttpFetcher]
) -> None:
    """A relative Location is resolved against the current URL."""
    server.redirect("/robots.txt", "sub/robots.txt")
    server.text("/sub/robots.txt", RULES)
    outcome = await make_fetcher().fetch(server.url("/robots.txt"))
    assert outcome.error is None
    assert outcome.final_url == server.url("/sub/robots.txt")
    assert outcome.robots is not None
    assert not outcome.robots.allowed("/private", robots_token=TOKEN)


@pytest.mark.parametrize(
    "location",
    [
        "ftp://127.0.0.1/robots.txt",
        "data:text/plain,User-agent: *%0ADisallow: /",
        "javascript:alert(1)",
        "",
    ],
    ids=["ftp", "data", "javascript", "empty"],
)
async def test_bad_redirect_target(
    server: Server, make_checker: Callable[..., ra.RobotsChecker], location: str
) -> None:
    """A Location that is empty or not http(s) is a "bad-redirect" (allow all)."""
    server.redirect("/robots.txt", location)
    checker = make_checker()
    decision = await checker.explain(server.url("/private"))
    assert decision.outcome.error == "bad-redirect"
    assert decision.outcome.category == "unavailable"
    assert decision.allowed


async def test_redirect_without_location(
    server: Server, make_fetcher: Callable[..., ra.AiohttpFetcher]
) -> None:
    """A 302 with no Location header at all is a "bad-redirect"."""
    server.text("/robots.txt", status=302)
    outcome = await make_fetcher().fetch(server.url("/robots.txt"))
    assert outcome.error == "bad-redirect"
    assert outcome.status == 302


async def test_cross_origin_redirect_applies_to_initial_origin(
    make_server: Callable[[int], Awaitable[Server]], make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """Rules fetched through a cross-origin redirect apply to the initial origin only."""
    first = await make_server(1)
    second = await make_server(1)
    first.redirect("/robots.txt", second.url("/robots.txt"))
    second.text("/robots.txt", RULES)
    checker = make_checker()
    decision = await checker.explain(first.url("/private"))
    assert not decision.allowed
    assert decision.origin == first.origin()
    assert decision.outcome.final_url == second.url("/robots.txt")
    assert checker.cache.peek(first.origin()) is not None
    assert checker.cache.peek(second.origin()) is None
    assert second.count() == 1


async def test_credentials_are_not_sent_to_another_origin_on_a_redirect(
    make_server: Callable[[int], Awaitable[Server]],
) -> None:
    """Authorization, Proxy-Authorization and Cookie of ``headers=`` go to the origin
    whose robots.txt is fetched, never to the host its redirect names (as aiohttp,
    requests and browsers strip them across origins); other headers still go. Our own
    redirect loop sent them to every hop: a redirect to another host read the token."""
    first = await make_server(1)
    second = await make_server(1)
    first.redirect("/robots.txt", second.url("/robots.txt"))
    second.redirect("/robots.txt", first.url("/moved.txt"))  # and back to the origin
    first.text("/moved.txt", RULES)
    secrets = {"Authorization": "Bearer s3cret", "Proxy-Authorization": "x", "Cookie": "s=1"}
    fetcher = ra.AiohttpFetcher(user_agent=USER_AGENT, headers={**secrets, "X-Crawl": "1"})
    try:
        outcome = await fetcher.fetch(first.url("/robots.txt"))
    finally:
        await fetcher.aclose()
    assert (outcome.error, outcome.hops) == (None, 2)
    [to_second] = second.hits
    assert not set(secrets) & set(to_second.headers)
    assert to_second.headers["X-Crawl"] == "1"
    for hit in first.hits:
        assert {name: hit.headers.get(name) for name in secrets} == secrets


async def test_cross_origin_redirects_false_blocks(
    make_server: Callable[[int], Awaitable[Server]], make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """cross_origin_redirects=False refuses the hop ("blocked-redirect"); target not asked."""
    first = await make_server(1)
    second = await make_server(1)
    first.redirect("/robots.txt", second.url("/robots.txt"))
    second.text("/robots.txt", RULES)
    checker = make_checker(fetch_policy=ra.FetchPolicy.rfc9309(cross_origin_redirects=False))
    decision = await checker.explain(first.url("/page"))
    assert decision.outcome.error == "blocked-redirect"
    assert decision.outcome.category == "unreachable"
    assert not decision.allowed
    assert second.count() == 0


async def test_cross_origin_redirects_false_allows_same_origin(
    server: Server, make_fetcher: Callable[..., ra.AiohttpFetcher]
) -> None:
    """cross_origin_redirects=False still follows redirects within the origin."""
    server.redirect("/robots.txt", "/final.txt")
    server.text("/final.txt", RULES)
    outcome = await make_fetcher(cross_origin_redirects=False).fetch(server.url("/robots.txt"))
    assert outcome.error is None
    assert outcome.hops == 1


async def test_loopback_origin_may_redirect_to_loopback(
    make_server: Callable[[int], Awaitable[Server]], make_fetcher: Callable[..., ra.AiohttpFetcher]
) -> None:
    """The SSRF guard (on by default) lets a non-public origin redirect within
    non-public space (tests/fetch/test_ssrf.py covers what it refuses)."""
    first = await make_server(1)
    second = await make_server(1)
    first.redirect("/robots.txt", second.url("/robots.txt"))
    second.text("/robots.txt", RULES)
    fetcher = make_fetcher()
    assert fetcher.policy.private_redirects == "block"
    outcome = await fetcher.fetch(first.url("/robots.txt"))
    assert outcome.error is None
    assert outcome.hops == 1
    assert second.count() == 1


# --- size limit and content encodings ----------------------------------------------------


def padded(head: str, size: int, tail: str) -> bytes:
    """``head`` + newline-terminated comment lines filling ``size`` bytes + ``tail``."""
    start = head.encode()
    room = size - len(start)
    line = b"#" + b"x" * 98 + b"\n"  # 100 bytes
    filler = line * (room // len(line))
    rest = room - len(filler)
    if rest:
        filler += b"#" * (rest - 1) + b"\n"
    return start + filler + tail.encode()


async def test_body_truncated_at_max_bytes(
    server: Server, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """600 KiB body: parsing stops at 512,000 bytes; a Disallow after it is ignored."""
    body = padded("User-agent: *\nDisallow: /early\n", 600 * 1024 - 100, "Disallow: /late\n")
    assert len(body) > 600 * 1000
    server.text("/robots.txt", body)
    checker = make_checker()
    late = await checker.explain(server.url("/late"))
    assert late.allowed
    assert not await checker.allowed(server.url("/early"))
    assert late.outcome.truncated
    assert late.outcome.bytes_read == LIMIT
    assert late.source == "fetched"


async def test_body_of_exactly_max_bytes_is_whole(
    server: Server, make_fetcher: Callable[..., ra.AiohttpFetcher]
) -> None:
    """A body of exactly 512,000 bytes is not truncated; its last line counts."""
    tail = "Disallow: /last\n"
    body = padded("User-agent: *\n", LIMIT - len(tail), tail)
    assert len(body) == LIMIT
    server.text("/robots.txt", body)
    outcome = await make_fetcher().fetch(server.url("/robots.txt"))
    assert not outcome.truncated
    assert outcome.bytes_read == LIMIT
    assert outcome.robots is not None
    assert not outcome.robots.allowed("/last", robots_token=TOKEN)


async def test_keep_body_is_capped(
    server: Server, make_fetcher: Callable[..., ra.AiohttpFetcher]
) -> None:
    """keep_body=True returns the raw body, at most max_bytes of it."""
    body = padded("User-agent: *\n", 700_000, "")
    server.text("/robots.txt", body)
    outcome = await make_fetcher().fetch(server.url("/robots.txt"), keep_body=True)
    assert outcome.body == body[:LIMIT]
    small = await make_fetcher().fetch(server.url("/robots.txt"))
    assert small.body is None


async def test_gzip_bomb_stops_at_limit(
    server: Server, make_fetcher: Callable[..., ra.AiohttpFetcher], gzip_bomb: bytes
) -> None:
    """A 64 MiB gzip bomb is decoded only up to 512,000 bytes, quickly."""
    server.text("/robots.txt", gzip_bomb, headers={"Content-Encoding": "gzip"})
    loop = asyncio.get_running_loop()
    started = loop.time()
    outcome = await make_fetcher().fetch(server.url("/robots.txt"))
    assert loop.time() - started < 5.0
    assert outcome.error is None
    assert outcome.truncated
    assert outcome.bytes_read == LIMIT


@pytest.mark.parametrize(
    ("encoding", "compress"),
    [("br", brotli.compress), ("deflate", zlib.compress), ("gzip", None)],
)
async def test_compressed_bodies_are_decoded(
    server: Server,
    make_fetcher: Callable[..., ra.AiohttpFetcher],
    encoding: str,
    compress: Callable[[bytes], bytes] | None,
) -> None:
    """brotli, deflate and gzip bodies are decoded before parsing."""
    raw = RULES.encode()
    data = compress(raw) if compress else gzip.compress(raw)
    server.text("/robots.txt", data, headers={"Content-Encoding": encoding})
    outcome = await make_fetcher().fetch(server.url("/robots.txt"), keep_body=True)
    assert outcome.error is None
    assert outcome.body == raw
    assert outcome.bytes_read == len(raw)
    assert outcome.robots is not None
    assert not outcome.robots.allowed("/private", robots_token=TOKEN)


async def test_brotli_bomb_stops_at_limit(
    server: Server, make_fetcher: Callable[..., ra.AiohttpFetcher]
) -> None:
    """The decoded-bytes limit holds for brotli too."""
    data = brotli.compress(b"a" * 8 * 1024 * 1024)
    server.text("/robots.txt", data, headers={"Content-Encoding": "br"})
    outcome = await make_fetcher().fetch(server.url("/robots.txt"))
    assert outcome.truncated
    assert outcome.bytes_read == LIMIT


async def test_bad_gzip_is_protocol_error(
    server: Server, make_fetcher: Callable[..., ra.AiohttpFetcher]
) -> None:
    """A body that claims gzip but is not: error "protocol", nothing raised."""
    server.text("/robots.txt", b"User-agent: *\nAllow: /\n", headers={"Content-Encoding": "gzip"})
    outcome = await make_fetcher().fetch(server.url("/robots.txt"))
    assert outcome.error == "protocol"
    assert outcome.category == "unreachable"


# --- headers and metadata -----------------------------------------------------------------


async def test_robots_request_carries_user_agent(
    server: Server, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """The robots.txt request is sent with the crawler's User-Agent header."""
    server.text("/robots.txt", RULES)
    checker = make_checker()
    await checker.allowed(server.url("/page"))
    assert [h.headers.get("User-Agent") for h in server.hits] == [USER_AGENT]


async def test_extra_headers_are_sent_but_user_agent_wins(
    server: Server,
) -> None:
    """Extra headers go out with every hop; the user_agent argument is the User-Agent."""
    server.redirect("/robots.txt", "/final.txt")
    server.text("/final.txt", RULES)
    fetcher = ra.AiohttpFetcher(
        user_agent=USER_AGENT, headers={"X-Test": "1", "User-Agent": "Other/2.0"}
    )
    try:
        await fetcher.fetch(server.url("/robots.txt"))
    finally:
        await fetcher.aclose()
    assert len(server.hits) == 2
    for hit in server.hits:
        assert hit.headers.get("User-Agent") == USER_AGENT
        assert hit.headers.get("X-Test") == "1"


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("max-age=120", 120.0),
        ("public, s-maxage=30, max-age=120", 30.0),
        ("no-store", 0.0),
        ("no-cache, max-age=600", 0.0),
        ("private", None),
        # A field-scoped no-cache restricts that field only (RFC 9111 §5.2.2.4).
        ('no-cache="Set-Cookie", max-age=3600', 3600.0),
        ('private="Set-Cookie, X-A", max-age=7', 7.0),
        ("max-age=" + "9" * 400, 2.0**31),
    ],
)
async def test_cache_control_max_age(
    server: Server, make_fetcher: Callable[..., ra.AiohttpFetcher], header: str, expected: float
) -> None:
    """Cache-Control: s-maxage wins over max-age; no-store/no-cache mean 0; huge
    values saturate at 2**31 (RFC 9111 §1.2.2)."""
    server.text("/robots.txt", RULES, headers={"Cache-Control": header})
    outcome = await make_fetcher().fetch(server.url("/robots.txt"))
    assert outcome.max_age == expected


async def test_retry_after_delta_and_date(
    server: Server, make_fetcher: Callable[..., ra.AiohttpFetcher]
) -> None:
    """Retry-After is read as delta-seconds or as an HTTP date (seconds from now)."""
    server.text("/robots.txt", status=503, headers={"Retry-After": "120"})
    server.text(
        "/date.txt",
        status=503,
        headers={"Retry-After": formatdate(time.time() + 3600, usegmt=True)},
    )
    fetcher = make_fetcher()
    delta = await fetcher.fetch(server.url("/robots.txt"))
    date = await fetcher.fetch(server.url("/date.txt"))
    assert delta.retry_after == 120.0
    assert date.retry_after is not None
    assert 3500 < date.retry_after <= 3600


async def test_fetcher_owned_session_closed_and_reused(server: Server) -> None:
    """The fetcher creates one session, reuses it, and refuses to fetch after aclose."""
    server.text("/robots.txt", RULES)
    fetcher = ra.AiohttpFetcher(user_agent=USER_AGENT)
    await fetcher.fetch(server.url("/robots.txt"))
    session = fetcher._session
    await fetcher.fetch(server.url("/robots.txt"))
    assert fetcher._session is session
    await fetcher.aclose()
    assert session is not None
    assert session.closed
    with pytest.raises(ra.ClosedError):
        await fetcher.fetch(server.url("/robots.txt"))


async def test_fetcher_on_a_closed_session_of_yours_raises_closed_error(server: Server) -> None:
    """A session of the caller's closed before a fetch (its ``async with`` ended first)
    is a ClosedError, a RobotsError, naming the session; aiohttp's bare RuntimeError
    ("Session is closed") reached the checker's caller untyped."""
    server.text("/robots.txt", RULES)
    async with aiohttp.ClientSession() as session:
        fetcher = ra.AiohttpFetcher(session, user_agent=USER_AGENT)
    with pytest.raises(ra.ClosedError, match="session"):
        await fetcher.fetch(server.url("/robots.txt"))
    checker = ra.RobotsChecker(USER_AGENT, fetcher=fetcher)
    try:
        with pytest.raises(ra.ClosedError, match="session"):
            await checker.allowed(server.url("/page"))
    finally:
        await checker.aclose()
    assert server.count() == 0


@pytest.mark.parametrize("status", [404, 410])
async def test_a_session_that_raises_for_status_still_reads_4xx_as_allow_all(
    server: Server, status: int
) -> None:
    """A caller's ``ClientSession(raise_for_status=True)`` (a common setting) must not
    turn a 4xx into an exception: 404 is "no robots.txt", allow all (RFC 9309
    §2.3.1.3). The ClientResponseError it raised was read as a protocol error:
    unreachable, every page of every site without robots.txt disallowed."""
    server.text("/robots.txt", "User-agent: *\nDisallow: /\n", status=status)
    async with aiohttp.ClientSession(raise_for_status=True) as session:
        fetcher = ra.AiohttpFetcher(session, user_agent=USER_AGENT)
        outcome = await fetcher.fetch(server.url("/robots.txt"))
        checker = ra.RobotsChecker(USER_AGENT, session=session)
        try:
            allowed = await checker.allowed(server.url("/page"))
        finally:
            await checker.aclose()
    assert (outcome.status, outcome.error, outcome.category) == (status, None, "unavailable")
    assert allowed


async def test_fetcher_leaves_given_session_open(server: Server) -> None:
    """A session passed in is used but not closed by aclose()."""
    server.text("/robots.txt", RULES)
    async with aiohttp.ClientSession() as session:
        fetcher = ra.AiohttpFetcher(session, user_agent=USER_AGENT)
        outcome = await fetcher.fetch(server.url("/robots.txt"))
        await fetcher.aclose()
        assert outcome.status == 200
        assert not session.closed
