"""Hostile input to the command line: an endless robots.txt on stdin."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from typing import TYPE_CHECKING

import pytest

from robots_async.cli import main

if TYPE_CHECKING:
    from pathlib import Path


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
