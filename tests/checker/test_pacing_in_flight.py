"""429s of requests in flight together, through the aiohttp middleware and the httpx
transport against a real server: counted once however slowly they come back (the
adapters pass each response's elapsed time, from when its headers were sent, to
core.pacing.observed)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import aiohttp
import pytest

from robots_async.checker import pacing
from robots_async.contrib.aiohttp import RobotsMiddleware

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType

    import robots_async as ra

    from ..servers import Server

#: The first back-off of this test (2 s by default); the slow 429 comes back later.
FIRST = 0.2
SLOW = 1.0


def _httpx() -> ModuleType:
    """httpx, or a skip where it is not installed (the lowest-direct core job)."""
    return pytest.importorskip("httpx")


def _httpx_transport() -> ModuleType:
    _httpx()
    from robots_async.contrib import httpx as transport

    return transport


async def _two_429s(
    server: Server,
    checker: ra.RobotsChecker,
    slow: float,
    client: str = "aiohttp",
    *,
    traced: bool = True,
) -> float:
    """Send /slow (429 after ``slow`` seconds) and /fast (429 at once) together through
    the pacing middleware (``client``: aiohttp, its trace config in the session unless
    not ``traced``, or httpx), robots.txt already cached; the loop time they were sent."""
    server.text("/robots.txt", "User-agent: *\nAllow: /\n")
    server.text("/fast", status=429)
    server.text("/slow", status=429, delay=slow)
    assert await checker.allowed(server.url("/fast"))
    started = asyncio.get_running_loop().time()
    paths = ("/slow", "/fast")
    if client == "aiohttp":
        middleware = RobotsMiddleware(checker, pace=True)
        traces = [middleware.trace_config] if traced else []
        async with aiohttp.ClientSession(
            middlewares=(middleware,), trace_configs=traces
        ) as session:

            async def status(path: str) -> int:
                async with session.get(server.url(path)) as response:
                    return response.status

            statuses = await asyncio.gather(*map(status, paths))
    else:
        httpx = _httpx()
        transport = _httpx_transport().RobotsTransport(checker, pace=True)
        async with httpx.AsyncClient(transport=transport) as http:
            responses = await asyncio.gather(*(http.get(server.url(p)) for p in paths))
            statuses = [r.status_code for r in responses]
    assert list(statuses) == [429, 429]
    return started


@pytest.mark.parametrize("client", ["aiohttp", "httpx"])
async def test_a_slow_429_sent_with_the_first_does_not_double_the_backoff(
    server: Server,
    make_checker: Callable[..., ra.RobotsChecker],
    monkeypatch: pytest.MonkeyPatch,
    client: str,
) -> None:
    """Two requests sent together both answer 429, one at once, one 1 s later (an
    overloaded server answers slowly): the same overload, one back-off of 0.2 s, over
    when the slow one arrives. Judged by its arrival (no elapsed time), the slow one
    doubled it (0.4 s from then)."""
    monkeypatch.setattr(pacing, "FIRST_BACKOFF", FIRST)
    checker = make_checker()
    await _two_429s(server, checker, SLOW, client)
    assert server.count("/slow") == server.count("/fast") == 1
    # Both were sent before the first 429 came back: its back-off (0.2 s, at most
    # 0.25 with jitter) ended before the slow one arrived.
    assert await checker.wait(server.url("/next")) < FIRST / 2


async def test_without_the_trace_config_aiohttp_429s_are_judged_by_arrival(
    server: Server,
    make_checker: Callable[..., ra.RobotsChecker],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The same two 429s through a session without the middleware's trace config: no
    send time, so the slow one counts as a new failure and doubles the back-off (the
    polite side), and one warning names the fix."""
    monkeypatch.setattr(pacing, "FIRST_BACKOFF", FIRST)
    checker = make_checker()
    with caplog.at_level("WARNING", logger="robots_async.contrib.aiohttp"):
        await _two_429s(server, checker, SLOW, traced=False)
    # Doubled from the slow 429's arrival: 0.4 s at least from now.
    assert await checker.wait(server.url("/next")) > FIRST
    warned = [r for r in caplog.records if "trace_configs=[middleware.trace_config]" in r.message]
    assert len(warned) == 1, caplog.records


