"""Hostile input to the command line: an endless robots.txt on stdin, URLs spelled
otherwise than they are sent, bytes that are not UTF-8."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from collections import Counter
from typing import TYPE_CHECKING

import pytest

from robots_async.checker.checker import RobotsChecker
from robots_async.cli import main
from robots_async.cli.bulk import read_lines_async

from .test_cli import robots_app

if TYPE_CHECKING:
    from pathlib import Path

    from ..conftest import Serve


async def _answers_before_eof(*argv: str, sent: int) -> tuple[int, bytes, bytes]:
    """Run the CLI with ``sent`` bytes of robots.txt on a stdin that stays open."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "robots_async",
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    assert proc.stderr is not None
    try:
        line = b"Disallow: /private\n"
        proc.stdin.write(b"User-agent: *\n" + line * (sent // len(line)))
        with contextlib.suppress(OSError):  # the reader stopped at its cap and left
            await asyncio.wait_for(proc.stdin.drain(), 20)
        # stdin is still open: an answer now means the reader stopped by itself.
        out, err = await asyncio.wait_for(
            asyncio.gather(proc.stdout.read(), proc.stderr.read()), 20
        )
        await asyncio.wait_for(proc.wait(), 20)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode is not None
    return proc.returncode, out, err


@pytest.mark.parametrize(
    ("argv", "sent", "code", "first"),
    [
        (["lint", "--max-bytes", "1000", "-"], 64_000, 1, b"<stdin>:"),
        (["check", "--robots", "-", "/private"], 1_200_000, 1, b"DISALLOWED  /private"),
        (["explain", "--robots", "-", "/x"], 1_200_000, 0, b"URL:"),
        (["lint", "--tdmrep", "--max-bytes", "1000", "-"], 64_000, 1, b"<stdin>: not-a-file"),
    ],
)
async def test_robots_from_stdin_is_read_to_its_cap_not_to_eof(
    argv: list[str], sent: int, code: int, first: bytes
) -> None:
    """An endless robots.txt on stdin (``yes | lint -``): read one byte past the size
    cap, then answered; the whole stream was read before (MemoryError at 1 GB)."""
    returncode, out, err = await _answers_before_eof(*argv, sent=sent)
    assert (returncode, err) == (code, b"")
    assert out.startswith(first)


def test_lint_of_a_file_over_the_cap_reads_past_it_by_one_byte(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file one byte over --max-bytes is truncated; one at the cap is not."""
    path = tmp_path / "robots.txt"
    path.write_bytes(b"User-agent: *\nDisallow: /x\n")  # 27 bytes
    assert main(["lint", "--max-bytes", "27", "--json", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["truncated"] is False
    assert main(["lint", "--max-bytes", "26", "--json", str(path)]) == 1
    assert json.loads(capsys.readouterr().out)["truncated"] is True


ODD = "User-agent: *\nDisallow: /a%20b\nDisallow: /private\n"


@pytest.mark.parametrize(
    "spelling", ["/a b", "/x/../private", "/%70rivate", "/a%20b/../private/y", "/./private"]
)
async def test_check_with_robots_file_judges_the_url_as_the_checker_does(
    spelling: str, serve: Serve, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``check --robots FILE`` and RobotsChecker on the same rules give the same verdict:
    the URL judged is the one a client sends (``/x/../private`` is ``/private``). It was
    judged as written, so ``/a b`` was allowed by the file, disallowed by the checker."""
    base = await serve(robots_app(Counter(), body=ODD))
    url = base + spelling
    async with RobotsChecker("Bot") as checker:
        decision = await checker.explain(url)
    assert not decision.verdict.allowed
    path = tmp_path / "robots.txt"
    path.write_text(ODD)
    assert await asyncio.to_thread(main, ["check", "--robots", str(path), url, spelling]) == 1
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in out] == ["DISALLOWED", "DISALLOWED"]
    assert out[0].split()[1] == decision.url
    assert await asyncio.to_thread(main, ["explain", "--robots", str(path), url]) == 1
    assert "verdict:     DISALLOWED" in capsys.readouterr().out


def _run(argv: list[str], stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    """The CLI in a process whose stdout and stdin are strict UTF-8 (en_US.UTF-8)."""
    env = dict(os.environ, PYTHONIOENCODING="utf-8:strict")
    return subprocess.run(
        [sys.executable, "-m", "robots_async", *argv],
        input=stdin,
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_argument_not_utf8_prints_without_traceback(tmp_path: Path) -> None:
    """An argument with a byte that is not UTF-8 (read as a lone surrogate) is printed
    escaped, and a JSON line is valid UTF-8 JSON; both were a UnicodeEncodeError."""
    robots = tmp_path / "robots.txt"
    robots.write_text(ODD)
    path = os.fsdecode(b"/\xff")
    result = _run(["explain", "--robots", str(robots), path])
    assert (result.returncode, result.stderr) == (0, b"")
    assert result.stdout.decode("utf-8").startswith("URL:         /\\udcff\n")
    result = _run(["check", "--json", path])  # a bad line: its record has the text
    assert result.returncode == 2
    assert json.loads(result.stdout.decode("utf-8"))["url"] == path


def test_stdin_lines_not_utf8_are_read_as_files_are(tmp_path: Path) -> None:
    """--input - with a byte that is not UTF-8: replaced as in a file (and on a pipe
    in the remote check); it was a UnicodeDecodeError traceback."""
    robots = tmp_path / "robots.txt"
    robots.write_text(ODD)
    result = _run(["check", "--robots", str(robots), "--input", "-"], stdin=b"/a\n/\xff\n")
    assert (result.returncode, result.stderr) == (0, b"")
    assert result.stdout.decode("utf-8").splitlines()[1] == "allowed  /%EF%BF%BD  (no rule matches)"


#: A URL list as Windows Notepad or Excel ("CSV UTF-8") saves it: a byte order mark,
#: CRLF line ends, a blank line, a comment, padding and a duplicate.
NOTEPAD = "\ufeff{0}/private/x\r\n\r\n# later\r\n  {0}/a  \r\n{0}/private/x\r\n"


@pytest.mark.parametrize("source", ["file", "stdin-file", "stdin-pipe", "robots-file"])
async def test_input_with_byte_order_mark_and_crlf(
    source: str, serve: Serve, tmp_path: Path
) -> None:
    """A UTF-8 byte order mark opens the file, not its first URL: it was read as part
    of line 1 ('relative URL: '\\ufeffhttp://...'), and the run exited 2."""
    base = await serve(robots_app(Counter(), body=ODD))
    data = NOTEPAD.format(base).encode()
    urls = tmp_path / "urls.txt"
    urls.write_bytes(data)
    robots = tmp_path / "robots.txt"
    robots.write_text(ODD)
    argv = ["check", "--input", "-" if source.startswith("stdin") else str(urls)]
    if source == "robots-file":
        argv += ["--robots", str(robots)]
    with urls.open("rb") as handle:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "robots_async",
            *argv,
            stdin=handle if source == "stdin-file" else asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(
            proc.communicate(data if source == "stdin-pipe" else None), 60
        )
    assert (proc.returncode, err) == (1, b"")
    assert sorted(out.decode().splitlines()) == [
        f"DISALLOWED  {base}/private/x  (line 3: Disallow: /private)",
        f"DISALLOWED  {base}/private/x  (line 3: Disallow: /private)",
        f"allowed  {base}/a  (no rule matches)",
    ]


async def test_long_line_on_a_pipe_is_read_in_linear_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A 32 MB line on a piped stdin: its pieces are joined once, at its end. Each
    64 KiB read was added to the pieces so far (``rest + chunk``), a quadratic copy:
    an 80 MB line took 37 s through a pipe, 1.7 s from a file."""
    read_fd, write_fd = os.pipe()
    line = b"https://e.com/" + b"a" * (32 << 20) + b"\nhttps://e.com/b"

    def produce() -> None:
        with open(write_fd, "wb") as pipe:
            pipe.write(line)

    with os.fdopen(read_fd, encoding="utf-8") as stdin:
        monkeypatch.setattr(sys, "stdin", stdin)
        writer = asyncio.create_task(asyncio.to_thread(produce))
        started = time.monotonic()
        got = [line.text async for line in read_lines_async([], "-")]
        elapsed = time.monotonic() - started
        await writer
    assert [len(text) for text in got] == [14 + (32 << 20), 15]
    # Linear: 0.1 s here; the quadratic copy took 6 s (bound generous for a loaded box).
    assert elapsed < 3


async def test_fetch_body_to_a_closed_pipe_under_unbuffered_python(serve: Serve) -> None:
    """``PYTHONUNBUFFERED=1 fetch --body | head``: the body is written whole or the
    broken pipe is reported (exit 1, as every command does). stdout's binary layer is
    then a raw file whose write() may write only part: 64 KiB went out, the rest was
    dropped unseen and the command exited 0."""
    body = b"User-agent: *\n" + b"Disallow: /private\n" * 16_000  # 304 KB
    base = await serve(robots_app(Counter(), body=body.decode()))

    def read_head_then_close() -> tuple[int, bytes, bytes]:
        with subprocess.Popen(
            [sys.executable, "-m", "robots_async", "fetch", "--body", base],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(os.environ, PYTHONUNBUFFERED="1"),
        ) as proc:
            assert proc.stdout is not None
            assert proc.stderr is not None
            head = b"".join(iter(proc.stdout.readline, b"\n"))  # to the blank line
            proc.stdout.close()  # the reader goes away while the body is written
            err = proc.stderr.read()
            return proc.wait(timeout=20), head, err

    code, head, err = await asyncio.to_thread(read_head_then_close)
    assert head.startswith(b"robots.txt:")
    assert (code, err) == (1, b"")


@pytest.mark.parametrize("agent", ["Bot/1\r\nX-Evil: 1", "Bot/1\n", "Bot\x01/1", "Bot/1\x7f"])
@pytest.mark.parametrize("command", ["check", "explain", "fetch", "lint", "sitemaps"])
async def test_agent_no_header_can_carry_is_a_usage_error(
    agent: str, command: str, serve: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    """An --agent with a control character (RFC 9110 §5.5: no field value holds one)
    stops at startup, exit 2. It was accepted: aiohttp refused every request
    ("Forbidden control character"), and check answered 'robots.txt unreachable:
    everything disallowed' (exit 1) for every URL."""
    hits: Counter[str] = Counter()
    base = await serve(robots_app(hits))
    assert await asyncio.to_thread(main, ["--agent", agent, command, base + "/x"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("robots-async: error: control character in User-Agent ")
    assert not hits


async def test_input_from_dev_null_ends(serve: Serve) -> None:
    """``check --input - URL < /dev/null`` (cron, nohup, CI): an empty list, then the
    argument checked. /dev/null is a character device, was taken for a terminal and
    handed to the event loop, which cannot poll it (EPERM): the command hung."""
    base = await serve(robots_app(Counter(), body=ODD))
    proc = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "robots_async", "check", "--input", "-", f"{base}/a b"),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 30)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert (proc.returncode, err) == (1, b"")
    assert out.decode() == f"DISALLOWED  {base}/a%20b  (line 2: Disallow: /a%20b)\n"


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--input", "-", "https://e.com/"],
        ["check", "--robots", "-", "/x"],
        ["check", "--robots", "-", "--input", "-"],
        ["explain", "--robots", "-", "/x"],
        ["lint", "-"],
        ["lint", "--tdmrep", "-"],
    ],
)
def test_closed_stdin_is_a_usage_error(argv: list[str]) -> None:
    """'-' with stdin closed (``<&-``): exit 2 saying so. Python has no sys.stdin then,
    and it was a TypeError or AttributeError traceback."""
    result = subprocess.run(
        [sys.executable, "-m", "robots_async", *argv],
        preexec_fn=lambda: os.close(0),  # the child has no stdin
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr.startswith(b"robots-async: error: ")
    assert b"stdin" in result.stderr
    assert b"Traceback" not in result.stderr
