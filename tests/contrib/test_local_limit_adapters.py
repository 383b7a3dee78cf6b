"""A robots.txt our own process could not fetch ("local-limit": no descriptor left,
longer than the fetch's total_timeout) is never reported as the site's refusal by the
HTTP-client adapters: they raise LocalLimitError, a connection/transport error their
retry logic retries, not DisallowedError (issue 26)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import aiohttp
import httpx
import pytest

import robots_async as ra
from robots_async.contrib import aiohttp as ra_aiohttp
from robots_async.contrib import httpx as ra_httpx

from ..helpers import ShortOfDescriptors

if TYPE_CHECKING:
    from .conftest import Host, Site

RULES = b"User-agent: *\nDisallow: /private\n"


@pytest.fixture
def server(site: Site) -> Host:
    """One origin serving /page (its robots.txt comes from the test's fetcher)."""
    origin = site.host()
    origin.serve("/page", "hello")
    return origin


def checker_with(fetcher: ShortOfDescriptors) -> ra.RobotsChecker:
    # total_timeout bounds the cache's retries of our shortage: 0.3 s here.
    policy = ra.FetchPolicy(total_timeout=0.3)
    return ra.RobotsChecker("LimitBot/1.0", fetcher=fetcher, fetch_policy=policy)


async def test_aiohttp_a_lasting_shortage_is_a_connection_error_not_a_refusal(
    server: Host,
) -> None:
    fetcher = ShortOfDescriptors(failures=10_000)
    checker = checker_with(fetcher)
    middleware = ra_aiohttp.RobotsMiddleware(checker)
    async with aiohttp.ClientSession(middlewares=(middleware,)) as session:
        with pytest.raises(ra_aiohttp.LocalLimitError) as caught:
            await session.get(server.url("/page"))
    error = caught.value
    assert isinstance(error, aiohttp.ClientConnectionError)
    assert isinstance(error, ra.LocalLimitError)
    assert not isinstance(error, ra.DisallowedError)
    assert error.decision.outcome.error == "local-limit"
    assert error.retry_after == 5.0
    assert fetcher.calls >= 3  # tried again within total_timeout before giving up
    assert server.count("/page") == 0  # fail closed: nothing sent meanwhile
    assert checker.stats.cache.local_limit_retries >= 2
    await checker.aclose()


async def test_aiohttp_a_short_shortage_costs_a_wait_not_an_error(server: Host) -> None:
    fetcher = ShortOfDescriptors(failures=2)
    checker = checker_with(fetcher)
    async with aiohttp.ClientSession(middlewares=(ra_aiohttp.RobotsMiddleware(checker),)) as s:
        async with s.get(server.url("/page")) as response:
            assert response.status == 200
        with pytest.raises(ra_aiohttp.DisallowedError):
            await s.get(server.url("/private/x"))
    assert fetcher.calls == 3
    await checker.aclose()


async def test_httpx_a_lasting_shortage_is_a_transport_error_not_a_refusal(
    server: Host,
) -> None:
    fetcher = ShortOfDescriptors(failures=10_000)
    checker = checker_with(fetcher)
    transport = ra_httpx.RobotsTransport(checker)
    async with httpx.AsyncClient(transport=transport) as client:
        with pytest.raises(ra_httpx.LocalLimitError) as caught:
            await client.get(server.url("/page"))
    error = caught.value
    assert isinstance(error, httpx.TransportError)
    assert not isinstance(error, ra.DisallowedError)
    assert error.request.url == server.url("/page")
    assert server.count("/page") == 0
    await checker.aclose()


async def test_a_stale_copy_under_a_shortage_still_refuses_by_its_rule(server: Host) -> None:
    """With a last good copy in force, our shortage answers from it: its own Disallow
    is the site's answer (DisallowedError), its Allow lets the request go."""

    class GoodThenShort(ShortOfDescriptors):
        async def fetch(self, url: str, *, keep_body: bool = False, **_: Any) -> ra.FetchOutcome:
            self.calls += 1
            if self.calls == 1:
                return ra.FetchOutcome(url, url, 200, robots=ra.parse(RULES))
            return ra.FetchOutcome(url, url, None, error="local-limit", error_detail="EMFILE")

    now = [1_000_000.0]
    policy = ra.FetchPolicy(total_timeout=0.3)
    checker = ra.RobotsChecker(
        "LimitBot/1.0", fetcher=GoodThenShort(0), fetch_policy=policy, clock=lambda: now[0]
    )
    async with aiohttp.ClientSession(middlewares=(ra_aiohttp.RobotsMiddleware(checker),)) as s:
        async with s.get(server.url("/page")) as response:
            assert response.status == 200
        now[0] += policy.ttl + 1  # expired: the refresh runs short of descriptors
        with pytest.raises(ra_aiohttp.DisallowedError) as caught:
            await s.get(server.url("/private/x"))
        assert caught.value.decision is not None
        assert caught.value.decision.source == "stale"
        async with s.get(server.url("/page")) as response:
            assert response.status == 200
    await checker.aclose()
