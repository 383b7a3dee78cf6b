"""Shared-store benchmark: N worker processes checking the same origins, with and without Redis.

    python bench/bench_redis.py [--workers 4] [--origins 500] [--redis-url URL]

Each worker process runs a RobotsChecker and checks two URLs on every origin, all at
once, in its own random order. With the shared RedisStore the origins' robots.txt
should be requested once in all (``origins``); with local caches only, once per
worker (``workers * origins``). Prints the requests and wall time of both runs, and
the verdicts against the loopback robots.txt (it disallows /private/ only) split in two:
fail-open (/private/x allowed: never acceptable, the exit status is 1) and safe denials
(/a disallowed) with why, e.g. "unreachable/local-limit": a fetch this process could not
make (no descriptor left), answered "disallow" until retried. Without --redis-url a
redis-server is started on a free loopback port.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing as mp
import queue
import random
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).parent))

from loopback import LoopbackServers, free_ports

import robots_async

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from multiprocessing.synchronize import Event

AGENT = "BenchBot/1.0 (+https://example.org/bot)"


@dataclass(frozen=True)
class Run:
    """What one run (all workers, one mode) measured."""

    mode: str
    requests: int
    expected: int
    wall: float
    slowest_worker: float
    store_hits: int
    store_errors: int
    #: /private/x allowed: the bench fails on any.
    fail_open: int
    #: /a disallowed, by why (entry source / error kind): safe denials, e.g. our own
    #: fetch limits ("unreachable/local-limit") on an overloaded machine.
    denied: Counter[str]


@dataclass(frozen=True)
class Job:
    """What one worker process checks, and against which store."""

    urls: list[str]
    redis_url: str | None
    prefix: str
    seed: int


async def _check_all(job: Job, go: Event, results: Any) -> None:
    store = None
    if job.redis_url is not None:
        from robots_async.contrib.redis import RedisStore

        store = RedisStore(job.redis_url, prefix=job.prefix)
    checker = robots_async.RobotsChecker(AGENT, store=store)
    try:
        urls = list(job.urls)
        random.Random(job.seed).shuffle(urls)
        results.put(("ready", job.seed))
        await asyncio.get_running_loop().run_in_executor(None, go.wait)
        start = time.perf_counter()
        decisions = await asyncio.gather(*(checker.explain(url) for url in urls))
        elapsed = time.perf_counter() - start
        # The loopback robots.txt disallows /private/ and allows the rest.
        fail_open = sum(d.allowed for d in decisions if d.url.endswith("/private/x"))
        denied = Counter(
            f"{d.source}/{d.outcome.error or d.outcome.status}"
            for d in decisions
            if not d.allowed and not d.url.endswith("/private/x")
        )
        stats = checker.stats.cache
        report = (elapsed, stats.store_hits, stats.store_errors, fail_open, dict(denied))
        results.put(("done", report))
    finally:
        await checker.aclose()
        if store is not None:
            await store.aclose()


def _worker(job: Job, go: Event, results: Any) -> None:
    asyncio.run(_check_all(job, go, results))


def run_mode(mode: str, workers: int, origins: int, redis_url: str | None, servers: int) -> Run:
    """Start the origins and ``workers`` processes, let them check, count requests."""
    ports = free_ports(origins)
    urls = [f"http://127.0.0.1:{port}{path}" for port in ports for path in ("/private/x", "/a")]
    prefix = f"bench-{uuid.uuid4().hex}"
    ctx = mp.get_context("spawn")
    go = ctx.Event()
    results = ctx.Queue()
    with LoopbackServers(dict.fromkeys(ports, "ok"), servers=servers) as loopback:
        procs = [
            ctx.Process(target=_worker, args=(Job(urls, redis_url, prefix, seed), go, results))
            for seed in range(workers)
        ]
        for proc in procs:
            proc.start()
        try:
            for _ in procs:
                kind, _ = results.get(timeout=120)
                assert kind == "ready"
            start = time.perf_counter()
            go.set()
            reports = []
            for _ in procs:
                kind, report = results.get(timeout=600)
                assert kind == "done"
                reports.append(report)
            wall = time.perf_counter() - start
        except queue.Empty:
            raise SystemExit(f"{mode}: a worker did not answer (crashed?)") from None
        finally:
            for proc in procs:
                proc.join(timeout=30)
                if proc.is_alive():
                    proc.kill()
        requests = sum(loopback.counts().values())
    return Run(
        mode=mode,
        requests=requests,
        expected=origins if redis_url is not None else origins * workers,
        wall=wall,
        slowest_worker=max(r[0] for r in reports),
        store_hits=sum(r[1] for r in reports),
        store_errors=sum(r[2] for r in reports),
        fail_open=sum(r[3] for r in reports),
        denied=sum((Counter(r[4]) for r in reports), Counter()),
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class OwnRedis:
    """A throwaway redis-server on a free loopback port (nothing saved)."""

    def __init__(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise SystemExit("redis-server not found: install it or pass --redis-url")
        self.port = _free_port()
        self._proc = subprocess.Popen(
            [
                *(binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""),
                *("--appendonly", "no", "--daemonize", "no"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 15
        while not self._answers():
            if self._proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise SystemExit("redis-server did not start")
            time.sleep(0.02)

    @property
    def url(self) -> str:
        """Its redis:// URL."""
        return f"redis://127.0.0.1:{self.port}/0"

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def close(self) -> None:
        """Terminate and reap it."""
        self._proc.terminate()
        self._proc.wait(10)


