"""Many misbehaving origins at once: one raw asyncio server per port of 127.0.0.1.

A :class:`Swarm` listens on ``n`` ports (one origin each) and answers every request
the same way: ``"hang"`` (accept, read the request, never answer) or ``"trickle"``
(a status line and headers one byte a second). It tracks the connections open now
and at most as the server sees them; :class:`SocketSampler` counts the client's own
open connections to given ports (from /proc/net/tcp). Also used by
``bench/isolation.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from collections.abc import Collection

    from typing_extensions import Self

Behaviour = Literal["hang", "trickle"]
#: What a trickling origin sends, one byte per TRICKLE_INTERVAL (never finished).
TRICKLE = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Slow: " + b"z" * 4000
TRICKLE_INTERVAL = 1.0
#: accept() failing for want of a descriptor or memory: listening pauses
#: ACCEPT_PAUSE seconds, as asyncio's own server does (for 1 s). A reader left
#: registered is called again at once while the connection waits in the backlog:
#: 50,914 failed accepts in 1.5 s under a soft RLIMIT_NOFILE of 40.
_OUT_OF_RESOURCES = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
ACCEPT_PAUSE = 0.1


class Swarm:
    """``n`` origins on 127.0.0.1 that all hang or all trickle."""

    def __init__(self, behaviour: Behaviour) -> None:
        self.behaviour = behaviour
        self.ports: list[int] = []
        #: Requests received, connections open now and the most open at once.
        self.requests = 0
        self.open = 0
        self.peak_open = 0
        self.closed = False
        self._listeners: list[socket.socket] = []
        self._accepting: set[asyncio.Task[Any]] = set()
        self._connections: set[_Connection] = set()
        #: Listeners paused for want of resources (by descriptor), and their resumption.
        self._paused: dict[int, asyncio.TimerHandle] = {}
        #: accept() calls that failed for want of a descriptor or memory.
        self.accept_errors = 0

    async def start(self, n: int) -> Swarm:
        """Listen on ``n`` free ports.

        Our own accept loop, not ``loop.create_server``: on Python 3.11 a connection
        the server accepted just before ``Server.close()`` got a half-built transport
        (``Server._attach`` asserts the server is open) that nobody closed, a
        ResourceWarning (an error under the suite's warning filter) in 1 run of ~8.
        """
        loop = asyncio.get_running_loop()
        for _ in range(n):
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.setblocking(False)
            listener.bind(("127.0.0.1", 0))
            listener.listen(512)
            loop.add_reader(listener.fileno(), self._accept, listener)
            self._listeners.append(listener)
            self.ports.append(listener.getsockname()[1])
        return self

    def base(self, index: int) -> str:
        """``http://127.0.0.1:<port>`` of the index-th origin."""
        return f"http://127.0.0.1:{self.ports[index]}"

    @property
    def bases(self) -> list[str]:
        """Every origin's base URL."""
        return [self.base(i) for i in range(len(self.ports))]

    def _accept(self, listener: socket.socket) -> None:
        """Hand every connection waiting on ``listener`` to a :class:`_Connection`."""
        loop = asyncio.get_running_loop()
        while True:
            try:
                conn, _ = listener.accept()
            except (BlockingIOError, InterruptedError, ConnectionAbortedError):
                return  # none left, or one reset while it waited
            except OSError as exc:
                if exc.errno not in _OUT_OF_RESOURCES:
                    raise
                self.accept_errors += 1
                loop.remove_reader(listener.fileno())
                self._paused[listener.fileno()] = loop.call_later(
                    ACCEPT_PAUSE, self._resume, listener
                )
                return
            made = loop.connect_accepted_socket(lambda: _Connection(self), conn)
            task = loop.create_task(made)
            self._accepting.add(task)
            task.add_done_callback(self._made)

    def _resume(self, listener: socket.socket) -> None:
        """Listen again after a pause for want of resources (not once closed)."""
        del self._paused[listener.fileno()]
        if not self.closed:
            asyncio.get_running_loop().add_reader(listener.fileno(), self._accept, listener)

    def _made(self, task: asyncio.Task[Any]) -> None:
        """Forget a finished hand-over; a client that left meanwhile is no error."""
        self._accepting.discard(task)
        if not task.cancelled():
            task.exception()

    async def close(self) -> None:
        """Stop listening and end every connection, none left half-made."""
        self.closed = True
        loop = asyncio.get_running_loop()
        for handle in self._paused.values():
            handle.cancel()
        self._paused.clear()
        for listener in self._listeners:
            loop.remove_reader(listener.fileno())
            listener.close()
        # Connections accepted but not yet made: each aborts itself when made.
        await asyncio.gather(*self._accepting, return_exceptions=True)
        for connection in list(self._connections):
            connection.transport.abort()
        for _ in range(100):  # abort() reports connection_lost on a later loop turn
            if not self._connections:
                break
            await asyncio.sleep(0)
        assert not self._connections, f"{len(self._connections)} connections left open"

    def connected(self, connection: _Connection) -> None:
        """Count a new connection, or end it at once when the swarm is closed."""
        if self.closed:
            connection.transport.abort()
            return
        self._connections.add(connection)
        self.open += 1
        self.peak_open = max(self.peak_open, self.open)

    def disconnected(self, connection: _Connection) -> None:
        """Forget a connection that has ended."""
        if connection in self._connections:
            self._connections.discard(connection)
            self.open -= 1


#: The longest request head an origin reads before closing (asyncio streams' default).
HEAD_LIMIT = 2**16


class _Connection(asyncio.Protocol):
    """One client connection to a swarm origin: reads a request head, then hangs
    (never answers, reads until the client closes) or trickles :data:`TRICKLE`."""

    def __init__(self, swarm: Swarm) -> None:
        self.swarm = swarm
        self.transport: asyncio.Transport
        self._head = b""
        self._answering = False
        self._timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.swarm.connected(self)

    def data_received(self, data: bytes) -> None:
        if self._answering:
            return  # a hung origin reads on, until the client closes
        self._head += data
        if b"\r\n\r\n" in self._head:
            self._answering = True
            self.swarm.requests += 1
            if self.swarm.behaviour == "trickle":
                self._trickle(0)
        elif len(self._head) > HEAD_LIMIT:
            self.transport.close()

    def _trickle(self, index: int) -> None:
        if index < len(TRICKLE) and not self.transport.is_closing():
            self.transport.write(TRICKLE[index : index + 1])
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(TRICKLE_INTERVAL, self._trickle, index + 1)

    def eof_received(self) -> bool:
        return False  # the client went away: close our side too

    def connection_lost(self, exc: Exception | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self.swarm.disconnected(self)


#: /proc/net/tcp states of a socket that still has a descriptor: ESTABLISHED, SYN_SENT.
_OPEN_STATES = frozenset({"01", "02"})


def client_sockets(ports: Collection[int]) -> int:
    """Open client connections from this machine to ``ports`` (IPv4, /proc/net/tcp).

    A connection the client has closed is in FIN_WAIT or TIME_WAIT: not counted.
    Counted once per (local, remote) pair: read while sockets come and go, the
    kernel's listing repeats some rows (measured: up to 107 rows for 96 sockets).
    """
    seen = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[3] in _OPEN_STATES and int(fields[2].rsplit(":", 1)[1], 16) in ports:
            seen.add((fields[1], fields[2]))
    return len(seen)


class SocketSampler:
    """Samples :func:`client_sockets` every ``interval`` seconds; keeps the peak."""

    def __init__(self, ports: Collection[int], interval: float = 0.02) -> None:
        self._ports = frozenset(ports)
        self._interval = interval
        self._task: asyncio.Task[None] | None = None
        self.peak = 0
        self.samples = 0

    async def __aenter__(self) -> Self:
        self._task = asyncio.create_task(self._run())
        return self

    async def __aexit__(self, *_: object) -> None:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._sample()

    def _sample(self) -> None:
        self.peak = max(self.peak, client_sockets(self._ports))
        self.samples += 1

    async def _run(self) -> None:
        while True:
            self._sample()
            await asyncio.sleep(self._interval)
