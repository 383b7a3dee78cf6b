"""Conditional refresh through Scrapy's engine: ScrapyFetcher sends the cache's
validators and returns a 304 as such, even with Scrapy's HTTP cache on."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from aiohttp import web

from .conftest import BASE_SETTINGS, run_json_script

if TYPE_CHECKING:
    from .conftest import Site

SCRIPT = Path(__file__).with_name("scrapy_fetch.py")
ETAG = '"v1"'


@pytest.mark.slow
@pytest.mark.parametrize("http_cache", [False, True], ids=["plain", "httpcache"])
def test_validators_make_the_refresh_conditional(
    site: Site, tmp_path: Path, http_cache: bool
) -> None:
    """The first fetch gets 200 with its ETag, Date and Last-Modified kept (what the
    cache and a shared record read); the second sends If-None-Match and gets the 304,
    not a 200 from Scrapy's HTTP cache, and no body."""
    host = site.host()
    seen: list[str | None] = []

    async def robots(request: web.Request) -> web.Response:
        seen.append(request.headers.get("If-None-Match"))
        if request.headers.get("If-None-Match") == ETAG:
            return web.Response(status=304, headers={"ETag": ETAG})
        headers = {"ETag": ETAG, "Last-Modified": "Mon, 02 Nov 2026 10:00:00 GMT"}
        return web.Response(text="User-agent: *\nDisallow: /x\n", headers=headers)

    host.routes["/robots.txt"] = robots
    settings = {**BASE_SETTINGS, "REMOTE_CONTROL_ENABLED": False}
    if http_cache:
        settings.update(HTTPCACHE_ENABLED=True, HTTPCACHE_DIR=str(tmp_path / "httpcache"))
    out = tmp_path / "fetch.json"
    args = {"url": host.url("/robots.txt"), "etag": ETAG, "settings": settings, "out": str(out)}
    first, second = run_json_script(SCRIPT, args)[0]
    assert seen == [None, ETAG]
    assert (first["status"], first["error"], first["body"]) == (200, None, 27)
    assert first["headers"]["ETag"] == ETAG
    assert first["headers"]["Last-Modified"] == "Mon, 02 Nov 2026 10:00:00 GMT"
    assert "Date" in first["headers"]
    assert (second["status"], second["error"], second["body"]) == (304, None, 0)
    assert second["headers"]["ETag"] == ETAG
