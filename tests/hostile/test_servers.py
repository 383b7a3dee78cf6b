"""Hostile servers: whatever a server does, a check is answered in bounded time and
memory, an error never fails open, and a second check within the TTL sends nothing."""

from __future__ import annotations

import asyncio
import ipaddress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import aiohttp
import pytest

import robots_async as ra
from robots_async.fetch.addresses import is_public as ra_is_public

from .conftest import (
    BOMB_SIZE,
    DRIBBLE,
    LIMIT,
    MIB,
    USER_AGENT,
    HostileServer,
    Measured,
    measured,
    policy,
    response_head,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

    from .conftest import After

    MakeChecker = Callable[..., ra.RobotsChecker]

#: Generous slack on top of a configured timeout: "must not hang", not a benchmark.
SLACK = 2.0
#: tracemalloc peak allowed for one check against a hostile server.
MEMORY_MIB = 20.0
RULES = b"User-agent: *\nDisallow: /private\n"


async def first_check(checker: ra.RobotsChecker, url: str) -> Measured[ra.Decision]:
    """``checker.explain(url)`` on an empty cache, timed and memory-traced."""
    return await measured(checker.explain(url))


async def assert_fails_closed(
    checker: ra.RobotsChecker,
    server: HostileServer | None,
    first: ra.Decision,
    *,
    error: str | set[str],
) -> None:
    """Unreachable with ``error``, disallowed, and the next check is cached (no request)."""
    kinds = {error} if isinstance(error, str) else error
    outcome = first.outcome
    assert outcome.error in kinds, (outcome.error, outcome.error_detail)
    assert outcome.category == "unreachable"
    assert first.source == "unreachable"
    assert not first.allowed
    connections = server.connections if server is not None else 0
    again = await measured(checker.explain(first.url.replace("/page", "/other")))
    assert not again.value.allowed
    assert again.value.from_cache
    assert again.seconds < 1.0
    assert checker.stats.cache.fetches == 1
    if server is not None:
        assert server.connections == connections


# --- timeouts ---------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["head", "body"])
async def test_slowloris_times_out_and_disallows(
    hostile: HostileServer, make_checker: MakeChecker, where: str
) -> None:
    """A byte every 0.3 s (in the head or the body) ends at total_timeout: disallow all."""
    if where == "head":
        hostile.dribble("/robots.txt", DRIBBLE, 0.3)
    else:
        hostile.dribble("/robots.txt", RULES * 100, 0.3, head=response_head(length=3300))
    checker = make_checker(total=2.0)
    first = await first_check(checker, hostile.url("/page"))
    assert first.seconds <= 2.0 + SLACK
    assert hostile.sent["/robots.txt"] >= 3  # it really was dribbling
    await assert_fails_closed(checker, hostile, first.value, error="timeout")


async def test_server_that_never_answers_times_out(
    hostile: HostileServer, make_checker: MakeChecker
) -> None:
    """Accepting and never answering ends at total_timeout: timeout, disallow all."""
    hostile.hang("/robots.txt")
    checker = make_checker(total=1.5)
    first = await first_check(checker, hostile.url("/page"))
    assert first.seconds <= 1.5 + SLACK
    assert hostile.requests["/robots.txt"] == 1
    await assert_fails_closed(checker, hostile, first.value, error="timeout")


# --- bodies that never end or expand ------------------------------------------------------


async def test_endless_body_is_cut_at_the_limit(
    hostile: HostileServer, make_checker: MakeChecker
) -> None:
    """A body streamed forever: parsing stops at 512,000 bytes and the connection drops."""
    hostile.stream("/robots.txt", RULES + b"# filler line to make the body endless\n" * 1000)
    checker = make_checker(total=10.0)
    first = await first_check(checker, hostile.url("/private/x"))
    decision = first.value
    assert decision.outcome.error is None
    assert decision.outcome.category == "ok"
    assert decision.outcome.truncated
    assert decision.outcome.bytes_read == LIMIT
    assert not decision.allowed  # the rules before the cut apply
    assert await checker.allowed(hostile.url("/public"))
    assert first.seconds <= 10.0 + SLACK
    assert first.peak_mib < MEMORY_MIB
    # The client hung up: the server's writes fail soon after, long before "forever".
    await asyncio.wait_for(hostile.ended("/robots.txt").wait(), 5.0)
    assert hostile.sent["/robots.txt"] < 64 * MIB


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br"])
async def test_decompression_bomb_is_cut_at_the_limit(
    hostile: HostileServer, make_checker: MakeChecker, bombs: dict[str, bytes], encoding: str
) -> None:
    """A 64 MiB bomb is decoded only up to 512,000 bytes, in bounded memory."""
    body = bombs[encoding]
    assert len(body) < BOMB_SIZE // 100
    hostile.respond("/robots.txt", body, headers={"Content-Encoding": encoding})
    checker = make_checker(total=10.0)
    first = await first_check(checker, hostile.url("/private/x"))
    outcome = first.value.outcome
    assert outcome.error is None, outcome.error_detail
    assert outcome.category == "ok"
    assert outcome.truncated
    assert outcome.bytes_read == LIMIT
    assert not first.value.allowed
    assert await checker.allowed(hostile.url("/public"))
    assert first.seconds <= 10.0 + SLACK
    assert first.peak_mib < MEMORY_MIB


async def test_100_mb_single_line_is_bounded(
    hostile: HostileServer, make_checker: MakeChecker
) -> None:
    """100 MB without a newline: truncated, no rules, memory bounded by the line cap."""
    hostile.stream("/robots.txt", b"A" * 65_536, total=100_000_000)
    checker = make_checker(total=20.0)
    first = await first_check(checker, hostile.url("/page"))
    outcome = first.value.outcome
    assert outcome.error is None
    assert outcome.truncated
    assert outcome.bytes_read == LIMIT
    assert outcome.robots is not None
    assert outcome.robots.groups == ()
    codes = {w.code for w in outcome.robots.warnings}
    assert {"truncated", "truncated-line"} <= codes
    assert first.value.allowed  # a file without rules allows all
    assert first.seconds <= 20.0 + SLACK
    assert first.peak_mib < MEMORY_MIB
    await asyncio.wait_for(hostile.ended("/robots.txt").wait(), 5.0)
    assert hostile.sent["/robots.txt"] < 100_000_000


# --- bodies that end wrongly -------------------------------------------------------------


async def test_content_length_longer_than_body(
    hostile: HostileServer, make_checker: MakeChecker
) -> None:
    """Content-Length 1000, 10 bytes sent, connection closed: reset, disallow all."""
    hostile.raw("/robots.txt", response_head(length=1000) + b"User-agen\n")
    checker = make_checker()
    first = await first_check(checker, hostile.url("/page"))
    assert first.seconds <= 3.0 + SLACK
    await assert_fails_closed(checker, hostile, first.value, error="reset")


async def test_content_length_shorter_than_body(
    hostile: HostileServer, make_checker: MakeChecker
) -> None:
    """Content-Length 10, 1000 bytes sent: a "protocol" error (disallow), or <= 10 bytes."""
    # Observed with aiohttp 3.14: its parser rejects the excess ("Data after
    # `Connection: close`"), so the fetch is a "protocol" error and the origin is
    # disallowed. Should aiohttp stop at the 10 declared bytes instead, at most those
    # 10 bytes may be parsed.
    hostile.raw("/robots.txt", response_head(length=10) + b"Disallow: /x\n" * 77)
    checker = make_checker()
    first = await first_check(checker, hostile.url("/page"))
    outcome = first.value.outcome
    assert first.seconds <= 3.0 + SLACK
    if outcome.error is None:
        assert outcome.category == "ok"
        assert outcome.bytes_read <= 10
        assert outcome.robots is not None
        assert outcome.robots.groups == ()
    else:
        await assert_fails_closed(checker, hostile, first.value, error={"protocol", "reset"})


@pytest.mark.parametrize("then", ["reset", "half-close"])
async def test_connection_cut_mid_body(
    hostile: HostileServer, make_checker: MakeChecker, then: After
) -> None:
    """An RST, or a shutdown of the write side, mid-body: reset, disallow all."""
    hostile.raw("/robots.txt", response_head(length=1000) + b"User-agent: *\nAllow: /\n", then)
    checker = make_checker()
    first = await first_check(checker, hostile.url("/page"))
    assert first.seconds <= 3.0 + SLACK
    await assert_fails_closed(checker, hostile, first.value, error="reset")


@pytest.mark.parametrize("then", ["reset", "close"])
async def test_connection_dropped_before_the_response(
    hostile: HostileServer, make_checker: MakeChecker, then: After
) -> None:
    """Dropped before any response byte: reset, disallow all, exactly one request."""
    # aiohttp (3.14 here) retries an idempotent request once on such a disconnect, even
    # on a fresh connection: a second robots.txt request nobody asked for.
    hostile.raw("/robots.txt", b"", then)
    checker = make_checker()
    first = await first_check(checker, hostile.url("/page"))
    assert first.seconds <= 3.0 + SLACK
    await assert_fails_closed(checker, hostile, first.value, error="reset")
    assert hostile.requests["/robots.txt"] == 1, "robots.txt requested more than once"


@pytest.mark.parametrize("size_line", [b"zz", b"-5", b"5;\x00", b"ffffffffffffffffffff"])
async def test_broken_chunked_encoding(
    hostile: HostileServer, make_checker: MakeChecker, size_line: bytes
) -> None:
    """An invalid chunk size: protocol (or reset) error, disallow all."""
    head = response_head(headers={"Transfer-Encoding": "chunked"})
    body = b"e\r\nUser-agent: *\n\r\n" + size_line + b"\r\nAllow: /\r\n0\r\n\r\n"
    hostile.raw("/robots.txt", head + body)
    checker = make_checker()
    first = await first_check(checker, hostile.url("/page"))
    assert first.seconds <= 3.0 + SLACK
    await assert_fails_closed(checker, hostile, first.value, error={"protocol", "reset"})


# --- redirects ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "location",
    [
        "file:///etc/passwd",
        "ftp://127.0.0.1/robots.txt",
        "data:text/plain,User-agent: *%0ADisallow: /",
        "javascript:alert(1)",
        "http:///x",
        "http://[::1",
    ],
)
async def test_bad_redirect_target_allows_all(
    hostile: HostileServer, make_checker: MakeChecker, location: str
) -> None:
    """A Location with another scheme, no host or a broken host: bad-redirect, allow all."""
    hostile.redirect("/robots.txt", location)
    hostile.respond("/x", b"User-agent: *\nDisallow: /\n")
    checker = make_checker()
    first = await first_check(checker, hostile.url("/page"))
    outcome = first.value.outcome
    assert first.seconds <= 3.0 + SLACK
    assert (outcome.error, outcome.category) == ("bad-redirect", "unavailable"), (
        outcome.error,
        outcome.status,
        outcome.final_url,
        outcome.error_detail,
    )
    assert first.value.allowed
    assert first.value.source == "unavailable"
    assert dict(hostile.requests) == {"/robots.txt": 1}
    assert await checker.allowed(hostile.url("/other"))
    assert hostile.connections == 1


