"""Fixtures for the Redis store tests: a real redis-server on a free loopback port,
robots.txt origins served by aiohttp on the test's loop, and worker subprocesses."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import redis.asyncio as aioredis
from aiohttp import web

import robots_async as ra
from robots_async.contrib.redis import RedisStore

from ...workers import JsonLinesWorker

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


class _PortTakenError(RuntimeError):
    """redis-server exited: its port was taken before it could bind it."""


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

    def __init__(
        self, binary: str, log: Path, port: int | None = None, extra: tuple[str, ...] = ()
    ) -> None:
        self.binary = binary
        self.port = port or free_port()
        #: Whether the port was picked here (free a moment ago): another may be picked
        #: if it was taken before the server bound it.
        self._picked = port is None
        self.log = log
        #: More redis-server options (e.g. cluster mode).
        self.extra = extra
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
        """Start the server on ``self.port`` and wait until it answers PING. A port
        picked here and taken meanwhile (another pytest-xdist worker's server or
        socket bound it first) is picked again, twice at most; a restart keeps it."""
        for attempt in range(3):
            try:
                self._start_once()
                return
            except _PortTakenError:  # noqa: PERF203 (three tries at most)
                if not self._picked or attempt == 2:
                    raise
                self.port = free_port()

    def _start_once(self) -> None:
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
            *self.extra,
        ]
        start = self.log.stat().st_size if self.log.exists() else 0
        with self.log.open("ab") as log:
            self._proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT
        # Ours answering, not just a server on the port: a port picked free a moment
        # ago can be taken by another pytest-xdist worker's server, and ours then
        # exits ("Address already in use") while the other answers PING.
        while self._answering_pid() != self._proc.pid:
            if self._proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                with self.log.open("rb") as log:
                    log.seek(start)
                    tail = log.read().decode(errors="replace")[-2000:]
                error = _PortTakenError if "Address already in use" in tail else RuntimeError
                raise error(f"redis-server on port {self.port} did not start:\n{tail}")
            time.sleep(0.02)

    def _answering_pid(self) -> int | None:
        """The process id of the server answering on ``self.port`` (INFO), or None."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1.0) as sock:
                sock.sendall(b"INFO server\r\n")
                reply = b""
                while b"process_id:" not in reply or not reply.endswith(b"\r\n\r\n"):
                    chunk = sock.recv(65536)
                    if not chunk:
                        break
                    reply += chunk
        except OSError:
            return None
        for line in reply.split(b"\r\n"):
            if line.startswith(b"process_id:"):
                return int(line.partition(b":")[2])
        return None

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


def pace_store(kind: str, request: pytest.FixtureRequest, tmp_path: Path, prefix: str) -> Any:
    """A pace store by ``kind``: "memory", "sqlite" (in ``tmp_path``), "redis" (the
    session's redis-server) or "cluster" (the module's Redis Cluster)."""
    if kind == "memory":
        return ra.MemoryStore()
    if kind == "sqlite":
        return ra.SQLiteStore(tmp_path / "pace.sqlite")
    server = request.getfixturevalue("redis_cluster" if kind == "cluster" else "redis_server")
    return RedisStore(server.url, prefix=prefix)


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


class Worker(JsonLinesWorker):
    """A ``worker.py`` subprocess: a RobotsChecker on a RedisStore, fed batches of URLs."""

    @classmethod
    async def start(cls, log: Path, *args: str) -> Worker:
        """Start ``worker.py args...`` and wait until it is ready to check."""
        worker = await cls.spawn(log, WORKER_SCRIPT, *args)
        assert await worker.read(60.0) == {"ready": True}
        return worker

    async def send(self, urls: list[str], seed: int) -> None:
        """Ask the worker to check ``urls`` concurrently, in an order drawn from ``seed``."""
        await self.send_json({"urls": urls, "seed": seed})

    async def result(self, timeout: float = 100.0) -> dict[str, Any]:
        """The worker's report on the batch sent last: verdicts, elapsed, cache stats."""
        return await self.read(timeout)

    async def run(self, urls: list[str], seed: int, timeout: float = 100.0) -> dict[str, Any]:
        """:meth:`send` then :meth:`result`."""
        await self.send(urls, seed)
        return await self.result(timeout)


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


