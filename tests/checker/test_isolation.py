"""Crawl scale on real local servers: slow origins never hold up a healthy one, fetches
outlive their waiters, closing reaches every waiter as ClosedError, one event loop."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from typing import TYPE_CHECKING, Any

import aiohttp
import pytest
from aiohttp import web

import robots_async as ra
from robots_async.fetch.lanes import slow_lane_size

from .conftest import USER_AGENT
from .swarm import SocketSampler, Swarm

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine

    from .conftest import Server

RULES = "User-agent: *\nDisallow: /private\n"
#: The promise: a healthy origin is answered within this, whatever else hangs.
HEALTHY_BOUND = 2.0
#: Default lanes: 64 fast + up to 512 slow fetches, hence robots.txt sockets.
FAST = 64
SOCKET_CAP = FAST + slow_lane_size(FAST)


@pytest.fixture
async def swarm() -> AsyncIterator[Callable[[int, str], Awaitable[Swarm]]]:
    """Factory: ``await swarm(n, "hang" | "trickle")`` -> n misbehaving origins."""
    swarms: list[Swarm] = []

    async def start(n: int, behaviour: Any) -> Swarm:
        started = await Swarm(behaviour).start(n)
        swarms.append(started)
        return started

    yield start
    for started in swarms:
        await started.close()


async def timed(awaitable: Awaitable[bool]) -> tuple[bool, float]:
    """The answer and the seconds it took."""
    started = time.monotonic()
    answer = await awaitable
    return answer, time.monotonic() - started


def open_descriptors() -> int:
    """File descriptors this process holds (sockets included)."""
    return len(os.listdir("/proc/self/fd"))


async def within(seconds: float, coroutine: Coroutine[Any, Any, Any]) -> Any:
    """``coroutine`` under a caller's timeout (asyncio.timeout where it exists)."""
    if sys.version_info >= (3, 11):
        async with asyncio.timeout(seconds):
            return await coroutine
    return await asyncio.wait_for(coroutine, seconds)  # pragma: no cover


# --- isolation ------------------------------------------------------------------------


async def test_healthy_origins_answered_while_600_origins_hang_or_trickle(
    make_server: Callable[[int], Awaitable[Server]],
    make_checker: Callable[..., ra.RobotsChecker],
    swarm: Callable[[int, str], Awaitable[Swarm]],
) -> None:
    """300 hung and 300 trickling origins: healthy checks (spread over 3 s) answer in
    < 2 s, right; no bad origin is answered by our limits (they wait for their own
    deadline); the robots.txt connections never exceed the lanes' cap."""
    healthy = await make_server(4)
    healthy.text("/robots.txt", RULES)
    hung, trickling = await swarm(300, "hang"), await swarm(300, "trickle")
    checker = make_checker()  # default settings
    assert checker.cache.lanes.capacity == SOCKET_CAP
    async with SocketSampler(hung.ports + trickling.ports) as sockets:
        bad = [
            asyncio.create_task(checker.allowed(base + "/page"))
            for base in hung.bases + trickling.bases
        ]
        await asyncio.sleep(0.2)  # every bad fetch is running or waiting for a slot
        results = []
        for index, pause in enumerate((0.0, 0.7, 1.1, 1.2)):
            await asyncio.sleep(pause)
            results.append(await timed(checker.allowed(healthy.url("/private/x", index))))
            results.append(await timed(checker.allowed(healthy.url("/public", index))))
    assert [answer for answer, _ in results] == [False, True] * 4
    assert max(seconds for _, seconds in results) < HEALTHY_BOUND, results
    # No verdict made up from our limits: the bad origins are still being waited for.
    assert not any(task.done() for task in bad)
    assert checker.stats.cache.local_limits == 0
    assert checker.cache.lanes.peak <= SOCKET_CAP
    assert sockets.samples > 50
    assert FAST <= sockets.peak <= SOCKET_CAP  # the fast lane filled, never beyond the cap
    assert hung.requests + trickling.requests > 2 * FAST  # fast slots were reused
    for task in bad:
        task.cancel()


