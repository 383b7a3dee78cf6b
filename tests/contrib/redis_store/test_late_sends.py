"""A page sent after its turn moves every worker's next turn (core.pacing.PaceState.sent):
each store keeps the late send, and a second checker sharing the store sends its next
page an interval after the late one, not an interval after the late one's turn."""

from __future__ import annotations

import asyncio
import itertools
import sqlite3
import time
from typing import TYPE_CHECKING

import aiohttp
import pytest
from aiohttp import web

import robots_async as ra
from robots_async.core.errors import InvalidRecordError
from robots_async.core.pacing import PaceRule

from .conftest import pace_store

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

RULE = PaceRule(interval=1.0, max_retry_after=60.0, first_backoff=2.0, max_backoff=30.0)
UNIT = "http://127.0.0.1:1"
#: A process woken this late (descheduled on a busy machine; CI's run sent a page 0.21
#: s after its turn, and the next worker's page came 0.79 s after it).
LATE = 0.4


@pytest.mark.parametrize("kind", ["memory", "sqlite", "redis"])
async def test_a_late_send_moves_the_next_reservation_and_the_recheck(
    request: pytest.FixtureRequest, tmp_path: Path, prefix: str, kind: str
) -> None:
    async with pace_store(kind, request, tmp_path, prefix) as store:
        assert (await store.reserve(UNIT, RULE, 0.0)).wait == 0.0
        await asyncio.sleep(0.3)
        before = time.monotonic()
        await store.sent_late(UNIT, RULE)
        # A worker that reserved before the late send asks again as its turn comes.
        left = await store.pause_left(UNIT, RULE, 0.0)
        assert 1.0 - (time.monotonic() - before) - 0.01 <= left <= 1.0, left
        # A worker reserving now: an interval after the late page (0.7 s without it).
        after = await store.reserve(UNIT, RULE, 0.0)
        assert after.reserved
        assert 1.0 - (time.monotonic() - before) - 0.01 <= after.wait <= 1.0, after


@pytest.mark.parametrize("kind", ["memory", "sqlite", "redis"])
async def test_a_page_held_past_its_turn_keeps_an_interval_after_anothers(
    request: pytest.FixtureRequest, tmp_path: Path, prefix: str, kind: str
) -> None:
    """left_at_send: a page held past its own turn is not short of anything while no
    other turn began; once another worker's turn began (at 1 s), it is short of an
    interval after that one's page, and once a third turn (2 s) is reserved, of an
    interval after that one's (sent at 2 s, it went with the third page)."""
    async with pace_store(kind, request, tmp_path, prefix) as store:
        start = time.monotonic()
        assert (await store.reserve(UNIT, RULE, 0.0)).wait == 0.0  # ours, at 0 s
        other = await store.reserve(UNIT, RULE, 0.0)  # another worker's, at 1 s
        assert other.reserved
        assert other.wait > 0.9
        pause, short = await store.left_at_send(UNIT, RULE, time.monotonic() - start, 0.0)
        assert (pause, short) == (0.0, 0.0)  # the turn reserved at 1 s has not begun
        await asyncio.sleep(max(0.0, start + 1.2 - time.monotonic()))
        held = time.monotonic() - start
        pause, short = await store.left_at_send(UNIT, RULE, held, 0.0)
        assert pause == 0.0
        assert 2.0 - (time.monotonic() - start) - 0.02 <= short <= 2.0 - held + 0.02, short
        third = await store.reserve(UNIT, RULE, 0.0)  # queued at 1 s: reserved at 2 s
        assert third.reserved
        assert 0.0 < third.wait <= 0.85
        held = time.monotonic() - start
        _, short = await store.left_at_send(UNIT, RULE, held, 0.0)
        assert 3.0 - (time.monotonic() - start) - 0.02 <= short <= 3.0 - held + 0.02, short


