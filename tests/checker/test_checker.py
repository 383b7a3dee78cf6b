"""RobotsChecker end to end: answers, provenance, pacing, prefetch, validation, close."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import aiohttp
import pytest

import robots_async as ra

from .conftest import USER_AGENT

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from .conftest import FakeClock, Server

RULES = (
    "User-agent: *\n"
    "Disallow: /private\n"
    "\n"
    "User-agent: PipelineBot\n"
    "Disallow: /bot-only\n"
    "Crawl-delay: 2\n"
    "\n"
    "Sitemap: /sitemap.xml\n"
    "Sitemap: https://cdn.example.com/s.xml\n"
    "Sitemap: /sitemap.xml\n"
)


async def test_explain_reports_provenance(
    server: Server, make_checker: Callable[..., ra.RobotsChecker], clock: FakeClock
) -> None:
    """explain() gives the verdict, the deciding line and where the rules came from."""
    server.text("/robots.txt", RULES)
    checker = make_checker(clock=clock)
    first = await checker.explain(server.url("/bot-only/x"))
    assert not first.allowed
    assert first.verdict.rule is not None
    assert first.verdict.rule.pattern == "/bot-only"
    assert first.origin == server.origin()
    assert first.source == "fetched"
    assert not first.from_cache
    assert first.fetched_at == clock()
    assert first.expires_at == clock() + 86_400
    assert first.status == 200
    second = await checker.explain(server.url("/private/x"))
    assert second.from_cache
    # The PipelineBot group replaces "*": /private is not in it.
    assert second.allowed
    assert server.count() == 1


async def test_user_agent_override_per_call(
    server: Server, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """allowed(user_agent=...) matches another product token against the same file."""
    server.text("/robots.txt", RULES)
    checker = make_checker()
    assert await checker.allowed(server.url("/private"))
    assert not await checker.allowed(server.url("/private"), user_agent="OtherBot/3.1")
    assert await checker.allowed(server.url("/bot-only"), user_agent="OtherBot/3.1")
    assert checker.robots_token == "PipelineBot"
    assert checker.user_agent == USER_AGENT
    assert server.count() == 1


async def test_sitemaps_resolved_and_deduplicated(
    server: Server, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """Relative Sitemap URLs are resolved against robots.txt, duplicates dropped."""
    server.text("/robots.txt", RULES)
    checker = make_checker()
    assert await checker.sitemaps(server.url("/any")) == (
        server.url("/sitemap.xml"),
        "https://cdn.example.com/s.xml",
    )


async def test_crawl_delay_and_request_rate(
    server: Server, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """crawl_delay() and request_rate() read the agent's group."""
    server.text("/robots.txt", "User-agent: *\nCrawl-delay: 3\nRequest-rate: 1/10s\n")
    checker = make_checker()
    assert await checker.crawl_delay(server.url("/")) == 3.0
    rate = await checker.request_rate(server.url("/"))
    assert rate is not None
    assert rate.delay == 10.0


async def test_wait_paces_with_capped_crawl_delay(
    server: Server, make_checker: Callable[..., ra.RobotsChecker], clock: FakeClock
) -> None:
    """Crawl-delay 2 capped by max_delay 1: three waits pause 0, 1 and 1 seconds."""
    server.text("/robots.txt", RULES)
    pauses: list[float] = []

    async def sleep(seconds: float) -> None:
        pauses.append(seconds)
        clock.advance(seconds)

    checker = make_checker(clock=clock, sleep=sleep, max_delay=1.0)
    slept = [await checker.wait(server.url(f"/page{i}")) for i in range(3)]
    assert slept == [0.0, 1.0, 1.0]
    assert pauses == [1.0, 1.0]
    stats = checker.stats
    assert stats.waits == 3
    assert stats.waited == 2.0


async def test_wait_uses_request_rate_when_slower(
    server: Server, make_checker: Callable[..., ra.RobotsChecker], clock: FakeClock
) -> None:
    """The pacing interval is the larger of Crawl-delay and Request-rate's delay."""
    server.text("/robots.txt", "User-agent: *\nCrawl-delay: 1\nRequest-rate: 1/5s\n")
    pauses: list[float] = []

    async def sleep(seconds: float) -> None:
        pauses.append(seconds)
        clock.advance(seconds)

    checker = make_checker(clock=clock, sleep=sleep)
    await checker.wait(server.url("/a"))
    clock.advance(2)
    assert await checker.wait(server.url("/b")) == 3.0
    assert pauses == [3.0]


async def test_concurrent_waits_queue_up(
    server: Server, make_checker: Callable[..., ra.RobotsChecker], clock: FakeClock
) -> None:
    """Concurrent waits on one origin are spaced one interval apart."""
    server.text("/robots.txt", "User-agent: *\nCrawl-delay: 2\n")
    pauses: list[float] = []

    async def sleep(seconds: float) -> None:
        pauses.append(seconds)

    checker = make_checker(clock=clock, sleep=sleep)
    await checker.robots(server.url("/"))
    slept = await asyncio.gather(*(checker.wait(server.url(f"/{i}")) for i in range(4)))
    assert sorted(slept) == [0.0, 2.0, 4.0, 6.0]


