"""Test helper: take an origin's fetch lease like a worker would, then hang until killed.

    python hold_lease.py REDIS_URL PREFIX ORIGIN_URL TTL

Prints ``{"token": ..., "expires_at": ...}`` (or ``{"token": null}`` when the lease is
held already) and blocks, never fetching nor writing a record: a worker that died
between taking the lease and sharing its result.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

import robots_async as ra
from robots_async.contrib.redis import RedisStore


async def take(url: str, prefix: str, origin_url: str, ttl: float) -> ra.Lease | None:
    """Acquire the lease for ``origin_url``'s origin (the connection is then closed)."""
    store = RedisStore(url, prefix=prefix)
    try:
        return await store.acquire(ra.Origin.from_url(origin_url), ttl)
    finally:
        await store.aclose()


def main(argv: list[str]) -> None:
    """Take the lease, report it, hang."""
    url, prefix, origin_url, ttl = argv
    lease = asyncio.run(take(url, prefix, origin_url, float(ttl)))
    report = {"token": lease.token, "expires_at": lease.expires_at} if lease else {"token": None}
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main(sys.argv[1:])