async def test_lease_waits_hold_no_fetch_slot(
    server: Server,
    make_fetcher: Callable[..., ra.AiohttpFetcher],
    make_checker: Callable[..., ra.RobotsChecker],
    swarm: Callable[[int, str], Awaitable[Swarm]],
) -> None:
    """A store peer holds leases on 100 hung origins: checks of those wait without a
    fetch slot (no request of ours), and a healthy origin is answered in < 2 s."""
    server.text("/robots.txt", RULES)
    hung = await swarm(100, "hang")
    store = ra.MemoryStore()
    peer = ra.RobotsCache(make_fetcher(), store=store, max_concurrent_fetches=200)
    checker = make_checker(store=store)
    origins = [ra.Origin.from_url(base) for base in hung.bases]
    held = [asyncio.create_task(peer.get(origin)) for origin in origins]
    await asyncio.sleep(0.3)
    assert hung.requests == 100  # the peer fetches, holding every lease
    waiting = [asyncio.create_task(checker.allowed(base + "/page")) for base in hung.bases]
    await asyncio.sleep(0.3)
    assert checker.cache.lanes.running == 0  # 100 lease waits, no slot taken
    answer, seconds = await timed(checker.allowed(server.url("/private")))
    assert answer is False
    assert seconds < HEALTHY_BOUND
    assert hung.requests == 100  # nobody fetched twice
    assert not any(task.done() for task in waiting)
    for task in (*waiting, *held):
        task.cancel()
    await asyncio.gather(*held, return_exceptions=True)
    await peer.aclose()


async def slow_healthy_origins(
    make_server: Callable[[int], Awaitable[Server]], n: int, delay: float
) -> Server:
    """``n`` origins whose robots.txt answers after ``delay`` seconds."""
    server = await make_server(n)
    server.text("/robots.txt", RULES, delay=delay)
    return server


@pytest.mark.parametrize(("origins", "delay"), [(100, 1.2), (300, 1.2), (100, 2.5)])
async def test_slow_healthy_origins_are_never_refused(
    make_server: Callable[[int], Awaitable[Server]],
    make_checker: Callable[..., ra.RobotsChecker],
    origins: int,
    delay: float,
) -> None:
    """Healthy robots.txt slower than the fast lane's second, all checked at once:
    every public page allowed (36 of 100 were "disallowed" when the full slow lane
    cut fetches), every private one refused by its own rules."""
    server = await slow_healthy_origins(make_server, origins, delay)
    checker = make_checker()  # default settings
    public = [checker.allowed(server.url("/public", i)) for i in range(origins)]
    answers = await asyncio.gather(*public)
    assert answers == [True] * origins
    private = await asyncio.gather(
        *(checker.allowed(server.url("/private/x", i)) for i in range(origins))
    )
    assert private == [False] * origins
    assert checker.stats.cache.local_limits == 0
    assert server.count() == origins  # one request each: nothing cut and retried


async def test_healthy_origins_behind_200_hung_are_allowed_within_10_s(
    make_server: Callable[[int], Awaitable[Server]],
    make_checker: Callable[..., ra.RobotsChecker],
    swarm: Callable[[int, str], Awaitable[Swarm]],
) -> None:
    """200 hung robots.txt asked first, then 100 healthy ones answering in 1.2 s: every
    healthy check allowed, each within 10 s (0 of 100 were, with the cutting lanes)."""
    hung = await swarm(200, "hang")
    server = await slow_healthy_origins(make_server, 100, 1.2)
    checker = make_checker()
    bad = [asyncio.create_task(checker.allowed(base + "/page")) for base in hung.bases]
    await asyncio.sleep(0.1)
    results = await asyncio.gather(
        *(timed(checker.allowed(server.url("/public", i))) for i in range(100))
    )
    assert [answer for answer, _ in results] == [True] * 100
    assert max(seconds for _, seconds in results) < 10.0
    assert not any(task.done() for task in bad)
    for task in bad:
        task.cancel()
    await asyncio.gather(*bad, return_exceptions=True)


# --- cancellation and close -----------------------------------------------------------