async def test_redirect_to_itself_is_a_loop(
    hostile: HostileServer, make_checker: MakeChecker
) -> None:
    """A 301 to the same URL: redirect-loop after one request, allow all."""
    hostile.redirect("/robots.txt", hostile.url("/robots.txt"))
    checker = make_checker()
    first = await first_check(checker, hostile.url("/page"))
    outcome = first.value.outcome
    assert (outcome.error, outcome.category) == ("redirect-loop", "unavailable")
    assert first.value.allowed
    assert hostile.requests["/robots.txt"] == 1
    assert first.seconds <= 3.0 + SLACK


async def test_100_kb_location_header(hostile: HostileServer, make_checker: MakeChecker) -> None:
    """A 100 KB Location header: aiohttp refuses the header line, "protocol", disallow all."""
    hostile.redirect("/robots.txt", "/" + "a" * 100_000)
    checker = make_checker()
    first = await first_check(checker, hostile.url("/page"))
    assert first.seconds <= 3.0 + SLACK
    assert first.peak_mib < MEMORY_MIB
    await assert_fails_closed(checker, hostile, first.value, error="protocol")


# --- transport failures ------------------------------------------------------------------


async def test_tls_to_a_plain_http_port(hostile: HostileServer, make_checker: MakeChecker) -> None:
    """https:// to a plain-HTTP port: a TLS (or reset/protocol) error, disallow all."""
    checker = make_checker()
    first = await first_check(checker, f"https://127.0.0.1:{hostile.port}/page")
    assert first.seconds <= 3.0 + SLACK
    assert hostile.requests["<tls>"] == 1  # the handshake reached the server
    await assert_fails_closed(checker, hostile, first.value, error={"tls", "reset", "protocol"})


