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
        # (Each call reading the row fails: the reservation, and the pause re-check
        # after a sleep of RECHECK_AFTER or more.)
        assert checker.stats.pace_store_errors >= 1


async def test_a_corrupt_row_of_one_origin_leaves_the_others_shared(
    server: Server, tmp_path: Path
) -> None:
    """One origin's unreadable pacing row is that origin's failure, not the store's:
    another origin is still reserved in the store, which a second checker sharing it
    sees (Crawl-delay 1: it must wait). The failure took the whole process off the
    store (every origin paced alone) before."""
    server.text("/robots.txt", "User-agent: *\nCrawl-delay: 1\n")
    path = tmp_path / "pace.sqlite"
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    bad, good = server.url("/a"), server.url("/b").replace("127.0.0.1", "localhost")
    async with (
        ra.SQLiteStore(path) as store,
        ra.RobotsChecker("PaceBot/1.0", store=store, sleep=sleep) as first,
        ra.RobotsChecker("PaceBot/1.0", store=store, sleep=sleep) as second,
    ):
        assert await first.wait(bad) == 0.0
        with sqlite3.connect(path) as conn:
            assert conn.execute("UPDATE pacing SET last = 'soon'").rowcount == 1
        await asyncio.wait_for(first.wait(bad), 10)
        assert first.stats.pace_store_errors >= 1
        assert await first.wait(good) == 0.0  # reserved in the store...
        assert await second.wait(good) > 0.5  # ...so the other checker waits its turn
        assert second.stats.pace_store_errors == 0