async def test_sqlite_keeps_late_sends_apart_from_an_earlier_versions_table(
    tmp_path: Path,
) -> None:
    """The late send has a table of its own: a process of an earlier version writes
    ``pacing`` rows with a 7-value INSERT, which a new column would have broken."""
    path = tmp_path / "pace.sqlite"
    async with ra.SQLiteStore(path) as store:
        await store.reserve(UNIT, RULE, 0.0)
        await store.sent_late(UNIT, RULE)
    with sqlite3.connect(path) as conn:
        conn.execute(
            "INSERT OR REPLACE INTO pacing VALUES (?, ?, ?, ?, ?, ?, ?)",
            (UNIT, time.time(), None, None, None, 0, time.time() + 60),
        )
        assert [r[0] for r in conn.execute("SELECT unit FROM pace_sent")] == [UNIT]
    async with ra.SQLiteStore(path) as store:
        assert await store.pause_left(UNIT, RULE, 0.0) > 0.9


async def test_a_damaged_sqlite_late_send_is_an_invalid_record(tmp_path: Path) -> None:
    path = tmp_path / "pace.sqlite"
    async with ra.SQLiteStore(path) as store:
        await store.sent_late(UNIT, RULE)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE pace_sent SET at = 'soon'")
    async with ra.SQLiteStore(path) as store:
        with pytest.raises(InvalidRecordError):
            await store.reserve(UNIT, RULE, 0.0)


class CountingStore(ra.MemoryStore):
    """A MemoryStore that counts the late sends recorded in it."""

    def __init__(self) -> None:
        super().__init__()
        self.late_sends = 0

    async def sent_late(self, unit: str, rule: PaceRule) -> None:
        self.late_sends += 1
        await super().sent_late(unit, rule)


class Site:
    """A Crawl-delay: 1 origin on 127.0.0.1 that logs when each page arrives, and who
    sent it; ``/slow`` answers in 1.5 s."""

    def __init__(self) -> None:
        self.pages: list[tuple[float, str]] = []
        self.port = 0

    def url(self, path: str = "/page") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def gaps(self) -> list[float]:
        times = sorted(at for at, _ in self.pages)
        return [round(b - a, 3) for a, b in itertools.pairwise(times)]

    async def robots(self, _: web.Request) -> web.Response:
        return web.Response(text="User-agent: *\nCrawl-delay: 1\n")

    async def page(self, request: web.Request) -> web.Response:
        self.pages.append((time.monotonic(), request.headers.get("X-Worker", "?")))
        if request.path == "/slow":
            await asyncio.sleep(1.5)
        return web.Response(text="page")


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    served = Site()
    app = web.Application()
    app.router.add_get("/robots.txt", served.robots)
    app.router.add_get("/{tail:.*}", served.page)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    tcp = web.TCPSite(runner, "127.0.0.1", 0)
    await tcp.start()
    served.port = tcp._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield served
    await runner.cleanup()


async def _late_sleep(seconds: float) -> None:
    """A process woken ``LATE`` s after each sleep (descheduled on a busy machine)."""
    await asyncio.sleep(seconds + LATE)


@pytest.mark.parametrize("kind", ["memory", "sqlite", "redis"])
async def test_a_worker_woken_late_moves_the_other_workers_next_page(
    request: pytest.FixtureRequest, tmp_path: Path, prefix: str, kind: str, site: Site
) -> None:
    """Worker A's second page is due at 1 s and goes at 1.4 s (A woke late); worker B,
    queued behind that turn, took the turn at 2 s: it sent at 2.0 s, 0.6 s after A's
    page. B now keeps an interval after A's page (its own turn given up, a new one)."""
    async with (
        pace_store(kind, request, tmp_path, prefix) as store,
        ra.RobotsChecker("PaceBot/1.0", store=store, sleep=_late_sleep) as first,
        ra.RobotsChecker("PaceBot/1.0", store=store) as second,
        aiohttp.ClientSession() as session,
    ):

        async def visit(checker: ra.RobotsChecker, worker: str) -> None:
            await checker.wait(site.url())
            async with session.get(site.url(), headers={"X-Worker": worker}) as response:
                assert response.status == 200

        await first.robots(site.url())
        await second.robots(site.url())
        await visit(first, "a")
        late = asyncio.create_task(visit(first, "a"))  # reserves the turn at 1 s
        await asyncio.sleep(0.1)
        await visit(second, "b")
        await late
    assert [who for _, who in sorted(site.pages)] == ["a", "a", "b"]
    assert min(site.gaps()) >= 0.95, site.gaps()


async def _on_time(seconds: float) -> None:
    """A sleep that ends before its time (the loop's clock): every wake is on time."""


