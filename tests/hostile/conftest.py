"""Hostile HTTP servers for the reliability tests, and helpers that bound time and memory.

:class:`HostileServer` is a raw asyncio HTTP/1.1 server on 127.0.0.1 (one request per
connection) whose paths misbehave on purpose: dribble bytes, stream forever, lie in
Content-Length, reset or half-close mid-body, break chunking, answer TLS with plain
HTTP. It counts connections and requests, so a test can prove that a second check
made no new request. ``bench/reliability.py`` imports it too.
"""

from __future__ import annotations

import asyncio
import socket
import struct
import time
import tracemalloc
import zlib
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

import brotli
import pytest

import robots_async as ra

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable, Mapping

    import aiohttp
    from typing_extensions import Self

    Behaviour = Callable[
        ["RawRequest", asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]
    ]

T = TypeVar("T")

USER_AGENT = "HostileBot/1.0 (+https://example.test/bot)"
TOKEN = "HostileBot"
MIB = 1024 * 1024
#: FetchPolicy.max_bytes by default: decoded bytes parsed at most.
LIMIT = 512_000
#: Bytes a decompression bomb expands to.
BOMB_SIZE = 64 * MIB
#: What a bomb decodes to before its filler: rules that must survive the truncation.
BOMB_HEAD = b"User-agent: *\nDisallow: /private\n"
#: Bytes a dribbling server spends at most (far longer than any timeout here).
DRIBBLE = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Slow: " + b"z" * 400
_BAD_REQUEST = (
    b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n"
    b"Connection: close\r\n\r\nBad Request"
)
_REASONS = {200: "OK", 301: "Moved Permanently", 404: "Not Found", 503: "Service Unavailable"}

After = Literal["close", "reset", "half-close", "hang"]


def policy(total: float = 3.0, connect: float = 1.0, **changes: Any) -> ra.FetchPolicy:
    """The default fetch policy with short timeouts (total for all hops and the body)."""
    return ra.FetchPolicy.rfc9309(total_timeout=total, connect_timeout=connect, **changes)


