"""Offline demo: crawl a small local site of four origins while obeying robots.txt.

Runs offline (every site is a local server on 127.0.0.1)::

    python examples/demo.py

Four aiohttp servers on 127.0.0.1 stand in for four sites:

* shop     a normal robots.txt: /cart and session URLs disallowed, /cart/help allowed
* down     robots.txt answers 503: RFC 9309 says assume complete disallow
* moved    robots.txt redirects (twice): the target's rules apply to this origin
* slow     Crawl-delay: 0.5: requests to it are spaced by the middleware

A tiny breadth-first crawler follows links through ``aiohttp.ClientSession`` with
``RobotsMiddleware``; every URL is printed with what happened and why, then a
summary: counts per outcome, each blocked URL with its reason, and how often each
robots.txt was requested (once per origin).
"""

from __future__ import annotations

import asyncio
import logging
import re
import socket
import time
from collections import Counter
from typing import NamedTuple
from urllib.parse import urljoin, urlsplit

import aiohttp
from aiohttp import web

import robots_async
from robots_async.contrib.aiohttp import DisallowedError, RobotsMiddleware

AGENT = "DemoBot/1.0 (+https://example.org/demobot)"
LINK = re.compile(r'href="([^"]+)"')

ROBOTS = {
    "shop": "User-agent: *\nDisallow: /cart\nAllow: /cart/help\nDisallow: /*?sessionid=\n"
    "Sitemap: /sitemap.xml\n",
    "slow": "User-agent: *\nCrawl-delay: 0.5\nDisallow: /admin/\n",
    "moved": "User-agent: DemoBot\nDisallow: /drafts/\n",
}


def page(links: list[str]) -> web.Response:
    body = "".join(f'<a href="{link}">{link}</a>\n' for link in links)
    return web.Response(text=f"<html><body>{body}</body></html>", content_type="text/html")


def site(name: str, others: dict[str, str], requests: Counter[str]) -> web.Application:
    """One origin: its robots.txt behaviour and a few linked pages."""

    async def robots(request: web.Request) -> web.StreamResponse:
        requests[f"{name} {request.path}"] += 1
        if name == "down":
            return web.Response(status=503, text="maintenance")
        if name == "moved" and request.path == "/robots.txt":
            raise web.HTTPMovedPermanently("/v2/robots.txt")
        if name == "moved" and request.path == "/v2/robots.txt":
            raise web.HTTPFound("/v3/robots.txt")
        return web.Response(text=ROBOTS[name], content_type="text/plain")

    async def any_page(request: web.Request) -> web.StreamResponse:
        requests[f"{name} page"] += 1
        links = [
            "/",
            "/about",
            "/cart",
            "/cart/help",
            "/item?sessionid=42",
            "/admin/panel",
            "/drafts/next",
            "/products/1",
            "/products/2",
        ]
        return page([*links, *others.values()])

    app = web.Application()
    for path in ("/robots.txt", "/v2/robots.txt", "/v3/robots.txt"):
        app.router.add_get(path, robots)
    app.router.add_get("/{tail:.*}", any_page)
    return app


async def start_sites(requests: Counter[str]) -> tuple[dict[str, str], list[web.AppRunner]]:
    """Start the four origins; every site links to every other one."""
    names = ["shop", "down", "moved", "slow"]
    sockets, bases = {}, {}
    for name in names:  # bind first, so the links are known before serving
        sockets[name] = socket.socket()
        sockets[name].bind(("127.0.0.1", 0))
        bases[name] = f"http://127.0.0.1:{sockets[name].getsockname()[1]}"
    runners = []
    for name in names:
        runner = web.AppRunner(site(name, {n: b + "/" for n, b in bases.items()}, requests))
        await runner.setup()
        await web.SockSite(runner, sockets[name]).start()
        runners.append(runner)
    return bases, runners


async def crawl(start: list[str], names: dict[str, str], limit: int = 40) -> list[Visit]:
    """Breadth-first crawl; robots.txt is enforced by the session's middleware."""
    seen, queue = set(start), list(start)
    visits: list[Visit] = []
    async with robots_async.RobotsChecker(AGENT, max_delay=2.0) as checker:
        middleware = RobotsMiddleware(checker, respect_crawl_delay=True)
        async with aiohttp.ClientSession(middlewares=(middleware,)) as session:
            while queue and len(seen) <= limit:
                batch, queue = queue[:8], queue[8:]
                results = await asyncio.gather(*(visit(session, u, names) for u in batch))
                for result in results:
                    visits.append(result)
                    for link in result.links:
                        if link not in seen:
                            seen.add(link)
                            queue.append(link)
    return visits


class Visit(NamedTuple):
    """What happened to one URL: ``fetched`` or ``blocked``, and why."""

    label: str
    outcome: str
    reason: str
    links: list[str]


async def visit(session: aiohttp.ClientSession, url: str, names: dict[str, str]) -> Visit:
    label = f"[{names[urlsplit(url).netloc]:5}] {urlsplit(url).path or '/'}"
    if urlsplit(url).query:
        label += "?" + urlsplit(url).query
    started = time.perf_counter()
    try:
        async with session.get(url) as response:
            html = await response.text()
    except DisallowedError as blocked:
        print(f"  blocked  {label:34} {blocked.reason}")
        return Visit(label, "blocked", blocked.reason, [])
    waited = time.perf_counter() - started
    note = f"  (paced {waited:.1f} s)" if waited > 0.3 else ""
    print(f"  fetched  {label:34} HTTP {response.status}{note}")
    links = [urljoin(url, link) for link in LINK.findall(html)]
    return Visit(label, "fetched", f"HTTP {response.status}", links)


def summarise(visits: list[Visit], requests: Counter[str]) -> None:
    """Counts per outcome, each blocked URL with its reason, robots.txt requests."""
    counts = Counter(v.outcome for v in visits)
    print(
        f"\nsummary: {len(visits)} URLs, {counts['fetched']} fetched, {counts['blocked']} blocked"
    )
    for refused in sorted(v for v in visits if v.outcome == "blocked"):
        print(f"  blocked  {refused.label:34} {refused.reason}")
    print("\nrobots.txt requests per origin (coalesced: one fetch each):")
    for key, count in sorted(requests.items()):
        if "robots" in key:
            print(f"  {key:22} {count}")


async def main() -> None:
    logging.basicConfig(level=logging.WARNING, format="  log: %(message)s")
    requests: Counter[str] = Counter()
    bases, runners = await start_sites(requests)
    names = {urlsplit(base).netloc: name for name, base in bases.items()}
    print("robots.txt rules per origin:")
    for name, base in bases.items():
        print(f"  {name:5} {base}")
    print("\ncrawl (DemoBot):")
    try:
        visits = await crawl([base + "/" for base in bases.values()], names)
    finally:
        for runner in runners:
            await runner.cleanup()
    summarise(visits, requests)


if __name__ == "__main__":
    asyncio.run(main())
