"""Conditional refresh benchmark: bytes downloaded on a second "day" of unchanged files.

    python bench/revalidate.py [--corpus /work/shared/corpus] [--limit N]

Serves every corpus file as the robots.txt of its own loopback origin (one port each)
with a strong ETag and a Last-Modified, answering 304 to a matching conditional
request; the server counts the exact bytes it writes (status line, headers, body).
Day 1 checks one URL per origin (on an SQLiteStore), then, on a fake clock:

* ``+1 h, restart, SQLite``: a new checker on the day-1 file (nothing to fetch);
* ``+1 h, restart, memory``: a new checker with nothing kept (a restart before);
* ``day 2, same process``: 24 h later every entry has expired: conditional refetch;
* ``day 3, restart, SQLite``: a new checker on the file, every record expired.

Prints requests, 304s, body and wire bytes for each, and day 2 as a share of day 1.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import socket
import sys
import tempfile
import time
from dataclasses import dataclass
from email.utils import formatdate
from functools import partial
from pathlib import Path

import robots_async as ra

AGENT = "BenchBot/1.0 (+https://example.org/bot)"
DAY = 86_400.0


@dataclass
class Counts:
    """What the server wrote since the last reset."""

    requests: int = 0
    not_modified: int = 0
    body_bytes: int = 0
    wire_bytes: int = 0


class FileServer(asyncio.Protocol):
    """HTTP/1.1 on one port: ``/robots.txt`` is one file, with validators; one request
    per connection (the fetcher does not keep robots.txt connections alive)."""

    def __init__(self, body: bytes, mtime: float, counts: Counts) -> None:
        self.body = body
        self.etag = '"' + hashlib.blake2b(body, digest_size=8).hexdigest() + '"'
        self.modified = formatdate(mtime, usegmt=True)
        self.counts = counts
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if b"\r\n\r\n" not in self.buffer or self.transport is None:
            return
        head = self.buffer.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
        headers = {
            name.strip().lower(): value.strip()
            for name, _, value in (line.partition(":") for line in head[1:])
        }
        fresh = headers.get("if-none-match") == self.etag or (
            "if-none-match" not in headers and headers.get("if-modified-since") == self.modified
        )
        status, body = ("304 Not Modified", b"") if fresh else ("200 OK", self.body)
        reply = (
            f"HTTP/1.1 {status}\r\nETag: {self.etag}\r\nLast-Modified: {self.modified}\r\n"
            + ("" if fresh else f"Content-Type: text/plain\r\nContent-Length: {len(body)}\r\n")
            + "Connection: close\r\n\r\n"
        ).encode() + body
        self.counts.requests += 1
        self.counts.not_modified += fresh
        self.counts.body_bytes += len(body)
        self.counts.wire_bytes += len(reply)
        self.transport.write(reply)
        self.transport.close()


class FakeClock:
    """Seconds that move only when told."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def load(corpus: Path, limit: int | None) -> list[tuple[bytes, float]]:
    """Body and modification time of each non-empty corpus file (sorted by name)."""
    files = sorted(p for p in corpus.iterdir() if p.is_file() and p.stat().st_size)[:limit]
    return [(path.read_bytes(), path.stat().st_mtime) for path in files]


async def serve(
    files: list[tuple[bytes, float]], counts: Counts
) -> tuple[list[asyncio.Server], list[str]]:
    """One loopback server per file; returns them and a URL on each origin."""
    loop = asyncio.get_running_loop()
    servers, urls = [], []
    for body, mtime in files:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        server = await loop.create_server(
            partial(FileServer, body, mtime, counts), sock=sock, backlog=512
        )
        servers.append(server)
        urls.append(f"http://127.0.0.1:{sock.getsockname()[1]}/some/page")
    return servers, urls


async def day(
    urls: list[str], counts: Counts, clock: FakeClock, *, checker: ra.RobotsChecker
) -> tuple[Counts, ra.CacheStats]:
    """Check every URL once; what the server wrote meanwhile, and the cache's stats."""
    before = Counts(**vars(counts))
    await asyncio.gather(*(checker.allowed(url) for url in urls))
    spent = Counts(**{name: getattr(counts, name) - getattr(before, name) for name in vars(counts)})
    return spent, checker.stats.cache


def report(label: str, spent: Counts, first: Counts, stats: ra.CacheStats) -> None:
    """One line of the table."""
    body = spent.body_bytes / first.body_bytes if first.body_bytes else 0.0
    wire = spent.wire_bytes / first.wire_bytes if first.wire_bytes else 0.0
    print(
        f"{label:<22} {spent.requests:>8} {spent.not_modified:>6} {spent.body_bytes:>12,} "
        f"{spent.wire_bytes:>12,} {body:>8.2%} {wire:>8.2%} {stats.revalidated:>6}"
    )


async def main(files: list[tuple[bytes, float]], corpus: Path) -> None:
    """Day 1, then restarts and later days."""
    counts = Counts()
    servers, urls = await serve(files, counts)
    clock = FakeClock()
    policy = ra.FetchPolicy(total_timeout=60.0)
    print(f"{len(files)} origins, one robots.txt each, from {corpus}")
    print(
        f"{'run':<22} {'requests':>8} {'304s':>6} {'body bytes':>12} {'wire bytes':>12} "
        f"{'body/d1':>8} {'wire/d1':>8} {'reval':>6}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "robots.sqlite"
        async with (
            ra.SQLiteStore(path, timeout=10.0) as store,
            ra.RobotsChecker(AGENT, store=store, clock=clock, fetch_policy=policy) as first,
        ):
            day1, stats = await day(urls, counts, clock, checker=first)
            report("day 1", day1, day1, stats)
        clock.now += 3600
        async with (
            ra.SQLiteStore(path, timeout=10.0) as store,
            ra.RobotsChecker(AGENT, store=store, clock=clock, fetch_policy=policy) as again,
        ):
            restarted, stats = await day(urls, counts, clock, checker=again)
            report("+1 h, restart, SQLite", restarted, day1, stats)
            async with ra.RobotsChecker(AGENT, clock=clock, fetch_policy=policy) as amnesiac:
                memory, stats = await day(urls, counts, clock, checker=amnesiac)
                report("+1 h, restart, memory", memory, day1, stats)
            clock.now += DAY
            same, stats = await day(urls, counts, clock, checker=again)
            report("day 2, same process", same, day1, stats)
        clock.now += DAY
        async with (
            ra.SQLiteStore(path, timeout=10.0) as store,
            ra.RobotsChecker(AGENT, store=store, clock=clock, fetch_policy=policy) as third,
        ):
            restarted, stats = await day(urls, counts, clock, checker=third)
            report("day 3, restart, SQLite", restarted, day1, stats)
    for server in servers:
        server.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--corpus", type=Path, default=Path("/work/shared/corpus"))
    parser.add_argument("--limit", type=int, default=None, help="origins at most")
    args = parser.parse_args()
    if not args.corpus.is_dir():
        sys.exit(f"no corpus directory at {args.corpus}")
    asyncio.run(main(load(args.corpus, args.limit), args.corpus))
