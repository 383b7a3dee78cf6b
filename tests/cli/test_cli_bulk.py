"""``robots-async check`` at scale: no origin stalls another, bad lines, progress, logging.

Real aiohttp servers on 127.0.0.1; the command runs in a worker thread (its own event
loop) while the servers answer on the test's loop.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import time
from collections import Counter
from typing import TYPE_CHECKING

import pytest
from aiohttp import web

from robots_async.cli import main

if TYPE_CHECKING:
    from pathlib import Path

    from ..conftest import Serve

ROBOTS = "User-agent: *\nDisallow: /private/\n"
#: Seconds a slow origin takes to answer robots.txt.
SLOW = 1.5
#: Lines between two slow origins: more than the old 1,024-check window.
APART = 1_100


def robots_app(hits: Counter[str], *, delay: float = 0.0) -> web.Application:
    """/robots.txt answered after ``delay`` seconds, requests counted per host."""

    async def robots(request: web.Request) -> web.Response:
        hits[request.host] += 1
        await asyncio.sleep(delay)
        return web.Response(text=ROBOTS)

    app = web.Application()
    app.router.add_get("/robots.txt", robots)
    return app


async def slow_and_fast(serve: Serve, tmp_path: Path, hits: Counter[str]) -> tuple[Path, list[str]]:
    """5 slow origins, one every 1,100 lines (the issue's case) among URLs of 2 fast ones."""
    slow = [await serve(robots_app(hits, delay=SLOW)) for _ in range(5)]
    fast = [await serve(robots_app(hits)) for _ in range(2)]
    urls = []
    for i in range(5 * APART):
        base = slow[i // APART] if i % APART == 0 else fast[i % 2]
        urls.append(f"{base}/page{i}")
    path = tmp_path / "urls.txt"
    path.write_text("\n".join(urls) + "\n")
    return path, slow


@pytest.mark.parametrize("ordered", [False, True])
async def test_slow_origins_do_not_stall_each_other(
    serve: Serve, tmp_path: Path, capsys: pytest.CaptureFixture[str], ordered: bool
) -> None:
    """5 origins of 1.5 s each, 1,100 lines apart: about 1.5 s in all, not 5 x 1.5 s.

    As completed (default), every fast URL is printed before any slow one; with
    --ordered, the output is in input order all the same.
    """
    hits: Counter[str] = Counter()
    path, slow = await slow_and_fast(serve, tmp_path, hits)
    args = ["check", "--input", str(path), *(["--ordered"] if ordered else [])]
    started = time.monotonic()
    code = await asyncio.to_thread(main, args)
    elapsed = time.monotonic() - started
    urls = path.read_text().split()
    printed = [line.split()[1] for line in capsys.readouterr().out.splitlines()]
    assert code == 0
    assert sorted(printed) == sorted(urls)
    assert elapsed < 3 * SLOW, elapsed  # serially it would be 5 * SLOW = 7.5 s
    assert sorted(hits.values()) == [1] * 7
    slow_lines = [i for i, url in enumerate(printed) if url.startswith(tuple(slow))]
    if ordered:
        assert printed == urls
    else:
        assert slow_lines == list(range(5 * APART - 5, 5 * APART))


async def test_bad_lines_reported_with_numbers_and_the_run_goes_on(
    serve: Serve, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A relative URL and an ftp URL: each reported with file and line, others checked,
    exit 2 (bad input wins over "disallowed")."""
    base = await serve(robots_app(Counter()))
    path = tmp_path / "urls.txt"
    path.write_text(f"# urls\n{base}/a\nnot a url\n\n{base}/private/b\nftp://x.test/\n")
    code = await asyncio.to_thread(main, ["check", "--ordered", "--input", str(path)])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out.splitlines() == [
        f"allowed  {base}/a  (no rule matches)",
        f"DISALLOWED  {base}/private/b  (line 2: Disallow: /private/)",
    ]
    assert captured.err.splitlines() == [
        (
            f"robots-async: {path}:3: relative URL: 'not a url'; give a full URL "
            "(https://HOST/PATH), or a robots.txt file to check it against with --robots FILE"
        ),
        f"robots-async: {path}:6: unsupported scheme 'ftp': 'ftp://x.test/'",
    ]


async def test_bad_line_in_json_is_a_record(
    serve: Serve, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--json: a bad line is an object with its input position and error, in order."""
    base = await serve(robots_app(Counter()))
    path = tmp_path / "urls.txt"
    path.write_text(f"{base}/a\nnope\n")
    code = await asyncio.to_thread(main, ["check", "--json", "--ordered", "--input", str(path)])
    first, second = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    assert code == 2
    assert first["allowed"] is True
    assert second == {
        "url": "nope",
        "input": f"{path}:2",
        "error": "relative URL: 'nope'; give a full URL (https://HOST/nope), "
        "or a robots.txt file to check it against with --robots FILE",
    }


async def test_reason_of_an_unreachable_robots_txt(
    serve: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    """Text output names what happened to robots.txt: a 503, a refused connection."""

    async def down(request: web.Request) -> web.Response:
        return web.Response(status=503)

    app = web.Application()
    app.router.add_get("/robots.txt", down)
    base = await serve(app)
    refused = "http://127.0.0.1:9/x"  # the discard port: nothing listens there
    code = await asyncio.to_thread(main, ["--timeout", "5", "check", f"{base}/x", refused])
    lines = sorted(capsys.readouterr().out.splitlines())
    assert code == 1
    assert lines[0] == (
        f"DISALLOWED  {base}/x  (robots.txt unreachable (HTTP 503): everything disallowed)"
    )
    assert lines[1].startswith(f"DISALLOWED  {refused}  (robots.txt unreachable (connect: ")
    assert lines[1].endswith("): everything disallowed)")


async def test_concurrency_bounds_robots_fetches(
    serve: Serve, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--concurrency 2 over 6 origins: at most 2 robots.txt requests in flight at once."""
    state = {"now": 0, "peak": 0}

    async def robots(request: web.Request) -> web.Response:
        state["now"] += 1
        state["peak"] = max(state["peak"], state["now"])
        await asyncio.sleep(0.2)
        state["now"] -= 1
        return web.Response(text=ROBOTS)

    bases = []
    for _ in range(6):
        app = web.Application()
        app.router.add_get("/robots.txt", robots)
        bases.append(await serve(app))
    path = tmp_path / "urls.txt"
    path.write_text("".join(f"{base}/p{i}\n" for base in bases for i in range(3)))
    code = await asyncio.to_thread(main, ["check", "--concurrency", "2", "--input", str(path)])
    assert code == 0
    assert len(capsys.readouterr().out.splitlines()) == 18
    assert state["peak"] == 2


async def test_progress_bar_advances_while_a_slow_origin_waits(
    serve: Serve,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """20 fast answers then 1.5 s of waiting: the bar shows 20/21 before 21/21."""
    base = await serve(robots_app(Counter()))
    slow = await serve(robots_app(Counter(), delay=SLOW))
    path = tmp_path / "urls.txt"
    path.write_text(f"{slow}/s\n" + "".join(f"{base}/p{i}\n" for i in range(20)))
    monkeypatch.setattr("sys.stderr.isatty", lambda: True)
    code = await asyncio.to_thread(main, ["check", "--input", str(path)])
    captured = capsys.readouterr()
    assert code == 0
    err = captured.err
    assert "20/21" in err
    assert err.index("20/21") < err.index("21/21")
    assert len(captured.out.splitlines()) == 21
    assert "%|" not in captured.out  # the bar never lands on stdout


async def test_no_progress_flag(
    serve: Serve,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--no-progress: nothing on stderr even on a terminal; --progress forces a bar."""
    base = await serve(robots_app(Counter()))
    path = tmp_path / "urls.txt"
    path.write_text(f"{base}/a\n{base}/b\n")
    monkeypatch.setattr("sys.stderr.isatty", lambda: True)
    assert await asyncio.to_thread(main, ["check", "--no-progress", "--input", str(path)]) == 0
    assert capsys.readouterr().err == ""
    monkeypatch.setattr("sys.stderr.isatty", lambda: False)
    assert await asyncio.to_thread(main, ["check", "--progress", f"{base}/a"]) == 0
    assert "1/1" in capsys.readouterr().err


async def test_verbose_logs_each_robots_fetch(
    serve: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    """-v: one INFO line per robots.txt fetched, on stderr; stdout unchanged."""
    base = await serve(robots_app(Counter()))
    code = await asyncio.to_thread(main, ["-v", "check", f"{base}/a", f"{base}/b"])
    captured = capsys.readouterr()
    assert code == 0
    assert captured.err.count(f"INFO robots_async.cli: {base}/robots.txt: HTTP 200") == 1
    assert len(captured.out.splitlines()) == 2


def test_empty_input_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An --input with only comments checks nothing: usage error."""
    path = tmp_path / "urls.txt"
    path.write_text("# nothing\n\n")
    assert main(["check", "--input", str(path)]) == 2
    assert "no URL given" in capsys.readouterr().err


async def test_ordered_window_bounds_the_look_ahead(serve: Serve) -> None:
    """--ordered with a window of 50 and a slow first line: checking runs ahead by the
    window (not stalled at 1, not unbounded), then reading waits for the slow line."""
    from robots_async import RobotsChecker
    from robots_async.cli.bulk import Bulk, Line

    slow = await serve(robots_app(Counter(), delay=0.5))
    fast = await serve(robots_app(Counter()))
    lines = [Line(0, "argument 1", f"{slow}/s")]
    lines += [Line(i, f"argument {i + 1}", f"{fast}/p{i}") for i in range(1, 500)]
    emitted: list[int] = []
    checks_at_first: list[int] = []
    async with RobotsChecker("BenchBot/1.0") as checker:

        def emit(line: Line, decision: object, error: str | None) -> None:
            if not emitted:
                checks_at_first.append(checker.stats.checks)
            emitted.append(line.index)

        await Bulk(checker, emit, ordered=True, window=50).run(lines)
    assert emitted == list(range(500))
    # 49 fast lines checked while line 0 waited, then line 0 itself.
    assert checks_at_first == [50]


async def test_trickling_stdin_does_not_block_fetches(serve: Serve) -> None:
    """``producer | check --input -``: while the producer is silent, the robots.txt of
    the line already read is fetched (stdin is read without blocking the loop)."""
    arrivals: list[float] = []

    async def robots(request: web.Request) -> web.Response:
        arrivals.append(time.monotonic())
        return web.Response(text=ROBOTS)

    app = web.Application()
    app.router.add_get("/robots.txt", robots)
    base = await serve(app)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "robots_async",
        "check",
        "--input",
        "-",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdin is not None
    proc.stdin.write(f"{base}/a\n".encode())
    await proc.stdin.drain()
    written = time.monotonic()
    await asyncio.sleep(2.5)  # the producer is silent, stdin stays open
    silent_until = time.monotonic()
    proc.stdin.write(f"{base}/private/b\nnot a url\n".encode())
    proc.stdin.close()
    out, err = await asyncio.wait_for(proc.communicate(), timeout=60)
    assert proc.returncode == 2
    assert len(arrivals) == 1
    assert written < arrivals[0] < silent_until, "robots.txt fetched only once stdin moved on"
    assert sorted(out.decode().split("\n")[:2]) == [
        f"DISALLOWED  {base}/private/b  (line 2: Disallow: /private/)",
        f"allowed  {base}/a  (no rule matches)",
    ]
    assert err.decode().startswith("robots-async: <stdin>:3: relative URL: 'not a url'; ")


async def test_bar_and_results_share_a_terminal_cleanly(serve: Serve, tmp_path: Path) -> None:
    """stdout and stderr on one real terminal (a pty, 100 columns): the bar is drawn,
    and is cleared before each result line, so every result line reads intact."""
    pty = pytest.importorskip("pty")
    import fcntl
    import struct
    import termios

    base = await serve(robots_app(Counter()))
    slow = await serve(robots_app(Counter(), delay=0.5))
    path = tmp_path / "urls.txt"
    path.write_text("".join(f"{(base, slow)[i % 2]}/p{i}\n" for i in range(100)))
    primary, secondary = pty.openpty()
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "robots_async", "check", "--input", str(path),
        stdin=asyncio.subprocess.DEVNULL, stdout=secondary, stderr=secondary,
    )  # fmt: skip
    os.close(secondary)
    data = bytearray()
    while True:
        try:
            chunk = await asyncio.to_thread(os.read, primary, 65536)
        except OSError:  # EIO: the process closed the terminal
            break
        if not chunk:
            break
        data += chunk
    os.close(primary)
    assert await proc.wait() == 0
    rows = data.decode().replace("\r\n", "\n").split("\n")
    # What the terminal shows of each row is what follows its last carriage return.
    shown = [row.split("\r")[-1].rstrip() for row in rows]
    results = [row for row in shown if row.startswith(("allowed", "DISALLOWED"))]
    assert len(results) == 100
    for row in results:
        assert re.fullmatch(r"allowed  http://127\.0\.0\.1:\d+/p\d+  \(no rule matches\)", row)
    draws = [part for row in rows for part in row.split("\r") if "url/s" in part]
    assert any("100/100" in part for part in draws)
    assert len(draws) >= 10
