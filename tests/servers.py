"""Fixtures shared by the fetch, cache and checker tests: real aiohttp servers on
127.0.0.1, raw TCP servers for broken HTTP, a fake clock and checker/fetcher
factories that clean up."""

from __future__ import annotations

import asyncio
import gzip
import re
import selectors
import socket
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest
from aiohttp import web

import robots_async as ra

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
    from pathlib import Path

    Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

__all__ = [
    "FakeClock",
    "Hit",
    "Server",
    "TOKEN",
    "USER_AGENT",
    "clock",
    "free_port",
    "gzip_bomb",
    "make_cache",
    "make_checker",
    "make_fetcher",
    "make_server",
    "raw_server",
    "server",
    "start_http_server",
]

USER_AGENT = "PipelineBot/1.0 (+https://example.test/bot)"
TOKEN = "PipelineBot"


@dataclass(frozen=True)
class Hit:
    """One request the test server received."""

    port: int
    path: str
    headers: Mapping[str, str]


@dataclass
class Server:
    """A real aiohttp server listening on one or more ports of 127.0.0.1.

    Every port serves the same routes (one origin per port); unknown paths are 404.
    """

    ports: list[int] = field(default_factory=list)
    routes: dict[str, Handler] = field(default_factory=dict)
    hits: list[Hit] = field(default_factory=list)
    #: Handlers that saw their client go away (CancelledError in the handler).
    dropped: Counter[str] = field(default_factory=Counter)
    dropped_event: asyncio.Event = field(default_factory=asyncio.Event)

    def base(self, index: int = 0) -> str:
        """``http://127.0.0.1:<port>`` of the index-th port."""
        return f"http://127.0.0.1:{self.ports[index]}"

    def url(self, path: str = "/", index: int = 0) -> str:
        """An absolute URL on the index-th port."""
        return self.base(index) + path

    def origin(self, index: int = 0) -> ra.Origin:
        """The Origin of the index-th port."""
        return ra.Origin.from_url(self.base(index))

    def count(self, path: str = "/robots.txt", index: int | None = None) -> int:
        """Requests seen for ``path`` (on one port, or on all of them)."""
        port = None if index is None else self.ports[index]
        return sum(1 for h in self.hits if h.path == path and port in (None, h.port))

    def route(self, path: str, handler: Handler) -> None:
        """Serve ``path`` with ``handler``."""
        self.routes[path] = handler

    def text(
        self,
        path: str,
        body: str | bytes = "",
        *,
        status: int = 200,
        headers: Mapping[str, str] | None = None,
        delay: float = 0.0,
    ) -> None:
        """Serve a fixed response at ``path`` (optionally after ``delay`` seconds)."""
        data = body.encode() if isinstance(body, str) else body

        async def handler(_: web.Request) -> web.StreamResponse:
            if delay:
                await asyncio.sleep(delay)
            return web.Response(body=data, status=status, headers=headers)

        self.route(path, handler)

    def redirect(self, path: str, location: str, status: int = 301) -> None:
        """Answer ``path`` with a redirect to ``location`` (sent verbatim)."""
        self.text(path, status=status, headers={"Location": location})

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        sockname = request.transport.get_extra_info("sockname") if request.transport else None
        port = sockname[1] if sockname else 0
        self.hits.append(Hit(port, request.path, dict(request.headers)))
        handler = self.routes.get(request.path)
        if handler is None:
            return web.Response(status=404, text="not found")
        try:
            return await handler(request)
        except asyncio.CancelledError:
            self.dropped[request.path] += 1
            self.dropped_event.set()
            raise


@pytest.fixture
async def make_server() -> AsyncIterator[Callable[[int], Awaitable[Server]]]:
    """Factory: ``await make_server(n)`` starts a server listening on ``n`` ports."""
    runners: list[web.AppRunner] = []

    async def start(ports: int = 1) -> Server:
        server = Server()
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", server._dispatch)
        # handler_cancellation: a handler learns that its client went away (and a
        # slow handler does not hold up teardown).
        runner = web.AppRunner(
            app, access_log=None, handler_cancellation=True, shutdown_timeout=0.2
        )
        await runner.setup()
        runners.append(runner)
        for _ in range(ports):
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            server.ports.append(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]
        return server

    yield start
    for runner in runners:
        await runner.cleanup()


@pytest.fixture
async def server(make_server: Callable[[int], Awaitable[Server]]) -> Server:
    """A real aiohttp server on one port of 127.0.0.1."""
    return await make_server(1)


