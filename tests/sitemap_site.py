"""Local sitemap sites for the sitemap tests and bench: aiohttp apps on 127.0.0.1."""

from __future__ import annotations

import gzip
import zlib
from functools import cache
from typing import TYPE_CHECKING

from aiohttp import web

if TYPE_CHECKING:
    from collections import Counter

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def urlset(locs: list[str], extra: str = "") -> bytes:
    """A sitemap listing ``locs`` (each with a lastmod)."""
    body = "".join(
        f"<url><loc>{loc}</loc><lastmod>2024-05-0{1 + i % 9}</lastmod>{extra}</url>"
        for i, loc in enumerate(locs)
    )
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {NS}>{body}</urlset>'.encode()


def index(locs: list[str]) -> bytes:
    """A sitemap index listing ``locs``."""
    body = "".join(f"<sitemap><loc>{loc}</loc></sitemap>" for loc in locs)
    return f"<sitemapindex {NS}>{body}</sitemapindex>".encode()


@cache
def gzip_bomb_gb() -> bytes:
    """1 GiB of zeros gzip-compressed (about 1 MB), built streamed 1 MiB at a time."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(1 << 20)
    parts = [packer.compress(zeros) for _ in range(1024)]
    parts.append(packer.flush())
    return b"".join(parts)


BILLION_LAUGHS = (
    b'<?xml version="1.0"?>\n<!DOCTYPE lolz [<!ENTITY lol "lol">'
    + b"".join(
        b'<!ENTITY lol%d "%s">' % (i, (b"&lol%d;" % (i - 1) if i > 1 else b"&lol;") * 10)
        for i in range(1, 10)
    )
    + b"]>\n<urlset><url><loc>http://x/&lol9;</loc></url></urlset>"
)
EXTERNAL_ENTITY = (
    b'<?xml version="1.0"?>\n<!DOCTYPE u [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'
    b"<urlset><url><loc>&xxe;</loc></url></urlset>"
)


def site(pages: dict[str, tuple[bytes, str]], hits: Counter[str], robots: str) -> web.Application:
    """An app serving ``robots`` at /robots.txt and ``pages`` (path: body, type),
    counting requests per path in ``hits``; a path ending in ``/*`` is a prefix."""

    async def handle(request: web.Request) -> web.Response:
        path = request.path
        hits[path] += 1
        if path == "/robots.txt":
            return web.Response(text=robots)
        found = pages.get(path)
        if found is None:
            prefix = next((p for p in pages if p.endswith("*") and path.startswith(p[:-1])), "")
            found = pages.get(prefix)
        if found is None:
            return web.Response(status=404)
        body, content_type = found
        return web.Response(body=body, content_type=content_type)

    app = web.Application()
    app.router.add_get("/{tail:.*}", handle)
    return app


def gz(data: bytes) -> bytes:
    return gzip.compress(data)
