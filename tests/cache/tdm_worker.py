"""Test worker: a RobotsChecker on a shared store, asking checker.usage() of batches.

    python tdm_worker.py DB_PATH            (an SQLiteStore)
    python tdm_worker.py REDIS_URL PREFIX   (a RedisStore)

Prints ``{"ready": true}``, then for every JSON line ``{"urls": [...]}`` on stdin asks
``usage(url, headers={})`` of all the URLs concurrently and prints
``{"train_ai": [...], "fetches": n}`` (n: this process's tdmrep.json fetches).
Exits at EOF on stdin.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import TYPE_CHECKING

import robots_async as ra

if TYPE_CHECKING:
    from robots_async.contrib.redis import RedisStore

USER_AGENT = "StoreTestBot/1.0"


def emit(report: dict[str, object]) -> None:
    """One JSON line on stdout."""
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()


def open_store(where: str, *rest: str) -> ra.SQLiteStore | RedisStore:
    """A RedisStore for a redis:// URL (under the prefix that follows), else an SQLiteStore."""
    if where.startswith("redis://"):
        from robots_async.contrib.redis import RedisStore

        return RedisStore(where, prefix=rest[0])
    return ra.SQLiteStore(where)


async def main(*args: str) -> None:
    """Answer batches from stdin until EOF."""
    loop = asyncio.get_running_loop()
    store = open_store(*args)
    async with store, ra.RobotsChecker(USER_AGENT, store=store) as checker:
        emit({"ready": True})
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            urls: list[str] = json.loads(line)["urls"]
            answers = await asyncio.gather(*(checker.usage(url, headers={}) for url in urls))
            tdm = checker._usage_sources.tdmrep
            fetches = 0 if tdm is None else tdm.fetches
            emit({"train_ai": [answer.get("train-ai") for answer in answers], "fetches": fetches})


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