async def test_caller_timeout_retried_gets_the_answer_from_one_request(
    server: Server, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """A 0.5 s caller timeout retried against a 1 s robots.txt: answered by the third
    try, from exactly one request (the fetch outlives its cancelled waiters)."""
    server.text("/robots.txt", RULES, delay=1.0)
    checker = make_checker()
    answered_at = allowed = None
    for attempt in range(20):
        try:
            allowed = await within(0.5, checker.allowed(server.url("/private/page")))
        except TimeoutError:
            continue
        answered_at = attempt
        break
    assert answered_at is not None
    assert answered_at <= 2
    assert allowed is False
    assert server.count() == 1
    assert server.dropped["/robots.txt"] == 0
    assert checker.stats.cache.fetches == 1


async def test_aclose_gives_every_waiter_closed_error_and_leaves_nothing(
    server: Server, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """aclose() with 100 waiters: 100 ClosedErrors (no CancelledError); no task left
    and the robots.txt connection closed (the server sees its client leave)."""
    server.text("/robots.txt", RULES, delay=10.0)
    checker = make_checker()
    await asyncio.sleep(0)
    before = asyncio.all_tasks()
    descriptors = open_descriptors()
    waiters = [asyncio.create_task(checker.allowed(server.url(f"/{i}"))) for i in range(100)]
    await asyncio.sleep(0.2)
    assert server.count() == 1
    await checker.aclose()
    results = await asyncio.gather(*waiters, return_exceptions=True)
    assert [type(r) for r in results] == [ra.ClosedError] * 100
    await asyncio.wait_for(server.dropped_event.wait(), 3.0)
    assert server.dropped["/robots.txt"] == 1
    left = {t for t in asyncio.all_tasks() - before if t is not asyncio.current_task()}
    assert not {t for t in left if not t.done()}
    for _ in range(50):  # the client socket (and the server's end) close promptly
        if open_descriptors() <= descriptors:
            break
        await asyncio.sleep(0.05)
    assert open_descriptors() <= descriptors
    with pytest.raises(ra.ClosedError):
        await checker.allowed(server.url("/"))


if sys.version_info >= (3, 11):  # TaskGroup

    async def test_aclose_inside_a_task_group_is_no_unrequested_cancellation(
        server: Server, make_cache: Callable[..., ra.RobotsCache]
    ) -> None:
        """Waiters in a TaskGroup when the cache closes: the group raises ClosedErrors,
        nothing in it looks like a cancellation nobody asked for."""
        server.text("/robots.txt", RULES, delay=10.0)
        cache = make_cache()
        origin = server.origin()

        async def close_soon() -> None:
            await asyncio.sleep(0.2)
            await cache.aclose()

        async def ten_waiters() -> None:
            async with asyncio.TaskGroup() as group:
                for _ in range(10):
                    group.create_task(cache.get(origin))

        closer = asyncio.create_task(close_soon())
        with pytest.raises(BaseExceptionGroup) as raised:  # noqa: F821 (a 3.11 builtin)
            await ten_waiters()
        await closer
        assert raised.value.exceptions
        assert all(isinstance(exc, ra.ClosedError) for exc in raised.value.exceptions)


def test_reuse_in_a_second_asyncio_run_raises_event_loop_error() -> None:
    """A checker used in one asyncio.run() and again in another: EventLoopError (a
    RobotsError) for fresh and cached origins alike, before any network use."""

    async def serve(app: web.Application) -> tuple[web.AppRunner, str]:
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return runner, f"http://127.0.0.1:{port}"

    async def robots(_: web.Request) -> web.Response:
        return web.Response(text=RULES)

    app = web.Application()
    app.router.add_get("/robots.txt", robots)
    holder: dict[str, Any] = {}

    async def first() -> bool:
        runner, base = await serve(app)
        holder["base"] = base
        try:
            async with aiohttp.ClientSession() as session:
                checker = ra.RobotsChecker(USER_AGENT, session=session)
                holder["checker"] = checker
                return await checker.allowed(base + "/private")
        finally:
            await runner.cleanup()

    async def second() -> list[type[BaseException]]:
        checker: ra.RobotsChecker = holder["checker"]
        raised: list[type[BaseException]] = []
        for url in (holder["base"] + "/private", "http://127.0.0.1:9/other"):
            with pytest.raises(ra.EventLoopError, match="another event loop") as error:
                await checker.allowed(url)
            raised.append(type(error.value))
        with pytest.raises(ra.EventLoopError):
            await checker.cache.get(ra.Origin.from_url("http://127.0.0.1:9/"))
        with pytest.raises(ra.EventLoopError):
            await checker.aclose()
        return raised

    assert asyncio.run(first()) is False
    raised = asyncio.run(second())
    assert raised == [ra.EventLoopError, ra.EventLoopError]
    assert issubclass(ra.EventLoopError, ra.RobotsError)
