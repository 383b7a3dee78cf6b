"""page_directives() on responses received by real HTTP clients from a real server.

The header containers are the clients' own (aiohttp's CIMultiDictProxy, httpx's
Headers), with repeated X-Robots-Tag lines as the server sent them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import aiohttp
import pytest
from aiohttp import web
from multidict import CIMultiDict

from robots_async import page_directives

if TYPE_CHECKING:
    from ..servers import Server

PAGE = (
    b"<!doctype html><html><head><title>t</title>"
    b'<meta name="robots" content="noimageai"><meta name="MyBot" content="nosnippet">'
    b"</head><body><meta name=robots content=noarchive></body></html>"
)
LINES = [
    ("X-Robots-Tag", "otherbot: noindex"),
    ("X-Robots-Tag", "nofollow"),
    ("X-Robots-Tag", "mybot: noai"),
    ("tdm-reservation", "1"),
    ("Content-Type", "text/html; charset=utf-8"),
]
EXPECTED = {"nofollow", "noai", "noimageai", "nosnippet"}
FLAGS = ("noindex", "nofollow", "noarchive", "nosnippet", "noai", "noimageai")


def serve(server: Server) -> str:
    async def handler(_: web.Request) -> web.StreamResponse:
        return web.Response(body=PAGE, headers=CIMultiDict(LINES))

    server.route("/page", handler)
    return server.url("/page")


async def test_aiohttp_response(server: Server) -> None:
    url = serve(server)
    async with aiohttp.ClientSession() as session, session.get(url) as response:
        body = await response.read()
        result = page_directives(response.headers, body, user_agent="MyBot/1.0")
    assert {flag for flag in FLAGS if getattr(result, flag)} == EXPECTED
    assert result.tdm_reservation is True


async def test_httpx_response(server: Server) -> None:
    # The core job of .ci/lowest installs no adapter framework: skipped there.
    httpx = pytest.importorskip("httpx")
    url = serve(server)
    async with httpx.AsyncClient() as client:
        response = await client.get(url)
    result = page_directives(response.headers, response.content, user_agent="MyBot/1.0")
    assert {flag for flag in FLAGS if getattr(result, flag)} == EXPECTED
    assert result.tdm_reservation is True
