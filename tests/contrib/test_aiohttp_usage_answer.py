"""contrib.aiohttp.usage_answer: every opt-out signal for a response, on a real site."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import aiohttp

import robots_async as ra
from robots_async.contrib.aiohttp import RobotsMiddleware, usage_answer

if TYPE_CHECKING:
    from .conftest import Site

TDM = "/.well-known/tdmrep.json"


async def test_usage_answer_combines_tdmrep_page_and_signal(site: Site) -> None:
    host = site.host()
    host.serve("/robots.txt", "User-agent: *\nContent-Signal: search=yes\nAllow: /\n")
    host.serve(TDM, json.dumps([{"location": "/books/", "tdm-reservation": 1}]))
    host.serve("/books/1", "<p>")
    html = {"Content-Type": "text/html"}
    host.serve("/page", '<html><head><meta name="robots" content="noai"></head>', headers=html)
    async with (
        ra.RobotsChecker("AdapterBot/1.0") as checker,
        aiohttp.ClientSession(middlewares=(RobotsMiddleware(checker),)) as session,
    ):
        async with session.get(host.url("/books/1")) as response:
            books = await usage_answer(response)
        async with session.get(host.url("/page")) as response:
            page = await usage_answer(response, await response.read())
            headers_only = await usage_answer(response)
        async with aiohttp.ClientSession() as plain, plain.get(host.url("/page")) as response:
            unchecked = await usage_answer(response)
    assert books is not None
    assert books.get("train-ai") == "disallowed"
    assert books.get("search") == "allowed"
    assert [s.source for s in books.refusing(["train-ai"])] == ["tdmrep-file"]
    assert page is not None
    assert page.get("train-ai") == "disallowed"
    assert headers_only is not None
    assert headers_only.get("train-ai") == "unknown"  # the meta is in the body
    assert unchecked is None
    assert host.count(TDM) == 1
