"""Test worker: a RobotsChecker on an SQLiteStore, checking batches of URLs.

    python sqlite_worker.py DB_PATH

Prints ``{"ready": true}``, then for every JSON line ``{"urls": [...]}`` on stdin
checks all the URLs concurrently and prints ``{"verdicts": [...], "cache": {CacheStats}}``.
Exits at EOF on stdin.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys

import robots_async as ra

USER_AGENT = "StoreTestBot/1.0"


def emit(report: dict[str, object]) -> None:
    """One JSON line on stdout."""
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()


async def main(path: str) -> None:
    """Answer batches from stdin until EOF."""
    loop = asyncio.get_running_loop()
    async with ra.SQLiteStore(path) as store, ra.RobotsChecker(USER_AGENT, store=store) as checker:
        emit({"ready": True})
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            urls: list[str] = json.loads(line)["urls"]
            verdicts = await asyncio.gather(*(checker.allowed(url) for url in urls))
            emit({"verdicts": verdicts, "cache": dataclasses.asdict(checker.stats.cache)})


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
