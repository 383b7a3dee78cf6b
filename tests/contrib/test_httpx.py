"""httpx transport against a real local aiohttp server: every hop checked, one identity,
one lookup per hop, usage preferences; and URLs of any client accepted by the checker."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx
import pytest
import yarl
from aiohttp import web

import robots_async as ra
from robots_async.contrib.httpx import (
    DisallowedError,
    RobotsTransport,
    UsageRefusedError,
    content_usage,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from .conftest import Host, Site

USER_AGENT = "AdapterBot/1.0 (+https://example.test/bot)"
ROBOTS = """\
User-agent: AdapterBot
Disallow: /private
Disallow: /a%3cd
Content-Usage: train-ai=n
Content-Usage: /news/ train-ai=y

User-agent: OtherBot
Disallow: /other
"""


class Recorder:
    """Every request a host received, with its User-Agent."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    async def record(self, request: web.Request) -> web.StreamResponse:
        """Log the request, then answer robots.txt, a redirect chain or a page."""
        self.seen.append((request.raw_path, request.headers.get("User-Agent", "")))
        if request.path == "/robots.txt":
            return web.Response(text=ROBOTS)
        if request.path.startswith("/hop/"):
            step = int(request.path.rsplit("/", 1)[1])
            target = "/private/end" if step == 3 else f"/hop/{step + 1}"
            return web.Response(status=302, headers={"Location": target})
        if request.path == "/to-public":
            return web.Response(status=302, headers={"Location": "/public/end"})
        if request.path == "/news/no-train":
            return web.Response(text="news", headers={"Content-Usage": "train-ai=n"})
        return web.Response(text=f"page {request.path}")

    def paths(self) -> list[str]:
        """Requested raw paths in arrival order."""
        return [path for path, _ in self.seen]

    def agents(self, path: str) -> list[str]:
        """The User-Agents that requested ``path``."""
        return [agent for seen, agent in self.seen if seen == path]


@pytest.fixture
def logged(site: Site) -> tuple[Host, Recorder]:
    """One origin whose every request is recorded."""
    host = site.host()
    log = Recorder()
    paths = (
        "/robots.txt", "/public/page", "/public/end", "/private/page", "/hop/1", "/hop/2",
        "/hop/3", "/private/end", "/to-public", "/news/no-train", "/news/page",
        "/other/page", "/a%3cd", "/a%3Cd", "/a<d",
    )  # fmt: skip
    host.routes.update(dict.fromkeys(paths, log.record))
    return host, log


@pytest.fixture
async def checker() -> AsyncIterator[ra.RobotsChecker]:
    """A checker (closed at teardown)."""
    async with ra.RobotsChecker(USER_AGENT) as checker:
        yield checker


def client(checker: ra.RobotsChecker, **kwargs: object) -> httpx.AsyncClient:
    """An AsyncClient sending through a RobotsTransport, following redirects."""
    transport = RobotsTransport(checker, **kwargs)  # type: ignore[arg-type]
    return httpx.AsyncClient(transport=transport, follow_redirects=True, timeout=10)


async def test_allowed_page_is_fetched_with_the_checkers_user_agent(
    logged: tuple[Host, Recorder], checker: ra.RobotsChecker
) -> None:
    """An allowed page is sent, with the checker's User-Agent instead of httpx's."""
    host, log = logged
    async with client(checker) as http:
        response = await http.get(host.url("/public/page"))
    assert response.status_code == 200
    assert response.text == "page /public/page"
    assert log.agents("/public/page") == [USER_AGENT]
    assert log.agents("/robots.txt") == [USER_AGENT]


async def test_disallowed_page_raises_before_sending(
    logged: tuple[Host, Recorder], checker: ra.RobotsChecker
) -> None:
    """A disallowed URL raises an error that is robots_async's and httpx's; nothing is sent."""
    host, log = logged
    async with client(checker) as http:
        with pytest.raises(DisallowedError) as caught:
            await http.get(host.url("/private/page"))
    error = caught.value
    assert isinstance(error, httpx.RequestError)
    assert isinstance(error, ra.DisallowedError)
    assert isinstance(error, ra.RobotsError)
    assert error.verdict.line == 2
    assert "Disallow: /private (line 2)" in str(error)
    assert error.request.url == httpx.URL(host.url("/private/page"))
    assert "/private/page" not in log.paths()


