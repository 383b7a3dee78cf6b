"""httpx transport and URL intake benchmark (issue 31), paired in one run.

    python bench/bench_httpx.py [--rounds 16] [--batch 40] [--baseline SRC_DIR]

1. Transport overhead: GETs of one page from a local aiohttp server (its own process
   on 127.0.0.1) through ``httpx.AsyncClient(transport=RobotsTransport(checker))``
   against a plain ``httpx.AsyncClient``, robots.txt cached. Each round times a batch
   A,B,B,A (alternating with B,A,A,B); one ratio per round; median and IQR. Target:
   under 1.05x.
2. URL intake: the cached ``await checker.allowed(url)`` for a ``str``, a
   ``yarl.URL`` and an ``httpx.URL`` (CPU per call, in-process). With
   ``--baseline`` (a source tree of the package before issue 31, e.g. from
   ``git archive``), the str hot path of this tree against that one: a fresh process
   per measurement, the two trees alternating, one ratio per round.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
AGENT = "BenchBot/1.0 (+https://example.org/bot)"
ROBOTS = "User-agent: *\nDisallow: /private\nAllow: /private/ok\n"


def _summary(values: list[float]) -> str:
    q1, median, q3 = statistics.quantiles(values, n=4)
    return f"median {median:.3f}x  IQR {q1:.3f}-{q3:.3f}  ({len(values)} rounds)"


# --- the server (a child process) --------------------------------------------------


def serve() -> None:
    """Serve /robots.txt and a small page on a free port of 127.0.0.1."""
    from aiohttp import web

    async def page(request: web.Request) -> web.Response:
        if request.path == "/robots.txt":
            return web.Response(text=ROBOTS)
        return web.Response(text="<html><body>" + "x" * 2000 + "</body></html>")

    async def main() -> None:
        app = web.Application()
        app.router.add_get("/{tail:.*}", page)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        print(port, flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


def _start_server() -> tuple[subprocess.Popen[str], str]:
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve"], stdout=subprocess.PIPE, text=True
    )
    assert server.stdout is not None
    port = server.stdout.readline().strip()  # the child prints its port, then serves
    if not port.isdigit():
        server.kill()
        raise SystemExit("server did not start")
    return server, f"http://127.0.0.1:{port}"


async def transport_overhead(
    base: str, rounds: int, batch: int
) -> tuple[list[float], list[float], float]:
    """Per-round ratios RobotsTransport client / plain client, wall time and the client
    process's CPU time (the server's is not in it: less swayed by other load), and the
    plain client's median wall seconds a request."""
    import httpx

    import robots_async as ra
    from robots_async.contrib.httpx import RobotsTransport

    url = base + "/public/page"
    headers = {"User-Agent": AGENT}
    ratios: list[float] = []
    cpu_ratios: list[float] = []
    plain_times: list[float] = []
    async with (
        ra.RobotsChecker(AGENT) as checker,
        httpx.AsyncClient(transport=RobotsTransport(checker)) as checked,
        httpx.AsyncClient(headers=headers) as plain,
    ):
        for client in (checked, plain):  # warm: robots.txt cached, connections open
            for _ in range(batch):
                (await client.get(url)).raise_for_status()

        async def run(client: httpx.AsyncClient) -> tuple[float, float]:
            start, cpu = time.perf_counter(), time.process_time()
            for _ in range(batch):
                await client.get(url)
            return time.perf_counter() - start, time.process_time() - cpu

        for r in range(rounds):
            order = (
                (checked, plain, plain, checked) if r % 2 == 0 else (plain, checked, checked, plain)
            )
            spent = {id(checked): 0.0, id(plain): 0.0}
            cpu = {id(checked): 0.0, id(plain): 0.0}
            for client in order:
                gc.collect()
                wall, used = await run(client)
                spent[id(client)] += wall
                cpu[id(client)] += used
            ratios.append(spent[id(checked)] / spent[id(plain)])
            cpu_ratios.append(cpu[id(checked)] / cpu[id(plain)])
            plain_times.append(spent[id(plain)] / (2 * batch))
        checks = checker.stats.checks
    expected = batch * (2 * rounds + 1)
    assert checks == expected, (checks, expected)  # one check per request
    return ratios, cpu_ratios, statistics.median(plain_times)


