"""aiohttp and httpx adapters refusing an AI use on every signal a response's headers
allow (usage_signals: on by default when refuse_usage names a category): robots.txt
Content-Signal, tdmrep.json, the TDMRep and X-Robots-Tag headers, besides
Content-Usage."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

import aiohttp
import pytest

import robots_async as ra
from robots_async.contrib import aiohttp as ra_aiohttp

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from .conftest import Host, Site

USER_AGENT = "AdapterBot/1.0 (+https://example.test/bot)"
TDM = "/.well-known/tdmrep.json"
#: Path -> what refuses train-ai there (None: nothing does).
PAGES: dict[str, str | None] = {
    "/plain": None,
    "/reserved/a": "tdmrep-file",
    "/noai-header": "page-directives",
    "/tdm-header": "tdmrep-page",
}


@pytest.fixture
def pages(site: Site) -> Host:
    host = site.host()
    host.serve("/robots.txt", "User-agent: *\nAllow: /\n")
    host.serve(TDM, json.dumps([{"location": "/reserved/", "tdm-reservation": 1}]))
    host.serve("/plain", "page")
    host.serve("/reserved/a", "page")
    host.serve("/noai-header", "page", headers={"X-Robots-Tag": "noai"})
    host.serve("/tdm-header", "page", headers={"tdm-reservation": "1"})
    return host


@pytest.fixture
def signal_site(site: Site) -> Host:
    host = site.host()
    host.serve("/robots.txt", "User-agent: *\nContent-Signal: ai-train=no\nAllow: /\n")
    host.serve("/page", "page")
    return host


@pytest.fixture
async def checker() -> AsyncIterator[ra.RobotsChecker]:
    async with ra.RobotsChecker(USER_AGENT) as checker:
        yield checker


async def via_aiohttp(
    checker: ra.RobotsChecker, urls: list[str], **options: object
) -> dict[str, object]:
    """Each URL's status, or the UsageRefusedError it raised."""
    middleware = ra_aiohttp.RobotsMiddleware(checker, **options)  # type: ignore[arg-type]

    async def get(session: aiohttp.ClientSession, url: str) -> object:
        try:
            async with session.get(url) as response:
                return response.status
        except ra_aiohttp.UsageRefusedError as refused:
            return refused

    async with aiohttp.ClientSession(middlewares=(middleware,)) as session:
        return {url: await get(session, url) for url in urls}


async def via_httpx(
    checker: ra.RobotsChecker, urls: list[str], **options: object
) -> dict[str, object]:
    """As via_aiohttp, through an httpx client (skipped where httpx is absent)."""
    httpx = pytest.importorskip("httpx")
    from robots_async.contrib import httpx as ra_httpx

    transport = ra_httpx.RobotsTransport(checker, **options)  # type: ignore[arg-type]

    async def get(client: httpx.AsyncClient, url: str) -> object:
        try:
            return (await client.get(url)).status_code
        except ra_httpx.UsageRefusedError as refused:
            return refused

    async with httpx.AsyncClient(transport=transport) as client:
        return {url: await get(client, url) for url in urls}


ADAPTERS = {"aiohttp": via_aiohttp, "httpx": via_httpx}


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_refusing_train_ai_honours_every_header_signal(
    adapter: str, pages: Host, signal_site: Host, checker: ra.RobotsChecker
) -> None:
    urls = [pages.url(path) for path in PAGES] + [signal_site.url("/page")]
    results = await ADAPTERS[adapter](checker, urls, refuse_usage=("train-ai",))
    expected = {pages.url(path): source for path, source in PAGES.items()}
    expected[signal_site.url("/page")] = "robots-content-signal"
    for url, source in expected.items():
        result = results[url]
        if source is None:
            assert result == 200, url
            continue
        assert isinstance(result, ra.RobotsError), (url, result)
        assert result.category == "train-ai"  # type: ignore[attr-defined]
        answer = result.answer  # type: ignore[attr-defined]
        assert source in {s.source for s in answer.refusing(["train-ai"])}, url
        assert source in str(result)
    assert pages.count(TDM) == 1  # once for the origin, however many pages


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_usage_signals_false_keeps_content_usage_alone(
    adapter: str, pages: Host, checker: ra.RobotsChecker
) -> None:
    urls = [pages.url(path) for path in PAGES]
    results = await ADAPTERS[adapter](
        checker, urls, refuse_usage=("train-ai",), usage_signals=False
    )
    assert set(results.values()) == {200}
    assert pages.count(TDM) == 0


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_refusing_nothing_fetches_nothing_new(
    adapter: str, pages: Host, checker: ra.RobotsChecker
) -> None:
    results = await ADAPTERS[adapter](checker, [pages.url("/noai-header")])
    assert set(results.values()) == {200}
    assert pages.count(TDM) == 0


