"""aiohttp client middleware against a real local aiohttp server."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import aiohttp
import pytest

import robots_async as ra
from robots_async.contrib.aiohttp import DisallowedError, RobotsMiddleware

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from .conftest import Host, Site

USER_AGENT = "AdapterBot/1.0 (+https://example.test/bot)"
ROBOTS = "User-agent: *\nAllow: /public\nDisallow: /private\n"


@pytest.fixture
def host(site: Site) -> Host:
    """One origin whose robots.txt disallows /private (rule on line 3)."""
    origin = site.host()
    origin.serve("/robots.txt", ROBOTS)
    return origin


@pytest.fixture
async def make_checker() -> AsyncIterator[Callable[..., ra.RobotsChecker]]:
    """Factory for RobotsChecker (closed at teardown)."""
    checkers: list[ra.RobotsChecker] = []

    def build(**kwargs: Any) -> ra.RobotsChecker:
        checker = ra.RobotsChecker(USER_AGENT, **kwargs)
        checkers.append(checker)
        return checker

    yield build
    for checker in checkers:
        await checker.aclose()


class PauseRecorder:
    """A fake clock and sleep: sleeping records the pause and advances the clock."""

    def __init__(self) -> None:
        self.now = 1_000_000.0
        self.pauses: list[float] = []

    def clock(self) -> float:
        """The fake time."""
        return self.now

    async def sleep(self, seconds: float) -> None:
        """Record ``seconds`` and move the clock on by it."""
        self.pauses.append(seconds)
        self.now += seconds


async def test_allowed_page_is_fetched(
    host: Host, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """An allowed URL is sent and its response returned."""
    middleware = RobotsMiddleware(make_checker())
    async with (
        aiohttp.ClientSession(middlewares=(middleware,)) as session,
        session.get(host.url("/public/page")) as response,
    ):
        assert response.status == 200
        assert "/public/page" in await response.text()
    assert host.count("/public/page") == 1
    assert host.count("/robots.txt") == 1


async def test_disallowed_page_is_never_contacted(
    host: Host, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """A disallowed URL raises DisallowedError with its verdict and is never sent."""
    url = host.url("/private/secret")
    async with aiohttp.ClientSession(middlewares=(RobotsMiddleware(make_checker()),)) as session:
        with pytest.raises(DisallowedError) as caught:
            await session.get(url)
    error = caught.value
    assert isinstance(error, aiohttp.ClientError)
    assert isinstance(error, ra.RobotsError)
    assert error.url == url
    assert error.user_agent == USER_AGENT
    assert error.verdict.allowed is False
    assert error.verdict.rule is not None
    assert error.verdict.rule.pattern == "/private"
    assert error.verdict.rule.allow is False
    assert error.verdict.line == 3
    assert host.count("/private/secret") == 0


async def test_disallowed_error_caught_as_client_error(
    host: Host, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """Existing ``except aiohttp.ClientError`` handlers catch the refusal."""
    async with aiohttp.ClientSession(middlewares=(RobotsMiddleware(make_checker()),)) as session:
        with pytest.raises(aiohttp.ClientError, match=r"robots\.txt disallows"):
            await session.get(host.url("/private/x"))
    assert host.count("/private/x") == 0


async def test_redirect_into_disallowed_path_is_blocked(
    host: Host, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """A redirect from an allowed page to a disallowed one stops before that hop."""
    host.redirect("/public/go", "/private/target")
    async with aiohttp.ClientSession(middlewares=(RobotsMiddleware(make_checker()),)) as session:
        with pytest.raises(DisallowedError) as caught:
            await session.get(host.url("/public/go"))
    assert caught.value.url == host.url("/private/target")
    assert host.count("/public/go") == 1
    assert host.count("/private/target") == 0


async def test_robots_txt_fetched_once_for_concurrent_requests(
    site: Site, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """50 concurrent requests to one origin share a single robots.txt fetch."""
    host = site.host()
    host.serve("/robots.txt", ROBOTS, delay=0.2)
    checker = make_checker()
    async with aiohttp.ClientSession(middlewares=(RobotsMiddleware(checker),)) as session:

        async def get(i: int) -> int:
            async with session.get(host.url(f"/public/{i}")) as response:
                return response.status

        statuses = await asyncio.gather(*(get(i) for i in range(50)))
    assert statuses == [200] * 50
    assert host.count("/robots.txt") == 1
    assert len(host.times("/public/")) == 50
    assert checker.cache.stats.fetches == 1


async def test_robots_txt_itself_is_not_checked(
    site: Site, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """/robots.txt passes unchecked even when robots.txt disallows everything."""
    host = site.host()
    host.serve("/robots.txt", "User-agent: *\nDisallow: /\n")
    checker = make_checker()
    async with (
        aiohttp.ClientSession(middlewares=(RobotsMiddleware(checker),)) as session,
        session.get(host.url("/robots.txt")) as response,
    ):
        assert response.status == 200
        assert "Disallow: /" in await response.text()
    assert host.count("/robots.txt") == 1
    assert checker.stats.checks == 0


async def test_checker_sharing_the_session_does_not_recurse(
    site: Site, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """A checker fetching through the middleware's own session (robots.txt redirecting to
    another path of the origin) fetches robots.txt once and never deadlocks."""
    host = site.host()
    host.redirect("/robots.txt", "/rules.txt")
    host.serve("/rules.txt", ROBOTS)
    middleware = RobotsMiddleware(make_checker())
    async with aiohttp.ClientSession(middlewares=(middleware,)) as session:
        checker = make_checker(session=session)
        middleware.checker = checker

        async def get(path: str) -> int:
            async with session.get(host.url(path)) as response:
                return response.status

        statuses = await asyncio.wait_for(
            asyncio.gather(*(get(f"/public/{i}") for i in range(10))), timeout=10
        )
        with pytest.raises(DisallowedError):
            await asyncio.wait_for(get("/private/x"), timeout=10)
        assert not session.closed
    assert statuses == [200] * 10
    assert host.count("/robots.txt") == 1
    assert host.count("/rules.txt") == 1
    assert host.count("/private/x") == 0
    assert checker.cache.stats.fetches == 1


async def test_crawl_delay_paces_requests(
    site: Site, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """respect_crawl_delay=True waits Crawl-delay between requests to one origin."""
    host = site.host()
    host.serve("/robots.txt", "User-agent: *\nCrawl-delay: 2\n")
    fake = PauseRecorder()
    checker = make_checker(clock=fake.clock, sleep=fake.sleep)
    middleware = RobotsMiddleware(checker, respect_crawl_delay=True)
    async with aiohttp.ClientSession(middlewares=(middleware,)) as session:
        for i in range(3):
            async with session.get(host.url(f"/page/{i}")) as response:
                assert response.status == 200
    assert fake.pauses == [2.0, 2.0]
    assert checker.stats.waited == 4.0
    assert len(host.times("/page/")) == 3


async def test_crawl_delay_ignored_by_default(
    site: Site, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """With respect_crawl_delay=False the middleware never waits."""
    host = site.host()
    host.serve("/robots.txt", "User-agent: *\nCrawl-delay: 2\n")
    fake = PauseRecorder()
    checker = make_checker(clock=fake.clock, sleep=fake.sleep)
    async with aiohttp.ClientSession(middlewares=(RobotsMiddleware(checker),)) as session:
        for i in range(3):
            async with session.get(host.url(f"/page/{i}")) as response:
                assert response.status == 200
    assert fake.pauses == []
    assert checker.stats.waits == 0
    assert len(host.times("/page/")) == 3


@pytest.mark.parametrize("wrong", ["MyBot/1.0", None, 42])
def test_middleware_wants_a_checker(wrong: Any) -> None:
    """A User-Agent string (or anything but a checker) is refused at construction with
    how to make a checker, not with an AttributeError on the first request."""
    with pytest.raises(TypeError, match=r"expects a robots_async\.RobotsChecker, not ") as info:
        RobotsMiddleware(wrong)
    assert "async with RobotsChecker(" in str(info.value)
    if isinstance(wrong, str):
        assert "RobotsChecker('MyBot/1.0')" in str(info.value)
