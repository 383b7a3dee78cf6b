"""Fixtures for the Redis store tests: a real redis-server on a free loopback port,
robots.txt origins served by aiohttp on the test's loop, and worker subprocesses."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import redis.asyncio as aioredis
from aiohttp import web

import robots_async as ra

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

HERE = Path(__file__).parent
WORKER_SCRIPT = HERE / "worker.py"
HOLD_LEASE_SCRIPT = HERE / "hold_lease.py"
USER_AGENT = "RedisTestBot/1.0 (+https://example.test/bot)"
TOKEN = "RedisTestBot"
ROBOTS = b"User-agent: *\nDisallow: /private/\n"
#: Seconds a starting redis-server gets to answer PING.
START_TIMEOUT = 15.0


def free_port() -> int:
    """A TCP port of 127.0.0.1 that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def redis_binary() -> str:
    """Path of redis-server; skip without it, but fail loudly under CI."""
    path = shutil.which("redis-server")
    if path is not None:
        return path
    reason = "redis-server is not on PATH (apt-get install redis-server)"
    if os.environ.get("CI"):
        pytest.fail(f"{reason}: CI must run the Redis store tests, not skip them", pytrace=False)
    pytest.skip(f"{reason}; under CI this is a failure")


class RedisServer:
    """A redis-server subprocess on one loopback port, which can stop and restart."""

    def __init__(self, binary: str, log: Path, port: int | None = None) -> None:
        self.binary = binary
        self.port = port or free_port()
        self.log = log
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:<port>/0``."""
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def pid(self) -> int:
        """Process id of the running server."""
        assert self._proc is not None, "redis-server is not running"
        return self._proc.pid

    def start(self) -> None:
        """Start the server on ``self.port`` and wait until it answers PING."""
        assert self._proc is None, "redis-server already running"
        command = [
            self.binary,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--daemonize",
            "no",
        ]
        with self.log.open("ab") as log:
            self._proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT
        while not self.ping():
            if self._proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                tail = self.log.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"redis-server on port {self.port} did not start:\n{tail}")
            time.sleep(0.02)

    def ping(self) -> bool:
        """True if the server answers PING with PONG."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1.0) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(64).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        """Terminate the server (SIGKILL if it lingers) and reap it."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGCONT)  # in case a test froze it
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)

    def restart(self) -> None:
        """Stop and start again on the same port (an empty database: nothing is saved)."""
        self.stop()
        self.start()

    def client(self) -> aioredis.Redis:
        """A new bytes client for inspecting raw keys (close it with ``aclose``)."""
        return aioredis.Redis.from_url(self.url, socket_timeout=5.0)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One redis-server for the session (tests keep apart by key prefix)."""
    server = RedisServer(redis_binary(), tmp_path_factory.mktemp("redis") / "shared.log")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server of this test alone, which it may stop and restart."""
    server = RedisServer(redis_binary(), tmp_path / "redis.log")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def prefix() -> str:
    """A key prefix no other test uses."""
    return f"ra-test-{uuid.uuid4().hex}"


@pytest.fixture
async def raw(redis_server: RedisServer) -> AsyncIterator[aioredis.Redis]:
    """A plain redis-py client on the shared server, for inspecting keys."""
    client = redis_server.client()
    yield client
    await client.aclose()


# --- robots.txt origins -------------------------------------------------------------


@dataclass
class Site:
    """One origin (one port): its robots.txt reply and the arrival times of requests."""

    port: int
    status: int = 200
    body: bytes = ROBOTS
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    hits: list[float] = field(default_factory=list)
    #: Set once robots.txt was requested.
    requested: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def base(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str = "/") -> str:
        """An absolute URL on this origin."""
        return self.base + path

    @property
    def origin(self) -> ra.Origin:
        """The Origin of this site."""
        return ra.Origin.from_url(self.base)

    def count(self) -> int:
        """robots.txt requests received so far."""
        return len(self.hits)

    def serve(
        self,
        *,
        status: int = 200,
        body: bytes = ROBOTS,
        headers: dict[str, str] | None = None,
        delay: float = 0.0,
    ) -> None:
        """Change this origin's robots.txt reply."""
        self.status, self.body, self.headers, self.delay = status, body, headers or {}, delay


