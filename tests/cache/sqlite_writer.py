"""Test writer: puts records into an SQLiteStore without end, until it is killed.

    python sqlite_writer.py DB_PATH

Cycles over 500 origins with bodies of 0 to 64 KiB and prints ``{"writing": n}``
after its first 200 puts; it never stops by itself (the test kills it with SIGKILL).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import sys
import time

import robots_async as ra

ORIGINS = 500


def record(index: int, rng: random.Random) -> tuple[ra.Origin, ra.StoredRobots]:
    """A valid 200 record for origin ``index``, with a body of random size."""
    url = f"http://site-{index % ORIGINS}.test/robots.txt"
    rule = f"Disallow: /{index}/\n".encode()
    body = b"User-agent: *\n" + rule * rng.randrange(0, 64 * 1024 // len(rule))
    good = ra.StoredRobots(
        url=url, final_url=url, status=200, error=None, fetched_at=time.time(), body=body
    )
    return ra.Origin.from_url(url), good


async def main(path: str) -> None:
    """Write until killed."""
    rng = random.Random(1)
    async with ra.SQLiteStore(path, timeout=10.0) as store:
        for index in itertools.count():
            origin, good = record(index, rng)
            lease = await store.acquire(origin, 30.0)
            await store.put(origin, good)
            if lease is not None:
                await store.release(lease)
            if index == 200:
                sys.stdout.write(json.dumps({"writing": index}) + "\n")
                sys.stdout.flush()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
