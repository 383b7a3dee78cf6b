"""Fixtures for the framework adapters: real aiohttp sites on 127.0.0.1 served from a
background thread (so a Scrapy subprocess can reach them while a test blocks), and a
runner that performs a real Scrapy crawl in a subprocess and returns its results."""

from __future__ import annotations

import asyncio
import itertools
import json
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from aiohttp import web

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping

    Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

CRAWL_SCRIPT = Path(__file__).with_name("crawl.py")
#: Scrapy's default User-Agent header (product token "Scrapy").
SCRAPY_UA = "Scrapy/2.19 (+https://scrapy.org)"
DROP_IN = {
    "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
    "robots_async.contrib.scrapy.RobotsTxtMiddleware": 100,
}
BASE_SETTINGS: dict[str, Any] = {
    "ROBOTSTXT_OBEY": True,
    "DOWNLOADER_MIDDLEWARES": DROP_IN,
    "LOG_LEVEL": "WARNING",
    "TELNETCONSOLE_ENABLED": False,
    "DOWNLOAD_TIMEOUT": 10,
    "CONCURRENT_REQUESTS": 16,
    "RETRY_ENABLED": False,
    "ROBOTSASYNC_TIMEOUT": 10.0,
}


@dataclass(frozen=True)
class Reply:
    """A fixed response, optionally sent after ``delay`` seconds."""

    body: bytes = b""
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Host:
    """One origin: an aiohttp server on its own port of 127.0.0.1.

    Routed paths get their reply; ``/robots.txt`` is 404 unless routed; any other
    path is a small 200 page. Every request is logged with its arrival time.
    """

    port: int = 0
    routes: dict[str, Reply | Handler] = field(default_factory=dict)
    hits: list[tuple[str, float]] = field(default_factory=list)

    @property
    def base(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        """An absolute URL on this origin."""
        return self.base + path

    def paths(self) -> list[str]:
        """Requested paths (query included), in arrival order."""
        return [path for path, _ in list(self.hits)]

    def count(self, path: str) -> int:
        """How often ``path`` was requested."""
        return self.paths().count(path)

    def times(self, prefix: str) -> list[float]:
        """Arrival times (monotonic) of requests whose path starts with ``prefix``."""
        return sorted(t for path, t in list(self.hits) if path.startswith(prefix))

    def serve(
        self,
        path: str,
        body: str | bytes = b"",
        *,
        status: int = 200,
        headers: Mapping[str, str] | None = None,
        delay: float = 0.0,
    ) -> None:
        """Answer ``path`` with a fixed response."""
        data = body.encode() if isinstance(body, str) else body
        self.routes[path] = Reply(data, status, dict(headers or {}), delay)

    def redirect(self, path: str, location: str, status: int = 301) -> None:
        """Answer ``path`` with a redirect to ``location``."""
        self.serve(path, status=status, headers={"Location": location})

    async def dispatch(self, request: web.Request) -> web.StreamResponse:
        """Log the request, then answer it."""
        self.hits.append((request.path_qs, time.monotonic()))
        route = self.routes.get(request.path)
        if route is None:
            if request.path == "/robots.txt":
                return web.Response(status=404, text="no robots.txt")
            return web.Response(text=f"<html><body>{request.path}</body></html>")
        if isinstance(route, Reply):
            if route.delay:
                await asyncio.sleep(route.delay)
            return web.Response(body=route.body, status=route.status, headers=route.headers)
        return await route(request)


class LoopThread:
    """An event loop running in a daemon thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, Any], timeout: float = 10.0) -> Any:
        """Run ``coro`` on the thread's loop and return its result."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self) -> None:
        """Stop the loop and join the thread."""
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
        self.loop.close()


class Site:
    """Starts :class:`Host` servers on the background loop; :meth:`close` stops them."""

    def __init__(self, thread: LoopThread) -> None:
        self._thread = thread
        self._runners: list[web.AppRunner] = []

    def host(self) -> Host:
        """A new origin listening on a free port of 127.0.0.1."""
        return self._thread.run(self._start())

    async def _start(self) -> Host:
        host = Host()
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", host.dispatch)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.2)
        await runner.setup()
        self._runners.append(runner)
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        host.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return host

    def close(self) -> None:
        """Stop every server this site started."""
        for runner in self._runners:
            self._thread.run(runner.cleanup())
        self._runners.clear()


@dataclass
class HungRobotsFleet:
    """``origins`` origins, each on its own loopback address under ``subnet`` (its own
    Scrapy download slot); the first ``hung`` never answer robots.txt. Page requests
    are timed by origin."""

    origins: int
    hung_count: int
    subnet: str
    bases: list[str] = field(default_factory=list)
    page_times: dict[str, list[float]] = field(default_factory=dict)
    runner: web.AppRunner | None = None

    async def start(self) -> HungRobotsFleet:
        app = web.Application()
        app.router.add_get("/{tail:.*}", self._handle)
        self.runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
        await self.runner.setup()
        for n in range(self.origins):
            site = web.TCPSite(self.runner, f"{self.subnet}.{n + 1}", 0)
            await site.start()
            port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
            self.bases.append(f"http://{self.subnet}.{n + 1}:{port}")
        return self

    def hung(self, base: str) -> bool:
        return self.bases.index(base) < self.hung_count

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        base = f"http://{request.host}"
        if request.path == "/robots.txt":
            if self.hung(base):
                await asyncio.sleep(120)  # never answers within the crawl
            return web.Response(body=b"User-agent: *\nDisallow: /private\n")
        self.page_times.setdefault(base, []).append(time.monotonic())
        return web.Response(text="<html><body>page</body></html>", content_type="text/html")


@contextmanager
def hung_robots_fleet(
    loop_thread: LoopThread, origins: int, hung: int, subnet: str
) -> Iterator[HungRobotsFleet]:
    """A started :class:`HungRobotsFleet`, stopped on exit."""
    started: HungRobotsFleet = loop_thread.run(HungRobotsFleet(origins, hung, subnet).start())
    try:
        yield started
    finally:
        assert started.runner is not None
        loop_thread.run(started.runner.cleanup())


@pytest.fixture(scope="session")
def loop_thread() -> Iterator[LoopThread]:
    """One background event loop for every test server."""
    thread = LoopThread()
    yield thread
    thread.stop()


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real redis-server on a free loopback port, one per test module (skipped off CI
    if not installed)."""
    from .redis_store.conftest import RedisServer, redis_binary

    server = RedisServer(redis_binary(), tmp_path_factory.mktemp("redis") / "redis.log")
    server.start()
    yield server.url
    server.stop()


@pytest.fixture
def site(loop_thread: LoopThread) -> Iterator[Site]:
    """Factory of origins (``site.host()``), stopped at teardown."""
    factory = Site(loop_thread)
    yield factory
    factory.close()


@dataclass(frozen=True)
class CrawlResult:
    """What one subprocess crawl reported."""

    stats: dict[str, Any]
    items: list[dict[str, Any]]
    errors: list[dict[str, Any]]
    robots_parsed: list[dict[str, Any]]
    stderr: str

    def stat(self, name: str) -> Any:
        """A stats value, 0 when absent."""
        return self.stats.get(name, 0)

    @property
    def scraped(self) -> set[str]:
        """URLs whose responses reached the spider callback."""
        return {item["url"] for item in self.items}


def run_json_script(script: Path, args: dict[str, Any], timeout: float = 60.0) -> tuple[Any, str]:
    """Run ``python script ARGS_JSON`` (a Scrapy process of its own); return the JSON
    it wrote to ``args["out"]`` and its stderr. Fails the test if it exits non-zero."""
    proc = subprocess.run(
        [sys.executable, str(script), json.dumps(args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert proc.returncode == 0, f"{script.name} failed ({proc.returncode}):\n{proc.stderr[-4000:]}"
    return json.loads(Path(args["out"]).read_text(encoding="utf-8")), proc.stderr


def run_crawls_at_once(
    tmp_path: Path,
    starts: dict[int, list[str]],
    *,
    settings: Mapping[str, Any],
    meta: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[CrawlResult]:
    """One crawl per entry of ``starts`` (:func:`run_crawl`, each a process of its own
    in a directory ``tmp_path/<n>``), all at once; their results in ``starts``' order."""
    for n in starts:
        (tmp_path / str(n)).mkdir()

    def crawl(n: int) -> CrawlResult:
        return run_crawl(tmp_path / str(n), starts[n], settings=settings, meta=meta)

    with ThreadPoolExecutor(len(starts)) as pool:
        return list(pool.map(crawl, starts))


def gaps_between(times: list[float]) -> list[float]:
    """The seconds between consecutive ``times`` (sorted first), to the millisecond."""
    return [round(b - a, 3) for a, b in itertools.pairwise(sorted(times))]


def run_crawl(
    tmp_path: Path,
    start_urls: list[str],
    *,
    settings: Mapping[str, Any] | None = None,
    replace_settings: bool = False,
    meta: Mapping[str, Mapping[str, Any]] | None = None,
    probes: list[str] | None = None,
    timeout: float = 60.0,
) -> CrawlResult:
    """Crawl ``start_urls`` with a real Scrapy CrawlerProcess in a subprocess.

    ``settings`` are added to :data:`BASE_SETTINGS` (or replace them); ``meta`` maps
    a start URL to its request meta; ``probes`` are paths each ``robots_parsed``
    robotparser is asked about (for Scrapy's User-Agent), relative to its request.
    """
    out = tmp_path / f"crawl-{len(list(tmp_path.glob('crawl-*.json')))}.json"
    merged = dict(settings or {}) if replace_settings else {**BASE_SETTINGS, **(settings or {})}
    args = {
        "start_urls": start_urls,
        "settings": merged,
        "meta": dict(meta or {}),
        "probes": probes or [],
        "user_agent": SCRAPY_UA,
        "out": str(out),
    }
    data, stderr = run_json_script(CRAWL_SCRIPT, args, timeout=timeout)
    result = CrawlResult(
        data["stats"], data["items"], data["errors"], data["robots_parsed"], stderr
    )
    assert result.stat("log_count/ERROR") == 0, result.stderr[-4000:]
    return result
