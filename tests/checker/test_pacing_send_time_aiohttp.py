"""The aiohttp middleware's send time (RobotsMiddleware.trace_config) against the ways
a request can go: redirect hops, aiohttp's retry on a dropped keep-alive connection,
a failure before the send, cancellation, a POST body, another middleware after ours."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

import aiohttp
import pytest
from multidict import CIMultiDict

from robots_async.contrib.aiohttp import _FLIGHTS, RobotsMiddleware

if TYPE_CHECKING:
    from collections.abc import Callable

    from aiohttp import ClientRequest, ClientResponse
    from aiohttp.client_middlewares import ClientHandlerType

    import robots_async as ra

    from ..servers import Server

WARNING = "trace_configs=[middleware.trace_config]"


def _record_elapsed(checker: ra.RobotsChecker, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """(url, elapsed) of each observe() of ``checker``, which still records them."""
    seen: list[Any] = []
    observe = checker.observe

    async def recording(url: object, *args: Any, **kwargs: Any) -> None:
        seen.append((str(url), kwargs.get("elapsed")))
        await observe(url, *args, **kwargs)

    monkeypatch.setattr(checker, "observe", recording)
    return seen


def _session(middleware: RobotsMiddleware, *inner: Any) -> aiohttp.ClientSession:
    return aiohttp.ClientSession(
        middlewares=(middleware, *inner), trace_configs=[middleware.trace_config]
    )


def _warned(caplog: pytest.LogCaptureFixture) -> int:
    return sum(WARNING in record.message for record in caplog.records)


async def test_each_redirect_hop_is_timed_from_its_own_send(
    server: Server,
    make_checker: Callable[..., ra.RobotsChecker],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """/r answers its redirect after 0.4 s, /t at once: /t's elapsed is its own hop's
    (each hop is a new ClientRequest with its own headers), not the chain's."""
    server.text("/robots.txt", "User-agent: *\nAllow: /\n")
    server.text("/r", status=302, headers={"Location": "/t"}, delay=0.4)
    server.text("/t", "t")
    checker = make_checker()
    seen = _record_elapsed(checker, monkeypatch)
    middleware = RobotsMiddleware(checker, pace=True)
    async with _session(middleware) as session, session.get(server.url("/r")) as response:
        assert response.status == 200
    assert [url.rsplit("/", 1)[1] for url, _ in seen] == ["r", "t"]
    assert seen[0][1] >= 0.4
    assert seen[1][1] is not None
    assert seen[1][1] < 0.3
    assert not _FLIGHTS.get()


