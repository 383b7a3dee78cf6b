"""Load with failures: 2,000 concurrent checks over 200 origins, 10% of them failing
(503, reset, timeout, gzip bomb). Every check is answered, each origin is fetched
once, cancelled waiters lose nobody else's answer, and closing leaves nothing behind."""

from __future__ import annotations

import asyncio
import socket
import struct
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

import aiohttp
import pytest
from aiohttp import web

import robots_async as ra

from .conftest import USER_AGENT, bomb, policy

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

ORIGINS = 200
CHECKS = 2_000
#: Every answer but "timeout" is held back this long, so waiters are still in flight
#: when the cancellation test cancels them.
DELAY = 0.5
TOTAL_TIMEOUT = 1.5
#: Behaviour by origin index modulo 40: 4 failing kinds, 5 origins each (10%).
FAILING = {1: "503", 11: "reset", 21: "timeout", 31: "bomb"}
ROBOTS = b"User-agent: *\nDisallow: /private/\n"
DISALLOW_ALL = b"User-agent: *\nDisallow: /\n"
#: A run must not hang: every fetch ends within TOTAL_TIMEOUT, a few rounds of them.
RUN_BOUND = 30.0
#: The wait for a fetch slot counts against TOTAL_TIMEOUT: 200 fetches of DELAY
#: through 64 slots would outlast it. A slot per origin keeps this a test of
#: failures and cancellation (queueing: tests/checker/test_isolation.py).
FETCH_SLOTS = ORIGINS


def behaviour(index: int) -> str:
    """What origin ``index`` does when asked for robots.txt."""
    return FAILING.get(index % 40, "ok")


def path_for(check: int) -> str:
    """The path of the ``check``-th URL: a third are under /private/."""
    return "/private/x" if check % 3 == 0 else "/page"


def expected(index: int, path: str) -> bool:
    """The documented verdict: failing origins (and the bomb's rules) disallow all."""
    return behaviour(index) == "ok" and not path.startswith("/private/")


class LoadServer:
    """One aiohttp AppRunner listening on ``ORIGINS`` ports; counts requests per port."""

    def __init__(self, bomb_body: bytes) -> None:
        self.ports: list[int] = []
        self.behaviours: dict[int, str] = {}
        self.counts: Counter[int] = Counter()
        self._bomb = bomb_body
        self._runner: web.AppRunner | None = None

    async def start(self, origins: int) -> None:
        """Listen on ``origins`` ports of 127.0.0.1."""
        app = web.Application()
        app.router.add_get("/robots.txt", self._handle)
        self._runner = web.AppRunner(
            app, access_log=None, handler_cancellation=True, shutdown_timeout=0.2
        )
        await self._runner.setup()
        for index in range(origins):
            site = web.TCPSite(self._runner, "127.0.0.1", 0, backlog=1024)
            await site.start()
            port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
            self.ports.append(port)
            self.behaviours[port] = behaviour(index)

    @property
    def open_connections(self) -> int:
        """Client connections the server still holds."""
        server = self._runner.server if self._runner is not None else None
        return len(server.connections) if server is not None else 0

    async def close(self) -> None:
        """Stop every site."""
        if self._runner is not None:
            await self._runner.cleanup()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        transport = request.transport
        assert transport is not None
        port = transport.get_extra_info("sockname")[1]
        self.counts[port] += 1
        kind = self.behaviours[port]
        if kind == "timeout":
            await asyncio.sleep(3600)  # cancelled when the client gives up
        await asyncio.sleep(DELAY)
        if kind == "503":
            return web.Response(status=503)
        if kind == "reset":
            sock = transport.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            transport.abort()
            return web.Response()
        if kind == "bomb":
            headers = {"Content-Encoding": "gzip", "Content-Type": "text/plain"}
            return web.Response(body=self._bomb, headers=headers)
        return web.Response(body=ROBOTS, content_type="text/plain")


@pytest.fixture(scope="module")
def disallowing_bomb() -> bytes:
    """A gzip bomb (64 MiB decoded) whose first lines disallow everything."""
    return bomb("gzip", head=DISALLOW_ALL)


@pytest.fixture
async def load_server(disallowing_bomb: bytes) -> AsyncIterator[LoadServer]:
    """``ORIGINS`` loopback origins, 10% failing."""
    server = LoadServer(disallowing_bomb)
    await server.start(ORIGINS)
    yield server
    await server.close()