async def test_429s_in_flight_within_the_backoff_count_once(
    server: Server,
    make_checker: Callable[..., ra.RobotsChecker],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same two requests, the slow one back within the back-off: one back-off
    (the rule of afaf6f3, held through the middleware and a real server)."""
    monkeypatch.setattr(pacing, "FIRST_BACKOFF", 1.0)
    checker = make_checker()
    started = await _two_429s(server, checker, 0.3)
    # One back-off of 1 s (at most 1.25 with jitter) from the first 429, ~0.3 s ago;
    # doubled from the slow one it would be 2 s from then (2.3 s from the start).
    slept = await checker.wait(server.url("/next"))
    elapsed = asyncio.get_running_loop().time() - started
    assert slept > 0.5, slept
    assert elapsed < 1.9, elapsed


async def test_a_429_sent_after_the_backoff_from_the_connection_pool_doubles_it(
    server: Server,
    make_checker: Callable[..., ra.RobotsChecker],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One aiohttp connection: /hog holds it 1 s. /page takes its turn at once
    and waits for the connection; meanwhile another worker's 429 begins a 0.2 s
    back-off. /page is sent when /hog ends, well after the back-off, and answers 429:
    that doubles the back-off. Timed from before the pool (5a2a676's middleware), it
    counted as sent within the first back-off and was dropped; the trace config times
    it as its headers are sent. The httpx transport's
    case: test_httpx_times_the_send_from_the_connection_pool."""
    monkeypatch.setattr(pacing, "FIRST_BACKOFF", FIRST)
    hog = 1.0
    checker = make_checker()
    server.text("/robots.txt", "User-agent: *\nAllow: /\n")
    server.text("/hog", delay=hog)
    server.text("/page", status=429)
    assert await checker.allowed(server.url("/hog"))
    connector = aiohttp.TCPConnector(limit=1)
    middleware = RobotsMiddleware(checker, pace=True)
    async with aiohttp.ClientSession(
        connector=connector, middlewares=(middleware,), trace_configs=[middleware.trace_config]
    ) as session:

        async def get(path: str) -> int:
            async with session.get(server.url(path)) as response:
                return response.status

        hogging = asyncio.ensure_future(get("/hog"))
        await asyncio.sleep(0.05)  # /hog has the one connection
        paging = asyncio.ensure_future(get("/page"))
        await asyncio.sleep(0.05)  # /page took its turn and waits for the connection
        await checker.observe(server.url("/other"), 429, {})  # another worker's 429
        assert await asyncio.gather(hogging, paging) == [200, 429]
    # Doubled from /page's 429: 0.4 s (0.5 with jitter) from now; dropped: none left.
    assert await checker.wait(server.url("/next")) > FIRST


async def test_httpx_times_the_send_from_the_connection_pool(
    server: Server,
    make_checker: Callable[..., ra.RobotsChecker],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The case above through the httpx transport (one connection): its elapsed time
    starts as the request's headers are sent (httpcore's trace extension), after the
    pool, so /page's 429 doubles the back-off; a trace callback of the caller's own
    still sees every event."""
    httpx = _httpx()
    monkeypatch.setattr(pacing, "FIRST_BACKOFF", FIRST)
    checker = make_checker()
    server.text("/robots.txt", "User-agent: *\nAllow: /\n")
    server.text("/hog", delay=1.0)
    server.text("/page", status=429)
    assert await checker.allowed(server.url("/hog"))
    events: list[str] = []

    async def own_trace(event: str, info: dict[str, object]) -> None:
        events.append(event)

    inner = httpx.AsyncHTTPTransport(limits=httpx.Limits(max_connections=1))
    transport = _httpx_transport().RobotsTransport(checker, inner, pace=True)
    async with inner, httpx.AsyncClient(transport=transport) as http:  # (not ours to close)
        hogging = asyncio.ensure_future(http.get(server.url("/hog")))
        await asyncio.sleep(0.05)  # /hog has the one connection
        page = http.get(server.url("/page"), extensions={"trace": own_trace})
        paging = asyncio.ensure_future(page)
        await asyncio.sleep(0.05)  # /page took its turn and waits for the connection
        await checker.observe(server.url("/other"), 429, {})  # another worker's 429
        responses = await asyncio.gather(hogging, paging)
    assert [r.status_code for r in responses] == [200, 429]
    assert "http11.send_request_headers.started" in events
    assert "http11.receive_response_body.complete" in events  # after our trace left
    # Doubled from /page's 429: 0.4 s (0.5 with jitter) from now.
    assert await checker.wait(server.url("/next")) > FIRST