@pytest.fixture
async def raw_server() -> AsyncIterator[Callable[[bytes], Awaitable[str]]]:
    """Factory: ``await raw_server(payload)`` -> base URL of a TCP server that reads a
    request head, writes ``payload`` verbatim and closes the connection."""
    servers: list[asyncio.Server] = []

    async def start(payload: bytes) -> str:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                await reader.readuntil(b"\r\n\r\n")
                writer.write(payload)
                await writer.drain()
            finally:
                writer.close()

        srv = await asyncio.start_server(handle, "127.0.0.1", 0)
        servers.append(srv)
        return f"http://127.0.0.1:{srv.sockets[0].getsockname()[1]}"

    yield start
    for srv in servers:
        srv.close()
        await srv.wait_closed()


@pytest.fixture
def free_port() -> Iterator[int]:
    """A port on 127.0.0.1 nobody listens on: bound, not listening (a connection is
    refused), and held for the test, so no other test process (pytest-xdist) can
    listen on it meanwhile; released, it was free for any."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])


def start_http_server(
    command: list[str], cwd: Path, stderr: int | None = subprocess.DEVNULL
) -> tuple[subprocess.Popen[str], int]:
    """Start ``command``, a ``python -m http.server 0 ...`` run unbuffered (``-u``), and
    return it with the port it bound, read from its first line. Port 0 lets the kernel
    pick: a port picked free and then passed to the server could be taken meanwhile by
    another test process (pytest-xdist workers run at once)."""
    proc = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=stderr, text=True)
    assert proc.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        ready = selector.select(timeout=10)
    line = proc.stdout.readline() if ready else ""
    found = re.search(r" port (\d+) ", line)
    if found is None:
        proc.kill()
        proc.wait(timeout=10)
        raise AssertionError(f"http.server did not say its port: {line!r}")
    return proc, int(found[1])


class FakeClock:
    """A list-backed clock: ``clock()`` reads it, ``advance(s)`` moves it forward."""

    def __init__(self, start: float = 1_000_000.0) -> None:
        self._now = [start]

    def __call__(self) -> float:
        return self._now[0]

    def advance(self, seconds: float) -> None:
        self._now[0] += seconds


@pytest.fixture
def clock() -> FakeClock:
    """A fake clock, so TTL tests never sleep."""
    return FakeClock()


@pytest.fixture
async def make_fetcher() -> AsyncIterator[Callable[..., ra.AiohttpFetcher]]:
    """Factory for AiohttpFetcher (closed at teardown); policy keywords go to rfc9309()."""
    fetchers: list[ra.AiohttpFetcher] = []

    def build(*, user_agent: str = USER_AGENT, **changes: Any) -> ra.AiohttpFetcher:
        fetcher = ra.AiohttpFetcher(user_agent=user_agent, policy=ra.FetchPolicy.rfc9309(**changes))
        fetchers.append(fetcher)
        return fetcher

    yield build
    for fetcher in fetchers:
        await fetcher.aclose()


@pytest.fixture
async def make_checker() -> AsyncIterator[Callable[..., ra.RobotsChecker]]:
    """Factory for RobotsChecker (closed at teardown)."""
    checkers: list[ra.RobotsChecker] = []

    def build(user_agent: str = USER_AGENT, **kwargs: Any) -> ra.RobotsChecker:
        checker = ra.RobotsChecker(user_agent, **kwargs)
        checkers.append(checker)
        return checker

    yield build
    for checker in checkers:
        await checker.aclose()


@pytest.fixture
async def make_cache() -> AsyncIterator[Callable[..., ra.RobotsCache]]:
    """Factory for RobotsCache over its own AiohttpFetcher (both closed at teardown)."""
    owned: list[tuple[ra.RobotsCache, ra.AiohttpFetcher]] = []

    def build(
        *, policy: ra.FetchPolicy | None = None, user_agent: str = USER_AGENT, **kwargs: Any
    ) -> ra.RobotsCache:
        fetcher = ra.AiohttpFetcher(user_agent=user_agent, policy=policy)
        cache = ra.RobotsCache(fetcher, policy=policy, **kwargs)
        owned.append((cache, fetcher))
        return cache

    yield build
    for cache, fetcher in owned:
        await cache.aclose()
        await fetcher.aclose()


@pytest.fixture(scope="session")
def gzip_bomb() -> bytes:
    """64 MiB of b"a" gzip-compressed once per session (about 64 KB)."""
    return gzip.compress(b"a" * 64 * 1024 * 1024)