async def test_redirect_to_a_disallowed_page_is_refused_at_the_hop(
    logged: tuple[Host, Recorder], checker: ra.RobotsChecker
) -> None:
    """Each hop httpx follows is checked: the chain stops before /private/end, and each
    hop is one check in the stats."""
    host, log = logged
    async with client(checker) as http:
        with pytest.raises(httpx.RequestError, match="/private/end"):
            await http.get(host.url("/hop/1"))
        assert checker.stats.checks == 4  # /hop/1, /hop/2, /hop/3, /private/end
        await http.get(host.url("/to-public"))
        assert checker.stats.checks == 6
    assert log.paths() == ["/robots.txt", "/hop/1", "/hop/2", "/hop/3", "/to-public", "/public/end"]
    assert set(log.agents("/hop/2")) == {USER_AGENT}
    assert checker.stats.disallowed == 1


async def test_explicit_user_agent_is_judged_by_its_own_token(
    logged: tuple[Host, Recorder], checker: ra.RobotsChecker
) -> None:
    """A caller's own User-Agent is kept and its token decides; the client's default
    headers count as the caller's."""
    host, log = logged
    other = "OtherBot/2.0"
    async with client(checker) as http:
        response = await http.get(host.url("/private/page"), headers={"User-Agent": other})
        assert response.status_code == 200
        with pytest.raises(DisallowedError) as caught:
            await http.get(host.url("/other/page"), headers={"User-Agent": other})
    assert caught.value.user_agent == other
    assert log.agents("/private/page") == [other]
    assert "/other/page" not in log.paths()