async def test_wait_without_delay_never_sleeps(
    server: Server, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """No Crawl-delay or Request-rate: wait() returns 0 and never sleeps."""
    server.text("/robots.txt", "User-agent: *\nDisallow: /x\n")
    pauses: list[float] = []

    async def sleep(seconds: float) -> None:
        pauses.append(seconds)

    checker = make_checker(sleep=sleep)
    assert [await checker.wait(server.url("/")) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert pauses == []


async def test_prefetch_fetches_each_origin_once(
    make_server: Callable[[int], Awaitable[Server]], make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """prefetch() of 20 URLs on 4 origins makes 4 fetches; later checks are cache hits."""
    server = await make_server(4)
    server.text("/robots.txt", "User-agent: *\nDisallow: /private\n", delay=0.05)
    checker = make_checker()
    urls = [server.url(f"/p{i}", i % 4) for i in range(20)]
    await checker.prefetch(urls)
    assert server.count() == 4
    assert [server.count(index=i) for i in range(4)] == [1, 1, 1, 1]
    assert checker.stats.cache.fetches == 4
    assert all([await checker.allowed(url) for url in urls])
    assert server.count() == 4


async def test_invalidate_refetches(
    server: Server, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """invalidate(url) forgets the origin's file; the next check fetches it again."""
    server.text("/robots.txt", RULES)
    checker = make_checker()
    assert not checker.invalidate(server.url("/"))
    await checker.allowed(server.url("/"))
    server.text("/robots.txt", "User-agent: *\nDisallow: /\n")
    assert await checker.allowed(server.url("/page"))
    assert checker.invalidate(server.url("/page"))
    assert not await checker.allowed(server.url("/page"))
    assert server.count() == 2


@pytest.mark.parametrize("user_agent", ["", "   ", "/1.0", "(compatible)"])
def test_user_agent_without_token_is_rejected(user_agent: str) -> None:
    """A User-Agent with no product token raises InvalidUserAgentError."""
    with pytest.raises(ra.InvalidUserAgentError):
        ra.RobotsChecker(user_agent)


@pytest.mark.parametrize(
    "url",
    ["/relative/path", "example.com/page", "ftp://example.com/robots.txt", "mailto:a@b.c"],
)
async def test_invalid_urls_are_rejected(
    make_checker: Callable[..., ra.RobotsChecker], url: str
) -> None:
    """A relative or non-http(s) URL raises InvalidURLError, without any fetch."""
    checker = make_checker()
    with pytest.raises(ra.InvalidURLError):
        await checker.allowed(url)
    with pytest.raises(ra.InvalidURLError):
        await checker.explain(url)
    with pytest.raises(ra.InvalidURLError):
        await checker.prefetch(["http://127.0.0.1:9/", url])
    assert checker.stats.cache.fetches == 0


def _library_tasks() -> set[asyncio.Task[object]]:
    """Unfinished tasks running robots_async or async-lru code."""
    found = set()
    for task in asyncio.all_tasks():
        code = getattr(task.get_coro(), "cr_code", None)
        filename = code.co_filename if code is not None else ""
        if not task.done() and ("robots_async" in filename or "async_lru" in filename):
            found.add(task)
    return found


async def test_aclose_leaves_no_tasks_and_closes_owned_session(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """aclose() cancels fetches in flight, leaves no tasks and closes the session it made."""
    sessions: list[aiohttp.ClientSession] = []
    original = aiohttp.ClientSession

    def recording_session(*args: Any, **kwargs: Any) -> aiohttp.ClientSession:
        session = original(*args, **kwargs)
        sessions.append(session)
        return session

    monkeypatch.setattr(aiohttp, "ClientSession", recording_session)
    server.text("/robots.txt", RULES)

    async def hang(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.read()  # never answer; return when the client goes away
        finally:
            writer.close()

    listener = await asyncio.start_server(hang, "127.0.0.1", 0)
    hanging = f"http://127.0.0.1:{listener.sockets[0].getsockname()[1]}/page"
    try:
        before = asyncio.all_tasks()
        checker = ra.RobotsChecker(USER_AGENT)
        assert await checker.allowed(server.url("/public"))
        pending = asyncio.create_task(checker.allowed(hanging))
        await asyncio.sleep(0.1)
        assert _library_tasks()  # a robots.txt fetch is in flight
        await checker.aclose()
        await asyncio.wait_for(asyncio.gather(pending, return_exceptions=True), timeout=5)
        assert not _library_tasks()
        # The test servers' own request handlers run in this loop too and may still
        # be winding down (Python 3.13 schedules that later); only ours must be gone.
        leftover = {
            t
            for t in asyncio.all_tasks() - before
            if not t.done() and "RequestHandler" not in t.get_coro().__qualname__
        }
        assert leftover == set()
        assert len(sessions) == 1
        assert sessions[0].closed
        with pytest.raises(ra.ClosedError):
            await checker.allowed(server.url("/public"))
        await checker.aclose()  # idempotent
    finally:
        listener.close()
        await listener.wait_closed()


async def test_checker_leaves_given_session_open(server: Server) -> None:
    """A session passed to the checker is used and left open by aclose()."""
    server.text("/robots.txt", RULES)
    async with aiohttp.ClientSession() as session:
        async with ra.RobotsChecker(USER_AGENT, session=session) as checker:
            assert not await checker.allowed(server.url("/bot-only"))
        assert not session.closed
        async with session.get(server.url("/robots.txt")) as response:
            assert response.status == 200
