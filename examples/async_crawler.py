"""A small concurrent crawler that asks robots_async before every request.

Offline, against a local site (this directory, with its robots.txt, served on
127.0.0.1)::

    python -m http.server 8000 --bind 127.0.0.1 --directory examples &
    python examples/async_crawler.py http://127.0.0.1:8000/ --max-pages 5

or online: ``python examples/async_crawler.py https://example.org/ --max-pages 50``.

Workers share one RobotsChecker: each robots.txt is fetched once per origin (all
workers waiting on it share the fetch), disallowed URLs are skipped with the rule
that forbids them, and ``checker.wait()`` spaces requests by Crawl-delay. Links are
followed within the start URLs' hosts.
"""

from __future__ import annotations

import argparse
import asyncio
import re
from urllib.parse import urldefrag, urljoin, urlsplit

import aiohttp

import robots_async

AGENT = "ExampleCrawler/1.0 (+https://example.org/crawler)"
LINK = re.compile(r"""href=["']([^"'#]+)""", re.IGNORECASE)


class Crawler:
    """Breadth-first crawl of the start hosts with a fixed number of workers."""

    def __init__(self, starts: list[str], max_pages: int, concurrency: int) -> None:
        self.hosts = {urlsplit(url).netloc for url in starts}
        self.queue: asyncio.Queue[str] = asyncio.Queue()
        self.seen = set(starts)
        self.max_pages = max_pages
        self.concurrency = concurrency
        self.fetched = self.skipped = 0
        for url in starts:
            self.queue.put_nowait(url)

    async def run(self) -> None:
        async with (
            robots_async.RobotsChecker(AGENT, max_delay=10) as checker,
            aiohttp.ClientSession(headers={"User-Agent": AGENT}) as session,
        ):
            workers = [
                asyncio.create_task(self.work(checker, session)) for _ in range(self.concurrency)
            ]
            await self.queue.join()
            for worker in workers:
                worker.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            print(f"fetched {self.fetched}, skipped {self.skipped}; {checker.stats.cache}")

    async def work(
        self, checker: robots_async.RobotsChecker, session: aiohttp.ClientSession
    ) -> None:
        while True:
            url = await self.queue.get()
            try:
                await self.visit(checker, session, url)
            except (aiohttp.ClientError, asyncio.TimeoutError, UnicodeDecodeError) as exc:
                print(f"error    {url}: {exc!r}")
            finally:
                self.queue.task_done()

    async def visit(
        self, checker: robots_async.RobotsChecker, session: aiohttp.ClientSession, url: str
    ) -> None:
        decision = await checker.explain(url)
        if not decision.allowed:
            self.skipped += 1
            why = decision.verdict.rule or f"{decision.verdict.reason} ({decision.source})"
            print(f"skipped  {url}  [{why}]")
            return
        if self.fetched >= self.max_pages:
            return
        self.fetched += 1
        await checker.wait(url)  # Crawl-delay / Request-rate per origin
        async with session.get(url, timeout=aiohttp.ClientTimeout(total=20)) as response:
            print(f"{response.status}      {url}")
            if "html" not in response.headers.get("Content-Type", ""):
                return
            html = await response.text()
        for href in LINK.findall(html):
            link = urldefrag(urljoin(url, href)).url
            if urlsplit(link).netloc in self.hosts and link not in self.seen:
                self.seen.add(link)
                self.queue.put_nowait(link)


def main() -> None:
    """Parse arguments and crawl."""
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("start", nargs="+", help="start URLs")
    args.add_argument("--max-pages", type=int, default=50)
    args.add_argument("--concurrency", type=int, default=8)
    opts = args.parse_args()
    asyncio.run(Crawler(opts.start, opts.max_pages, opts.concurrency).run())


if __name__ == "__main__":
    main()
