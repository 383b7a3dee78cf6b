"""Bytes a cached, queried origin costs in RobotsChecker's cache (tracemalloc).

    python bench/cache_memory.py CORPUS_DIR [--questions 20]

Each file of CORPUS_DIR is one origin's robots.txt (served at once by an in-process
fetcher: no sockets, so only the cache's own retention is measured); every origin is
asked ``--questions`` questions through ``RobotsChecker.allowed()``. Prints the
retained bytes per origin, the cache's own estimate (``stats.cache.memory``) and how
many such origins fit in 1 GiB.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import tracemalloc
from pathlib import Path

import robots_async as ra

PATHS = ("/", "/index.html", "/search?q=x", "/a/b/c.html", "/wp-admin/x")


class CorpusFetcher:
    """Origin ``http://o<i>.example`` serves file ``i``, at once."""

    def __init__(self, bodies: list[bytes]) -> None:
        self._bodies = bodies

    async def fetch(self, url: str, *, keep_body: bool = False) -> ra.FetchOutcome:
        """A 200 with the origin's file, parsed."""
        body = self._bodies[int(url.split("//o", 1)[1].split(".", 1)[0])]
        return ra.FetchOutcome(url, url, 200, robots=ra.parse(body), bytes_read=len(body))

    async def aclose(self) -> None:
        """Nothing to release."""


async def measure(bodies: list[bytes], questions: int) -> tuple[float, float]:
    """(retained bytes, estimated bytes) per origin after ``questions`` each."""
    fetcher = CorpusFetcher(bodies)
    async with ra.RobotsChecker(
        "MemBot/1.0", fetcher=fetcher, max_entries=10**7, max_memory=2**40
    ) as checker:
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        for i in range(len(bodies)):
            for q in range(questions):
                await checker.allowed(f"http://o{i}.example{PATHS[q % len(PATHS)]}{q}")
        gc.collect()
        retained = tracemalloc.get_traced_memory()[0] - base
        tracemalloc.stop()
        return retained / len(bodies), checker.stats.cache.memory / len(bodies)


def main() -> int:
    """Print the per-origin cost of the corpus given."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--questions", type=int, default=20)
    args = parser.parse_args()
    bodies = [p.read_bytes() for p in sorted(args.corpus.iterdir()) if p.is_file()]
    retained, estimated = asyncio.run(measure(bodies, args.questions))
    print(
        f"{len(bodies)} origins x {args.questions} questions: {retained:,.0f} bytes retained "
        f"per origin (estimate {estimated:,.0f}); {2**30 / retained:,.0f} origins per GiB"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
