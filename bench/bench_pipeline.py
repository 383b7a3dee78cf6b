"""Pipeline benchmark: many checks over many loopback origins, and the cached path.

    python bench/bench_pipeline.py [--origins 1000] [--checks 10000] [--servers 4]

Prints wall time for the cold run, robots.txt requests against origins (must be
equal: one fetch per origin however many checks wait on it), peak traced memory,
and cached ``await checker.allowed(url)`` throughput against a bare
``RobotsTxt.allowed()`` on the same URLs (target: within 2x).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
import tracemalloc
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).parent))

from loopback import LoopbackServers, free_ports

import robots_async

if TYPE_CHECKING:
    from collections.abc import Sequence

AGENT = "BenchBot/1.0 (+https://example.org/bot)"


def make_urls(ports: list[int], checks: int, rng: random.Random) -> list[str]:
    """``checks`` URLs spread over the ports, in random order."""
    paths = ["/", "/a/b.html", "/private/x", "/private/public", "/p?session=1", "/search?q=x"]
    return [f"http://127.0.0.1:{rng.choice(ports)}{rng.choice(paths)}" for _ in range(checks)]


async def cold_run(urls: list[str]) -> tuple[float, int, robots_async.RobotsChecker]:
    """Every check at once on an empty cache: (seconds, disallowed, checker)."""
    checker = robots_async.RobotsChecker(AGENT, max_concurrent_fetches=256)
    start = time.perf_counter()
    verdicts = await asyncio.gather(*(checker.allowed(u) for u in urls))
    return time.perf_counter() - start, verdicts.count(False), checker


async def cached_throughput(
    checker: robots_async.RobotsChecker, urls: list[str], repeat: int
) -> tuple[float, float]:
    """(checker checks/s, bare RobotsTxt.allowed checks/s) on warm entries."""
    pairs = [((await checker.robots(u)).robots, u) for u in urls]
    best_checker = best_bare = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for url in urls:
            await checker.allowed(url)
        best_checker = min(best_checker, time.perf_counter() - start)
        start = time.perf_counter()
        for robots, url in pairs:
            robots.allowed(url, user_agent=AGENT)
        best_bare = min(best_bare, time.perf_counter() - start)
    return len(urls) / best_checker, len(urls) / best_bare


async def run(opts: argparse.Namespace) -> None:
    ports = free_ports(opts.origins)
    urls = make_urls(ports, opts.checks, random.Random(opts.seed))
    with LoopbackServers(dict.fromkeys(ports, "ok"), servers=opts.servers) as servers:
        tracemalloc.start()
        seconds, disallowed, checker = await cold_run(urls)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        requests = sum(servers.counts().values())
    checker_rate, bare_rate = await cached_throughput(checker, urls, opts.repeat)
    await checker.aclose()
    origins = len({u.split("/")[2] for u in urls})
    print(
        f"cold run: {opts.checks} checks over {origins} origins "
        f"({opts.servers} server processes): {seconds:.2f} s, "
        f"{opts.checks / seconds:,.0f} checks/s, {disallowed} disallowed"
    )
    print(
        f"robots.txt requests: {requests} for {origins} origins "
        f"({'OK' if requests == origins else 'MISMATCH'})"
    )
    print(f"peak traced memory during the cold run: {peak / 2**20:.1f} MiB")
    print(
        f"cached: checker.allowed {checker_rate:,.0f}/s, RobotsTxt.allowed "
        f"{bare_rate:,.0f}/s -> checker is {bare_rate / checker_rate:.2f}x slower "
        f"(target <= 2x)"
    )
    print(checker.stats)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments and run."""
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--origins", type=int, default=1000)
    args.add_argument("--checks", type=int, default=10_000)
    args.add_argument("--servers", type=int, default=4)
    args.add_argument("--repeat", type=int, default=5)
    args.add_argument("--seed", type=int, default=1)
    asyncio.run(run(args.parse_args(argv)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
