"""The aiohttp middleware's identity and accounting: one User-Agent, one lookup per hop."""

from __future__ import annotations

from typing import TYPE_CHECKING

import aiohttp
import pytest
from aiohttp import web
from aiohttp.http import SERVER_SOFTWARE

import robots_async as ra
from robots_async.contrib.aiohttp import DisallowedError, RobotsMiddleware

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from .conftest import Host, Site

USER_AGENT = "AdapterBot/1.0 (+https://example.test/bot)"
# AdapterBot may not see /private; OtherBot may not see /other; everyone else is free.
ROBOTS = """\
User-agent: AdapterBot
Disallow: /private

User-agent: OtherBot
Disallow: /other

User-agent: *
Disallow: /star
"""


class AgentLog:
    """The User-Agent header of every request a host received, by path."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    async def record(self, request: web.Request) -> web.StreamResponse:
        """Log the request's User-Agent, then answer a small page."""
        self.seen.append((request.path, request.headers.get("User-Agent", "")))
        if request.path == "/robots.txt":
            return web.Response(text=ROBOTS)
        if request.path.startswith("/hop/"):
            step = int(request.path.rsplit("/", 1)[1])
            target = "/private/end" if step == 4 else f"/hop/{step + 1}"
            return web.Response(status=302, headers={"Location": target})
        return web.Response(text="page")

    def agents(self, path: str) -> list[str]:
        """The User-Agents that requested ``path``."""
        return [agent for seen, agent in self.seen if seen == path]


@pytest.fixture
def logged(site: Site) -> tuple[Host, AgentLog]:
    """One origin that logs every request's User-Agent."""
    host = site.host()
    log = AgentLog()
    for path in ("/robots.txt", "/page", "/private", "/other", "/star"):
        host.routes[path] = log.record
    for step in range(5):
        host.routes[f"/hop/{step}"] = log.record
    host.routes["/private/end"] = log.record
    return host, log


@pytest.fixture
async def checker() -> AsyncIterator[ra.RobotsChecker]:
    """A checker named AdapterBot (closed at teardown)."""
    async with ra.RobotsChecker(USER_AGENT) as checker:
        yield checker


async def test_request_without_user_agent_is_sent_with_the_checkers(
    logged: tuple[Host, AgentLog], checker: ra.RobotsChecker
) -> None:
    """aiohttp's default User-Agent is replaced: the site sees one crawler, not two."""
    host, log = logged
    async with (
        aiohttp.ClientSession(middlewares=(RobotsMiddleware(checker),)) as session,
        session.get(host.url("/page")) as response,
    ):
        assert response.status == 200
    assert log.agents("/page") == [USER_AGENT]
    assert log.agents("/robots.txt") == [USER_AGENT]
    assert SERVER_SOFTWARE not in {agent for _, agent in log.seen}


async def test_skipped_user_agent_header_gets_the_checkers(
    logged: tuple[Host, AgentLog], checker: ra.RobotsChecker
) -> None:
    """skip_auto_headers=User-Agent leaves no header at all: the checker's is sent."""
    host, log = logged
    async with (
        aiohttp.ClientSession(middlewares=(RobotsMiddleware(checker),)) as session,
        session.get(host.url("/page"), skip_auto_headers=("User-Agent",)) as response,
    ):
        assert response.status == 200
    assert log.agents("/page") == [USER_AGENT]


async def test_checkers_identity_is_judged_by_its_own_group(
    logged: tuple[Host, AgentLog], checker: ra.RobotsChecker
) -> None:
    """Without a User-Agent of its own a request is AdapterBot: /private refused."""
    host, log = logged
    async with aiohttp.ClientSession(middlewares=(RobotsMiddleware(checker),)) as session:
        with pytest.raises(DisallowedError) as caught:
            await session.get(host.url("/private"))
        async with session.get(host.url("/other")) as response:
            assert response.status == 200
    assert caught.value.user_agent == USER_AGENT
    assert caught.value.verdict.line == 2
    assert log.agents("/private") == []


async def test_request_with_another_user_agent_is_judged_by_its_token(
    logged: tuple[Host, AgentLog], checker: ra.RobotsChecker
) -> None:
    """A request sent as OtherBot is judged by OtherBot's group and sent as OtherBot;
    one robots.txt fetch serves both identities (the cache is per origin)."""
    host, log = logged
    other = "OtherBot/3.0 (+https://other.test)"
    async with aiohttp.ClientSession(middlewares=(RobotsMiddleware(checker),)) as session:
        async with session.get(host.url("/private"), headers={"User-Agent": other}) as response:
            assert response.status == 200
        with pytest.raises(DisallowedError) as caught:
            await session.get(host.url("/other"), headers={"User-Agent": other})
    assert caught.value.user_agent == other
    assert caught.value.verdict.line == 5
    assert log.agents("/private") == [other]
    assert log.agents("/other") == []
    assert log.agents("/robots.txt") == [USER_AGENT]
    assert checker.cache.stats.fetches == 1


async def test_session_user_agent_is_kept_and_decides(
    logged: tuple[Host, AgentLog], checker: ra.RobotsChecker
) -> None:
    """A session-wide User-Agent naming no group falls to the * group."""
    host, log = logged
    browser = "Mozilla/5.0 (X11; Linux x86_64)"
    middleware = RobotsMiddleware(checker)
    async with aiohttp.ClientSession(
        middlewares=(middleware,), headers={"User-Agent": browser}
    ) as session:
        async with session.get(host.url("/private")) as response:
            assert response.status == 200
        with pytest.raises(DisallowedError):
            await session.get(host.url("/star"))
    assert log.agents("/private") == [browser]
    assert log.agents("/star") == []


async def test_five_hops_one_refusal_count_once_each(
    logged: tuple[Host, AgentLog], checker: ra.RobotsChecker
) -> None:
    """/hop/0 -> ... -> /hop/4 -> /private/end: 5 hops allowed, the 6th refused.

    Every hop is one lookup: checks=6 (5 allowed, 1 refused), disallowed=1.
    """
    host, log = logged
    async with aiohttp.ClientSession(middlewares=(RobotsMiddleware(checker),)) as session:
        with pytest.raises(DisallowedError) as caught:
            await session.get(host.url("/hop/0"), max_redirects=10)
    assert caught.value.url == host.url("/private/end")
    assert [path for path, _ in log.seen if path.startswith("/hop/")] == [
        f"/hop/{i}" for i in range(5)
    ]
    assert {agent for _, agent in log.seen} == {USER_AGENT}
    assert log.agents("/private/end") == []
    stats = checker.stats
    assert (stats.checks, stats.disallowed) == (6, 1)


async def test_five_requests_one_refused(
    logged: tuple[Host, AgentLog], checker: ra.RobotsChecker
) -> None:
    """The issue's figure: 5 hops with 1 refusal give checks=5, disallowed=1."""
    host, _ = logged
    async with aiohttp.ClientSession(middlewares=(RobotsMiddleware(checker),)) as session:
        for path in ("/page", "/other", "/star", "/page"):
            async with session.get(host.url(path)) as response:
                assert response.status == 200
        with pytest.raises(DisallowedError):
            await session.get(host.url("/private"))
    stats = checker.stats
    assert (stats.checks, stats.disallowed) == (5, 1)
