"""Fixtures for the cache and store tests: real aiohttp servers on 127.0.0.1
(tests/servers.py) and store worker subprocesses."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..servers import *  # noqa: F403 (fixtures are found by name in a conftest)
from ..servers import __all__ as _shared
from ..workers import JsonLinesWorker

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

__all__ = [*_shared, "StoreWorker", "start_worker"]  # noqa: PLE0604

HERE = Path(__file__).parent


class StoreWorker(JsonLinesWorker):
    """A helper script of this directory run as a subprocess."""

    async def send(self, message: dict[str, Any]) -> None:
        """Write one JSON line to the worker."""
        await self.send_json(message)


@pytest.fixture
async def start_worker(tmp_path: Path) -> AsyncIterator[Callable[..., Awaitable[StoreWorker]]]:
    """Factory: ``await start_worker(script, *args)``; every worker is reaped at teardown."""
    started: list[StoreWorker] = []

    async def start(script: str, *args: str) -> StoreWorker:
        worker = await StoreWorker.spawn(
            tmp_path / f"worker-{len(started)}.log", HERE / script, *args
        )
        started.append(worker)
        return worker

    yield start
    await asyncio.gather(*(worker.close() for worker in started))
