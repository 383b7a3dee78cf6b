"""Test opener: opens new SQLiteStore files at given moments, as a fleet starting up.

    python sqlite_opener.py NAME

For every JSON line ``{"path": P, "at": T}`` on stdin: waits until wall-clock time T,
creates ``SQLiteStore(P)``, puts one record for origin ``http://NAME.test`` and prints
``{"error": null}``, or the error's repr if the store refused the file or the put.
Exits at EOF on stdin.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

import robots_async as ra


async def open_and_put(path: str, name: str) -> str | None:
    """Open ``path`` and write one record through it; the error's repr, if any."""
    url = f"http://{name}.test/robots.txt"
    record = ra.StoredRobots(
        url=url, final_url=url, status=200, error=None, fetched_at=time.time(), body=b""
    )
    try:
        async with ra.SQLiteStore(path) as store:
            await store.put(ra.Origin.from_url(url), record)
    except ra.RobotsError as exc:
        return repr(exc)
    return None


async def main(name: str) -> None:
    """Answer lines from stdin until EOF."""
    loop = asyncio.get_running_loop()
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        order = json.loads(line)
        await asyncio.sleep(max(0.0, order["at"] - time.time()))
        error = await open_and_put(order["path"], name)
        sys.stdout.write(json.dumps({"error": error}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
