"""Soak: many concurrent checks over many loopback origins, 10% of them failing.

    python bench/soak.py [--origins 2000] [--checks 10000] [--timeout 2.0] [--servers 2]

Phase 1 fires every check at once on an empty cache (then all of them again, within
the TTL) against origins of which 10% fail (503, reset, timeout, gzip bomb), and
reports: checks answered, answers that differ from the documented verdict (failing
origins disallow all), robots.txt requests per origin in the TTL window (must be
exactly one), tasks, sockets and server connections left after ``aclose()``, peak
memory (tracemalloc and ru_maxrss) and wall time. Phase 2 starts every check again on
fresh origins that answer slowly, cancels every other waiting task mid-flight (the
first caller of each fetch among them) and reports answers lost (must be 0).

Exit status 0 only if every expectation held.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import resource
import sys
import time
import tracemalloc
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).parent))

import aiohttp
from loopback import ROBOTS, LoopbackServers, free_ports

import robots_async

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

AGENT = "SoakBot/1.0 (+https://example.org/bot)"
#: Behaviour by origin index modulo 40: four failing kinds, 2.5% each (10% in all).
FAILING = {1: "503", 11: "reset", 21: "timeout", 31: "bomb"}
PATHS = ("/", "/a/b.html", "/private/x", "/private/public", "/p?session=1")
ORACLE = robots_async.parse(ROBOTS)
MIB = 1024 * 1024


def plan(origins: int) -> dict[int, str]:
    """``origins`` free ports, each with its behaviour (10% failing)."""
    return {port: FAILING.get(i % 40, "ok") for i, port in enumerate(free_ports(origins))}


def expected(behaviour: str, url: str) -> bool:
    """The documented verdict: an ok origin's rules; every failing origin disallows.

    (The bomb's first 512,000 decoded bytes say ``Disallow: /``.)
    """
    return behaviour == "ok" and ORACLE.allowed(url, user_agent=AGENT)


def open_sockets() -> int:
    """Sockets this process holds (-1 where /proc is not available)."""
    fd_dir = Path("/proc/self/fd")
    if not fd_dir.is_dir():
        return -1
    count = 0
    for entry in fd_dir.iterdir():
        with contextlib.suppress(OSError):
            count += os.readlink(entry).startswith("socket:")
    return count


def max_rss_mib() -> float:
    """Peak resident set size of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@contextlib.contextmanager
def recorded_sessions() -> Iterator[list[aiohttp.ClientSession]]:
    """Record every aiohttp.ClientSession created inside the block (the checker's own)."""
    created: list[aiohttp.ClientSession] = []
    original = aiohttp.ClientSession

    def recording(*args: Any, **kwargs: Any) -> aiohttp.ClientSession:
        session = original(*args, **kwargs)
        created.append(session)
        return session

    aiohttp.ClientSession = recording  # type: ignore[misc,assignment]
    try:
        yield created
    finally:
        aiohttp.ClientSession = original  # type: ignore[misc]


@dataclass
class PhaseReport:
    """What one phase measured, and which expectations failed."""

    name: str
    origins: int
    checks: int
    seconds: float = 0.0
    answered: int = 0
    exceptions: int = 0
    wrong: Counter[str] = field(default_factory=Counter)
    cancelled: int = 0
    in_flight_at_cancel: int = 0
    lost: int = 0
    requests: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    tasks_left: int = 0
    sockets_left: int = 0
    server_connections_left: int = 0
    session_closed: bool = False
    peak_traced_mib: float = 0.0
    max_rss_mib: float = 0.0
    second_wave_requests: int = 0
    failures: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """True if every expectation held."""
        return not self.failures

    def lines(self) -> list[str]:
        """A human-readable summary."""
        per = "  ".join(
            f"{kind} {n}: {lo}..{hi}" for kind, (n, lo, hi) in sorted(self.requests.items())
        )
        out = [
            (
                f"{self.name}: {self.checks:,} checks over {self.origins:,} origins, "
                f"{self.seconds:.2f} s"
            ),
            f"  answered {self.answered:,} (exceptions {self.exceptions}, "
            f"answers unlike the documented verdict {sum(self.wrong.values())}"
            + (f" {dict(self.wrong)}" if self.wrong else "")
            + ")",
        ]
        if self.cancelled:
            out.append(
                f"  cancelled {self.cancelled:,} waiting tasks ({self.in_flight_at_cancel:,} of "
                f"{self.checks:,} were in flight); answers lost: {self.lost}"
            )
        else:
            out.append(
                f"  second wave within the TTL: {self.checks:,} checks, "
                f"{self.second_wave_requests} new robots.txt requests"
            )
        out += [
            f"  robots.txt requests per origin in the TTL window (origins: min..max): {per}",
            (
                f"  after aclose(): tasks left {self.tasks_left}, sockets left "
                f"{self.sockets_left}, server connections left "
                f"{self.server_connections_left}, checker's session closed: "
                f"{'yes' if self.session_closed else 'NO'}"
            ),
            (
                f"  peak memory: tracemalloc {self.peak_traced_mib:.1f} MiB, "
                f"ru_maxrss {self.max_rss_mib:.0f} MiB"
            ),
        ]
        out += [f"  FAILED: {failure}" for failure in self.failures]
        return out


def _requests(counts: Counter[int], behaviours: dict[int, str]) -> dict[str, tuple[int, int, int]]:
    per_kind: dict[str, list[int]] = {}
    for port, kind in behaviours.items():
        per_kind.setdefault(kind, []).append(counts.get(port, 0))
    return {kind: (len(v), min(v), max(v)) for kind, v in per_kind.items()}


async def _settle(
    report: PhaseReport,
    before_tasks: set[asyncio.Task[Any]],
    before_sockets: int,
    servers: LoopbackServers,
) -> None:
    """Wait (at most 5 s) for tasks and sockets to go; record what is left."""
    current = asyncio.current_task()
    deadline = time.monotonic() + 5.0
    while True:
        tasks = {t for t in asyncio.all_tasks() - before_tasks if t is not current}
        report.tasks_left = sum(not t.done() for t in tasks)
        report.sockets_left = max(open_sockets() - before_sockets, 0)
        report.server_connections_left = servers.open_connections()
        settled = not (report.tasks_left or report.sockets_left or report.server_connections_left)
        if settled or time.monotonic() > deadline:
            return
        await asyncio.sleep(0.1)


def _judge(report: PhaseReport, counts: Counter[int], behaviours: dict[int, str]) -> None:
    report.requests = _requests(counts, behaviours)
    if report.answered + report.cancelled != report.checks:
        report.failures.append(f"{report.checks - report.answered} checks not answered")
    if report.lost:
        report.failures.append(f"{report.lost} answers lost after cancelling other waiters")
    if report.wrong:
        report.failures.append(f"answers unlike the documented verdict: {dict(report.wrong)}")
    not_once = {k: (lo, hi) for k, (_, lo, hi) in report.requests.items() if (lo, hi) != (1, 1)}
    if not_once:
        report.failures.append(f"not exactly one robots.txt request per origin: {not_once}")
    if report.second_wave_requests:
        report.failures.append(f"second wave made {report.second_wave_requests} requests")
    for what in ("tasks_left", "sockets_left", "server_connections_left"):
        if getattr(report, what):
            report.failures.append(f"{what.replace('_', ' ')}: {getattr(report, what)}")
    if not report.session_closed:
        report.failures.append("the checker's own session is not closed")


def _checker(opts: SoakOptions) -> robots_async.RobotsChecker:
    policy = robots_async.FetchPolicy(
        total_timeout=opts.timeout, connect_timeout=min(opts.timeout, 10.0)
    )
    return robots_async.RobotsChecker(
        AGENT, fetch_policy=policy, max_concurrent_fetches=opts.concurrency
    )


@dataclass(frozen=True)
class SoakOptions:
    """How big the soak is."""

    origins: int = 2000
    checks: int = 10_000
    #: FetchPolicy.total_timeout (s): how long a "timeout" origin holds a fetch.
    timeout: float = 2.0
    #: Server processes sharing the origins.
    servers: int = 2
    #: RobotsChecker(max_concurrent_fetches=...).
    concurrency: int = 256
    #: Seconds every origin but "timeout" waits before answering in phase 2.
    delay: float = 0.5
    seed: int = 1


async def phase_one(opts: SoakOptions) -> PhaseReport:
    """Every check at once on an empty cache, then again within the TTL."""
    origins, checks = opts.origins, opts.checks
    behaviours = plan(origins)
    ports = list(behaviours)
    rng = random.Random(opts.seed)
    targets = [(ports[i % origins], rng.choice(PATHS)) for i in range(checks)]
    rng.shuffle(targets)
    urls = [f"http://127.0.0.1:{port}{path}" for port, path in targets]
    report = PhaseReport("phase 1: every check at once", origins, checks)
    with LoopbackServers(behaviours, servers=opts.servers) as srv:
        before_tasks, before_sockets = asyncio.all_tasks(), open_sockets()
        tracing = tracemalloc.is_tracing()
        if not tracing:
            tracemalloc.start()
        tracemalloc.reset_peak()
        with recorded_sessions() as sessions:
            checker = _checker(opts)
            started = time.perf_counter()
            try:
                answers = await asyncio.gather(
                    *(checker.allowed(url) for url in urls), return_exceptions=True
                )
                report.seconds = time.perf_counter() - started
                counts = srv.snapshot()
                again = await asyncio.gather(
                    *(checker.allowed(url) for url in urls), return_exceptions=True
                )
                report.second_wave_requests = sum(srv.snapshot().values())
            finally:
                await checker.aclose()
        _, peak = tracemalloc.get_traced_memory()
        if not tracing:
            tracemalloc.stop()
        report.peak_traced_mib = peak / MIB
        report.max_rss_mib = max_rss_mib()
        for (port, _), url, answer, second in zip(targets, urls, answers, again, strict=True):
            if not isinstance(answer, bool):
                report.exceptions += 1
                continue
            report.answered += 1
            if answer != expected(behaviours[port], url) or second != answer:
                report.wrong[behaviours[port]] += 1
        report.session_closed = len(sessions) == 1 and sessions[0].closed
        await _settle(report, before_tasks, before_sockets, srv)
    _judge(report, counts, behaviours)
    return report


async def phase_two(opts: SoakOptions) -> PhaseReport:
    """Every check at once on slow origins; cancel every other waiting task mid-flight."""
    origins, checks = opts.origins, opts.checks
    behaviours = plan(origins)
    ports = list(behaviours)
    rng = random.Random(opts.seed + 1)
    # Checks 2k and 2k+1 ask the same origin; 2k asks first and is cancelled.
    targets = [(ports[(i // 2) % origins], rng.choice(PATHS)) for i in range(checks)]
    urls = [f"http://127.0.0.1:{port}{path}" for port, path in targets]
    report = PhaseReport("phase 2: cancel half of the waiters", origins, checks)
    with LoopbackServers(behaviours, servers=opts.servers, delay=opts.delay) as srv:
        before_tasks, before_sockets = asyncio.all_tasks(), open_sockets()
        tracing = tracemalloc.is_tracing()
        if not tracing:
            tracemalloc.start()
        tracemalloc.reset_peak()
        with recorded_sessions() as sessions:
            checker = _checker(opts)
            started = time.perf_counter()
            try:
                tasks = [asyncio.create_task(checker.allowed(url)) for url in urls]
                await asyncio.sleep(min(opts.delay / 2, 0.25))
                report.in_flight_at_cancel = sum(not task.done() for task in tasks)
                for task in tasks[0::2]:
                    task.cancel()
                results = await asyncio.gather(*tasks, return_exceptions=True)
                report.seconds = time.perf_counter() - started
                counts = srv.snapshot()
            finally:
                await checker.aclose()
        _, peak = tracemalloc.get_traced_memory()
        if not tracing:
            tracemalloc.stop()
        report.peak_traced_mib = peak / MIB
        report.max_rss_mib = max_rss_mib()
        for index, ((port, _), url, result) in enumerate(zip(targets, urls, results, strict=True)):
            kept = index % 2 == 1
            if isinstance(result, asyncio.CancelledError) and not kept:
                report.cancelled += 1  # as intended
            elif not isinstance(result, bool):
                report.exceptions += 1
                report.lost += kept
            else:  # answered (a cancelled task may have been answered first)
                report.answered += 1
                if result != expected(behaviours[port], url):
                    report.wrong[behaviours[port]] += 1
        report.session_closed = len(sessions) == 1 and sessions[0].closed
        await _settle(report, before_tasks, before_sockets, srv)
    _judge(report, counts, behaviours)
    return report


async def soak(opts: SoakOptions) -> list[PhaseReport]:
    """Run both phases; return their reports."""
    return [await phase_one(opts), await phase_two(opts)]


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments, run, print the summary; exit 1 if an expectation failed."""
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--origins", type=int, default=2000)
    args.add_argument("--checks", type=int, default=10_000)
    args.add_argument("--timeout", type=float, default=2.0, help="total fetch timeout (s)")
    args.add_argument("--servers", type=int, default=2, help="server processes")
    args.add_argument("--concurrency", type=int, default=256, help="max_concurrent_fetches")
    args.add_argument("--delay", type=float, default=0.5, help="answer delay in phase 2 (s)")
    args.add_argument("--seed", type=int, default=1)
    opts = SoakOptions(**vars(args.parse_args(argv)))
    failing = dict.fromkeys(FAILING.values(), 0)
    for i in range(opts.origins):
        if i % 40 in FAILING:
            failing[FAILING[i % 40]] += 1
    print(
        f"soak: {opts.checks:,} checks over {opts.origins:,} loopback origins "
        f"({sum(failing.values())} failing: "
        + ", ".join(f"{n} {kind}" for kind, n in failing.items())
        + f"), {opts.servers} server processes, total_timeout {opts.timeout} s, "
        f"max_concurrent_fetches {opts.concurrency}"
    )
    started = time.perf_counter()
    reports = asyncio.run(soak(opts))
    for report in reports:
        print("\n".join(report.lines()))
    passed = all(report.passed for report in reports)
    print(f"RESULT: {'PASS' if passed else 'FAIL'} ({time.perf_counter() - started:.1f} s in all)")
    return 0 if passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
