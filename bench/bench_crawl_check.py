"""The cached check inside a crawl (issue 32, item 3), paired in one run.

    python bench/bench_crawl_check.py [--corpus DIR] [--origins 16] [--pages 480] [--rounds 12]

A minimal aiohttp crawl (four workers, one ClientSession, keep-alive) fetches pages
from local servers (a child process on 127.0.0.1, one port per origin, each serving
a robots.txt from ``--corpus`` or a small default and a 2 KB page for every other
path), robots.txt cached beforehand. Each round crawls the same pages A, B, B, A
(alternating with B, A, A, B): A asks ``await checker.allowed(url)`` before each
fetch, B does not (both fetch exactly the pages the rules allow). Reported, median
and interquartile range over the rounds, of the client process's CPU time:

1. the crawl's CPU per page without checks, and the CPU a check adds per page;
2. a check's own time inside the crawl (perf_counter around each check, the timer's
   own cost subtracted), against the same checks in a tight loop and against a bare
   ``RobotsTxt.allowed()`` in a tight loop, paired in the same rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

AGENT = "BenchBot/1.0 (+https://example.org/bot)"
ROBOTS = b"User-agent: *\nDisallow: /private/\nDisallow: /*?session=\nAllow: /private/ok\n"
PAGE = b"<html><body>" + b"x" * 2000 + b"</body></html>"
PATHS = ["/", "/a/b.html", "/search?q=x", "/blog/2024/post-1", "/private/p", "/private/ok/1"]
WORKERS = 4


# --- the servers (a child process) -------------------------------------------------


def serve(origins: int, corpus: str) -> None:
    """Serve robots.txt and a page on ``origins`` free ports of 127.0.0.1; print them."""
    from aiohttp import web

    bodies = [ROBOTS]
    if corpus:
        files = sorted(p for p in Path(corpus).iterdir() if p.is_file())
        bodies = [p.read_bytes() for p in random.Random(7).sample(files, origins)]

    async def main() -> None:
        ports = []
        for i in range(origins):
            robots = bodies[i % len(bodies)]

            async def page(request: web.Request, robots: bytes = robots) -> web.Response:
                if request.path == "/robots.txt":
                    return web.Response(body=robots, content_type="text/plain")
                return web.Response(body=PAGE, content_type="text/html")

            app = web.Application()
            app.router.add_get("/{tail:.*}", page)
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            ports.append(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]
        print(" ".join(map(str, ports)), flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


def _start_servers(origins: int, corpus: str) -> tuple[subprocess.Popen[str], list[str]]:
    argv = [sys.executable, __file__, "--serve", str(origins), "--corpus", corpus]
    server = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    ports = server.stdout.readline().split()  # the child prints its ports, then serves
    if len(ports) != origins:
        server.kill()
        raise SystemExit("servers did not start")
    return server, [f"http://127.0.0.1:{port}" for port in ports]


# --- the client ---------------------------------------------------------------------


def _summary(values: list[float], unit: str = "", scale: float = 1.0) -> str:
    q1, median, q3 = statistics.quantiles([v * scale for v in values], n=4)
    return f"{median:7.2f}{unit} (IQR {q1:.2f}-{q3:.2f})"


async def _crawl(
    fetch: Callable[[str], Awaitable[None]], urls: list[str], check: Any = None
) -> list[int]:
    """Fetch ``urls`` with WORKERS workers; with ``check``, ask it before each fetch and
    return each check's perf_counter nanoseconds."""
    todo = iter(urls)
    spent: list[int] = []
    clock = time.perf_counter_ns

    async def worker() -> None:
        for url in todo:
            if check is not None:
                start = clock()
                allowed = await check(url)
                spent.append(clock() - start)
                if not allowed:
                    raise AssertionError(f"{url} was chosen as allowed")
            await fetch(url)

    await asyncio.gather(*(worker() for _ in range(WORKERS)))
    return spent


def _timer_cost() -> float:
    """Nanoseconds two perf_counter_ns() calls and a list append take (subtracted)."""
    clock = time.perf_counter_ns
    spent: list[int] = []
    for _ in range(20_000):
        start = clock()
        spent.append(clock() - start)
    return statistics.median(spent)