@pytest.fixture
def sessions(monkeypatch: pytest.MonkeyPatch) -> list[aiohttp.ClientSession]:
    """Every aiohttp.ClientSession created during the test (the checker's own one)."""
    created: list[aiohttp.ClientSession] = []
    original = aiohttp.ClientSession

    def recording(*args: Any, **kwargs: Any) -> aiohttp.ClientSession:
        session = original(*args, **kwargs)
        created.append(session)
        return session

    monkeypatch.setattr(aiohttp, "ClientSession", recording)
    return created


def url_for(server: LoadServer, index: int, check: int) -> str:
    """The ``check``-th URL, on origin ``index``."""
    return f"http://127.0.0.1:{server.ports[index]}{path_for(check)}"


async def assert_nothing_left(
    before: set[asyncio.Task[Any]],
    server: LoadServer,
    sessions: list[aiohttp.ClientSession],
) -> None:
    """After aclose(): the owned session is closed, and no task or connection remains."""
    assert len(sessions) == 1
    assert sessions[0].closed
    current = asyncio.current_task()
    deadline = time.monotonic() + 5.0
    while True:
        left = {t for t in asyncio.all_tasks() - before if t is not current and not t.done()}
        if (not left and server.open_connections == 0) or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.05)
    assert not left, sorted(repr(t.get_coro()) for t in left)
    assert server.open_connections == 0


def assert_one_request_per_origin(server: LoadServer) -> None:
    """Each origin's robots.txt was requested exactly once (counted by the server)."""
    wrong = Counter(
        f"{server.behaviours[port]}: {server.counts[port]} requests"
        for port in server.ports
        if server.counts[port] != 1
    )
    assert not wrong, dict(wrong)


async def test_every_check_answered_and_each_origin_fetched_once(
    load_server: LoadServer, sessions: list[aiohttp.ClientSession]
) -> None:
    """2,000 concurrent checks: each answered as documented, one request per origin."""
    before = asyncio.all_tasks()
    checker = ra.RobotsChecker(
        USER_AGENT,
        fetch_policy=policy(TOTAL_TIMEOUT, 1.0),
        max_concurrent_fetches=FETCH_SLOTS,
    )
    indices = [check % ORIGINS for check in range(CHECKS)]
    urls = [url_for(load_server, index, check) for check, index in enumerate(indices)]
    try:
        answers = await asyncio.wait_for(
            asyncio.gather(*(checker.allowed(url) for url in urls), return_exceptions=True),
            RUN_BOUND,
        )
    finally:
        await checker.aclose()
    assert all(isinstance(answer, bool) for answer in answers), {type(a).__name__ for a in answers}
    wrong = [
        (load_server.behaviours[load_server.ports[index]], urls[check], answer)
        for check, (index, answer) in enumerate(zip(indices, answers, strict=True))
        if answer != expected(index, path_for(check))
    ]
    assert not wrong, wrong[:10]
    stats = checker.stats
    assert stats.checks == CHECKS
    assert stats.cache.fetches == ORIGINS
    assert stats.cache.errors == 15  # the 503, reset and timeout origins
    await assert_nothing_left(before, load_server, sessions)
    assert_one_request_per_origin(load_server)


async def test_cancelling_half_the_waiters_loses_no_answer(
    load_server: LoadServer, sessions: list[aiohttp.ClientSession]
) -> None:
    """Cancelling every other waiter mid-flight loses no other answer; one fetch each."""
    # The cancelled half includes the first caller of every fetch.
    before = asyncio.all_tasks()
    checker = ra.RobotsChecker(
        USER_AGENT,
        fetch_policy=policy(TOTAL_TIMEOUT, 1.0),
        max_concurrent_fetches=FETCH_SLOTS,
    )
    # Checks 2k and 2k+1 share an origin: the even one asks first and is cancelled.
    indices = [(check // 2) % ORIGINS for check in range(CHECKS)]
    try:
        tasks = [
            asyncio.create_task(checker.allowed(url_for(load_server, index, check)))
            for check, index in enumerate(indices)
        ]
        await asyncio.sleep(0.2)
        in_flight = sum(not task.done() for task in tasks)
        for task in tasks[0::2]:
            task.cancel()
        answers = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), RUN_BOUND)
    finally:
        await checker.aclose()
    assert in_flight == CHECKS  # every task was still waiting when half were cancelled
    assert all(task.cancelled() for task in tasks[0::2])
    kept = list(zip(indices[1::2], range(1, CHECKS, 2), answers[1::2], strict=True))
    assert all(isinstance(answer, bool) for _, _, answer in kept)
    wrong = [(i, c, a) for i, c, a in kept if a != expected(i, path_for(c))]
    assert not wrong, wrong[:10]
    assert checker.stats.cache.fetches == ORIGINS
    await assert_nothing_left(before, load_server, sessions)
    assert_one_request_per_origin(load_server)