def bomb(encoding: str, size: int = BOMB_SIZE, head: bytes = BOMB_HEAD) -> bytes:
    """``head`` + ``size`` bytes of ``#`` compressed with ``encoding`` (gzip, deflate, br).

    Compressed 1 MiB at a time: the decoded body never exists in memory.
    """
    block = b"#" * MIB
    if encoding == "br":
        brotli_compressor = brotli.Compressor(quality=5)
        parts = [brotli_compressor.process(head)]
        parts += [brotli_compressor.process(block) for _ in range(size // MIB)]
        parts.append(brotli_compressor.finish())
        return b"".join(parts)
    wbits = {"gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}[encoding]
    compressor = zlib.compressobj(9, zlib.DEFLATED, wbits)
    parts = [compressor.compress(head)]
    parts += [compressor.compress(block) for _ in range(size // MIB)]
    parts.append(compressor.flush())
    return b"".join(parts)


def response_head(
    status: int = 200, headers: Mapping[str, str] | None = None, *, length: int | None = None
) -> bytes:
    """A status line and headers (``Connection: close`` always, Content-Length if given)."""
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Whatever')}"]
    fields = {"Content-Type": "text/plain", **(headers or {}), "Connection": "close"}
    if length is not None:
        fields["Content-Length"] = str(length)
    lines += [f"{name}: {value}" for name, value in fields.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


@dataclass(frozen=True)
class RawRequest:
    """The request line and headers a :class:`HostileServer` received."""

    method: str
    target: str
    headers: Mapping[str, str]

    @property
    def path(self) -> str:
        """The target without its query."""
        return self.target.split("?", 1)[0]


class HostileServer:
    """A raw HTTP/1.1 server on 127.0.0.1 whose paths misbehave as configured.

    One request per connection, then the connection is closed. Unknown paths are 404.
    A TLS ClientHello is answered with a plain-HTTP 400, as any HTTP server would.
    """

    def __init__(self) -> None:
        self.routes: dict[str, Behaviour] = {}
        #: TCP connections accepted.
        self.connections = 0
        #: Requests per path ("<tls>" for TLS handshakes).
        self.requests: Counter[str] = Counter()
        #: Body bytes written per path.
        self.sent: Counter[str] = Counter()
        self._ended: defaultdict[str, asyncio.Event] = defaultdict(asyncio.Event)
        self._stop = asyncio.Event()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._server: asyncio.Server | None = None
        self.port = 0

    async def start(self) -> Self:
        """Listen on a free port of 127.0.0.1."""
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def close(self) -> None:
        """Stop listening and end every connection still open."""
        self._stop.set()
        if self._server is not None:
            self._server.close()
        if self._tasks:
            _, pending = await asyncio.wait(self._tasks, timeout=2.0)
            for task in pending:
                task.cancel()
        if self._server is not None:
            await self._server.wait_closed()

    @property
    def base(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str = "/robots.txt") -> str:
        """An absolute URL on this server."""
        return self.base + path

    def ended(self, path: str) -> asyncio.Event:
        """Set when a connection that requested ``path`` has been closed by the server."""
        return self._ended[path]

    async def pause(self, seconds: float) -> bool:
        """Sleep ``seconds``; True if the server is stopping (then return at once)."""
        try:
            await asyncio.wait_for(self._stop.wait(), seconds)
        except asyncio.TimeoutError:
            return False
        return True

    # --- behaviours -------------------------------------------------------------------

    def route(self, path: str, behaviour: Behaviour) -> None:
        """Serve ``path`` with ``behaviour(request, reader, writer)``."""
        self.routes[path] = behaviour

    def respond(
        self,
        path: str,
        body: bytes = b"",
        *,
        status: int = 200,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """A well-formed response with a Content-Length."""
        self.raw(path, response_head(status, headers, length=len(body)) + body)

    def redirect(self, path: str, location: str, status: int = 301) -> None:
        """A redirect whose Location header is sent verbatim."""
        self.respond(path, status=status, headers={"Location": location})

    def raw(self, path: str, payload: bytes, then: After = "close") -> None:
        """Write ``payload`` verbatim, then close, reset (RST), half-close or hang."""

        async def behaviour(
            _: RawRequest, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
        ) -> None:
            writer.write(payload)
            await writer.drain()
            self.sent[path] += len(payload)
            if then == "reset":
                sock = writer.get_extra_info("socket")
                # SO_LINGER 0: close() sends an RST instead of a FIN.
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                writer.transport.abort()
            elif then == "half-close":
                writer.write_eof()  # shutdown(SHUT_WR): the read side stays open
                await self._until_client_leaves(reader)
            elif then == "hang":
                await self._until_client_leaves(reader)

        self.route(path, behaviour)

    def hang(self, path: str) -> None:
        """Accept, read the request, never answer."""
        self.raw(path, b"", then="hang")

    def dribble(self, path: str, data: bytes, interval: float, head: bytes = b"") -> None:
        """Slowloris: write ``head`` at once, then ``data`` one byte per ``interval``."""

        async def behaviour(
            _: RawRequest, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
        ) -> None:
            writer.write(head)
            for i in range(len(data)):
                writer.write(data[i : i + 1])
                await writer.drain()
                self.sent[path] += 1
                if await self.pause(interval):
                    return

        self.route(path, behaviour)

    def stream(
        self,
        path: str,
        chunk: bytes,
        total: int | None = None,
        *,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """Stream ``chunk`` repeatedly: ``total`` bytes (with a Content-Length), or forever.

        Nothing but ``chunk`` is held in memory, however long the body.
        """

        async def behaviour(
            _: RawRequest, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
        ) -> None:
            writer.write(response_head(200, headers, length=total))
            sent = 0
            while (total is None or sent < total) and not self._stop.is_set():
                piece = chunk if total is None else chunk[: total - sent]
                writer.write(piece)
                sent += len(piece)
                self.sent[path] += len(piece)
                await writer.drain()

        self.route(path, behaviour)

    # --- plumbing ---------------------------------------------------------------------

    async def _until_client_leaves(self, reader: asyncio.StreamReader) -> None:
        """Wait until the client closes (EOF), or the server stops."""
        read = asyncio.ensure_future(reader.read())
        stop = asyncio.ensure_future(self._stop.wait())
        try:
            await asyncio.wait({read, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            read.cancel()
            stop.cancel()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.connections += 1
        path = "<none>"
        try:
            first = await reader.read(1)
            if first == b"\x16":  # a TLS handshake record on a plain-HTTP port
                path = "<tls>"
                self.requests[path] += 1
                writer.write(_BAD_REQUEST)
                await writer.drain()
                return
            if not first:
                return
            head = first + await reader.readuntil(b"\r\n\r\n")
            request = _parse_head(head)
            path = request.path
            self.requests[path] += 1
            behaviour = self.routes.get(path)
            if behaviour is None:
                writer.write(response_head(404, length=0))
                await writer.drain()
            else:
                await behaviour(request, reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass  # the client went away: that is what these servers provoke
        finally:
            writer.close()
            self._ended[path].set()
            self._tasks.discard(task)


def _parse_head(head: bytes) -> RawRequest:
    lines = head.decode("latin-1").split("\r\n")
    method, _, rest = lines[0].partition(" ")
    target = rest.partition(" ")[0]
    headers = {}
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if colon:
            headers[name.strip().lower()] = value.strip()
    return RawRequest(method, target, headers)


@dataclass(frozen=True)
class Measured(Generic[T]):
    """A result with the wall time and the tracemalloc peak it took."""

    value: T
    seconds: float
    peak_mib: float


async def measured(awaitable: Awaitable[T]) -> Measured[T]:
    """Await ``awaitable`` while measuring wall time and the tracemalloc peak."""
    tracing = tracemalloc.is_tracing()
    if not tracing:
        tracemalloc.start()
    tracemalloc.reset_peak()
    base, _ = tracemalloc.get_traced_memory()
    started = time.perf_counter()
    try:
        value = await awaitable
    finally:
        seconds = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
        if not tracing:
            tracemalloc.stop()
    return Measured(value, seconds, max(peak - base, 0) / MIB)


# --- fixtures -------------------------------------------------------------------------


@pytest.fixture
async def make_hostile() -> AsyncIterator[Callable[[], Awaitable[HostileServer]]]:
    """Factory: ``await make_hostile()`` starts a :class:`HostileServer` (closed after)."""
    servers: list[HostileServer] = []

    async def start() -> HostileServer:
        server = await HostileServer().start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        await server.close()


@pytest.fixture
async def hostile(make_hostile: Callable[[], Awaitable[HostileServer]]) -> HostileServer:
    """One :class:`HostileServer`."""
    return await make_hostile()


@pytest.fixture
async def make_checker() -> AsyncIterator[Callable[..., ra.RobotsChecker]]:
    """Factory for RobotsChecker with :func:`policy` keywords (closed at teardown)."""
    checkers: list[ra.RobotsChecker] = []

    def build(
        *,
        session: aiohttp.ClientSession | None = None,
        total: float = 3.0,
        connect: float = 1.0,
        **changes: Any,
    ) -> ra.RobotsChecker:
        checker = ra.RobotsChecker(
            USER_AGENT, session=session, fetch_policy=policy(total, connect, **changes)
        )
        checkers.append(checker)
        return checker

    yield build
    for checker in checkers:
        await checker.aclose()


@pytest.fixture(scope="session")
def bombs() -> dict[str, bytes]:
    """gzip, deflate and br bodies that decode to :data:`BOMB_HEAD` + 64 MiB, once."""
    return {encoding: bomb(encoding) for encoding in ("gzip", "deflate", "br")}