async def test_robots_txt_fetches_never_pass_through_the_transport(
    logged: tuple[Host, Recorder], checker: ra.RobotsChecker
) -> None:
    """The checker fetches robots.txt with its own client: the wrapped transport sees
    only the page requests, and /robots.txt is fetched once."""
    host, log = logged
    sent: list[str] = []

    class Counting(httpx.AsyncHTTPTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            sent.append(request.url.raw_path.decode())
            return await super().handle_async_request(request)

    inner = Counting()
    transport = RobotsTransport(checker, inner)
    async with httpx.AsyncClient(transport=transport) as http:
        for _ in range(3):
            assert (await http.get(host.url("/public/page"))).status_code == 200
    assert sent == ["/public/page"] * 3
    assert log.paths().count("/robots.txt") == 1
    await inner.aclose()


async def test_content_usage_and_refuse_usage(
    logged: tuple[Host, Recorder], checker: ra.RobotsChecker
) -> None:
    """content_usage() tells robots.txt's and the header's preference combined;
    refuse_usage= refuses a response whose preference is n."""
    host, _ = logged
    async with client(checker) as http:
        news = await http.get(host.url("/news/page"))
        other = await http.get(host.url("/public/page"))
    news_usage, other_usage = content_usage(news), content_usage(other)
    assert news_usage is not None
    assert news_usage.get("train-ai") == "allowed"
    assert other_usage is not None
    assert other_usage.disallows("train-ai")
    async with client(checker, refuse_usage=("train-ai",)) as http:
        assert (await http.get(host.url("/news/page"))).status_code == 200
        with pytest.raises(UsageRefusedError) as caught:
            await http.get(host.url("/news/no-train"))
    assert isinstance(caught.value, httpx.RequestError)
    assert caught.value.category == "train-ai"
    with pytest.raises(ra.ConfigurationError, match="refuse_usage='bogus'"):
        RobotsTransport(checker, refuse_usage=("bogus",))  # type: ignore[arg-type]


async def test_pace_waits_crawl_delay_between_hops(site: Site) -> None:
    """pace=True calls the checker's wait() before each request to an origin."""
    host = site.host()
    host.serve("/robots.txt", "User-agent: *\nCrawl-delay: 2\n")
    pauses: list[float] = []
    now = [1_000_000.0]

    async def sleep(seconds: float) -> None:
        pauses.append(seconds)
        now[0] += seconds

    async with ra.RobotsChecker(USER_AGENT, clock=lambda: now[0], sleep=sleep) as checker:
        async with client(checker, pace=True) as http:
            for _ in range(3):
                await http.get(host.url("/page"))
        assert pauses == [2.0, 2.0]
        assert checker.stats.waits == 3
        async with client(checker) as http:
            await http.get(host.url("/page"))
        assert checker.stats.waits == 3


async def test_sync_client_gets_a_clear_error(checker: ra.RobotsChecker) -> None:
    """An httpx.Client cannot use the async transport: the error names AsyncClient."""
    sync = httpx.Client(transport=RobotsTransport(checker))  # type: ignore[arg-type]
    with pytest.raises(ra.ConfigurationTypeError, match=r"httpx\.AsyncClient"):
        sync.get("http://127.0.0.1:9/page")  # noqa: ASYNC212 - refused before any I/O
    with (
        pytest.raises(ra.ConfigurationTypeError, match=r"httpx\.AsyncClient"),
        httpx.Client(transport=RobotsTransport(checker)),  # type: ignore[arg-type]
    ):
        pass  # pragma: no cover - __enter__ raises
    with pytest.raises(ra.ConfigurationTypeError, match="AsyncBaseTransport"):
        RobotsTransport(checker, httpx.HTTPTransport())  # type: ignore[arg-type]


# URL spellings of one resource, each as a str, a yarl.URL (decoded and encoded=True)
# and an httpx.URL, against "Disallow: /private" and "Disallow: /a%3cd" (stored as
# /a%3Cd): every type must get the str's verdict.
URL_TABLE = [
    ("/public/page", True),
    ("/private/page", False),
    ("/x/../private/page", False),
    ("/a%3cd", False),
    ("/a%3Cd", False),
    ("/a<d", False),
    ("/a%3cdx?q=1", False),
    ("/a%3ed", True),
    ("/%70rivate", False),
]


@pytest.mark.parametrize(("path", "expected"), URL_TABLE)
async def test_url_types_give_the_same_verdict(
    logged: tuple[Host, Recorder], checker: ra.RobotsChecker, path: str, expected: bool
) -> None:
    """str, yarl.URL (both modes) and httpx.URL get one verdict, in allowed(),
    explain() and the transport alike."""
    host, _ = logged
    text = host.url(path)
    spellings: list[object] = [text, yarl.URL(text), httpx.URL(text)]
    if "<" not in path:
        spellings.append(yarl.URL(text, encoded=True))
    for url in spellings:
        assert await checker.allowed(url) is expected, url
        assert (await checker.explain(url)).allowed is expected, url
    async with client(checker) as http:
        if expected:
            assert (await http.get(text)).status_code == 200
        else:
            with pytest.raises(DisallowedError):
                await http.get(text)


@pytest.mark.parametrize(
    "url",
    [b"http://127.0.0.1/page", None, 42, httpx.URL("/relative"), yarl.URL("/relative")],
    ids=["bytes", "None", "int", "httpx-relative", "yarl-relative"],
)
async def test_other_url_types_raise_a_type_error(checker: ra.RobotsChecker, url: object) -> None:
    """Anything but a URL of a client is a TypeError naming the accepted types (a yarl
    URL is a URL type: relative, it is an InvalidURLError)."""
    expected: type[Exception] = ra.InvalidURLError if isinstance(url, yarl.URL) else ra.URLTypeError
    for call in (checker.allowed, checker.explain, checker.usage, checker.wait):
        with pytest.raises(expected) as caught:
            await call(url)
        if expected is ra.URLTypeError:
            assert isinstance(caught.value, TypeError)
            assert "str, yarl.URL, httpx.URL" in str(caught.value)
    with pytest.raises(expected):
        checker.invalidate(url)


@pytest.mark.parametrize("wrong", ["MyBot/1.0", None, 42])
def test_transport_wants_a_checker(wrong: Any) -> None:
    """A User-Agent string (or anything but a checker) is refused at construction with
    how to make a checker (it was an AttributeError on the first request)."""
    with pytest.raises(TypeError, match=r"^RobotsTransport expects a robots_async\.Robots"):
        RobotsTransport(wrong)


@pytest.mark.parametrize("wrong", ["false", "no", 0, None])
async def test_transport_pace_is_a_bool(checker: ra.RobotsChecker, wrong: Any) -> None:
    """pace="false" paced every request (a truthy string), as RobotsMiddleware refuses."""
    with pytest.raises(ra.ConfigurationTypeError, match=r"^RobotsTransport\.pace="):
        RobotsTransport(checker, pace=wrong)