@contextlib.contextmanager
def redis_url_or_own(url: str | None) -> Iterator[str]:
    """The given URL, or that of a redis-server started (and stopped) here."""
    if url is not None:
        yield url
        return
    server = OwnRedis()
    try:
        yield server.url
    finally:
        server.close()


def print_table(runs: list[Run], workers: int, origins: int) -> None:
    """The results as a small text table."""
    header = (
        "mode",
        "workers",
        "origins",
        "robots.txt requests",
        "expected",
        "wall s",
        "slowest worker s",
        "store hits",
        "store errors",
        "fail-open",
        "safe denials (why)",
    )
    rows = [
        (
            r.mode,
            str(workers),
            str(origins),
            f"{r.requests:,}",
            f"{r.expected:,}",
            f"{r.wall:.2f}",
            f"{r.slowest_worker:.2f}",
            f"{r.store_hits:,}",
            f"{r.store_errors:,}",
            str(r.fail_open),
            _denials(r.denied),
        )
        for r in runs
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print(
            "  ".join(
                cell.rjust(w) if i else cell.ljust(w)
                for i, (cell, w) in enumerate(zip(row, widths, strict=True))
            )
        )


def _denials(denied: Counter[str]) -> str:
    """``total (why: count, ...)`` or ``0``."""
    if not denied:
        return "0"
    why = ", ".join(f"{reason}: {count}" for reason, count in denied.most_common())
    return f"{denied.total()} ({why})"


def main(argv: Sequence[str] | None = None) -> int:
    """Run both modes and print the table; 1 if a request count is not the expected one."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--origins", type=int, default=500)
    parser.add_argument("--redis-url", default=None, help="default: start a redis-server")
    parser.add_argument("--servers", type=int, default=2, help="loopback server processes")
    opts = parser.parse_args(argv)
    with redis_url_or_own(opts.redis_url) as url:
        runs = [run_mode("shared (Redis)", opts.workers, opts.origins, url, opts.servers)]
    runs.append(run_mode("local only", opts.workers, opts.origins, None, opts.servers))
    print_table(runs, opts.workers, opts.origins)
    mismatched = [r.mode for r in runs if r.requests != r.expected or r.fail_open]
    if mismatched:
        print(f"MISMATCH in: {', '.join(mismatched)}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
