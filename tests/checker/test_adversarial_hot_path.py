"""Adversarial review of issue 13's hot path: cached ``allowed()`` (PLAIN_URL, the
origin text index, the first token's bucket) answers as ``explain()``'s general path
does, for odd spellings, several agents and files sharing compiled rules."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

import yarl
from aiohttp import web

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    import robots_async as ra

    from .conftest import Server

# Two origins (ports) serve files whose "*" rules are the same bytes on the same lines
# (one compiled bucket shared) but whose named groups differ.
_SHARED = "User-agent: *\nDisallow: /private\nAllow: /private/ok\nDisallow: /*.php$\n"
_FILES = [
    _SHARED + "\nUser-agent: a\nDisallow: /\nAllow: /pub\n",
    _SHARED + "\nUser-agent: b\nDisallow: /pub\n\nUser-agent: a\nDisallow: /x\n",
]
_PIECES = ["/", "private", "ok", "pub", "x", ".php", "?", "#", "..", ".", "%70", ";", "A", "\t"]
_AGENTS = [None, "a/1.0", "A", "b (+http://b.test)", "c", "*"]


async def test_hot_path_agrees_with_explain_across_spellings_agents_and_files(
    make_server: Callable[[int], Awaitable[Server]], make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    server = await make_server(2)
    server.route("/robots.txt", _by_port(dict(zip(server.ports, _FILES, strict=True))))
    checker = make_checker("a/1.0")
    rng = random.Random(13)
    verdicts: list[bool] = []
    for _ in range(1500):
        port = rng.randrange(2)
        path = "".join(rng.choice(_PIECES) for _ in range(rng.randrange(1, 6)))
        url = server.base(port) + ("" if path[:1] in "/?#" else "/") + path
        agent = rng.choice(_AGENTS)
        spelled: str | yarl.URL = yarl.URL(url) if rng.random() < 0.2 else url
        hot = await checker.allowed(spelled, user_agent=agent)
        general = await checker.explain(url, user_agent=agent)
        assert hot == general.allowed, (url, agent, general)
        verdicts.append(hot)
    assert 300 < verdicts.count(False) < 1200  # both verdicts well represented
    assert server.count(index=0) == server.count(index=1) == 1
    assert checker.stats.cache.hits > 2500


def _by_port(bodies: dict[int, str]) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def handler(request: web.Request) -> web.Response:
        port = request.url.port
        assert port is not None
        return web.Response(text=bodies[port])

    return handler
