"""The aiohttp middleware and AI usage preferences (draft-ietf-aipref-attach): the
robots.txt Content-Usage rule and the response header, combined, against a real site."""

from __future__ import annotations

from typing import TYPE_CHECKING

import aiohttp
import pytest

import robots_async as ra
from robots_async.contrib.aiohttp import RobotsMiddleware, UsageRefusedError, content_usage

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from .conftest import Host, Site

USER_AGENT = "AdapterBot/1.0 (+https://example.test/bot)"
ROBOTS = """\
User-agent: *
Content-Usage: train-ai=n
Content-Usage: /news/ train-ai=y, search=y
Disallow: /private
"""


@pytest.fixture
def host(site: Site) -> Host:
    """robots.txt: train-ai=n site-wide (line 2), y under /news/ (line 3); headers vary."""
    origin = site.host()
    origin.serve("/robots.txt", ROBOTS)
    origin.serve("/news/plain", "news")
    origin.serve("/news/no-search", "news", headers={"Content-Usage": "search=n"})
    origin.serve("/news/no-train", "news", headers={"Content-Usage": "train-ai=n"})
    origin.serve("/news/bad", "news", headers={"Content-Usage": "train-ai=maybe"})
    origin.redirect("/news/moved", "/news/plain")
    origin.serve(
        "/news/moved-refusing",
        status=302,
        headers={"Location": "/news/plain", "Content-Usage": "train-ai=n"},
    )
    return origin


@pytest.fixture
async def checker() -> AsyncIterator[ra.RobotsChecker]:
    """A checker (closed at teardown)."""
    async with ra.RobotsChecker(USER_AGENT) as checker:
        yield checker


async def test_robots_rule_alone(host: Host, checker: ra.RobotsChecker) -> None:
    """No header: the preferences are robots.txt's, with the rule and line."""
    async with (
        aiohttp.ClientSession(middlewares=(RobotsMiddleware(checker),)) as session,
        session.get(host.url("/news/plain")) as response,
        session.get(host.url("/about")) as other,
    ):
        usage = content_usage(response)
        elsewhere = content_usage(other)
    assert usage is not None
    assert (usage.train_ai, usage.search) == ("allowed", "allowed")
    assert usage.lines == (3,)
    assert usage.header == ()
    assert elsewhere is not None
    assert (elsewhere.train_ai, elsewhere.search) == ("disallowed", "unknown")
    assert elsewhere.lines == (2,)


async def test_header_combines_most_restrictively(host: Host, checker: ra.RobotsChecker) -> None:
    """robots.txt says search=y, the header search=n: n wins; unknown values stay unknown."""
    async with aiohttp.ClientSession(middlewares=(RobotsMiddleware(checker),)) as session:
        async with session.get(host.url("/news/no-search")) as response:
            usage = content_usage(response)
        async with session.get(host.url("/news/bad")) as response:
            bad = content_usage(response)
    assert usage is not None
    assert (usage.train_ai, usage.search) == ("allowed", "disallowed")
    assert usage.header == ("search=n",)
    assert usage.lines == (3,)
    assert bad is not None
    assert bad.train_ai == "allowed"  # "maybe" says nothing; robots.txt's y remains


async def test_redirected_response_carries_final_urls_preferences(
    host: Host, checker: ra.RobotsChecker
) -> None:
    """After a redirect the response's preferences are those of the final URL."""
    async with (
        aiohttp.ClientSession(middlewares=(RobotsMiddleware(checker),)) as session,
        session.get(host.url("/news/moved")) as response,
    ):
        usage = content_usage(response)
        assert str(response.url) == host.url("/news/plain")
    assert usage is not None
    assert usage.train_ai == "allowed"


async def test_refuse_usage_raises_and_the_rest_passes(
    host: Host, checker: ra.RobotsChecker
) -> None:
    """refuse_usage=("train-ai",): robots.txt's or the header's n refuse, y passes."""
    middleware = RobotsMiddleware(checker, refuse_usage=("train-ai",))
    async with aiohttp.ClientSession(middlewares=(middleware,)) as session:
        with pytest.raises(UsageRefusedError) as by_robots:
            await session.get(host.url("/about"))
        with pytest.raises(UsageRefusedError) as by_header:
            await session.get(host.url("/news/no-train"))
        async with session.get(host.url("/news/no-search")) as response:
            assert response.status == 200
        # A redirect's own header is not content: the hop passes, the target decides.
        async with session.get(host.url("/news/moved-refusing")) as response:
            assert response.status == 200
    for caught in (by_robots, by_header):
        assert isinstance(caught.value, aiohttp.ClientError)
        assert isinstance(caught.value, ra.RobotsError)
        assert caught.value.category == "train-ai"
        assert caught.value.status == 200
    assert by_robots.value.usage.lines == (2,)
    assert "Content-Usage: train-ai=n (line 2)" in str(by_robots.value)
    assert by_header.value.usage.header == ("train-ai=n",)
    assert "header Content-Usage: train-ai=n" in str(by_header.value)
    # Robots.txt allowed crawling: the requests were sent, each counted once.
    assert host.count("/about") == 1
    assert (checker.stats.checks, checker.stats.disallowed) == (5, 0)


async def test_no_refusal_by_default(host: Host, checker: ra.RobotsChecker) -> None:
    """Without refuse_usage a train-ai=n response is returned with its preferences."""
    async with (
        aiohttp.ClientSession(middlewares=(RobotsMiddleware(checker),)) as session,
        session.get(host.url("/news/no-train")) as response,
    ):
        assert response.status == 200
        usage = content_usage(response)
    assert usage is not None
    assert usage.disallows("train-ai")


async def test_unchecked_response_has_no_preferences(host: Host, checker: ra.RobotsChecker) -> None:
    """/robots.txt passes unchecked, and a session without the middleware is unknown."""
    async with (
        aiohttp.ClientSession(middlewares=(RobotsMiddleware(checker),)) as session,
        session.get(host.url("/robots.txt")) as response,
    ):
        assert content_usage(response) is None
    async with aiohttp.ClientSession() as plain, plain.get(host.url("/news/plain")) as response:
        assert content_usage(response) is None


def test_refuse_usage_rejects_unknown_category() -> None:
    """A category outside the vocabulary is a configuration error naming it."""
    with pytest.raises(ra.ConfigurationError, match=r"refuse_usage='train' is not .*train-ai"):
        RobotsMiddleware(ra.RobotsChecker(USER_AGENT), refuse_usage=("train",))  # type: ignore[arg-type]