async def run(bases: list[str], pages: int, rounds: int) -> None:
    import aiohttp

    import robots_async as ra

    rng = random.Random(9309)
    async with aiohttp.ClientSession(headers={"User-Agent": AGENT}) as session:

        async def fetch(url: str) -> None:
            async with session.get(url) as response:
                await response.read()

        async with ra.RobotsChecker(AGENT, session=session) as checker:
            candidates = [f"{rng.choice(bases)}{rng.choice(PATHS)}" for _ in range(pages * 3)]
            urls = [u for u in candidates if await checker.allowed(u)][:pages]
            if len(urls) < pages:
                raise SystemExit(f"only {len(urls)} allowed pages; try --origins or --corpus")
            pairs = [((await checker.robots(u)).robots, u) for u in urls]
            token = checker.robots_token
            for url in urls:  # warm: connections open, robots.txt cached
                await fetch(url)

            def bare() -> None:
                for robots, url in pairs:
                    robots.allowed(url, robots_token=token)

            async def in_a_loop() -> None:
                for url in urls:
                    await checker.allowed(url)

            timer = _timer_cost()
            added: list[float] = []
            plain_page: list[float] = []
            inside: list[float] = []
            loop_ratio: list[float] = []
            bare_ratio: list[float] = []
            tight: list[float] = []
            bares: list[float] = []
            for r in range(rounds):
                cpu = {"a": 0.0, "b": 0.0}
                per_check: list[int] = []
                for which in ("a", "b", "b", "a") if r % 2 == 0 else ("b", "a", "a", "b"):
                    gc.collect()
                    start = time.process_time()
                    if which == "a":
                        per_check += await _crawl(fetch, urls, checker.allowed)
                    else:
                        await _crawl(fetch, urls)
                    cpu[which] += time.process_time() - start
                # Tight loops, paired in the round: the same checks, then bare matches.
                tight_cpu = bare_cpu = 0.0
                for which in ("t", "m", "m", "t"):
                    gc.collect()
                    start = time.process_time()
                    if which == "t":
                        await in_a_loop()
                    else:
                        bare()
                    if which == "t":
                        tight_cpu += time.process_time() - start
                    else:
                        bare_cpu += time.process_time() - start
                in_crawl = (statistics.mean(per_check) - timer) / 1e9
                added.append((cpu["a"] - cpu["b"]) / (2 * pages))
                plain_page.append(cpu["b"] / (2 * pages))
                inside.append(in_crawl)
                loop_ratio.append(in_crawl / (tight_cpu / (2 * pages)))
                bare_ratio.append(in_crawl / (bare_cpu / (2 * pages)))
                tight.append(tight_cpu / (2 * pages))
                bares.append(bare_cpu / (2 * pages))
            assert checker.stats.checks >= rounds * 4 * pages

    print(f"\nper page, client CPU ({rounds} rounds of {pages} pages, {WORKERS} workers):")
    print(f"  crawl without checks        {_summary(plain_page, ' us', 1e6)}")
    print(f"  added by the check          {_summary(added, ' us', 1e6)}")
    share = [a / p for a, p in zip(added, plain_page, strict=True)]
    print(f"  check's share of the page   {_summary(share, ' %', 100)}")
    print("a check's own time inside the crawl (perf_counter, timer cost subtracted):")
    print(f"  in the crawl                {_summary(inside, ' us', 1e6)}")
    print(f"  the same check in a loop    {_summary(tight, ' us', 1e6)}")
    print(f"  a bare allowed() in a loop  {_summary(bares, ' us', 1e6)}")
    print(f"  in the crawl / in a loop    {_summary(loop_ratio, 'x')}")
    print(f"  in the crawl / bare in loop {_summary(bare_ratio, 'x')}")
    print("in a loop, paired: the check / a bare allowed()")
    ratio = [t / b for t, b in zip(tight, bares, strict=True)]
    print(f"  cached check / bare match   {_summary(ratio, 'x')}")


def main(argv: list[str] | None = None) -> int:
    """Start the servers, run the paired crawl, print the table."""
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--corpus", default="", help="robots.txt files to serve (default: one)")
    args.add_argument("--origins", type=int, default=16)
    args.add_argument("--pages", type=int, default=480, help="pages a crawl fetches")
    args.add_argument("--rounds", type=int, default=12)
    args.add_argument("--serve", type=int, default=0, help=argparse.SUPPRESS)
    opts = args.parse_args(argv)
    if opts.serve:
        serve(opts.serve, opts.corpus)
        return 0
    server, bases = _start_servers(opts.origins, opts.corpus)
    try:
        import robots_async as ra

        print(
            f"{opts.origins} origins, Python {sys.version.split()[0]}, "
            f"{'compiled' if ra.COMPILED else 'pure'} core"
        )
        asyncio.run(run(bases, opts.pages, opts.rounds))
    finally:
        server.kill()
        server.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
