"""Stacked and unusual content codings: decoded in order, or the fetch fails closed;
compressed bytes are never parsed as robots.txt text (issue 26, item 6)."""

from __future__ import annotations

import asyncio
import gzip
import random
import time
import zlib
from typing import TYPE_CHECKING

import pytest
from aiohttp import web
from multidict import CIMultiDict

from robots_async.fetch.codings import StackDecoder, plan

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    import robots_async as ra

    from .conftest import Server

RULES = b"User-agent: *\nDisallow: /private\n"
LIMIT = 512_000


def deflate(data: bytes) -> bytes:
    """zlib-wrapped deflate (RFC 9110 §8.4.1.2)."""
    return zlib.compress(data)


def raw_deflate(data: bytes) -> bytes:
    """Raw deflate without the zlib wrapper, as many servers send it."""
    packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


@pytest.mark.parametrize(
    ("values", "action", "codings"),
    [
        ([], "as-is", ()),
        (["identity"], "as-is", ()),
        (["gzip"], "as-is", ()),  # aiohttp decodes a single known coding itself
        (["br"], "as-is", ()),
        (["gzip, deflate"], "decode", ("gzip", "deflate")),
        (["GZIP , Deflate"], "decode", ("gzip", "deflate")),
        (["x-gzip"], "decode", ("x-gzip",)),
        (["gzip, identity"], "decode", ("gzip",)),
        (["gzip", "deflate"], "refuse", ("gzip", "deflate")),  # aiohttp undid gzip first
        (["compress"], "refuse", ("compress",)),
        (["xz"], "refuse", ("xz",)),  # a compression, not a mislabel
        (["aes128gcm"], "refuse", ("aes128gcm",)),  # RFC 8188: encrypted
        (["BZIP2"], "refuse", ("bzip2",)),
        (["gzip, br"], "decode", ("gzip", "br")),
        (["x-custom, gzip"], "refuse", ("x-custom", "gzip")),
        (["utf-8"], "as-is", ()),  # a mislabelled plain body
        (["latin-1"], "as-is", ()),
        (["gzip;q=1"], "decode", ("gzip",)),  # parameters are not allowed, yet sent
        (["x-gzip ; level=9, deflate"], "decode", ("x-gzip", "deflate")),
    ],
)
def test_plan(values: list[str], action: str, codings: tuple[str, ...]) -> None:
    """Which bodies are read as they are, decoded here, or refused."""
    result = plan(values)
    assert (result.action, result.codings if action != "as-is" else ()) == (action, codings)
    assert bool(result.reason) == (action == "refuse")


@pytest.mark.parametrize("seed", range(20))
def test_stack_decoder_round_trip_in_any_chunking(seed: int) -> None:
    """Any stack of gzip/deflate codings, fed in random chunks, gives the body back."""
    rng = random.Random(seed)
    body = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 3000))) + RULES * 50
    codings = [rng.choice(["gzip", "x-gzip", "deflate"]) for _ in range(rng.randint(1, 3))]
    data = body
    for coding in codings:  # applied in listed order (RFC 9110 §8.4)
        if coding == "deflate":
            data = deflate(data) if rng.random() < 0.5 else raw_deflate(data)
        else:
            data = gzip.compress(data)
    decoder = StackDecoder(tuple(codings))
    out = bytearray()
    position = 0
    while position < len(data):
        step = rng.randint(1, 700)
        for piece in decoder.feed(data[position : position + step]):
            out += piece
        position += step
    for piece in decoder.flush():
        out += piece
    assert bytes(out) == body