async def test_dns_failure(make_checker: MakeChecker) -> None:
    """A name under .invalid does not resolve: dns, disallow all, cached."""
    checker = make_checker(total=5.0)
    first = await first_check(checker, "http://no-such-host.invalid/page")
    assert first.seconds <= 5.0 + SLACK
    await assert_fails_closed(checker, None, first.value, error="dns")


# --- SSRF guard --------------------------------------------------------------------------


@dataclass
class Traced:
    """An aiohttp session and the URL of every request it started."""

    session: aiohttp.ClientSession
    started: list[str] = field(default_factory=list)


@pytest.fixture
async def traced() -> AsyncIterator[Traced]:
    """An aiohttp session that records the URL of every request it starts."""
    started: list[str] = []

    async def on_request_start(
        _: aiohttp.ClientSession, __: Any, params: aiohttp.TraceRequestStartParams
    ) -> None:
        started.append(str(params.url))

    trace = aiohttp.TraceConfig()
    trace.on_request_start.append(on_request_start)
    async with aiohttp.ClientSession(trace_configs=[trace]) as session:
        yield Traced(session, started)


@pytest.mark.parametrize(
    "target",
    [
        "http://[::1]/robots.txt",
        "http://10.0.0.1/robots.txt",
        "http://169.254.169.254/latest/meta-data/",
        "http://192.168.1.1/robots.txt",
        "http://100.100.100.200/latest/meta-data/",
    ],
)
async def test_private_redirect_is_blocked_before_connecting(
    make_hostile: Callable[[], Awaitable[HostileServer]],
    traced: Traced,
    target: str,
) -> None:
    """The SSRF guard (default) with a caller's session: blocked-redirect, no request to
    the private target. The entry on 127.0.0.1 is declared public for the test; a
    loopback target (then "public" too) is covered by tests/fetch/test_ssrf.py."""
    entry = await make_hostile()
    entry.redirect("/robots.txt", target)
    loopback = ipaddress.ip_address("127.0.0.1")
    fetcher = ra.AiohttpFetcher(
        traced.session,
        user_agent=USER_AGENT,
        policy=policy(10.0, 5.0),
        public_address=lambda address: address == loopback or ra_is_public(address),
    )
    checker = ra.RobotsChecker(USER_AGENT, fetcher=fetcher)
    try:
        first = await first_check(checker, entry.url("/page"))
        assert first.value.outcome.error == "blocked-redirect"
        assert first.seconds < 2.0  # well below connect_timeout: nothing was attempted
        assert traced.started == [entry.url("/robots.txt")]
        await assert_fails_closed(checker, entry, first.value, error="blocked-redirect")
        assert traced.started == [entry.url("/robots.txt")]
    finally:
        await checker.aclose()
        await fetcher.aclose()


async def test_loopback_redirect_is_followed_without_the_guard(
    make_hostile: Callable[[], Awaitable[HostileServer]], make_checker: MakeChecker
) -> None:
    """A loopback origin may redirect to a loopback address (the guard only stops a
    public address redirecting into non-public space)."""
    entry = await make_hostile()
    target = await make_hostile()
    target.respond("/robots.txt", RULES)
    entry.redirect("/robots.txt", target.url("/robots.txt"))
    checker = make_checker()
    first = await first_check(checker, entry.url("/private/x"))
    assert first.value.outcome.error is None
    assert first.value.outcome.hops == 1
    assert not first.value.allowed  # the target's rules apply to the entry origin
    assert target.requests["/robots.txt"] == 1
    assert (await checker.explain(entry.url("/public"))).verdict.allowed
