"""Content codings Scrapy leaves undone reach ScrapyFetcher still in the header: they
are decoded here or fail closed, never parsed as robots.txt text (allow all)."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from aiohttp import web

from .conftest import BASE_SETTINGS, run_json_script

if TYPE_CHECKING:
    from .conftest import Site

SCRIPT = Path(__file__).with_name("scrapy_fetch.py")
RULES = b"User-agent: *\nDisallow: /private\n"


def _fetch_twice(
    site: Site, tmp_path: Path, encoding: str, body: bytes, **settings: object
) -> list[dict[str, object]]:
    host = site.host()

    async def robots(_: web.Request) -> web.Response:
        return web.Response(body=body, headers={"Content-Encoding": encoding})

    host.routes["/robots.txt"] = robots
    out = tmp_path / "fetch.json"
    args = {
        "url": host.url("/robots.txt"),
        "etag": '"none"',
        "settings": {**BASE_SETTINGS, "REMOTE_CONTROL_ENABLED": False, **settings},
        "out": str(out),
    }
    report: list[dict[str, object]] = run_json_script(SCRIPT, args)[0]
    return report


@pytest.mark.slow
def test_coding_scrapy_cannot_decode_fails_closed(site: Site, tmp_path: Path) -> None:
    """``compress`` (Scrapy decodes none): a protocol error, not the compressed bytes
    parsed as an empty file (it was: error None, allow all)."""
    for outcome in _fetch_twice(site, tmp_path, "compress", b"\x1f\x9d" + RULES):
        assert outcome["error"] == "protocol", outcome


@pytest.mark.slow
def test_gzip_is_decoded_with_scrapy_compression_off(site: Site, tmp_path: Path) -> None:
    """COMPRESSION_ENABLED=False and a server that gzips anyway: decoded here (the
    body kept is the text), not parsed compressed."""
    for outcome in _fetch_twice(
        site, tmp_path, "gzip", gzip.compress(RULES), COMPRESSION_ENABLED=False
    ):
        assert (outcome["error"], outcome["body"]) == (None, len(RULES)), outcome
