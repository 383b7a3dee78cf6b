"""The URL judged is the URL sent: no spelling of a URL reaches a disallowed path.

A real aiohttp server records the raw request target of every request; each URL the
checker allows is then really sent with aiohttp, and the server must never see a
path under the disallowed ``/private``.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

import aiohttp
import pytest
import yarl
from aiohttp import web

import robots_async as ra
from robots_async.fetch.wire import wire_url

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

ROBOTS = "User-agent: *\nDisallow: /private\n"
AGENT = "WireBot/1.0"

# The six spellings from the issue: each was allowed, and aiohttp sent /private/...
ISSUE_FORMS = [
    "/pri\tvate/b",
    "/pri\nvate/c",
    "/./private/d",
    "/x/../private/e",
    "/%70rivate/f",
    "/%zz/../private/g",
]
MORE_FORMS = [
    "/%2e/private/h",
    "/%2E%2E/private/i",
    "/.%2e/private/j",
    "/a/b/../../private/k",
    "/private/./l",
    "/%70%72%69%76%61%74%65",
    "/pr%69vate?x=1",
    "/p\rrivate".replace("\r", "") + "/m",
    "/a/%2e%2e/private",
    "/pri\tvate",
]


class RecordingSite:
    """A real aiohttp server that serves robots.txt and records raw request targets."""

    def __init__(self) -> None:
        self.targets: list[str] = []
        self.paths: list[str] = []
        self.base = ""

    async def handle(self, request: web.Request) -> web.Response:
        if request.path == "/robots.txt":
            return web.Response(text=ROBOTS)
        self.targets.append(request.raw_path)
        self.paths.append(request.path)
        return web.Response(text="page")


@pytest.fixture
async def site() -> AsyncIterator[RecordingSite]:
    recorder = RecordingSite()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", recorder.handle)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.2)
    await runner.setup()
    tcp = web.TCPSite(runner, "127.0.0.1", 0)
    await tcp.start()
    port = tcp._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    recorder.base = f"http://127.0.0.1:{port}"
    yield recorder
    await runner.cleanup()


def spellings(seed: int, count: int) -> list[str]:
    """Random spellings of ``/private/<n>``: dot segments, escapes, tabs, newlines."""
    rng = random.Random(seed)
    forms = []
    for n in range(count):
        letters = []
        for char in "private":
            roll = rng.random()
            if roll < 0.2:
                letters.append(f"%{ord(char):02x}")
            elif roll < 0.35:
                letters.append(f"%{ord(char):02X}")
            elif roll < 0.45:
                letters.append(char + rng.choice("\t\n"))
            else:
                letters.append(char)
        prefix = rng.choice(["", "/.", "/x/..", "/%2e", "/a/b/../..", "/./.", "/%2E%2e/x/.."])
        forms.append(f"{prefix}/{''.join(letters)}/{n}")
    return forms


async def _send_allowed(site: RecordingSite, forms: list[str]) -> list[str]:
    """Check each form; send the allowed ones; return the forms the checker allowed."""
    allowed = []
    async with ra.RobotsChecker(AGENT) as checker, aiohttp.ClientSession() as session:
        for form in forms:
            url = site.base + form
            if await checker.allowed(url):
                allowed.append(form)
                async with session.get(url) as response:
                    assert response.status == 200
    return allowed


async def test_issue_forms_are_refused(site: RecordingSite) -> None:
    """Each spelling from the issue is disallowed, and none reaches the server."""
    allowed = await _send_allowed(site, ISSUE_FORMS + MORE_FORMS)
    assert allowed == []
    assert site.targets == []


async def test_no_spelling_reaches_a_disallowed_path(site: RecordingSite) -> None:
    """300 random spellings: whatever is allowed is sent, and never lands on /private."""
    forms = spellings(seed=9309, count=300)
    allowed = await _send_allowed(site, forms)
    assert all(not t.startswith("/private") for t in site.targets), site.targets
    assert all(not p.startswith("/private") for p in site.paths), site.paths
    # Every spelling here is /private/... once normalised: none may be allowed.
    assert allowed == []


async def test_allowed_urls_are_still_allowed(site: RecordingSite) -> None:
    """Normalisation does not over-block: look-alikes of /private stay allowed."""
    forms = ["/public/./x", "/x/../public", "/%50rivate", "/PRIVATE", "//private", "/a?b=/private"]
    allowed = await _send_allowed(site, forms)
    assert allowed == forms
    sent = ["/public/x", "/public", "/Private", "/PRIVATE", "//private", "/a?b=/private"]
    assert site.targets == sent


async def test_checker_accepts_yarl_urls(site: RecordingSite) -> None:
    """A yarl.URL is accepted wherever a URL is, and judged as aiohttp sends it."""
    async with ra.RobotsChecker(AGENT) as checker:
        assert not await checker.allowed(yarl.URL(site.base + "/x/../private"))
        assert await checker.allowed(yarl.URL(site.base + "/public"))
        decision = await checker.explain(yarl.URL(site.base + "/%70rivate/z"))
        assert not decision.allowed
        assert decision.url == site.base + "/private/z"
        # A URL built with encoded=True is judged as its text, like the same str
        # (issue 31: one verdict whatever the type): %2E is "." (RFC 3986 §2.3), so
        # /x/%2E%2E/private is /private to a server that normalises.
        raw = yarl.URL(site.base + "/x/%2E%2E/private", encoded=True)
        assert await checker.allowed(raw) is False
        assert await checker.allowed(str(raw)) is False
    assert ra.Origin.from_url(yarl.URL("HTTP://Example.COM:80/a")) == ra.Origin(
        "http", "example.com", 80
    )
    assert ra.request_target(yarl.URL("http://h/a b?q#f")) == "/a%20b?q"
    assert not ra.parse(ROBOTS).allowed(yarl.URL("http://h/./private"), user_agent=AGENT)


@pytest.mark.parametrize(
    ("url", "sent"),
    [
        ("http://h/a/b?c=d", "http://h/a/b?c=d"),
        ("http://h/a/./b", "http://h/a/b"),
        ("http://h/a/../b", "http://h/b"),
        ("http://h/%7euser", "http://h/~user"),
        ("http://h/a%2fb", "http://h/a%2Fb"),
        ("http://h/ツ", "http://h/%E3%83%84"),
        ("http://h/a b", "http://h/a%20b"),
        ("http://h/a?", "http://h/a"),
        ("http://h/a#../../b", "http://h/a#../../b"),
        ("http://u:p@h:8080/x", "http://u:p@h:8080/x"),
        ("http://h", "http://h"),
        ("ftp://h/x", "ftp://h/x"),
        ("not a url", "not a url"),
    ],
)
def test_wire_url(url: str, sent: str) -> None:
    """wire_url gives scheme://authority plus the request target aiohttp sends."""
    got = wire_url(url)
    assert got == sent
    if got.startswith("http") and "#" not in got:
        assert ra.request_target(got) == (yarl.URL(url).raw_path_qs or "/")


def test_wire_url_rejects_unparsable() -> None:
    """A URL yarl cannot parse is an InvalidURLError, not a crash."""
    with pytest.raises(ra.InvalidURLError):
        wire_url("http://h:99999999/x")