async def test_a_retry_on_a_dropped_keep_alive_connection_is_timed(
    make_checker: Callable[..., ra.RobotsChecker],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A server answers the first request of each connection and drops the next one
    unanswered: /b goes out on /a's kept-alive connection, is dropped, and aiohttp
    sends it again on a new one. That retry passes the middleware again (a new
    ClientRequest): one observation of /b, timed, nothing left behind, no warning."""
    heads: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            for answered in (True, False):
                head = await reader.readuntil(b"\r\n\r\n")
                heads.append(head.split(b" ", 2)[1])
                if not answered:
                    break  # dropped unanswered, as a server closing an idle connection
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                await writer.drain()
        except asyncio.IncompleteReadError:
            pass
        finally:
            writer.close()

    raw = await asyncio.start_server(handle, "127.0.0.1", 0)
    base = f"http://127.0.0.1:{raw.sockets[0].getsockname()[1]}"
    try:
        checker = make_checker()
        seen = _record_elapsed(checker, monkeypatch)
        middleware = RobotsMiddleware(checker, pace=True)
        with caplog.at_level(logging.WARNING, logger="robots_async.contrib.aiohttp"):
            async with _session(middleware) as session:
                for path in ("/a", "/b"):
                    async with session.get(base + path) as response:
                        assert response.status == 200
    finally:
        raw.close()
        await raw.wait_closed()
    assert heads.count(b"/b") == 2  # sent, dropped, sent again
    assert [url.rsplit("/", 1)[1] for url, _ in seen] == ["a", "b"]
    assert all(elapsed is not None for _, elapsed in seen)
    assert not _FLIGHTS.get()
    assert _warned(caplog) == 0


async def test_a_request_failing_before_its_send_leaves_nothing_and_no_warning(
    server: Server,
    make_checker: Callable[..., ra.RobotsChecker],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A middleware after ours fails the request before it is sent, and another one
    is cancelled while the server sleeps: no warning (the trace config is there), and
    this task is left sending nothing."""
    server.text("/robots.txt", "User-agent: *\nAllow: /\n")
    server.text("/slow", delay=5.0)

    async def refuse(request: ClientRequest, handler: ClientHandlerType) -> ClientResponse:
        if request.url.path == "/refused":
            raise aiohttp.ClientConnectionError("refused before the send")
        return await handler(request)

    middleware = RobotsMiddleware(make_checker(), pace=True)
    with caplog.at_level(logging.WARNING, logger="robots_async.contrib.aiohttp"):
        async with _session(middleware, refuse) as session:
            with pytest.raises(aiohttp.ClientConnectionError):
                await session.get(server.url("/refused"))
            slow = asyncio.ensure_future(session.get(server.url("/slow")))
            await asyncio.sleep(0.3)
            slow.cancel()
            with pytest.raises(asyncio.CancelledError):
                await slow
    assert not _FLIGHTS.get()
    assert _warned(caplog) == 0


async def test_a_post_is_timed_from_its_headers(
    server: Server,
    make_checker: Callable[..., ra.RobotsChecker],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A POST with a body is timed too (its headers go out before the body)."""
    server.text("/robots.txt", "User-agent: *\nAllow: /\n")
    server.text("/form", "ok")
    checker = make_checker()
    seen = _record_elapsed(checker, monkeypatch)
    middleware = RobotsMiddleware(checker, pace=True)
    async with (
        _session(middleware) as session,
        session.post(server.url("/form"), data=b"x" * 200_000) as response,
    ):
        assert response.status == 200
    assert len(seen) == 1
    assert seen[0][1] is not None


async def test_a_middleware_after_ours_replacing_the_headers_keeps_the_send_time(
    server: Server,
    make_checker: Callable[..., ra.RobotsChecker],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A middleware after ours gives the request a new headers object (an inner
    signing middleware may): the send is still timed, and no warning claims that the
    session lacks the trace config it has."""
    server.text("/robots.txt", "User-agent: *\nAllow: /\n")
    server.text("/page", "ok")

    async def resign(request: ClientRequest, handler: ClientHandlerType) -> ClientResponse:
        request.headers = CIMultiDict(request.headers, Signature="s")
        return await handler(request)

    checker = make_checker()
    seen = _record_elapsed(checker, monkeypatch)
    middleware = RobotsMiddleware(checker, pace=True)
    with caplog.at_level(logging.WARNING, logger="robots_async.contrib.aiohttp"):
        async with (
            _session(middleware, resign) as session,
            session.get(server.url("/page")) as response,
        ):
            assert response.status == 200
    assert server.hits[-1].headers.get("Signature") == "s"
    assert seen[0][1] is not None
    assert _warned(caplog) == 0


async def test_one_middleware_in_two_sessions_times_the_traced_one(
    server: Server,
    make_checker: Callable[..., ra.RobotsChecker],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """One middleware in a session with its trace config and in one without, used
    together; and a third session with the trace config but not the middleware: the
    traced session's requests are timed, the other's judged by arrival with one
    warning, and the third's sends touch nothing."""
    server.text("/robots.txt", "User-agent: *\nAllow: /\n")
    server.text("/page", "ok", delay=0.1)
    checker = make_checker()
    seen = _record_elapsed(checker, monkeypatch)
    middleware = RobotsMiddleware(checker, pace=True)
    with caplog.at_level(logging.WARNING, logger="robots_async.contrib.aiohttp"):
        async with (
            _session(middleware) as traced,
            aiohttp.ClientSession(middlewares=(middleware,)) as untraced,
            aiohttp.ClientSession(trace_configs=[middleware.trace_config]) as bare,
        ):

            async def get(session: aiohttp.ClientSession, query: str) -> int:
                async with session.get(server.url("/page") + query) as response:
                    return response.status

            statuses = await asyncio.gather(
                *(get(traced, f"?t{i}") for i in range(3)),
                *(get(untraced, f"?u{i}") for i in range(3)),
                *(get(bare, f"?b{i}") for i in range(3)),
            )
    assert statuses == [200] * 9
    timed = {url.rsplit("?", 1)[1][0] for url, elapsed in seen if elapsed is not None}
    untimed = {url.rsplit("?", 1)[1][0] for url, elapsed in seen if elapsed is None}
    assert (timed, untimed, len(seen)) == ({"t"}, {"u"}, 6)
    assert _warned(caplog) == 1
    assert not _FLIGHTS.get()
