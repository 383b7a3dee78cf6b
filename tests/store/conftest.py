"""Fixtures for the store tests: the pipeline's real aiohttp servers on 127.0.0.1,
and store worker subprocesses."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..pipeline.conftest import Server, make_server, server

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

__all__ = ["Server", "StoreWorker", "make_server", "server"]

HERE = Path(__file__).parent


class StoreWorker:
    """A helper script run as a subprocess, speaking JSON lines on stdin and stdout."""

    def __init__(self, proc: asyncio.subprocess.Process, log: Path) -> None:
        self.proc = proc
        self.log = log

    @classmethod
    async def start(cls, log: Path, script: str, *args: str) -> StoreWorker:
        """Start ``script args...`` (a file of this directory)."""
        with log.open("wb") as stderr:
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                str(HERE / script),
                *args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=stderr,
                limit=1 << 24,
            )
        return cls(proc, log)

    async def send(self, message: dict[str, Any]) -> None:
        """Write one JSON line to the worker."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        await self.proc.stdin.drain()

    async def read(self, timeout: float = 60.0) -> dict[str, Any]:
        """The worker's next JSON line."""
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), timeout)
        if not line:
            await self.proc.wait()
            stderr = self.log.read_text(errors="replace")[-4000:]
            raise AssertionError(f"worker exited ({self.proc.returncode}):\n{stderr}")
        report: dict[str, Any] = json.loads(line)
        return report

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


@pytest.fixture
async def start_worker(tmp_path: Path) -> AsyncIterator[Callable[..., Awaitable[StoreWorker]]]:
    """Factory: ``await start_worker(script, *args)``; every worker is reaped at teardown."""
    started: list[StoreWorker] = []

    async def start(script: str, *args: str) -> StoreWorker:
        worker = await StoreWorker.start(tmp_path / f"worker-{len(started)}.log", script, *args)
        started.append(worker)
        return worker

    yield start
    await asyncio.gather(*(worker.close() for worker in started))
