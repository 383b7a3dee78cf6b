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
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from collections.abc import Collection

    from typing_extensions import Self

Behaviour = Literal["hang", "trickle"]
#: What a trickling origin sends, one byte per TRICKLE_INTERVAL (never finished).
TRICKLE = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Slow: " + b"z" * 4000
TRICKLE_INTERVAL = 1.0


class Swarm:
    """``n`` origins on 127.0.0.1 that all hang or all trickle."""

    def __init__(self, behaviour: Behaviour) -> None:
        self.behaviour = behaviour
        self.ports: list[int] = []
        #: Requests received, connections open now and the most open at once.
        self.requests = 0
        self.open = 0
        self.peak_open = 0
        self._servers: list[asyncio.Server] = []
        self._tasks: set[asyncio.Task[Any]] = set()

    async def start(self, n: int) -> Swarm:
        """Listen on ``n`` free ports."""
        for _ in range(n):
            server = await asyncio.start_server(self._handle, "127.0.0.1", 0, backlog=512)
            self._servers.append(server)
            self.ports.append(server.sockets[0].getsockname()[1])
        return self

    def base(self, index: int) -> str:
        """``http://127.0.0.1:<port>`` of the index-th origin."""
        return f"http://127.0.0.1:{self.ports[index]}"

    @property
    def bases(self) -> list[str]:
        """Every origin's base URL."""
        return [self.base(i) for i in range(len(self.ports))]

    async def close(self) -> None:
        """Stop listening and end every connection."""
        for server in self._servers:
            server.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks)
        for server in self._servers:
            await server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.open += 1
        self.peak_open = max(self.peak_open, self.open)
        try:
            await reader.readuntil(b"\r\n\r\n")
            self.requests += 1
            if self.behaviour == "hang":
                await reader.read()  # until the client closes
            else:
                await self._trickle(reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass  # the client went away: what these origins provoke
        finally:
            self.open -= 1
            self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(OSError, RuntimeError):
                await writer.wait_closed()

    async def _trickle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        gone = asyncio.ensure_future(reader.read())
        try:
            for i in range(len(TRICKLE)):
                writer.write(TRICKLE[i : i + 1])
                await writer.drain()
                await asyncio.wait({gone}, timeout=TRICKLE_INTERVAL)
                if gone.done():
                    return
        finally:
            gone.cancel()


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