# --- Redis Cluster ------------------------------------------------------------------


def cluster_ports(count: int) -> list[int]:
    """``count`` free ports of 127.0.0.1 whose cluster bus port (+10000) is free too."""
    ports: list[int] = []
    for candidate in range(20_000 + os.getpid() % 20_000, 55_000):
        if len(ports) == count:
            break
        try:
            for port in (candidate, candidate + 10_000):
                with socket.socket() as sock:
                    sock.bind(("127.0.0.1", port))
        except OSError:
            continue
        ports.append(candidate)
    return ports


class LocalCluster:
    """A Redis Cluster of redis-server processes on 127.0.0.1 (masters, and optionally
    one replica each), created with ``redis-cli --cluster create``."""

    def __init__(self, binary: str, directory: Path, masters: int = 3, replicas: int = 0) -> None:
        self.directory = directory
        self.replicas = replicas
        # Replicas sync at once (no diskless-sync delay), so a failover can happen.
        options = (
            *("--cluster-enabled", "yes", "--cluster-node-timeout", "1000"),
            *("--repl-diskless-sync-delay", "0", "--dir"),
        )
        self.nodes = [
            RedisServer(
                binary,
                directory / f"node-{port}.log",
                port,
                (*options, str(directory), "--cluster-config-file", f"nodes-{port}.conf"),
            )
            for port in cluster_ports(masters * (1 + replicas))
        ]

    @property
    def url(self) -> str:
        """A ``redis+cluster://`` URL of the first node."""
        return f"redis+cluster://127.0.0.1:{self.nodes[0].port}"

    def start(self) -> None:
        """Start every node, join them into a cluster, wait until it serves all slots."""
        self.start_nodes()
        self.join()

    def start_nodes(self) -> None:
        """Start every node (each answers PING on its port)."""
        for node in self.nodes:
            node.start()

    def join(self) -> None:
        """Join the started nodes into a cluster; wait until it serves all slots."""
        cli = shutil.which("redis-cli")
        if cli is None:
            raise RuntimeError("redis-cli is not on PATH")
        addresses = [f"127.0.0.1:{node.port}" for node in self.nodes]
        command = [cli, "--cluster", "create", *addresses]
        command += ["--cluster-replicas", str(self.replicas), "--cluster-yes"]
        created = subprocess.run(command, capture_output=True, timeout=60, check=False)
        if created.returncode:
            raise RuntimeError(f"redis-cli --cluster create failed: {created.stdout[-2000:]!r}")
        self.wait_ok()
        self.wait_replicas()

    def wait_replicas(self, timeout: float = 30.0) -> None:
        """Wait until every replica's link to its master is up (it can take over)."""
        deadline = time.monotonic() + timeout
        for node in self.nodes:
            while True:
                info = self.command(node, b"INFO replication")
                if b"role:master" in info or b"master_link_status:up" in info:
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"replica {node.port} not in sync: {info!r}")
                time.sleep(0.1)

    def wait_ok(self, timeout: float = 30.0, nodes: list[RedisServer] | None = None) -> None:
        """Wait until every running node reports ``cluster_state:ok``."""
        deadline = time.monotonic() + timeout
        for node in nodes or self.nodes:
            while b"cluster_state:ok" not in self.info(node):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"cluster node {node.port} not ok: {self.info(node)!r}")
                time.sleep(0.1)

    def wait_failover(self, dead: RedisServer, timeout: float = 30.0) -> None:
        """Wait until the others mark ``dead`` failed and serve every slot again."""
        survivors = [node for node in self.nodes if node is not dead]
        deadline = time.monotonic() + timeout
        marker = f"127.0.0.1:{dead.port}@".encode()
        while True:
            nodes = self.command(survivors[0], b"CLUSTER NODES")
            line = next((ln for ln in nodes.split(b"\n") if marker in ln), b"")
            fields = line.split()
            # Failed over: flagged "fail", and its slots (fields 9 on) moved away.
            if len(fields) == 8 and b"fail" in fields[2].split(b","):
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"node {dead.port} not marked failed: {line!r}")
            time.sleep(0.1)
        for node in survivors:
            while b"cluster_slots_ok:16384" not in self.info(node):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"node {node.port} not ok: {self.info(node)!r}")
                time.sleep(0.1)
        self.wait_ok(max(deadline - time.monotonic(), 1.0), survivors)

    @classmethod
    def info(cls, node: RedisServer) -> bytes:
        """CLUSTER INFO of ``node`` (b"" if it does not answer)."""
        return cls.command(node, b"CLUSTER INFO")

    @staticmethod
    def command(node: RedisServer, inline: bytes) -> bytes:
        """The raw reply of ``node`` to an inline command (b"" if it does not answer)."""
        try:
            with socket.create_connection(("127.0.0.1", node.port), timeout=1.0) as sock:
                sock.sendall(inline + b"\r\n")
                return sock.recv(8192)
        except OSError:
            return b""

    def master_of(self, key: str) -> RedisServer:
        """The node serving ``key``'s slot now."""
        for node in self.nodes:
            with socket.create_connection(("127.0.0.1", node.port), timeout=2.0) as sock:
                command = f"*2\r\n$3\r\nGET\r\n${len(key.encode())}\r\n{key}\r\n".encode()
                sock.sendall(command)
                reply = sock.recv(4096)
            if not reply.startswith(b"-MOVED") and not reply.startswith(b"-CLUSTERDOWN"):
                return node
        raise RuntimeError(f"no node serves {key!r}")

    def stop(self) -> None:
        """Stop every node."""
        for node in self.nodes:
            node.stop()


