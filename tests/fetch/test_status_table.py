"""RFC 9309 §2.3.1 status table end to end: real server -> fetcher -> policy -> verdict."""

from __future__ import annotations

import asyncio
import socket
import struct
from typing import TYPE_CHECKING

import pytest
from aiohttp import web

import robots_async as ra

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from .conftest import Server

RULES = "User-agent: *\nDisallow: /private\n"
# Served with error statuses: must never be parsed.
BLOCK_ALL = "User-agent: *\nDisallow: /\n"
ALLOW_ALL = "User-agent: *\nAllow: /\n"


@pytest.mark.parametrize("status", [200, 201, 203])
async def test_2xx_body_is_parsed(
    server: Server, make_checker: Callable[..., ra.RobotsChecker], status: int
) -> None:
    """A 2xx response's body is parsed and its rules decide (source "fetched")."""
    server.text("/robots.txt", RULES, status=status)
    checker = make_checker()
    private = await checker.explain(server.url("/private/x"))
    public = await checker.explain(server.url("/public"))
    assert not private.allowed
    assert public.allowed
    assert private.source == "fetched"
    assert private.status == status
    assert private.outcome.category == "ok"
    assert private.outcome.error is None


async def test_204_empty_body_allows_all(
    server: Server, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """204 No Content is a 2xx with an empty file: everything allowed, source "fetched"."""
    server.text("/robots.txt", status=204)
    checker = make_checker()
    decision = await checker.explain(server.url("/anything"))
    assert decision.allowed
    assert decision.source == "fetched"
    assert decision.status == 204


async def test_unasked_206_is_part_of_a_file_never_its_rules(
    server: Server, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """206 Partial Content to a request without Range (none is sent) is part of the
    file (RFC 9110 §15.3.7), as tdmrep.json already reads it: its rules are not the
    file's. Parsed as the whole file, the part before ``Disallow: /private`` allowed
    everything; it is unreachable instead (the last good copy or disallow all)."""
    part = RULES[:14]  # "User-agent: *\n": the Disallow line is in the part not sent
    server.text(
        "/robots.txt",
        part,
        status=206,
        headers={"Content-Range": f"bytes 0-{len(part) - 1}/{len(RULES)}"},
    )
    checker = make_checker()
    decision = await checker.explain(server.url("/private"))
    assert not decision.allowed
    assert decision.source == "unreachable"
    assert decision.status == 206
    assert decision.outcome.category == "unreachable"


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
async def test_redirect_statuses_are_followed(
    server: Server, make_checker: Callable[..., ra.RobotsChecker], status: int
) -> None:
    """301/302/303/307/308 are followed and the target's rules apply."""
    server.redirect("/robots.txt", "/moved.txt", status=status)
    server.text("/moved.txt", RULES)
    checker = make_checker()
    decision = await checker.explain(server.url("/private"))
    assert not decision.allowed
    assert decision.source == "fetched"
    assert decision.outcome.hops == 1
    assert decision.outcome.final_url == server.url("/moved.txt")
    assert decision.outcome.url == server.url("/robots.txt")
    assert server.count("/moved.txt") == 1


@pytest.mark.parametrize("status", [400, 401, 403, 404, 410])
async def test_4xx_allows_all(
    server: Server, make_checker: Callable[..., ra.RobotsChecker], status: int
) -> None:
    """4xx (but 429) means unavailable: allow all, and the error body is not parsed."""
    server.text("/robots.txt", BLOCK_ALL, status=status)
    checker = make_checker()
    decision = await checker.explain(server.url("/private"))
    assert decision.allowed
    assert decision.source == "unavailable"
    assert decision.status == status
    assert decision.outcome.category == "unavailable"


@pytest.mark.parametrize("status", [401, 403])
async def test_forbidden_disallow_option(
    server: Server, make_checker: Callable[..., ra.RobotsChecker], status: int
) -> None:
    """With forbidden="disallow", 401 and 403 disallow all."""
    server.text("/robots.txt", ALLOW_ALL, status=status)
    checker = make_checker(fetch_policy=ra.FetchPolicy.rfc9309(forbidden="disallow"))
    decision = await checker.explain(server.url("/page"))
    assert not decision.allowed
    assert decision.source == "unavailable"


async def test_forbidden_disallow_leaves_404_alone(
    server: Server, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """forbidden="disallow" only affects 401/403: a 404 still allows all."""
    server.text("/robots.txt", status=404)
    checker = make_checker(fetch_policy=ra.FetchPolicy.rfc9309(forbidden="disallow"))
    assert await checker.allowed(server.url("/page"))


@pytest.mark.parametrize("status", [429, 500, 502, 503, 504])
async def test_429_and_5xx_disallow_all(
    server: Server, make_checker: Callable[..., ra.RobotsChecker], status: int
) -> None:
    """429 and 5xx mean unreachable: disallow all, and the error body is not parsed."""
    server.text("/robots.txt", ALLOW_ALL, status=status)
    checker = make_checker()
    decision = await checker.explain(server.url("/page"))
    assert not decision.allowed
    assert decision.source == "unreachable"
    assert decision.status == status
    assert decision.outcome.category == "unreachable"
    assert checker.stats.cache.errors == 1


async def test_timeout_disallows_all(
    server: Server, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """A server slower than total_timeout gives error "timeout" quickly: disallow all."""
    server.text("/robots.txt", ALLOW_ALL, delay=10.0)
    checker = make_checker(fetch_policy=ra.FetchPolicy.rfc9309(total_timeout=0.5))
    loop = asyncio.get_running_loop()
    started = loop.time()
    decision = await checker.explain(server.url("/page"))
    assert loop.time() - started < 5.0
    assert decision.outcome.error == "timeout"
    assert decision.outcome.elapsed < 5.0
    assert not decision.allowed
    assert decision.source == "unreachable"


async def test_timeout_while_body_trickles(
    server: Server, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """The total deadline covers the body: headers on time, body too slow -> "timeout"."""

    async def trickle(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        await response.prepare(request)
        await response.write(b"User-agent: *\n")
        await asyncio.sleep(10.0)
        await response.write(b"Allow: /\n")
        return response

    server.route("/robots.txt", trickle)
    checker = make_checker(fetch_policy=ra.FetchPolicy.rfc9309(total_timeout=0.5))
    loop = asyncio.get_running_loop()
    started = loop.time()
    decision = await checker.explain(server.url("/page"))
    assert loop.time() - started < 5.0
    assert decision.outcome.error == "timeout"
    assert not decision.allowed


async def test_dns_failure_disallows_all(make_checker: Callable[..., ra.RobotsChecker]) -> None:
    """A host under the reserved .invalid TLD does not resolve: error "dns", disallow all."""
    checker = make_checker(fetch_policy=ra.FetchPolicy.rfc9309(total_timeout=10.0))
    decision = await checker.explain("http://robots-async-pipeline.invalid/page")
    assert decision.outcome.error == "dns"
    assert decision.status is None
    assert not decision.allowed
    assert decision.source == "unreachable"


async def test_connection_refused_disallows_all(
    make_checker: Callable[..., ra.RobotsChecker], free_port: int
) -> None:
    """Nobody listening on the port: error "connect", disallow all."""
    checker = make_checker()
    decision = await checker.explain(f"http://127.0.0.1:{free_port}/page")
    assert decision.outcome.error == "connect"
    assert not decision.allowed
    assert decision.source == "unreachable"


async def test_tls_failure_disallows_all(
    server: Server, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """https:// to a plain-HTTP port fails the TLS handshake: error "tls", disallow all."""
    server.text("/robots.txt", ALLOW_ALL)
    checker = make_checker(fetch_policy=ra.FetchPolicy.rfc9309(total_timeout=5.0))
    decision = await checker.explain(f"https://127.0.0.1:{server.ports[0]}/page")
    assert decision.outcome.error == "tls"
    assert not decision.allowed
    assert decision.source == "unreachable"


async def test_reset_mid_body_disallows_all(
    raw_server: Callable[[bytes], Awaitable[str]], make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """Content-Length 1000 but 10 bytes then close: error "reset", partial body unused."""
    base = await raw_server(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nUser-agent")
    checker = make_checker()
    decision = await checker.explain(base + "/page")
    assert decision.outcome.error == "reset"
    assert decision.outcome.robots is None
    assert not decision.allowed
    assert decision.source == "unreachable"


@pytest.mark.parametrize("version", ["1.1", "1.0"])
async def test_reset_mid_close_delimited_body_disallows_all(
    make_checker: Callable[..., ra.RobotsChecker], version: str
) -> None:
    """A body without Content-Length or chunking ends when the connection does: a
    clean close (FIN) ends it, a reset (RST) cuts it, an interrupted connection
    (RFC 9309 §2.3.1.4, Google: unreachable). aiohttp ends the body either way, and
    the part before the reset was parsed as the whole file: ``User-agent: *`` without
    the Disallow line still to come allowed ``/private``."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(f"HTTP/{version} 200 OK\r\n\r\nUser-agent: *\n".encode())
        await writer.drain()
        await asyncio.sleep(0.1)  # the part arrives, then the reset
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()  # SO_LINGER 0: the close sends RST, not FIN

    listener = await asyncio.start_server(handle, "127.0.0.1", 0)
    try:
        port = listener.sockets[0].getsockname()[1]
        decision = await make_checker().explain(f"http://127.0.0.1:{port}/private")
    finally:
        listener.close()
    assert decision.outcome.error == "reset"
    assert decision.outcome.robots is None
    assert not decision.allowed
    assert decision.source == "unreachable"


async def test_clean_close_ends_a_close_delimited_body(
    raw_server: Callable[[bytes], Awaitable[str]], make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """The same body ended by a clean close (FIN) is the whole file: its rules apply."""
    base = await raw_server(b"HTTP/1.1 200 OK\r\n\r\n" + RULES.encode())
    decision = await make_checker().explain(base + "/private")
    assert (decision.outcome.error, decision.source) == (None, "fetched")
    assert not decision.allowed


@pytest.mark.parametrize(
    "payload",
    [
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\nAllow: /\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nAllow: /\r\n0\r\n\r\n",
    ],
    ids=["bad-chunk-size", "chunk-longer-than-declared"],
)
async def test_broken_chunked_encoding_disallows_all(
    raw_server: Callable[[bytes], Awaitable[str]],
    make_checker: Callable[..., ra.RobotsChecker],
    payload: bytes,
) -> None:
    """Malformed chunked framing: error "protocol", disallow all."""
    base = await raw_server(payload)
    checker = make_checker()
    decision = await checker.explain(base + "/page")
    assert decision.outcome.error == "protocol"
    assert not decision.allowed
    assert decision.source == "unreachable"


async def test_chunked_body_cut_short_is_reset(
    raw_server: Callable[[bytes], Awaitable[str]], make_fetcher: Callable[..., ra.AiohttpFetcher]
) -> None:
    """A chunk announced but cut off by the close is a "reset", not a success."""
    base = await raw_server(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n40\r\nUser-agent: *\n"
    )
    outcome = await make_fetcher().fetch(base + "/robots.txt")
    assert outcome.error == "reset"
    assert outcome.category == "unreachable"


async def test_garbage_status_line_is_protocol_error(
    raw_server: Callable[[bytes], Awaitable[str]], make_fetcher: Callable[..., ra.AiohttpFetcher]
) -> None:
    """A response that is not HTTP at all: error "protocol", never raised."""
    base = await raw_server(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")
    outcome = await make_fetcher().fetch(base + "/robots.txt")
    assert outcome.error == "protocol"
    assert outcome.status is None
    assert outcome.category == "unreachable"
