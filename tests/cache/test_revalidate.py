"""Conditional refresh: an expired entry with ETag or Last-Modified is refetched with
If-None-Match / If-Modified-Since; a 304 renews it without a download or a parse, and a
304 that was not asked for (or that carries a body) cannot loosen a verdict."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

import pytest
from aiohttp import web

import robots_async as ra

from .conftest import TOKEN

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable
    from pathlib import Path

    from .conftest import FakeClock, Server

RULES = "User-agent: *\nDisallow: /private\n"
ETAG = '"v1"'
MODIFIED = "Wed, 21 Oct 2026 07:28:00 GMT"


def serve_with_validators(
    server: Server, *, etag: str | None = ETAG, modified: str | None = None
) -> list[str]:
    """Serve RULES with the given validators; answer 304 to a matching conditional
    request (Cache-Control max-age=120 on the 304, 60 on the 200). Returns a list of
    "200"/"304", one per answer."""
    answers: list[str] = []
    validators = {"ETag": etag, "Last-Modified": modified}
    headers = {name: value for name, value in validators.items() if value is not None}

    async def robots(request: web.Request) -> web.StreamResponse:
        matches = (etag is not None and request.headers.get("If-None-Match") == etag) or (
            etag is None
            and modified is not None
            and request.headers.get("If-Modified-Since") == modified
        )
        if matches:
            answers.append("304")
            return web.Response(status=304, headers={**headers, "Cache-Control": "max-age=120"})
        answers.append("200")
        return web.Response(text=RULES, headers={**headers, "Cache-Control": "max-age=60"})

    server.route("/robots.txt", robots)
    return answers


@pytest.mark.parametrize(
    "case",
    [
        (ETAG, None, {"If-None-Match": ETAG}),
        (None, MODIFIED, {"If-Modified-Since": MODIFIED}),
        (ETAG, MODIFIED, {"If-None-Match": ETAG, "If-Modified-Since": MODIFIED}),
    ],
    ids=["etag", "last-modified", "both"],
)
async def test_expired_entry_revalidated_by_304(
    server: Server,
    make_cache: Callable[..., ra.RobotsCache],
    clock: FakeClock,
    case: tuple[str | None, str | None, dict[str, str]],
) -> None:
    """The refetch carries the validators (both when both are known, RFC 9111 §4.3.1);
    the 304 renews the entry: same parsed rules (no re-parse), TTL from the 304's
    Cache-Control, counted as revalidated."""
    etag, modified, sent = case
    answers = serve_with_validators(server, etag=etag, modified=modified)
    cache = make_cache(clock=clock)
    origin = server.origin()
    first, _ = await cache.get(origin)
    assert "If-None-Match" not in server.hits[0].headers
    clock.advance(61)
    renewed, from_cache = await cache.get(origin)
    assert answers == ["200", "304"]
    conditional = {k: v for k, v in server.hits[1].headers.items() if k.startswith("If-")}
    assert conditional == sent
    assert not from_cache
    assert renewed.robots is first.robots  # not downloaded nor parsed again
    assert renewed.source == "fetched"
    assert renewed.fetched_at == clock()
    assert renewed.expires_at == clock() + 120
    assert not renewed.robots.allowed("/private", robots_token=TOKEN)
    stats = cache.stats
    assert (stats.fetches, stats.revalidated) == (2, 1)


async def test_changed_file_is_downloaded(
    server: Server, make_cache: Callable[..., ra.RobotsCache], clock: FakeClock
) -> None:
    """A new ETag: the server answers 200 to the conditional request, new rules apply."""
    serve_with_validators(server)
    cache = make_cache(clock=clock)
    await cache.get(server.origin())
    server.text("/robots.txt", "User-agent: *\nDisallow: /\n", headers={"ETag": '"v2"'})
    clock.advance(61)
    entry, _ = await cache.get(server.origin())
    assert server.hits[1].headers.get("If-None-Match") == ETAG
    assert not entry.robots.allowed("/public", robots_token=TOKEN)
    assert cache.stats.revalidated == 0


async def test_no_validators_no_conditional_request(
    server: Server, make_cache: Callable[..., ra.RobotsCache], clock: FakeClock
) -> None:
    """A response without ETag or Last-Modified is refetched unconditionally."""
    server.text("/robots.txt", RULES)
    cache = make_cache(clock=clock)
    await cache.get(server.origin())
    clock.advance(2 * 86_400)
    await cache.get(server.origin())
    assert server.count() == 2
    assert not any(k.startswith("If-") for k in server.hits[1].headers)


# --- 304s that were not asked for ---------------------------------------------------


@pytest.fixture
async def scripted() -> AsyncIterator[Callable[[list[bytes]], Awaitable[tuple[str, list[bytes]]]]]:
    """Factory: a TCP server answering its n-th connection with the n-th payload (then
    closing); returns its base URL and the request heads it received."""
    servers: list[asyncio.Server] = []

    async def start(payloads: list[bytes]) -> tuple[str, list[bytes]]:
        heads: list[bytes] = []

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                heads.append(await reader.readuntil(b"\r\n\r\n"))
                writer.write(payloads[min(len(heads), len(payloads)) - 1])
                await writer.drain()
            finally:
                writer.close()

        srv = await asyncio.start_server(handle, "127.0.0.1", 0)
        servers.append(srv)
        return f"http://127.0.0.1:{srv.sockets[0].getsockname()[1]}", heads

    yield start
    for srv in servers:
        srv.close()
        with contextlib.suppress(Exception):
            await srv.wait_closed()


OK_WITH_ETAG = (
    b'HTTP/1.1 200 OK\r\nETag: "v1"\r\nCache-Control: max-age=60\r\n'
    b"Content-Length: 33\r\nConnection: close\r\n\r\nUser-agent: *\nDisallow: /private\n"
)


async def test_unsolicited_304_never_allows_all(
    scripted: Callable[[list[bytes]], Awaitable[tuple[str, list[bytes]]]],
    make_cache: Callable[..., ra.RobotsCache],
) -> None:
    """A 304 to a first, unconditional request is a protocol error: unreachable, so
    disallow all (no good copy), never the 'unavailable: allow all' of other 3xx."""
    base, _ = await scripted([b"HTTP/1.1 304 Not Modified\r\nConnection: close\r\n\r\n"])
    cache = make_cache()
    entry, _ = await cache.get(ra.Origin.from_url(base))
    assert entry.outcome.status == 304
    assert entry.outcome.error == "protocol"
    assert entry.source == "unreachable"
    assert not entry.robots.allowed("/public", robots_token=TOKEN)
    assert cache.stats.revalidated == 0


async def test_304_with_a_body_renews_and_ignores_the_body(
    scripted: Callable[[list[bytes]], Awaitable[tuple[str, list[bytes]]]],
    make_cache: Callable[..., ra.RobotsCache],
    clock: FakeClock,
) -> None:
    """A 304 followed by bytes that look like rules: they never become rules. aiohttp
    reads bytes that come with the 304's head as a malformed next response (a protocol
    error: the last good copy stays); bytes that come later are dropped with the
    connection (a renewal). Either way the stored rules stay in force."""
    rogue = b"User-agent: *\nAllow: /\n"
    not_modified = b'HTTP/1.1 304 Not Modified\r\nETag: "v1"\r\nContent-Length: %d\r\n\r\n%s' % (
        len(rogue),
        rogue,
    )
    base, heads = await scripted([OK_WITH_ETAG, not_modified])
    cache = make_cache(clock=clock)
    origin = ra.Origin.from_url(base)
    first, _ = await cache.get(origin)
    clock.advance(61)
    renewed, _ = await cache.get(origin)
    assert b'if-none-match: "v1"' in heads[1].lower()
    assert renewed.robots is first.robots
    assert not renewed.robots.allowed("/private", robots_token=TOKEN)
    assert renewed.source in ("fetched", "stale")
    stats = cache.stats
    assert (stats.revalidated, stats.errors) in ((1, 0), (0, 1))


class LegacyFetcher:
    """A fetcher written before conditional refresh (no ``validators`` keyword) whose
    transport answers 304 anyway, as an HTTP cache in front of it might."""

    def __init__(self) -> None:
        self.calls = 0

    async def fetch(self, url: str, *, keep_body: bool = False) -> ra.FetchOutcome:
        self.calls += 1
        if self.calls == 1:
            robots = ra.parse(RULES)
            headers = (("ETag", ETAG),)
            return ra.FetchOutcome(url, url, 200, robots=robots, headers=headers, max_age=60)
        return ra.FetchOutcome(url, url, 304, headers=(("ETag", ETAG),))

    async def aclose(self) -> None:
        """Nothing to close."""


async def test_fetcher_without_validators_gets_no_revalidation(clock: FakeClock) -> None:
    """The cache never passes validators= to a fetcher that does not take it, and a
    304 from it is read as a protocol error (the last good copy), not as a renewal."""
    fetcher = LegacyFetcher()
    cache = ra.RobotsCache(fetcher, clock=clock)
    origin = ra.Origin.from_url("http://legacy.test/")
    await cache.get(origin)
    clock.advance(61)
    entry, _ = await cache.get(origin)
    assert fetcher.calls == 2
    assert entry.outcome.error == "protocol"
    assert entry.source == "stale"  # RFC 9309 §2.3.1.4: the last good copy
    assert not entry.robots.allowed("/private", robots_token=TOKEN)
    assert cache.stats.revalidated == 0
    await cache.aclose()


# --- through a shared store ---------------------------------------------------------


async def test_store_shared_record_is_revalidated(
    server: Server, make_cache: Callable[..., ra.RobotsCache], clock: FakeClock, tmp_path: Path
) -> None:
    """A restarted cache on an SQLiteStore finds an expired record: it revalidates it
    (If-None-Match from the record's headers), and the renewed record is shared."""
    answers = serve_with_validators(server)
    origin = server.origin()
    async with ra.SQLiteStore(tmp_path / "r.sqlite") as store:
        await make_cache(store=store, clock=clock).get(origin)
        clock.advance(61)
        restarted = make_cache(store=store, clock=clock)
        entry, _ = await restarted.get(origin)
        assert answers == ["200", "304"]
        assert server.hits[1].headers.get("If-None-Match") == ETAG
        assert restarted.stats.revalidated == 1
        assert not entry.robots.allowed("/private", robots_token=TOKEN)
        third = make_cache(store=store, clock=clock)
        shared, _ = await third.get(origin)
        record = await store.get(origin)
    assert answers == ["200", "304"]  # the renewed record was fresh for the third cache
    assert third.stats.store_hits == 1
    assert record is not None
    assert record.fetched_at == clock()
    assert dict(record.headers)["Cache-Control"] == "max-age=120"
    assert shared.expires_at == clock() + 120
