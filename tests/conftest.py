"""Fixtures shared by the top-level tests (the command line's) and by every folder."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import TYPE_CHECKING

import pytest
from aiohttp import web

from tests.helpers import tmpfs

if TYPE_CHECKING:
    from pathlib import Path

#: Starts an aiohttp app on 127.0.0.1 and returns its base URL.
Serve = Callable[[web.Application], Awaitable[str]]


@pytest.fixture
async def serve() -> AsyncIterator[Serve]:
    """Start aiohttp apps on 127.0.0.1 (each on its own port: its own origin)."""
    runners: list[web.AppRunner] = []

    async def start(app: web.Application) -> str:
        runner = web.AppRunner(app)
        await runner.setup()
        runners.append(runner)
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        return f"http://127.0.0.1:{runner.addresses[0][1]}"

    yield start
    for runner in runners:
        await runner.cleanup()


@pytest.fixture
def read_only_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory on a read-only file system (root ignores a chmod)."""
    with tmpfs(tmp_path / "ro", "ro,size=64k", "a read-only tmpfs") as mount:
        yield mount
