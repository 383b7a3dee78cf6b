"""Bulk ``robots-async check`` against slow origins (issue 12): does one slow robots.txt
stall the rest?

    python bench/bench_cli.py [--delay 5] [--slow 5] [--apart 1100] [--fast 2]

Serves ``--slow`` origins whose robots.txt takes ``--delay`` seconds and ``--fast``
instant ones on 127.0.0.1, writes an input file with a slow-origin URL every
``--apart`` lines (the rest on the fast origins), and runs the real command in a
subprocess, as completed and with ``--ordered``. Prints wall time per mode next to the
floor (one delay: every slow fetch overlaps) and the serial figure (slow x delay).
Run another checkout's CLI by putting it first on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

from aiohttp import web

ROBOTS = "User-agent: *\nDisallow: /private/\n"


async def start(delay: float) -> tuple[web.AppRunner, str]:
    """One origin whose robots.txt answers after ``delay`` seconds."""

    async def robots(request: web.Request) -> web.Response:
        await asyncio.sleep(delay)
        return web.Response(text=ROBOTS)

    app = web.Application()
    app.router.add_get("/robots.txt", robots)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner, f"http://127.0.0.1:{runner.addresses[0][1]}"


async def run_cli(path: Path, *extra: str) -> tuple[float, int, int]:
    """Wall time, exit status and output lines of one ``check --input`` run."""
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "robots_async",
        "check",
        "--input",
        str(path),
        *extra,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=os.environ,
    )
    out, _ = await proc.communicate()
    return time.monotonic() - started, proc.returncode or 0, out.count(b"\n")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=5.0, help="slow robots.txt seconds")
    parser.add_argument("--slow", type=int, default=5, help="slow origins")
    parser.add_argument("--apart", type=int, default=1_100, help="lines between slow URLs")
    parser.add_argument("--fast", type=int, default=2, help="fast origins")
    args = parser.parse_args()
    servers = [await start(args.delay) for _ in range(args.slow)]
    servers += [await start(0.0) for _ in range(args.fast)]
    slow, fast = [b for _, b in servers[: args.slow]], [b for _, b in servers[args.slow :]]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "urls.txt"
        lines = []
        for i in range(args.slow * args.apart):
            base = slow[i // args.apart] if i % args.apart == 0 else fast[i % args.fast]
            lines.append(f"{base}/page{i}")
        path.write_text("\n".join(lines) + "\n")
        print(f"{len(lines)} URLs, {args.slow} origins of {args.delay:g} s, {args.apart} apart")
        print(f"floor {args.delay:.1f} s, serial {args.slow * args.delay:.1f} s")
        for mode, extra in (("as completed", ()), ("--ordered", ("--ordered",))):
            elapsed, code, printed = await run_cli(path, *extra)
            print(f"{mode:<13} {elapsed:6.2f} s  exit {code}  {printed} lines")
    for runner, _ in servers:
        await runner.cleanup()


if __name__ == "__main__":
    asyncio.run(main())