def test_stack_decoder_refuses_a_cut_stream() -> None:
    """A stream that ends early is an error, not a short file."""
    data = deflate(gzip.compress(RULES * 100))
    decoder = StackDecoder(("gzip", "deflate"))
    list(decoder.feed(data[: len(data) // 2]))
    with pytest.raises(zlib.error):
        list(decoder.flush())


def test_stack_decoder_output_is_bounded_per_step() -> None:
    """A layered bomb expands one bounded piece at a time: the reader can stop early."""
    packer = zlib.compressobj()
    inner = packer.compress(b"\0" * (64 * 1024 * 1024)) + packer.flush()
    bomb = gzip.compress(inner)
    decoder = StackDecoder(("deflate", "gzip"))
    seen = 0
    for piece in decoder.feed(bomb):
        assert len(piece) <= 64 * 1024
        seen += len(piece)
        if seen > 600_000:
            break
    assert seen > 600_000


def serve_encoded(server: Server, body: bytes, *encodings: str) -> None:
    """Serve ``body`` as robots.txt with each of ``encodings`` as its own header line."""
    headers: CIMultiDict[str] = CIMultiDict()
    for value in encodings:
        headers.add("Content-Encoding", value)

    async def handler(_: web.Request) -> web.StreamResponse:
        return web.Response(body=body, headers=headers)

    server.route("/robots.txt", handler)


async def test_stacked_codings_are_decoded_in_order(
    server: Server, make_fetcher: Callable[..., ra.AiohttpFetcher]
) -> None:
    """``gzip, deflate``: deflate removed first, then gzip; the rules apply."""
    serve_encoded(server, deflate(gzip.compress(RULES)), "gzip, deflate")
    outcome = await make_fetcher().fetch(server.url("/robots.txt"))
    assert outcome.error is None
    assert outcome.robots is not None
    assert not outcome.robots.allowed(server.url("/private/x"), user_agent="AnyBot")
    assert outcome.robots.allowed(server.url("/public"), user_agent="AnyBot")


async def test_x_gzip_alone_is_decoded(
    server: Server, make_fetcher: Callable[..., ra.AiohttpFetcher]
) -> None:
    """``x-gzip`` (RFC 9110 §8.4.1.3 alias) is gzip; aiohttp leaves it to us."""
    serve_encoded(server, gzip.compress(RULES), "x-gzip")
    outcome = await make_fetcher().fetch(server.url("/robots.txt"))
    assert outcome.robots is not None
    assert not outcome.robots.allowed(server.url("/private/x"), user_agent="AnyBot")


@pytest.mark.parametrize(
    ("encodings", "body"),
    [
        (("compress",), b"\x1f\x9d" + RULES),
        (("gzip, br",), gzip.compress(RULES)),
        (("gzip, deflate",), deflate(gzip.compress(RULES))[:20]),  # cut short
        (("gzip, deflate",), b"plainly not compressed at all"),
    ],
    ids=["compress", "br-in-stack", "cut", "garbage"],
)
async def test_unreadable_codings_fail_closed(
    server: Server,
    make_fetcher: Callable[..., ra.AiohttpFetcher],
    encodings: tuple[str, ...],
    body: bytes,
) -> None:
    """A body nobody can decode is a protocol error (unreachable: disallow), never
    an empty file (allow all)."""
    serve_encoded(server, body, *encodings)
    outcome = await make_fetcher().fetch(server.url("/robots.txt"))
    assert outcome.error == "protocol"
    assert outcome.robots is None
    assert outcome.category == "unreachable"


async def test_stacked_bomb_stops_at_the_limit(
    server: Server, make_fetcher: Callable[..., ra.AiohttpFetcher]
) -> None:
    """64 MiB of zeros under two codings: decoding stops at max_bytes."""
    packer = zlib.compressobj()
    inner = gzip.compress(b"\0" * (64 * 1024 * 1024), compresslevel=1)
    body = packer.compress(inner) + packer.flush()
    serve_encoded(server, body, "gzip, deflate")
    outcome = await make_fetcher().fetch(server.url("/robots.txt"))
    assert outcome.error is None
    assert outcome.truncated
    assert outcome.bytes_read == LIMIT


async def test_coding_with_parameters_is_decoded(
    server: Server, make_fetcher: Callable[..., ra.AiohttpFetcher]
) -> None:
    """``Content-Encoding: gzip;q=1`` (parameters are not allowed, aiohttp leaves the
    body alone): decoded as gzip, not parsed as text (an empty file: allow all)."""
    serve_encoded(server, gzip.compress(RULES), "gzip;q=1")
    outcome = await make_fetcher().fetch(server.url("/robots.txt"))
    assert outcome.error is None
    assert outcome.robots is not None
    assert not outcome.robots.allowed(server.url("/private/x"), user_agent="AnyBot")


async def test_mislabelled_plain_body_is_read(
    server: Server, make_fetcher: Callable[..., ra.AiohttpFetcher]
) -> None:
    """``Content-Encoding: utf-8`` on a plain body (a common misconfiguration)."""
    serve_encoded(server, RULES, "utf-8")
    outcome = await make_fetcher().fetch(server.url("/robots.txt"))
    assert outcome.robots is not None
    assert not outcome.robots.allowed(server.url("/private/x"), user_agent="AnyBot")


def _silent_bomb() -> bytes:
    """Three gzip layers (under 1 KB) whose innermost stream ends after a few bytes
    and is followed by 200 MiB of zeros: the outer layers expand, the inner one
    gives nothing more (before the fix: 241 s of CPU on the event loop)."""
    inner = gzip.compress(RULES) + b"\0" * (200 * 1024 * 1024)
    return gzip.compress(gzip.compress(inner, 9), 9)


def test_stack_decoder_refuses_expansion_without_output() -> None:
    """An inner stage fed far more than comes out at the end is an error, fast."""
    body = _silent_bomb()
    assert len(body) < 1024
    decoder = StackDecoder(("gzip", "gzip", "gzip"))
    started = time.perf_counter()
    with pytest.raises(zlib.error, match="expands without output"):
        for _ in decoder.feed(body):
            pass
    assert time.perf_counter() - started < 5  # generous: ~0.01 s when fixed


async def test_silent_stacked_bomb_fails_closed_quickly(
    server: Server, make_fetcher: Callable[..., ra.AiohttpFetcher]
) -> None:
    """The same bomb served over HTTP: a protocol error (disallow), and the loop is
    not held (a timer set before the fetch fires on time)."""
    serve_encoded(server, _silent_bomb(), "gzip, gzip, gzip")
    loop = asyncio.get_running_loop()
    started = loop.time()
    outcome = await make_fetcher().fetch(server.url("/robots.txt"))
    assert outcome.error == "protocol"
    assert outcome.robots is None
    assert loop.time() - started < 10  # generous bound; 241 s before the fix


def _members() -> bytes:
    """Two gzip members (RFC 1952 §2.2): the Disallow line is in the second."""
    return gzip.compress(b"User-agent: *\nAllow: /a\n") + gzip.compress(b"Disallow: /private\n")


@pytest.mark.parametrize("size", [1, 2, 3, 7, 1000])
def test_stack_decoder_reads_every_gzip_member(size: int) -> None:
    """Every member is decoded, in any chunking (the magic split across chunks too);
    bytes after the last member that start no member are ignored."""
    body = _members() + b"\0\0\0junk"
    decoder = StackDecoder(("x-gzip",))
    out = b"".join(
        piece
        for start in range(0, len(body), size)
        for piece in decoder.feed(body[start : start + size])
    )
    out += b"".join(decoder.flush())
    assert out == b"User-agent: *\nAllow: /a\nDisallow: /private\n"


@pytest.mark.parametrize("encoding", ["x-gzip", "gzip, identity"])
async def test_every_gzip_member_applies(
    server: Server, make_fetcher: Callable[..., ra.AiohttpFetcher], encoding: str
) -> None:
    """A body of two gzip members decoded here reads as aiohttp reads it for plain
    ``gzip``: the second member's Disallow applies (it was dropped: "allowed")."""
    serve_encoded(server, _members(), encoding)
    outcome = await make_fetcher().fetch(server.url("/robots.txt"))
    assert outcome.error is None
    assert outcome.robots is not None
    assert not outcome.robots.allowed(server.url("/private/x"), user_agent="AnyBot")


_LONG_RULES = b"User-agent: *\n" + b"# a comment line long enough to compress\n" * 50 + RULES[14:]


def _cut_gzip() -> bytes:
    whole = gzip.compress(_LONG_RULES)
    return whole[: len(whole) * 2 // 3]


def _cut_br() -> bytes:
    brotli = pytest.importorskip("brotli")
    whole: bytes = brotli.compress(_LONG_RULES)
    return whole[: len(whole) * 2 // 3]


@pytest.mark.parametrize(("encoding", "make_body"), [("gzip", _cut_gzip), ("br", _cut_br)])
async def test_cut_single_coding_fails_closed(
    server: Server,
    make_fetcher: Callable[..., ra.AiohttpFetcher],
    encoding: str,
    make_body: Callable[[], bytes],
) -> None:
    """A gzip (or br) body cut before its end, so the Disallow line never arrives, is
    a protocol error as a cut stacked body is, not the rules read so far (allow all)."""
    serve_encoded(server, make_body(), encoding)
    outcome = await make_fetcher().fetch(server.url("/robots.txt"))
    assert outcome.error == "protocol", (outcome.error, outcome.bytes_read)
    assert outcome.robots is None


@pytest.mark.parametrize("transfer", ["gzip, chunked", "gzip", "x-gzip , chunked"])
async def test_transfer_coding_other_than_chunked_fails_closed(
    raw_server: Callable[[bytes], Awaitable[str]],
    make_fetcher: Callable[..., ra.AiohttpFetcher],
    transfer: str,
) -> None:
    """``Transfer-Encoding: gzip, chunked`` (RFC 9112 §6.1; we send no TE header):
    aiohttp removes only the chunking, so the gzip bytes were parsed as robots.txt (an
    empty file: allow all). Now a protocol error: unreachable, disallow."""
    body = gzip.compress(RULES)
    if "chunked" in transfer:
        body = b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"
    base = await raw_server(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: "
        + transfer.encode()
        + b"\r\nConnection: close\r\n\r\n"
        + body
    )
    outcome = await make_fetcher().fetch(base + "/robots.txt")
    assert outcome.error == "protocol", (outcome.error, outcome.bytes_read)
    assert outcome.robots is None