def test_usage_signals_must_be_a_bool_or_none(checker: ra.RobotsChecker) -> None:
    with pytest.raises(ra.ConfigurationTypeError, match="usage_signals"):
        ra_aiohttp.RobotsMiddleware(checker, usage_signals="yes")  # type: ignore[arg-type]


@pytest.mark.parametrize("adapter", ["aiohttp", "httpx"])
def test_usage_signals_without_a_refused_category_fails_loudly(
    checker: ra.RobotsChecker, adapter: str
) -> None:
    """usage_signals only widens what refuse_usage refuses: True with nothing refused
    was accepted and did nothing (no signal read, nothing refused)."""
    build: Callable[..., object] = ra_aiohttp.RobotsMiddleware
    if adapter == "httpx":
        build = pytest.importorskip("robots_async.contrib.httpx").RobotsTransport
    with pytest.raises(ra.ConfigurationError, match=r"usage_signals=True .*refuse_usage"):
        build(checker, usage_signals=True)
    build(checker, usage_signals=True, refuse_usage=("train-ai",))
    build(checker, usage_signals=False)


@pytest.mark.parametrize("adapter", ADAPTERS)
@pytest.mark.parametrize(
    "tdmrep",
    [
        {"body": "[]", "delay": 5.0},  # hangs past the fetch deadline
        {"body": "[]", "status": 503},
        {"body": "[" + " " * 600_000 + "]"},  # over the cap
        {"body": "[{"},
    ],
    ids=["hung", "503", "huge", "broken"],
)
async def test_an_unknown_tdmrep_file_never_refuses_nor_hangs(
    adapter: str, site: Site, tdmrep: dict[str, object]
) -> None:
    """tdmrep.json that cannot be had is "unknown" for train-ai: the response is kept
    (refusing needs a "disallowed"), within the fetch deadline (1 s here) plus grace."""
    host = site.host()
    host.serve("/robots.txt", "User-agent: *\nAllow: /\n")
    host.serve(TDM, **tdmrep)  # type: ignore[arg-type]
    host.serve("/page", "page")
    policy = ra.FetchPolicy(total_timeout=1.0)
    async with ra.RobotsChecker(USER_AGENT, fetch_policy=policy) as checker:
        loop = asyncio.get_running_loop()
        started = loop.time()
        results = await ADAPTERS[adapter](checker, [host.url("/page")], refuse_usage=("train-ai",))
        assert loop.time() - started < 3.0
        answer = await checker.usage(host.url("/page"), {})
    assert results == {host.url("/page"): 200}
    assert answer.get("train-ai") == "unknown"
    assert [s.source for s in answer.sources] == ["tdmrep-file"]


@pytest.mark.parametrize(
    ("refuse_usage", "error"),
    [
        (5, ra.ConfigurationTypeError),  # was TypeError: 'int' object is not iterable
        (None, ra.ConfigurationTypeError),
        (b"train-ai", ra.ConfigurationTypeError),  # bytes: its ints were the categories
        ([["train-ai"]], ra.ConfigurationTypeError),
        (("train_ai",), ra.ConfigurationError),  # was a bare ValueError
    ],
    ids=["int", "none", "bytes", "nested", "misspelt"],
)
@pytest.mark.parametrize("adapter", ["aiohttp", "httpx"])
def test_a_bad_refuse_usage_is_a_configuration_error_naming_it(
    checker: ra.RobotsChecker, adapter: str, refuse_usage: object, error: type[Exception]
) -> None:
    build: Callable[..., object] = ra_aiohttp.RobotsMiddleware
    if adapter == "httpx":
        build = pytest.importorskip("robots_async.contrib.httpx").RobotsTransport
    with pytest.raises(error, match=r"refuse_usage=.*train-ai, search"):
        build(checker, refuse_usage=refuse_usage)
