"""Loopback robots.txt servers for the benchmarks: many ports, one origin per port.

Each server process listens on ``ports_per_server`` ports of 127.0.0.1 and serves
``/robots.txt`` (with a behaviour chosen per port) and counts requests per port.
"""

from __future__ import annotations

import asyncio
import gzip
import multiprocessing as mp
import os
import signal
import socket
from collections import Counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from typing_extensions import Self

ROBOTS = (
    b"User-agent: *\nDisallow: /private/\nDisallow: /*?session=\nAllow: /private/public\n"
    b"Crawl-delay: 1\nSitemap: /sitemap.xml\n"
)
#: Behaviours a port can have (see handle()).
BEHAVIOURS = ("ok", "503", "reset", "timeout", "bomb")


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


async def _serve(behaviours: dict[int, str], conn: Connection) -> None:
    from aiohttp import web

    counts: Counter[int] = Counter()
    bomb = gzip.compress(b"#" * (64 * 1024 * 1024))

    async def handle(request: web.Request) -> web.StreamResponse:
        port = request.transport.get_extra_info("sockname")[1] if request.transport else 0
        counts[port] += 1
        behaviour = behaviours.get(port, "ok")
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
    runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=0.1)
    await runner.setup()
    for port in behaviours:
        await web.TCPSite(runner, "127.0.0.1", port, backlog=1024).start()
    conn.send("ready")
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, conn.recv)  # any message: report and stop
    conn.send(dict(counts))
    await runner.cleanup()


def _server_main(behaviours: dict[int, str], conn: Connection) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    asyncio.run(_serve(behaviours, conn))


class LoopbackServers:
    """Start ``servers`` processes sharing out ``behaviours`` (port -> behaviour)."""

    def __init__(self, behaviours: dict[int, str], servers: int = 4) -> None:
        ports = list(behaviours)
        self._shares = [{p: behaviours[p] for p in ports[i::servers]} for i in range(servers)]
        self._procs: list[tuple[mp.Process, Connection]] = []

    def __enter__(self) -> Self:
        ctx = mp.get_context("spawn")
        for share in self._shares:
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_server_main, args=(share, child), daemon=True)
            proc.start()
            self._procs.append((proc, parent))
        for _, parent in self._procs:
            if parent.recv() != "ready":
                raise RuntimeError("server did not start")
        return self

    def counts(self) -> Counter[int]:
        """Requests per port; stops the servers."""
        total: Counter[int] = Counter()
        for _, parent in self._procs:
            parent.send("stop")
            total.update(parent.recv())
        return total

    def __exit__(self, *exc: object) -> None:
        for proc, _ in self._procs:
            proc.join(timeout=5)
            if proc.is_alive():
                os.kill(proc.pid, signal.SIGKILL)
