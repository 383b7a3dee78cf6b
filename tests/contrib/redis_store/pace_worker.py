"""Test worker: a crawler process that paces through a shared store.

    python pace_worker.py STORE VIA

STORE is a ``redis://`` URL or ``sqlite:PATH``; VIA is ``checker`` (wait(), GET,
observe() by hand) or ``aiohttp`` (``RobotsMiddleware(checker, pace=True)``).
Prints ``{"ready": true}``, then for each JSON line ``{"urls": [...], "at": T,
"seconds": S}`` requests each URL over and over from wall time T for S seconds, one
task per URL, and prints ``{"requests": {url: n}, "waits": {url: [s...]}, "stats": {...}}``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import os
import sys
import time
from typing import Any

import aiohttp

import robots_async as ra
from robots_async.contrib.aiohttp import RobotsMiddleware

USER_AGENT = "PaceBot/1.0"


def emit(report: dict[str, object]) -> None:
    """One JSON line on stdout."""
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()


def open_store(spec: str) -> Any:
    """The store named on the command line."""
    if spec.startswith("sqlite:"):
        return ra.SQLiteStore(spec.removeprefix("sqlite:"))
    from robots_async.contrib.redis import RedisStore

    return RedisStore(spec, prefix=sys.argv[3] if len(sys.argv) > 3 else "robots_async")


async def crawl(checker: ra.RobotsChecker, via: str, url: str, until: float) -> dict[str, Any]:
    """Request ``url`` until ``until``; the count and the time each wait took."""
    requests, waits = 0, []
    middleware = RobotsMiddleware(checker, pace=True)
    # The pid names the sender in the site's log, for a failing test's message.
    headers = {"X-Worker": str(os.getpid())}
    async with aiohttp.ClientSession(
        middlewares=(middleware,) if via == "aiohttp" else (),
        # As the middleware asks: it then sees when each request is sent.
        trace_configs=[middleware.trace_config] if via == "aiohttp" else None,
        headers=headers,
    ) as session:
        while time.time() < until:
            started = time.monotonic()
            if via == "checker":
                await checker.wait(url)
            waits.append(time.monotonic() - started)
            if time.time() >= until:
                break
            async with session.get(url) as response:
                await response.read()
                if via == "checker":
                    await checker.observe(url, response.status, response.headers)
            requests += 1
    return {"requests": requests, "waits": waits}


async def main(spec: str, via: str) -> None:
    """Answer runs from stdin until EOF."""
    loop = asyncio.get_running_loop()
    store = open_store(spec)
    async with store, ra.RobotsChecker(USER_AGENT, store=store) as checker:
        emit({"ready": True})
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            run = json.loads(line)
            await asyncio.sleep(max(0.0, run["at"] - time.time()))
            until = run["at"] + run["seconds"]
            results = await asyncio.gather(*(crawl(checker, via, u, until) for u in run["urls"]))
            emit(
                {
                    "requests": {
                        u: r["requests"] for u, r in zip(run["urls"], results, strict=True)
                    },
                    "waits": {u: r["waits"] for u, r in zip(run["urls"], results, strict=True)},
                    "stats": dataclasses.asdict(checker.stats),
                }
            )


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    asyncio.run(main(sys.argv[1], sys.argv[2]))
