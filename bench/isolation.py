"""Crawl-scale isolation figures (issue 9): one slow origin never slows another.

    python bench/isolation.py [--quick]

One row per case, on real servers on 127.0.0.1 with default settings: checks tried,
answered, wrong verdicts, max latency of the healthy checks, peak sockets (robots.txt
connections, or descriptors above the baseline) and peak memory against its bound.

- hang+trickle: 300 origins that never answer and 300 that trickle a byte a second,
  while 10 healthy origins are checked (2 checks each, spread over 3 s).
- lease waits: a store peer holds the fetch leases of 100 hung origins (MemoryStore;
  the Redis store takes the same path), while a healthy origin is checked.
- ulimit 1024: 3,000 keep-alive origins in waves of 1,000 from a subprocess whose
  soft RLIMIT_NOFILE is 1,024; then 200 checks with only 8 descriptors free
  (EMFILE: "local-limit" attempts, tried again with back-off until other fetches
  give descriptors back), 20 with none free for longer than total_timeout (1.5 s:
  fail closed as "local-limit" for 5 s), and 100 checks by name with none free for
  0.5 s (c-ares cannot open its socket: also "local-limit", not "dns").
- slow DNS: 20 names whose lookups are never answered (a DNS server on 127.0.0.1,
  c-ares), then 10 healthy origins by name.
- cancel retry: a caller's 0.5 s timeout retried up to 20 times against a robots.txt
  that takes 1 s.
- memory: 420 origins serving the real corpus, each queried 20 times, max_memory
  32 MiB; what the checker retains, measured with tracemalloc.
- pacing: Crawl-delay on 100,000 origins; the cost of one wait() at 1,000 and at
  100,000 paced origins (no network: an instant fetcher).

Targets: healthy checks < 2 s, no wrong verdict, sockets <= the lanes' cap (64 fast +
up to 512 slow), slow healthy origins never refused (behind 200 hung: < 10 s),
memory <= 1.25x the bound, wait() flat in the number of origins. Runtime ~1 min.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
import tempfile
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.*

import aiohttp
from aiohttp import web

import robots_async as ra
from tests.cache import test_memory
from tests.checker.swarm import SocketSampler, Swarm
from tests.fetch.dnsserver import DNSServer
from tests.fetch.test_connections import KeepAliveOrigins, run_client

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

AGENT = "IsolationBot/1.0"
RULES = b"User-agent: *\nDisallow: /private\n"
MIB = 1024 * 1024
#: Where the ulimit case hands its origins to the subprocess.
URLS_FILE = Path(tempfile.gettempdir()) / f"isolation-urls-{os.getpid()}"


@dataclass
class Row:
    """One case's figures ("-" where a column does not apply)."""

    case: str
    tried: int
    answered: int
    wrong: int
    latency: str = "-"
    sockets: str = "-"
    memory: str = "-"
    note: str = ""


