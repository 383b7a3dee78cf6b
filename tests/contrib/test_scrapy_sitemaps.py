"""SitemapSpider at /robots.txt through the drop-in middleware: one robots.txt request."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..sitemap_site import gz, index, site, urlset
from .conftest import BASE_SETTINGS, LoopThread, run_json_script

if TYPE_CHECKING:
    from aiohttp import web

SCRIPT = Path(__file__).with_name("scrapy_sitemap_crawl.py")


async def _start(app: web.Application) -> tuple[web.AppRunner, str]:
    from aiohttp import web

    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner, f"http://127.0.0.1:{runner.addresses[0][1]}"


@pytest.mark.parametrize("unreadable", ["", "Sitemap: http://[::1/x\n"])
def test_sitemap_spider_robots_answered_from_cache(tmp_path: Path, unreadable: str) -> None:
    """Also when robots.txt names a sitemap urllib cannot split: that line is left out
    of the answer (its ValueError failed the request: the spider read no sitemap)."""
    hits: Counter[str] = Counter()
    pages: dict[str, tuple[bytes, str]] = {}
    robots = f"User-agent: *\nDisallow: /private\n{unreadable}Sitemap: /index.xml\n"
    loop = LoopThread()
    try:
        runner, base = loop.run(_start(site(pages, hits, robots)))
        pages["/index.xml"] = (index([f"{base}/a.xml.gz"]), "application/xml")
        locs = [f"{base}/page/1", f"{base}/page/2", f"{base}/private/3"]
        pages["/a.xml.gz"] = (gz(urlset(locs)), "application/gzip")
        pages["/page/*"] = (b"<html>ok</html>", "text/html")
        out = tmp_path / "crawl.json"
        args = {"robots": f"{base}/robots.txt", "settings": BASE_SETTINGS, "out": str(out)}
        report = run_json_script(SCRIPT, args)[0]
        loop.run(runner.cleanup())
    finally:
        loop.stop()
    assert report["parsed"] == [f"{base}/page/1", f"{base}/page/2"]
    assert hits["/robots.txt"] == 1  # the middleware's fetch; the spider's came from it
    assert hits["/index.xml"] == 1
    assert hits["/a.xml.gz"] == 1
    assert hits["/private/3"] == 0
    assert report["stats"]["robotstxt/forbidden"] == 1