class Sites:
    """aiohttp origins on the running loop, one per port, all in one app."""

    def __init__(self) -> None:
        self.by_port: dict[int, Site] = {}
        self._runner: web.AppRunner | None = None

    async def add(self, count: int = 1, **reply: Any) -> list[Site]:
        """Start ``count`` new origins answering ``reply`` (see :meth:`Site.serve`)."""
        if self._runner is None:
            app = web.Application()
            app.router.add_get("/robots.txt", self._robots)
            self._runner = web.AppRunner(
                app, access_log=None, handle_signals=False, shutdown_timeout=0.2
            )
            await self._runner.setup()
        added = []
        for _ in range(count):
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            site = Site(sock.getsockname()[1])
            site.serve(**reply)
            await web.SockSite(self._runner, sock, backlog=1024).start()
            self.by_port[site.port] = site
            added.append(site)
        return added

    async def _robots(self, request: web.Request) -> web.StreamResponse:
        sockname = request.transport.get_extra_info("sockname") if request.transport else None
        site = self.by_port[sockname[1] if sockname else 0]
        site.hits.append(time.monotonic())
        site.requested.set()
        if site.delay:
            await asyncio.sleep(site.delay)
        return web.Response(body=site.body, status=site.status, headers=site.headers)

    def total(self) -> int:
        """robots.txt requests received by all origins."""
        return sum(site.count() for site in self.by_port.values())

    async def close(self) -> None:
        """Stop every origin."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None


@pytest.fixture
async def sites() -> AsyncIterator[Sites]:
    """Factory of robots.txt origins (``await sites.add(n)``), stopped at teardown."""
    factory = Sites()
    yield factory
    await factory.close()


class FakeClock:
    """A clock that starts at the real time and moves only by :meth:`advance`."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """Move the clock forward."""
        self.now += seconds


# --- worker subprocesses ------------------------------------------------------------


class Worker:
    """A ``worker.py`` subprocess: a RobotsChecker on a RedisStore, fed batches of URLs."""

    def __init__(self, proc: asyncio.subprocess.Process, log: Path) -> None:
        self.proc = proc
        self.log = log

    @classmethod
    async def start(cls, log: Path, *args: str) -> Worker:
        """Start ``worker.py args...`` and wait until it is ready to check."""
        with log.open("wb") as stderr:
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                str(WORKER_SCRIPT),
                *args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=stderr,
                limit=1 << 24,
            )
        worker = cls(proc, log)
        assert await worker._read(60.0) == {"ready": True}
        return worker

    async def send(self, urls: list[str], seed: int) -> None:
        """Ask the worker to check ``urls`` concurrently, in an order drawn from ``seed``."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"urls": urls, "seed": seed}).encode() + b"\n")
        await self.proc.stdin.drain()

    async def result(self, timeout: float = 100.0) -> dict[str, Any]:
        """The worker's report on the batch sent last: verdicts, elapsed, cache stats."""
        return await self._read(timeout)

    async def run(self, urls: list[str], seed: int, timeout: float = 100.0) -> dict[str, Any]:
        """:meth:`send` then :meth:`result`."""
        await self.send(urls, seed)
        return await self.result(timeout)

    async def _read(self, timeout: float) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), timeout)
        if not line:
            await self.proc.wait()
            stderr = self.log.read_text(errors="replace")[-4000:]
            raise AssertionError(f"worker exited ({self.proc.returncode}):\n{stderr}")
        report: dict[str, Any] = json.loads(line)
        return report

    def stderr(self) -> str:
        """What the worker wrote to stderr so far."""
        return self.log.read_text(errors="replace")

    async def close(self) -> None:
        """Close stdin (the worker exits) and reap it; kill it if it hangs."""
        if self.proc.returncode is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                await asyncio.wait_for(self.proc.wait(), 15)
            except asyncio.TimeoutError:
                self.proc.kill()
                await self.proc.wait()


@pytest.fixture
async def start_worker(tmp_path: Path) -> AsyncIterator[Callable[..., Awaitable[Worker]]]:
    """Factory: ``await start_worker(*args)`` starts a ready :class:`Worker`; all are
    closed at teardown."""
    started: list[Worker] = []

    async def start(*args: str) -> Worker:
        worker = await Worker.start(tmp_path / f"worker-{len(started)}.log", *args)
        started.append(worker)
        return worker

    yield start
    await asyncio.gather(*(worker.close() for worker in started))
