"""A pacing store holding nonsense (a corrupt, edited or hostile row) is a store that
failed: the wait is paced within this process and counted, never an untyped crash of
wait() nor a sleep without end ("pacing never stops and a crawl never fails for it",
docs/politeness.md)."""

from __future__ import annotations

import asyncio
import sqlite3
from typing import TYPE_CHECKING

import pytest

import robots_async as ra

if TYPE_CHECKING:
    from pathlib import Path

    from ..servers import Server


@pytest.mark.parametrize(
    "edit",
    [
        "failures = 'abc'",
        "last = 'soon'",
        "last = 9e999",
        "failed_at = 'x', failures = 1",
        "failures = 9e999",
    ],
    ids=["text-failures", "text-last", "infinite-last", "text-failed_at", "infinite-failures"],
)
async def test_a_corrupt_sqlite_pacing_row_is_a_store_failure(
    server: Server, tmp_path: Path, edit: str
) -> None:
    """Found: 'abc' raised ValueError (int()) and 'soon' TypeError out of wait(); an
    infinite last made wait() sleep inf seconds (forever). Now StoreError: paced here,
    from the visit reserved before (Crawl-delay 1), counted in pace_store_errors."""
    server.text("/robots.txt", "User-agent: *\nCrawl-delay: 1\n")
    path = tmp_path / "pace.sqlite"
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    async with (
        ra.SQLiteStore(path) as store,
        ra.RobotsChecker("PaceBot/1.0", store=store, sleep=sleep) as checker,
    ):
        url = server.url("/a")
        assert await checker.wait(url) == 0.0
        with sqlite3.connect(path) as conn:
            assert conn.execute(f"UPDATE pacing SET {edit}").rowcount == 1
        seconds = await asyncio.wait_for(checker.wait(url), 10)
        assert 0.0 < seconds <= 1.0
        assert slept == [seconds]
        assert checker.stats.pace_store_errors == 1
