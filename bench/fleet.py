"""Politeness across a fleet (issue 27): worker processes pacing through one Redis.

    python bench/fleet.py [--workers 4 16] [--origins 1000] [--seconds 6]

Each worker process runs a RobotsChecker on a RedisStore and 64 tasks that pick
origins at random and ``await checker.wait(url)`` before each (pretend) visit. Half
the origins ask ``Crawl-delay: 1``, half ask nothing; robots.txt comes from an
in-process fetcher (this measures pacing, not fetching). For each fleet size, with
the store up and with redis-server stopped half-way through, it prints:

- max visits per interval: the most visits any Crawl-delay: 1 origin got within one
  second (less 0.1 s of wake-up lateness), over all workers (target 1; a fleet pacing
  per process reaches N), and the shortest gap between two visits of one origin;
- store round trips per wait (reserve, plus a pause check after a wait that slept
  0.25 s or more, plus a late page recorded);
- p99 added latency of ``wait()`` on an origin that asks no delay;
- pace store errors and whether every worker finished (the store killed mid-run: each
  worker paces itself, so an origin may see up to one visit per worker per interval).

A redis-server is started on a free loopback port (and stopped).
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import itertools
import multiprocessing as mp
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from bench_redis import OwnRedis

import robots_async as ra
from robots_async.contrib.redis import RedisStore

TASKS = 64
#: Seconds of wake-up lateness forgiven when counting visits per interval.
SLACK = 0.1
SLOW = ra.parse(b"User-agent: *\nCrawl-delay: 1\n")
FAST = ra.parse(b"User-agent: *\nAllow: /\n")


class InstantFetcher:
    """robots.txt at once: Crawl-delay 1 for even origins, nothing for odd ones."""

    async def fetch(self, url: str, *, keep_body: bool = False, **_: Any) -> ra.FetchOutcome:
        index = int(url.split("//o", 1)[1].split(".", 1)[0])
        return ra.FetchOutcome(url, url, 200, robots=SLOW if index % 2 == 0 else FAST)

    async def aclose(self) -> None:
        """Nothing to release."""


class CountingStore(RedisStore):
    """RedisStore counting its pacing round trips (late pages recorded included)."""

    calls = 0

    async def reserve(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return await super().reserve(*args, **kwargs)

    async def pause_left(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return await super().pause_left(*args, **kwargs)

    async def sent_late(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return await super().sent_late(*args, **kwargs)


async def work(
    url: str, prefix: str, origins: int, seconds: float, sync: tuple[Any, Any]
) -> dict[str, Any]:
    store = CountingStore(url, prefix=prefix)
    visits: list[tuple[int, float]] = []
    fast_waits: list[float] = []
    async with (
        store,
        ra.RobotsChecker(
            "FleetBot/1.0", fetcher=InstantFetcher(), store=store, max_entries=origins * 2
        ) as checker,
    ):
        await checker.prefetch(f"http://o{i}.test/" for i in range(origins))
        ready, starts = sync
        ready.put(True)
        start = await asyncio.to_thread(starts.get)  # set once every worker is ready
        await asyncio.sleep(max(0.0, start - time.time()))
        rng = random.Random()

        async def task() -> None:
            while time.time() < start + seconds:
                index = rng.randrange(origins)
                began = time.perf_counter()
                await checker.wait(f"http://o{index}.test/page")
                if index % 2:
                    fast_waits.append(time.perf_counter() - began)
                else:
                    visits.append((index, time.time()))

        await asyncio.gather(*(task() for _ in range(TASKS)))
        stats = checker.stats
    return {
        "visits": visits,
        "fast_waits": fast_waits,
        "waits": stats.waits,
        "calls": store.calls,
        "store_errors": stats.pace_store_errors,
    }


def worker(args: tuple[str, str, int, float], sync: tuple[Any, Any], out: Any) -> None:
    out.put(asyncio.run(work(*args, sync)))


def max_per_interval(
    visits: list[tuple[int, float]], interval: float = 1.0, slack: float = SLACK
) -> int:
    """The most visits one origin got within any window of ``interval`` seconds
    (a visit exactly one interval after another starts the next window)."""
    by_origin: dict[int, list[float]] = {}
    for index, at in visits:
        by_origin.setdefault(index, []).append(at)
    most = 0
    for times in by_origin.values():
        times.sort()
        for i, at in enumerate(times):
            # Turns are exact; a worker wakes a little late under load (measured up to
            # tens of ms here), so a visit late on its turn nears the next one.
            most = max(most, bisect.bisect_left(times, at + interval - slack) - i)
    return most


def min_gap(visits: list[tuple[int, float]]) -> float:
    """The shortest time between two visits of one origin."""
    by_origin: dict[int, list[float]] = {}
    for index, at in visits:
        by_origin.setdefault(index, []).append(at)
    gaps = [b - a for times in by_origin.values() for a, b in itertools.pairwise(sorted(times))]
    return min(gaps, default=float("nan"))


def run(workers: int, origins: int, seconds: float, kill: bool) -> dict[str, Any]:
    server = OwnRedis()
    prefix = f"fleet-{time.time_ns()}"
    context = mp.get_context("spawn")
    out: Any = context.Queue()
    ready: Any = context.Queue()
    # The start is set once every worker has prefetched: a fixed start 4.6 s ahead
    # passed before 16 workers had started on two cores, and 4 of 8 runs ended with
    # no wait at all.
    starts: Any = context.Queue()
    args = (server.url, prefix, origins, seconds)
    procs = [
        context.Process(target=worker, args=(args, (ready, starts), out)) for _ in range(workers)
    ]
    for proc in procs:
        proc.start()
    try:
        for _ in procs:
            ready.get(timeout=300)
        start = time.time() + 0.5
        for _ in procs:
            starts.put(start)
        if kill:
            time.sleep(max(0.0, start + seconds / 2 - time.time()))
            server.close()
        results = [out.get(timeout=seconds + 120) for _ in procs]
    finally:
        for proc in procs:
            proc.join(30)
        if not kill:
            server.close()
    visits = [v for r in results for v in r["visits"]]
    fast = sorted(w for r in results for w in r["fast_waits"])
    waits = sum(r["waits"] for r in results)
    return {
        "workers": workers,
        "store": "killed mid-run" if kill else "up",
        "finished": f"{len(results)}/{workers}",
        "visits/interval (max)": max_per_interval(visits),
        "min gap s": round(min_gap(visits), 3),
        "round trips/wait": round(sum(r["calls"] for r in results) / max(1, waits), 2),
        "no-delay wait p99 ms": round(fast[int(len(fast) * 0.99)] * 1000, 2) if fast else None,
        "no-delay wait p50 ms": round(statistics.median(fast) * 1000, 2) if fast else None,
        "waits": waits,
        "store errors": sum(r["store_errors"] for r in results),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[4, 16])
    parser.add_argument("--origins", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=6.0)
    options = parser.parse_args()
    rows = [
        run(n, options.origins, options.seconds, kill)
        for n in options.workers
        for kill in (False, True)
    ]
    names = list(rows[0])
    widths = [max(len(name), *(len(str(row[name])) for row in rows)) for name in names]
    print("  ".join(name.ljust(w) for name, w in zip(names, widths, strict=True)))
    for row in rows:
        print("  ".join(str(row[name]).ljust(w) for name, w in zip(names, widths, strict=True)))


if __name__ == "__main__":
    main()