async def own_cost(calls: int = 20_000) -> float:
    """CPU seconds RobotsTransport adds to a hop on a cached origin (best of 5)."""
    import httpx

    import robots_async as ra
    from robots_async.contrib.httpx import RobotsTransport

    class Stub(httpx.AsyncBaseTransport):
        """Answers at once: what is left is the transport's own cost."""

        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            return httpx.Response(200, content=b"x")

    checker = ra.RobotsChecker(AGENT, fetcher=_Instant())  # type: ignore[arg-type]
    stub = Stub()
    checked = RobotsTransport(checker, stub)
    request = httpx.Request("GET", "https://h.example/public/page")
    await checked.handle_async_request(request)
    best = {"checked": float("inf"), "stub": float("inf")}
    transports: tuple[tuple[str, httpx.AsyncBaseTransport], ...] = (
        ("checked", checked),
        ("stub", stub),
    )
    for _ in range(5):
        for name, transport in transports:
            gc.collect()
            start = time.process_time()
            for _ in range(calls):
                await transport.handle_async_request(request)
            best[name] = min(best[name], (time.process_time() - start) / calls)
    await checker.aclose()
    return best["checked"] - best["stub"]


# --- URL intake -------------------------------------------------------------------


class _Instant:
    """A fetcher answering at once with one robots.txt (no network)."""

    async def fetch(self, url: str, *, keep_body: bool = False) -> Any:
        import robots_async as ra

        return ra.FetchOutcome(url, url, 200, robots=ra.parse(ROBOTS))

    async def aclose(self) -> None:
        """Nothing to release."""


async def _per_call(kinds: tuple[str, ...], calls: int, origins: int = 1000) -> dict[str, float]:
    """CPU ns per cached ``allowed()`` call for each URL kind, best of 5."""
    import robots_async as ra

    checker = ra.RobotsChecker(AGENT, fetcher=_Instant())  # type: ignore[arg-type]
    texts = [f"https://h{i}.example/a/b.html?q={i}" for i in range(origins)]
    for text in texts:
        await checker.allowed(text)
    made: dict[str, list[Any]] = {"str": texts}
    if "yarl" in kinds:
        import yarl

        made["yarl"] = [yarl.URL(t) for t in texts]
    if "httpx" in kinds:
        import httpx

        made["httpx"] = [httpx.URL(t) for t in texts]
    result: dict[str, float] = {}
    for kind in kinds:
        urls = (made[kind] * (calls // origins + 1))[:calls]
        best = float("inf")
        for _ in range(5):
            gc.collect()
            start = time.process_time()
            for url in urls:
                await checker.allowed(url)
            best = min(best, time.process_time() - start)
        result[kind] = best / calls * 1e9
    await checker.aclose()
    return result


def hot_child(calls: int) -> None:
    """Print ns per cached str allowed() of the package on sys.path."""
    print(asyncio.run(_per_call(("str",), calls))["str"])


def baseline_ratios(baseline: Path, rounds: int, calls: int) -> list[float]:
    """Per-round ratio of this tree's str hot path to the baseline tree's."""

    def measure(tree: Path) -> float:
        env = {**os.environ, "PYTHONPATH": str(tree)}
        out = subprocess.run(
            [sys.executable, __file__, "--hot-child", str(calls)],
            env=env, check=True, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        return float(out.stdout.strip())

    ratios = []
    for r in range(rounds):
        if r % 2 == 0:
            ours, theirs = measure(ROOT), measure(baseline)
        else:
            theirs, ours = measure(baseline), measure(ROOT)
        ratios.append(ours / theirs)
    return ratios


def main() -> None:
    """Parse arguments, run both parts, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=16)
    parser.add_argument("--batch", type=int, default=40)
    parser.add_argument("--baseline", type=Path, help="source tree before issue 31")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--hot-child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve()
        return
    if args.hot_child:
        hot_child(args.hot_child)
        return
    sys.path.insert(0, str(ROOT))
    server, base = _start_server()
    try:
        ratios, cpu_ratios, request_time = asyncio.run(
            transport_overhead(base, args.rounds, args.batch)
        )
    finally:
        server.kill()
        server.wait()
    print(f"RobotsTransport vs plain httpx, {args.batch} GETs a batch, local server:")
    print(f"  wall        {_summary(ratios)}   target < 1.05x")
    print(f"  client CPU  {_summary(cpu_ratios)}")
    own = asyncio.run(own_cost())
    print(
        f"  the transport's own CPU a hop (stub inner transport): {own * 1e6:.1f} us = "
        f"{own / request_time:.1%} of a plain local request ({request_time * 1e6:.0f} us)"
    )
    costs = asyncio.run(_per_call(("str", "yarl", "httpx"), 100_000))
    print("cached checker.allowed() per call (CPU, best of 5):")
    print("  " + "  ".join(f"{kind} {ns:.0f} ns" for kind, ns in costs.items()))
    if args.baseline:
        hot = baseline_ratios(args.baseline, max(6, args.rounds // 2), 100_000)
        print("cached allowed(str), this tree / baseline (CPU, fresh process each):")
        print(f"  {_summary(hot)}")


if __name__ == "__main__":
    main()