class Healthy:
    """``n`` ports of 127.0.0.1 serving RULES (after ``delay`` s); requests counted."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.ports: list[int] = []
        self.requests = 0
        self._runner: web.AppRunner | None = None

    async def start(self, n: int) -> Healthy:
        app = web.Application()
        app.router.add_get("/robots.txt", self._robots)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.2)
        await self._runner.setup()
        for _ in range(n):
            site = web.TCPSite(self._runner, "127.0.0.1", 0)
            await site.start()
            self.ports.append(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]
        return self

    def base(self, index: int, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.ports[index]}"

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _robots(self, _: web.Request) -> web.Response:
        self.requests += 1
        if self.delay:
            await asyncio.sleep(self.delay)
        return web.Response(body=RULES, content_type="text/plain")


async def timed_pair(checker: ra.RobotsChecker, base: str) -> tuple[int, float]:
    """Wrong answers among /private/x (False) and /public (True), and the seconds."""
    started = time.monotonic()
    private = await checker.allowed(base + "/private/x")
    public = await checker.allowed(base + "/public")
    return int(private) + int(not public), time.monotonic() - started


async def cancel_all(tasks: list[asyncio.Task[Any]]) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def hang_and_trickle() -> Row:
    healthy = await Healthy().start(10)
    hung, trickling = await Swarm("hang").start(300), await Swarm("trickle").start(300)
    checker = ra.RobotsChecker(AGENT)
    try:
        async with SocketSampler(hung.ports + trickling.ports + healthy.ports) as sockets:
            bad = [
                asyncio.create_task(checker.allowed(b + "/")) for b in hung.bases + trickling.bases
            ]
            await asyncio.sleep(0.2)
            results = []
            for index in range(10):
                await asyncio.sleep(0.3)
                results.append(await timed_pair(checker, healthy.base(index)))
        await cancel_all(bad)
    finally:
        await checker.aclose()
        await hung.close()
        await trickling.close()
        await healthy.close()
    return Row(
        "hang+trickle (600 bad)",
        tried=20,
        answered=2 * len(results),
        wrong=sum(w for w, _ in results),
        latency=f"{max(s for _, s in results):.2f} s",
        sockets=f"{sockets.peak} (cap {checker.cache.lanes.capacity})",
        note=f"local-limits {checker.stats.cache.local_limits}",
    )


async def slow_healthy(origins: int, delay: float, hung_first: int = 0) -> Row:
    """``origins`` healthy robots.txt answering in ``delay`` s, all checked at once
    (behind ``hung_first`` hung origins asked just before): none may be refused."""
    healthy = await Healthy(delay).start(origins)
    hung = await Swarm("hang").start(hung_first) if hung_first else None
    checker = ra.RobotsChecker(AGENT)
    bad = [asyncio.create_task(checker.allowed(b + "/page")) for b in hung.bases] if hung else []
    try:
        await asyncio.sleep(0.1 if hung else 0)
        results = await asyncio.gather(
            *(timed_pair(checker, healthy.base(i)) for i in range(origins))
        )
        await cancel_all(bad)
    finally:
        await checker.aclose()
        await healthy.close()
        if hung is not None:
            await hung.close()
    behind = f" behind {hung_first} hung" if hung_first else ""
    return Row(
        f"{origins} healthy at {delay} s{behind}",
        tried=origins,
        answered=2 * len(results),
        wrong=sum(w for w, _ in results),
        latency=f"{max(s for _, s in results):.2f} s",
        note=f"requests {healthy.requests}, local-limits {checker.stats.cache.local_limits}, "
        f"requeued {checker.cache.lanes.requeued}",
    )


async def lease_waits() -> Row:
    healthy = await Healthy().start(1)
    hung = await Swarm("hang").start(100)
    store = ra.MemoryStore()
    peer_fetcher = ra.AiohttpFetcher(user_agent=AGENT)
    peer = ra.RobotsCache(peer_fetcher, store=store, max_concurrent_fetches=200)
    checker = ra.RobotsChecker(AGENT, store=store)
    try:
        held = [asyncio.create_task(peer.get(ra.Origin.from_url(b))) for b in hung.bases]
        await asyncio.sleep(0.3)
        waiting = [asyncio.create_task(checker.allowed(b + "/")) for b in hung.bases]
        await asyncio.sleep(0.3)
        slots = checker.cache.lanes.running
        wrong, seconds = await timed_pair(checker, healthy.base(0))
        await cancel_all(waiting + held)
    finally:
        await checker.aclose()
        await peer.aclose()
        await peer_fetcher.aclose()
        await hung.close()
        await healthy.close()
    return Row(
        "lease waits (100 leased)",
        tried=2,
        answered=2,
        wrong=wrong,
        latency=f"{seconds:.2f} s",
        sockets=f"{slots} slots held",
        note=f"hung requests {hung.requests} (peer only)",
    )


async def under_ulimit() -> list[Row]:
    origins = KeepAliveOrigins()
    await origins.start(3000)
    try:
        urls = origins.write_urls(URLS_FILE)
        started = time.monotonic()
        waves = await run_client(urls, "waves", 1000)
        seconds = time.monotonic() - started
        starved = await run_client(urls, "starved", 200)
        starved_long = await run_client(urls, "starved-long", 20)
        dns = await DNSServer({f"origin-{i}.test": "127.0.0.1" for i in range(100)}).start()
        try:
            by_name = await run_client(urls, "starved-dns", 100, str(dns.port))
        finally:
            dns.close()
    finally:
        await origins.close()
        os.unlink(URLS_FILE)
    errors = waves["errors"]
    return [
        Row(
            "ulimit 1024: 3,000 origins",
            tried=3000,
            answered=waves["fetches"] - errors,
            wrong=waves["wrong"],
            sockets=f"+{waves['peak'] - waves['baseline']} fds",
            note=f"fds after waves {waves['after']} (baseline {waves['baseline']}), "
            f"{seconds:.1f} s",
        ),
        Row(
            "ulimit: 8 fds free (EMFILE)",
            tried=200,
            answered=starved["kinds"].get("None", 0),
            wrong=starved["wrong_first"] + starved["failed_open"],
            note=f"EMFILE attempts {starved['local_limits']}, retried {starved['retries']}, "
            f"outcomes {dict(starved['kinds'])}, {starved['elapsed']:.1f} s",
        ),
        Row(
            "ulimit: 0 fds > total_timeout",
            tried=20,
            answered=starved_long["kinds"].get("None", 0),
            wrong=starved_long["failed_open"] + starved_long["wrong_second"],
            note=f"fail closed as {dict(starved_long['kinds'])} after "
            f"{starved_long['elapsed']:.1f} s (total_timeout 1.5 s), TTL {starved_long['ttls']}",
        ),
        Row(
            "ulimit: 0 fds for 0.5 s, by name",
            tried=100,
            answered=by_name["kinds"].get("None", 0),
            wrong=by_name["wrong_first"] + by_name["failed_open"],
            note=f"EMFILE attempts {by_name['local_limits']}, outcomes {dict(by_name['kinds'])}",
        ),
    ]


async def slow_dns() -> Row:
    dns = await DNSServer(
        answers={f"healthy-{i}.test": "127.0.0.1" for i in range(10)},
        silent={f"slow-{i}.test" for i in range(20)},
    ).start()
    healthy = await Healthy().start(10)
    resolver = aiohttp.AsyncResolver(
        nameservers=["127.0.0.1"], udp_port=dns.port, tcp_port=dns.port, lookups="b"
    )
    fetcher = ra.AiohttpFetcher(user_agent=AGENT, resolver=resolver)
    checker = ra.RobotsChecker(AGENT, fetcher=fetcher)
    try:
        slow = [
            asyncio.create_task(checker.allowed(f"http://slow-{i}.test:{healthy.ports[0]}/"))
            for i in range(20)
        ]
        await asyncio.sleep(0.3)
        results = await asyncio.gather(
            *(timed_pair(checker, healthy.base(i, f"healthy-{i}.test")) for i in range(10))
        )
        pending = sum(not task.done() for task in slow)
        await cancel_all(slow)
    finally:
        await checker.aclose()
        await fetcher.aclose()
        await healthy.close()
        dns.close()
    return Row(
        "slow DNS (20 silent names)",
        tried=20,
        answered=20,
        wrong=sum(w for w, _ in results),
        latency=f"{max(s for _, s in results):.2f} s",
        note=f"{pending} slow lookups still pending",
    )


async def cancel_retry() -> Row:
    healthy = await Healthy(delay=1.0).start(1)
    checker = ra.RobotsChecker(AGENT)
    answered_at = None
    try:
        for attempt in range(20):
            try:
                await asyncio.wait_for(checker.allowed(healthy.base(0) + "/private/x"), 0.5)
            except asyncio.TimeoutError:  # not the builtin before 3.11
                continue
            answered_at = attempt + 1
            break
    finally:
        await checker.aclose()
        await healthy.close()
    return Row(
        "cancel retry (0.5 s x 20)",
        tried=answered_at or 20,
        answered=int(answered_at is not None),
        wrong=0,
        note=f"answered on try {answered_at}, robots.txt requests {healthy.requests}",
    )


async def memory(bound: int) -> Row:
    server = test_memory.CorpusServer()
    await server.start(test_memory.ORIGINS)
    fetcher = ra.AiohttpFetcher(user_agent=test_memory.USER_AGENT)
    try:
        tracemalloc.start()
        checker = ra.RobotsChecker(test_memory.USER_AGENT, fetcher=fetcher, max_memory=bound)
        started = time.monotonic()
        await test_memory.fill(checker, server.bases)
        seconds = time.monotonic() - started
        stats = checker.stats.cache
        peak = tracemalloc.get_traced_memory()[1]
        held = [checker]
        del checker
        retained = await test_memory.retained_by(held)
    finally:
        tracemalloc.stop()
        await fetcher.aclose()
        await server.close()
    checks = test_memory.ORIGINS * test_memory.QUESTIONS
    return Row(
        f"memory (corpus x{test_memory.QUESTIONS})",
        tried=checks,
        answered=checks,
        wrong=0,
        memory=f"{retained / MIB:.1f} / {bound / MIB:.0f} MiB",
        note=f"retained {retained / bound:.2f}x bound, traced peak {peak / MIB:.0f} MiB, "
        f"{stats.evictions} evictions, {seconds:.1f} s",
    )


async def pacing(origins: int) -> Row:
    class Clock:
        now = 1_000_000.0

        def __call__(self) -> float:
            return self.now

    async def no_sleep(_: float) -> None:
        return None

    clock = Clock()
    fetcher = test_memory.InstantFetcher("User-agent: *\nCrawl-delay: 5\n")
    # Default max_entries: rules of evicted origins are fetched again (instantly), a
    # cost that does not grow with the number of paced origins.
    checker = ra.RobotsChecker(AGENT, fetcher=fetcher, clock=clock, sleep=no_sleep)
    urls = [f"http://host-{i}.example/page" for i in range(origins)]

    async def per_wait(batch: list[str]) -> float:
        """µs per wait(), best of 5 runs of 200 (the machine is shared)."""
        runs = []
        for start in range(0, len(batch), 200):
            began = time.perf_counter()
            for url in batch[start : start + 200]:
                await checker.wait(url)
            runs.append((time.perf_counter() - began) / 200 * 1e6)
        return min(runs)

    early = await per_wait(urls[:1000])
    for url in urls[1000:-1000]:
        await checker.wait(url)
    late = await per_wait(urls[-1000:])
    memo = len(checker._pacer._local)  # origins whose pacing is remembered
    await checker.aclose()
    return Row(
        f"pacing ({origins:,} origins)",
        tried=origins,
        answered=origins,
        wrong=0,
        latency=f"{early:.0f} -> {late:.0f} µs",
        note=f"wait() at 1,000 vs {origins:,} paced origins; memo {memo:,}",
    )


def table(rows: list[Row]) -> str:
    header = ("case", "tried", "answered", "wrong", "max healthy", "peak sockets", "memory")
    cells = [header] + [
        (r.case, str(r.tried), str(r.answered), str(r.wrong), r.latency, r.sockets, r.memory)
        for r in rows
    ]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    notes = [f"  {r.case}: {r.note}" for r in rows if r.note]
    return "\n".join([*lines, "", "notes:", *notes])


async def main(quick: bool) -> None:
    steps: list[Callable[[], Awaitable[Row | list[Row]]]] = [
        hang_and_trickle,
        lambda: slow_healthy(100, 1.2),
        lambda: slow_healthy(300, 1.2),
        lambda: slow_healthy(100, 2.5),
        lambda: slow_healthy(100, 1.2, hung_first=200),
        lease_waits,
        under_ulimit,
        slow_dns,
        cancel_retry,
        lambda: memory(32 * MIB),
        lambda: pacing(10_000 if quick else 100_000),
    ]
    rows: list[Row] = []
    for step in steps:
        started = time.monotonic()
        result = await step()
        gc.collect()
        rows += result if isinstance(result, list) else [result]
        print(f"... {rows[-1].case} ({time.monotonic() - started:.1f} s)", file=sys.stderr)
    print(table(rows))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="pacing at 10,000 origins")
    asyncio.run(main(parser.parse_args().quick))
