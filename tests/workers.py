"""A helper script run as a subprocess that speaks JSON lines on stdin and stdout."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from typing_extensions import Self


class JsonLinesWorker:
    """``python script args...`` with stdin/stdout pipes and stderr in a log file."""

    def __init__(self, proc: asyncio.subprocess.Process, log: Path) -> None:
        self.proc = proc
        self.log = log

    @classmethod
    async def spawn(cls, log: Path, script: Path, *args: str) -> Self:
        """Start ``script args...``."""
        with log.open("wb") as stderr:
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                str(script),
                *args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=stderr,
                limit=1 << 24,
            )
        return cls(proc, log)

    async def send_json(self, message: dict[str, Any]) -> None:
        """Write one JSON line to the worker."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        await self.proc.stdin.drain()

    async def read(self, timeout: float = 60.0) -> dict[str, Any]:
        """The worker's next JSON line (AssertionError with its stderr if it exited)."""
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), timeout)
        if not line:
            await self.proc.wait()
            raise AssertionError(
                f"worker exited ({self.proc.returncode}):\n{self.stderr()[-4000:]}"
            )
        report: dict[str, Any] = json.loads(line)
        return report

    def stderr(self) -> str:
        """What the worker wrote to stderr so far."""
        return self.log.read_text(errors="replace")

    async def close(self) -> None:
        """Close stdin (the worker exits) and reap it; kill it if it hangs."""
        if self.proc.returncode is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                await asyncio.wait_for(self.proc.wait(), 15)
            except asyncio.TimeoutError:
                self.proc.kill()
                await self.proc.wait()
