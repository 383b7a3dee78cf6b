"""Test worker: a RobotsChecker (on a RedisStore unless --no-store) checking batches of URLs.

    python worker.py --redis-url URL --prefix P [--no-store] [--total-timeout S]
                     [--fetch-policy PRESET]

Prints ``{"ready": true}``, then for every JSON line ``{"urls": [...], "seed": n}`` on
stdin checks all the URLs concurrently (in the order ``seed`` shuffles them to) and
prints ``{"verdicts": {url: allowed}, "elapsed": s, "cache": {CacheStats}}``. Exits at
EOF on stdin. A check that raises crashes the worker (its traceback on stderr).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import logging
import random
import sys
import time

import robots_async as ra
from robots_async.contrib.redis import RedisStore

USER_AGENT = "RedisTestBot/1.0 (+https://example.test/bot)"


def parse_args(argv: list[str]) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--no-store", action="store_true", help="local cache only")
    parser.add_argument("--total-timeout", type=float, default=30.0)
    parser.add_argument(
        "--fetch-policy",
        default="rfc9309",
        choices=["rfc9309", "googlebot", "yandex", "legacy_allow_on_error"],
        help="FetchPolicy preset",
    )
    parser.add_argument("--redis-timeout", type=float, default=2.0)
    parser.add_argument("--concurrency", type=int, default=64)
    return parser.parse_args(argv)


def emit(report: dict[str, object]) -> None:
    """One JSON line on stdout."""
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()


async def main(argv: list[str]) -> None:
    """Answer batches from stdin until EOF."""
    args = parse_args(argv)
    # Store failures are expected in some tests: keep stderr for real tracebacks.
    logging.getLogger("robots_async").setLevel(logging.ERROR)
    store = (
        None
        if args.no_store
        else RedisStore(args.redis_url, prefix=args.prefix, timeout=args.redis_timeout)
    )
    checker = ra.RobotsChecker(
        USER_AGENT,
        store=store,
        fetch_policy=getattr(ra.FetchPolicy, args.fetch_policy)(total_timeout=args.total_timeout),
        max_concurrent_fetches=args.concurrency,
    )
    loop = asyncio.get_running_loop()
    try:
        emit({"ready": True})
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            job = json.loads(line)
            urls: list[str] = list(job["urls"])
            random.Random(job["seed"]).shuffle(urls)
            start = time.perf_counter()
            verdicts = await asyncio.gather(*(checker.allowed(url) for url in urls))
            elapsed = time.perf_counter() - start
            emit(
                {
                    "verdicts": dict(zip(urls, verdicts, strict=True)),
                    "elapsed": elapsed,
                    "cache": dataclasses.asdict(checker.stats.cache),
                }
            )
    finally:
        await checker.aclose()
        if store is not None:
            await store.aclose()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
