"""Loopback robots.txt servers for the benchmarks: many ports, one origin per port.

Each server process listens on its share of the ports of 127.0.0.1, serves
``/robots.txt`` (with a behaviour chosen per port, optionally after a delay) and
counts requests per port and the client connections it still holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing as mp
import os
import signal
import socket
import zlib
from collections import Counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

    from typing_extensions import Self

ROBOTS = (
    b"User-agent: *\nDisallow: /private/\nDisallow: /*?session=\nAllow: /private/public\n"
    b"Crawl-delay: 1\nSitemap: /sitemap.xml\n"
)
#: Behaviours a port can have (see handle()).
BEHAVIOURS = ("ok", "503", "reset", "timeout", "bomb")
#: What the gzip bomb decodes to before 64 MiB of "#": rules that disallow everything,
#: so a bomb truncated at the parsing limit still leaves a recognisable verdict.
BOMB_HEAD = b"User-agent: *\nDisallow: /\n"


def free_ports(count: int) -> list[int]:
    """``count`` distinct free TCP ports on 127.0.0.1 (bound once, then released)."""
    sockets, ports = [], []
    for _ in range(count):
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sockets.append(sock)
        ports.append(sock.getsockname()[1])
    for sock in sockets:
        sock.close()
    return ports


def _bomb() -> bytes:
    """gzip of BOMB_HEAD + 64 MiB, compressed 1 MiB at a time."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b"#" * (1024 * 1024)
    parts = [compressor.compress(BOMB_HEAD), *(compressor.compress(block) for _ in range(64))]
    return b"".join([*parts, compressor.flush()])


async def _serve(behaviours: dict[int, str], conn: Connection, delay: float) -> None:
    from aiohttp import web

    counts: Counter[int] = Counter()
    bomb = _bomb()

    async def handle(request: web.Request) -> web.StreamResponse:
        port = request.transport.get_extra_info("sockname")[1] if request.transport else 0
        counts[port] += 1
        behaviour = behaviours.get(port, "ok")
        if delay and behaviour != "timeout":
            await asyncio.sleep(delay)
        if behaviour == "503":
            return web.Response(status=503)
        if behaviour == "timeout":
            await asyncio.sleep(3600)
        if behaviour == "reset" and request.transport is not None:
            request.transport.abort()
            return web.Response()
        if behaviour == "bomb":
            headers = {"Content-Encoding": "gzip", "Content-Type": "text/plain"}
            return web.Response(body=bomb, headers=headers)
        return web.Response(body=ROBOTS, content_type="text/plain")

    app = web.Application()
    app.router.add_get("/robots.txt", handle)
    # handler_cancellation: a "timeout" handler ends when its client gives up.
    runner = web.AppRunner(
        app, handle_signals=False, shutdown_timeout=0.1, handler_cancellation=True
    )
    await runner.setup()
    for port in behaviours:
        await web.TCPSite(runner, "127.0.0.1", port, backlog=1024).start()
    conn.send("ready")
    loop = asyncio.get_running_loop()
    while True:
        # "open": connections still held; "snapshot": counts so far (then reset them);
        # anything else: counts so far, then stop.
        message = await loop.run_in_executor(None, conn.recv)
        if message == "open":
            server = runner.server
            conn.send(len(server.connections) if server is not None else 0)
            continue
        conn.send(dict(counts))
        counts.clear()
        if message != "snapshot":
            break
    await runner.cleanup()


def _server_main(behaviours: dict[int, str], conn: Connection, delay: float) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    asyncio.run(_serve(behaviours, conn, delay))


class LoopbackServers:
    """Start ``servers`` processes sharing out ``behaviours`` (port -> behaviour).

    Every answer but "timeout" is held back ``delay`` seconds (0: answer at once).
    """

    def __init__(self, behaviours: dict[int, str], servers: int = 4, delay: float = 0.0) -> None:
        ports = list(behaviours)
        self._shares = [{p: behaviours[p] for p in ports[i::servers]} for i in range(servers)]
        self._delay = delay
        self._procs: list[tuple[BaseProcess, Connection]] = []
        self._stopped = False

    def __enter__(self) -> Self:
        ctx = mp.get_context("spawn")
        for share in self._shares:
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_server_main, args=(share, child, self._delay), daemon=True)
            proc.start()
            self._procs.append((proc, parent))
        for _, parent in self._procs:
            if parent.recv() != "ready":
                raise RuntimeError("server did not start")
        return self

    def counts(self) -> Counter[int]:
        """Requests per port; stops the servers."""
        counts = self._ask("stop")
        self._stopped = True
        return counts

    def snapshot(self) -> Counter[int]:
        """Requests per port since the last snapshot; the servers keep running."""
        return self._ask("snapshot")

    def open_connections(self) -> int:
        """Client connections the servers still hold open."""
        total = 0
        for _, parent in self._procs:
            parent.send("open")
            total += int(parent.recv())
        return total

    def _ask(self, message: str) -> Counter[int]:
        total: Counter[int] = Counter()
        for _, parent in self._procs:
            parent.send(message)
            total.update(parent.recv())
        return total

    def __exit__(self, *exc: object) -> None:
        if not self._stopped:
            # A server already gone is killed below if it is still alive.
            with contextlib.suppress(OSError, EOFError):
                self.counts()
        for proc, _ in self._procs:
            proc.join(timeout=5)
            if proc.is_alive() and proc.pid is not None:
                os.kill(proc.pid, signal.SIGKILL)