async def test_a_page_sent_on_its_turn_records_nothing(site: Site) -> None:
    """Only late pages cost a store call: pages on their turns record none, a page
    reported LATE_AFTER (0.05 s) or more after its turn one."""
    store = CountingStore()
    async with ra.RobotsChecker("PaceBot/1.0", store=store, sleep=_on_time) as checker:
        for _ in range(3):
            await checker.wait(site.url())
        await checker.sent(site.url(), late=0.049)
        assert store.late_sends == 0
        await checker.sent(site.url(), late=0.05)
        assert store.late_sends == 1


@pytest.mark.parametrize("late", [-1.0, float("nan"), "0.3"])
async def test_sent_refuses_a_lateness_that_is_not_one(site: Site, late: object) -> None:
    async with ra.RobotsChecker("PaceBot/1.0") as checker:
        with pytest.raises((ra.ConfigurationError, TypeError)):
            await checker.sent(site.url(), late=late)  # type: ignore[arg-type]


async def test_aiohttp_reports_a_request_its_connection_pool_held_past_its_turn(
    site: Site,
) -> None:
    """Worker A's one connection is busy with /slow (1.5 s) when its /page turn comes
    at 1 s: aiohttp sends /page at 1.5 s. Worker B, queued behind that turn, sent at
    2.0 s, 0.5 s after it; with the send reported by the trace, an interval after."""
    from robots_async.contrib.aiohttp import RobotsMiddleware

    store = ra.MemoryStore()
    async with (
        ra.RobotsChecker("PaceBot/1.0", store=store) as first,
        ra.RobotsChecker("PaceBot/1.0", store=store) as second,
    ):
        one, other = RobotsMiddleware(first, pace=True), RobotsMiddleware(second, pace=True)
        async with (
            aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=1),
                middlewares=(one,),
                trace_configs=[one.trace_config],
                headers={"X-Worker": "a"},
            ) as held,
            aiohttp.ClientSession(
                middlewares=(other,), trace_configs=[other.trace_config], headers={"X-Worker": "b"}
            ) as free,
        ):
            await first.robots(site.url())
            await second.robots(site.url())

            async def get(session: aiohttp.ClientSession, path: str) -> None:
                async with session.get(site.url(path)) as response:
                    await response.read()

            slow = asyncio.create_task(get(held, "/slow"))
            await asyncio.sleep(0.05)
            page = asyncio.create_task(get(held, "/page"))  # reserves the turn at 1 s
            await asyncio.sleep(0.1)
            await get(free, "/page")
            await asyncio.gather(slow, page)
    assert [who for _, who in sorted(site.pages)] == ["a", "a", "b"]
    assert min(site.gaps()) >= 0.95, site.gaps()


async def test_httpx_reports_a_request_its_connection_pool_held_past_its_turn(
    site: Site,
) -> None:
    """As the aiohttp case, through RobotsTransport(pace=True) over an httpcore pool of
    one connection (httpcore's trace tells when the headers go)."""
    httpx = pytest.importorskip("httpx")
    from robots_async.contrib.httpx import RobotsTransport

    store = ra.MemoryStore()
    first = ra.RobotsChecker("PaceBot/1.0", store=store)
    second = ra.RobotsChecker("PaceBot/1.0", store=store)
    async with (
        first,
        second,
        httpx.AsyncHTTPTransport(limits=httpx.Limits(max_connections=1)) as one,
        httpx.AsyncClient(
            transport=RobotsTransport(first, one, pace=True), headers={"X-Worker": "a"}
        ) as held,
        httpx.AsyncClient(
            transport=RobotsTransport(second, pace=True), headers={"X-Worker": "b"}
        ) as free,
    ):
        await first.robots(site.url())
        await second.robots(site.url())
        slow = asyncio.create_task(held.get(site.url("/slow")))
        await asyncio.sleep(0.05)
        page = asyncio.create_task(held.get(site.url("/page")))  # the turn at 1 s
        await asyncio.sleep(0.1)
        await free.get(site.url("/page"))
        await asyncio.gather(slow, page)
    assert [who for _, who in sorted(site.pages)] == ["a", "a", "b"]
    assert min(site.gaps()) >= 0.95, site.gaps()