@contextlib.contextmanager
def _cluster_ports_lock() -> Iterator[None]:
    """Held by one process of the machine at a time (an exclusive flock on a file of
    the temporary directory), from picking a cluster's ports until its nodes listen
    on them: pytest-xdist workers' process ids are next to each other, so two workers
    picking at once picked the same free ports (see test_cluster_ports.py)."""
    path = Path(tempfile.gettempdir()) / "robots_async-tests-cluster-ports.lock"
    descriptor = os.open(path, os.O_RDONLY | os.O_CREAT, 0o666)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # releases the lock


def start_cluster(binary: str, directory: Path, replicas: int = 0) -> LocalCluster:
    """A started :class:`LocalCluster`; skip (fail under CI) if it cannot start."""
    cluster: LocalCluster | None = None
    try:
        with _cluster_ports_lock():
            cluster = LocalCluster(binary, directory, replicas=replicas)
            cluster.start_nodes()
        cluster.join()
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        if cluster is not None:
            cluster.stop()
        reason = f"cannot start a local Redis Cluster: {exc}"
        if os.environ.get("CI"):
            pytest.fail(f"{reason}: CI must run the cluster tests", pytrace=False)
        pytest.skip(reason)
    return cluster


@pytest.fixture(scope="module")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """Three masters (no replicas) for the module; tests keep apart by key prefix."""
    cluster = start_cluster(redis_binary(), tmp_path_factory.mktemp("cluster"))
    yield cluster
    cluster.stop()


@pytest.fixture
def replicated_cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    """Three masters with a replica each, for this test alone (it may kill nodes)."""
    directory = tmp_path / "cluster"
    directory.mkdir()
    cluster = start_cluster(redis_binary(), directory, replicas=1)
    yield cluster
    cluster.stop()
