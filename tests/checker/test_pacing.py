"""Pacing rules (issue 27): what a store keeps, how a reader turns it into its next
visit, wait()/observe() on one checker and on checkers sharing a MemoryStore, the
Retry-After forms, and the settings refused at construction."""

from __future__ import annotations

import asyncio
import email.utils
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pytest

import robots_async as ra
from robots_async.cache.pace_table import PaceTable
from robots_async.checker.pacing import Pacer, PaceSettings, _retry_headers
from robots_async.core.pacing import JITTER, PaceRule, PaceState, keep_for, next_visit, observed

if TYPE_CHECKING:
    from pathlib import Path

    from ..servers import FakeClock, Server

RULE = PaceRule(interval=1.0, max_retry_after=60.0, first_backoff=2.0, max_backoff=30.0)


# --- core.pacing: observations in, next visit out -----------------------------------


def test_next_visit_follows_the_last_one_by_the_readers_interval() -> None:
    state = PaceState(last=100.0)
    assert next_visit(state, RULE, 100.2, 0.0) == 101.0
    assert next_visit(state, RULE, 105.0, 0.0) == 105.0
    # Another reader's own interval applies to the same observation.
    slower = PaceRule(5.0, 60.0, 2.0, 30.0)
    assert next_visit(state, slower, 100.2, 0.0) == 105.0


def test_retry_after_is_never_shortened_and_is_capped_by_the_reader() -> None:
    state = observed(PaceState(), 100.0, busy=True, retry_after=10.0)
    assert state.retry_at == 110.0
    assert observed(state, 101.0, busy=True, retry_after=2.0) is state  # not shortened
    longer = observed(state, 101.0, busy=True, retry_after=20.0)
    assert longer.retry_at == 121.0
    assert next_visit(longer, RULE, 101.0, 0.0) == 121.0
    capped = PaceRule(1.0, 5.0, 2.0, 30.0)
    assert next_visit(longer, capped, 101.0, 0.0) == 106.0  # paused_at 101 + 5


def test_backoff_doubles_with_jitter_up_to_its_cap_and_a_success_ends_it() -> None:
    state = PaceState()
    ends = []
    for n in range(1, 7):
        state = observed(state, 100.0, busy=True, retry_after=None)
        assert state.failures == n
        ends.append(next_visit(state, RULE, 100.0, 0.0) - 100.0)
    assert ends == [2.0, 4.0, 8.0, 16.0, 30.0, 30.0]
    jittered = next_visit(state, RULE, 100.0, 0.999) - 100.0
    assert 30.0 < jittered < 30.0 * (1 + JITTER)
    reset = observed(state, 101.0, busy=False, retry_after=None)
    assert (reset.failures, reset.failed_at) == (0, None)
    assert next_visit(reset, RULE, 101.0, 0.0) == 101.0
    assert observed(reset, 102.0, busy=False, retry_after=None) is reset  # nothing to write


def test_a_success_within_the_backoff_was_sent_before_it_and_ends_nothing() -> None:
    """Across a fleet a request sent before a 429 may answer 200 after it: that answer
    must not end the back-off (it let every worker resume at once under load)."""
    state = observed(PaceState(), 100.0, busy=True, retry_after=None)
    state = observed(state, 100.0, busy=True, retry_after=None)  # 4 s back-off
    assert observed(state, 103.0, busy=False, retry_after=None, rule=RULE) is state
    after = observed(state, 104.5, busy=False, retry_after=None, rule=RULE)
    assert next_visit(after, RULE, 104.5, 0.999) == 104.5  # over for every reader
    assert after.failures == 2  # the run is kept for one more back-off (4 s)


def test_a_429_just_after_a_success_of_its_moment_doubles_the_backoff() -> None:
    """Two workers send when a 2 s back-off ends; one gets 429, the other 200, and the
    200 is recorded first (as in a failing fleet run: 1.1 ms apart). The 429 continues
    the run (4 s), as it does when recorded first; it restarted it at 2 s."""
    state = observed(PaceState(), 100.0, busy=True, retry_after=None, rule=RULE)
    success_first = observed(state, 102.388, busy=False, retry_after=None, rule=RULE)
    success_first = observed(success_first, 102.389, busy=True, retry_after=None, rule=RULE)
    busy_first = observed(state, 102.388, busy=True, retry_after=None, rule=RULE)
    busy_first = observed(busy_first, 102.389, busy=False, retry_after=None, rule=RULE)
    for after in (success_first, busy_first):
        assert after.failures == 2, after
        assert next_visit(after, RULE, 102.4, 0.0) >= 102.388 + 4.0, after


def test_429s_within_the_backoff_count_once() -> None:
    """Eight requests in flight all answer 429: one failure, a 2 s back-off (each
    doubled it: 2 s became the 30 s cap). Past the back-off, the next 429 doubles."""
    state = PaceState()
    for at in (100.0, 100.1, 100.5, 101.0, 101.5, 101.9, 101.99, 101.999):
        state = observed(state, at, busy=True, retry_after=None, rule=RULE)
    assert (state.failures, state.failed_at) == (1, 100.0)
    assert next_visit(state, RULE, 102.0, 0.0) == 102.0
    later = observed(state, 102.0, busy=True, retry_after=None, rule=RULE)
    assert (later.failures, later.failed_at) == (2, 102.0)
    assert observed(later, 105.9, busy=True, retry_after=None, rule=RULE) is later
    assert observed(later, 106.0, busy=True, retry_after=None, rule=RULE).failures == 3


def test_a_429_is_judged_by_its_send_time_when_it_is_known() -> None:
    """A 429 to a request sent before the back-off ended is the same overload however
    late it arrives (an overloaded server answers slowly); one sent after it doubles
    the back-off however fast. Unknown send time: judged by arrival, as before."""
    state = observed(PaceState(), 100.0, busy=True, retry_after=None, rule=RULE)
    for elapsed in (8.0, 7.0, 5.01):  # sent at 99, 100 and 101.99; the back-off ends at 102
        slow = observed(state, 107.0, busy=True, retry_after=None, rule=RULE, elapsed=elapsed)
        assert slow is state, elapsed
    fresh = observed(state, 102.5, busy=True, retry_after=None, rule=RULE, elapsed=0.5)
    assert (fresh.failures, fresh.failed_at) == (2, 102.5)
    unknown = observed(state, 107.0, busy=True, retry_after=None, rule=RULE)
    assert (unknown.failures, unknown.failed_at) == (2, 107.0)
    # A negative elapsed time counts as none: never judged later than its arrival.
    assert observed(state, 101.0, busy=True, retry_after=None, rule=RULE, elapsed=-99.0) is state
    doubled = observed(state, 102.5, busy=True, retry_after=None, rule=RULE, elapsed=-99.0)
    assert doubled.failures == 2


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_stores_pass_the_send_time_to_the_rule(
    clock: FakeClock, tmp_path: Path, kind: str
) -> None:
    """MemoryStore (on a fake clock) and SQLiteStore (on time.time(): a 0.2 s first
    back-off) take ``elapsed``: a 429 that took longer than the back-off, sent with
    the first, counts once; the same 429 told without its elapsed time doubles."""
    rule = PaceRule(interval=0.0, max_retry_after=60.0, first_backoff=0.2, max_backoff=30.0)
    unit = "http://127.0.0.1:1"
    if kind == "memory":
        store: Any = ra.MemoryStore(clock=clock)

        async def later(seconds: float) -> None:
            clock.advance(seconds)
    else:
        store = ra.SQLiteStore(tmp_path / "pace.sqlite")

        async def later(seconds: float) -> None:
            await asyncio.sleep(seconds)

    try:
        await store.observe(unit, rule, busy=True, retry_after=None)
        await later(0.5)
        await store.observe(unit, rule, busy=True, retry_after=None, elapsed=0.48)
        assert (await store.reserve(unit, rule, 0.0)).failures == 1
        await store.observe(unit, rule, busy=True, retry_after=None)
        assert (await store.reserve(unit, rule, 0.0)).failures == 2
    finally:
        await store.aclose()


def test_a_run_ends_once_successes_last_one_more_backoff() -> None:
    """After the pause, successes for one back-off length end the run: a later 429
    starts again at 2 s; one within that length doubles it."""
    state = observed(PaceState(), 100.0, busy=True, retry_after=None, rule=RULE)
    state = observed(state, 102.1, busy=False, retry_after=None, rule=RULE)  # pause over
    within = observed(state, 104.0, busy=False, retry_after=None, rule=RULE)
    assert within.failures == 1
    assert observed(within, 104.0, busy=True, retry_after=None).failures == 2
    ended = observed(within, 104.2, busy=False, retry_after=None, rule=RULE)
    assert (ended.failures, ended.failed_at) == (0, None)
    again = observed(ended, 104.3, busy=True, retry_after=None, rule=RULE)
    assert next_visit(again, RULE, 104.3, 0.0) == 106.3
    # With no success at all, the run goes on doubling (a site that only answers 429).
    quiet = observed(PaceState(), 100.0, busy=True, retry_after=None, rule=RULE)
    assert observed(quiet, 200.0, busy=True, retry_after=None, rule=RULE).failures == 2


def test_a_thousand_failures_do_not_overflow() -> None:
    state = PaceState(failed_at=100.0, failures=10_000)
    assert next_visit(state, RULE, 100.0, 0.0) == 130.0


def test_observations_are_kept_while_they_can_decide_and_a_margin() -> None:
    state = PaceState(last=100.0, retry_at=150.0, paused_at=100.0)
    assert keep_for(state, RULE, 100.0) == 50.0 + 60.0
    assert keep_for(PaceState(last=100.0), RULE, 100.0) == 1.0 + 60.0


def test_a_long_failure_run_is_kept_through_its_extra_backoff(clock: FakeClock) -> None:
    """At the 5 min cap, a success after the back-off keeps the run for one more
    back-off (375 s + 300 s): a 429 at 600 s idle doubles (300 s again), as within
    the window; the table forgot the run at 435 s and restarted it at 2 s."""
    rule = PaceRule(interval=1.0, max_retry_after=60.0, first_backoff=2.0, max_backoff=300.0)
    table = PaceTable(clock)
    for _ in range(8):  # 2 s doubled, each 429 after the last back-off
        table.observe("a", rule, busy=True, retry_after=None)
        clock.advance(table.pause_left("a", rule, 0.0) + 0.001)
    table.observe("a", rule, busy=True, retry_after=None)  # the ninth: at the cap
    failed_at = clock()
    assert table.pause_left("a", rule, 0.0) == pytest.approx(300.0)
    clock.advance(376.0)  # past the longest jittered back-off (375 s)
    table.observe("a", rule, busy=False, retry_after=None)  # the run is kept
    clock.advance(600.0 - (clock() - failed_at))  # within one more back-off
    table.reserve("b", rule, 0.0)  # another origin's visit: the table forgets the expired
    table.observe("a", rule, busy=True, retry_after=None)
    assert table.pause_left("a", rule, 0.0) == pytest.approx(300.0)
    state = PaceState(failed_at=100.0, failures=9)
    assert keep_for(state, rule, 100.0) == 300.0 * (2 + JITTER) + 60.0


# --- PaceTable: the in-process store ------------------------------------------------


def test_table_queues_concurrent_reservations_and_forgets_old_ones(clock: FakeClock) -> None:
    table = PaceTable(clock)
    waits = [table.reserve("a", RULE, 0.0).wait for _ in range(3)]
    assert waits == [0.0, 1.0, 2.0]
    assert table.reserve("b", RULE, 0.0).wait == 0.0  # another unit: not behind "a"
    clock.advance(1000.0)
    assert table.reserve("c", RULE, 0.0).wait == 0.0
    assert len(table) == 1


def test_table_pause_left_ignores_reserved_visits(clock: FakeClock) -> None:
    table = PaceTable(clock)
    table.reserve("a", RULE, 0.0)
    table.reserve("a", RULE, 0.0)
    assert table.pause_left("a", RULE, 0.0) == 0.0
    table.observe("a", RULE, busy=True, retry_after=3.0)
    assert table.pause_left("a", RULE, 0.0) == 3.0
    assert table.reserve("a", RULE, 0.0).wait == 3.0  # the pause ends after visit 2 (1 s)


# --- Retry-After in any header container --------------------------------------------


class ScrapyLikeHeaders(dict[bytes, list[bytes]]):
    """Scrapy's Headers: bytes names, a list of bytes values."""


@pytest.mark.parametrize(
    "headers",
    [
        {"Retry-After": "7"},
        {"retry-after": "7"},
        [("RETRY-AFTER", "7")],
        [(b"Retry-After", b"7")],
        ScrapyLikeHeaders({b"Retry-After": [b"7"]}),
    ],
)
def test_retry_after_found_whatever_the_container(headers: Any) -> None:
    assert _retry_headers(headers) == {"Retry-After": "7"}


def test_retry_after_as_an_http_date_is_read_against_the_response_date() -> None:
    date = email.utils.formatdate(1_700_000_000, usegmt=True)
    later = email.utils.formatdate(1_700_000_045, usegmt=True)
    from robots_async.fetch.http import retry_after

    assert retry_after(_retry_headers({"Date": date, "Retry-After": later})) == 45.0


@pytest.mark.parametrize("headers", [None, [], {"Retry-After": "soon"}, {"Retry-After": ""}])
def test_unreadable_retry_after_is_none(headers: Any) -> None:
    from robots_async.fetch.http import retry_after

    assert retry_after(_retry_headers(headers)) is None


@pytest.mark.parametrize("headers", [42, "Retry-After: 7", [("only-one",)]])
def test_headers_of_no_known_shape_are_a_typed_error(headers: Any) -> None:
    with pytest.raises(ra.PageInputTypeError):
        _retry_headers(headers)


# --- the checker --------------------------------------------------------------------


class Sleeps:
    """A sleep that moves the fake clock on by what is slept."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.slept: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.slept.append(round(seconds, 6))
        self.clock.advance(seconds)


async def test_two_checkers_sharing_a_memory_store_pace_together(
    server: Server, clock: FakeClock
) -> None:
    server.text("/robots.txt", "User-agent: *\nCrawl-delay: 2\n")
    store = ra.MemoryStore(clock=clock)
    sleep = Sleeps(clock)
    one, two = (
        ra.RobotsChecker("PaceBot/1.0", store=store, clock=clock, sleep=sleep) for _ in range(2)
    )
    async with one, two:
        assert await one.wait(server.url("/a")) == 0.0
        assert await two.wait(server.url("/b")) == 2.0  # the other checker's visit counts
        assert await one.wait(server.url("/c")) == 2.0


async def test_observe_pauses_and_backs_off_the_origin(server: Server, clock: FakeClock) -> None:
    server.text("/robots.txt", "User-agent: *\nAllow: /\n")
    sleep = Sleeps(clock)
    async with ra.RobotsChecker("PaceBot/1.0", clock=clock, sleep=sleep) as checker:
        url = server.url("/page")
        assert await checker.wait(url) == 0.0
        await checker.observe(url, 429, {"Retry-After": "5"})
        assert await checker.wait(url) == 5.0
        await checker.observe(url, 503, [])  # no Retry-After: 2 s back-off (jittered)
        slept = await checker.wait(url)
        assert 2.0 <= slept <= 2.0 * (1 + JITTER)
        await checker.observe(url, 200, {})
        assert await checker.wait(url) == 0.0
        await checker.observe(url, 500, {})  # neither a pause nor a success
        assert await checker.wait(url) == 0.0
        stats = checker.stats
    assert (stats.pauses, stats.backoffs, stats.pace_store_errors) == (1, 1, 0)


async def test_pace_by_host_paces_every_port_and_scheme_of_a_host_together(
    make_server: Any, clock: FakeClock
) -> None:
    server = await make_server(2)
    server.text("/robots.txt", "User-agent: *\nCrawl-delay: 3\n")
    sleep = Sleeps(clock)
    by_host = ra.RobotsChecker("PaceBot/1.0", clock=clock, sleep=sleep, pace_by="host")
    by_origin = ra.RobotsChecker("PaceBot/1.0", clock=clock, sleep=sleep)
    async with by_host, by_origin:
        assert await by_host.wait(server.url("/", 0)) == 0.0
        assert await by_host.wait(server.url("/", 1)) == 3.0  # same host, other port
        assert await by_origin.wait(server.url("/", 0)) == 0.0
        assert await by_origin.wait(server.url("/", 1)) == 0.0


async def test_min_delay_and_max_delay_bound_the_interval(server: Server, clock: FakeClock) -> None:
    server.text("/robots.txt", "User-agent: *\nCrawl-delay: 100\n")
    sleep = Sleeps(clock)
    async with ra.RobotsChecker(
        "PaceBot/1.0", clock=clock, sleep=sleep, min_delay=0.5, max_delay=4.0
    ) as checker:
        await checker.wait(server.url("/"))
        assert await checker.wait(server.url("/")) == 4.0
    assert PaceSettings(min_delay=0.5).rule(0.0).interval == 0.5


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("min_delay", -1.0),
        ("min_delay", 40.0),  # above max_delay (30)
        ("pace_by", "domain"),
        ("pace_by", None),
        ("max_retry_after", float("inf")),
        ("max_backoff", 0),
    ],
)
def test_bad_pacing_settings_stop_at_construction(setting: str, value: object) -> None:
    with pytest.raises(ra.ConfigurationError, match=setting):
        ra.RobotsChecker("PaceBot/1.0", **{setting: value})


async def test_observe_refuses_a_status_that_is_not_an_int(server: Server) -> None:
    async with ra.RobotsChecker("PaceBot/1.0") as checker:
        with pytest.raises(TypeError, match="status"):
            await checker.observe(server.url("/"), "429")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("elapsed", "error"),
    [
        ("1.0", ra.ConfigurationTypeError),
        (True, ra.ConfigurationTypeError),
        (-0.1, ra.ConfigurationError),
        (float("nan"), ra.ConfigurationError),
        (10**400, ra.ConfigurationError),  # beyond any float: no OverflowError
        (timedelta(seconds=-1), ra.ConfigurationError),
    ],
)
async def test_observe_refuses_an_elapsed_time_that_is_not_one(
    server: Server, elapsed: object, error: type[Exception]
) -> None:
    async with ra.RobotsChecker("PaceBot/1.0") as checker:
        with pytest.raises(error, match="elapsed"):
            await checker.observe(server.url("/"), 429, elapsed=elapsed)  # type: ignore[arg-type]
        assert checker.stats.backoffs == 0  # nothing recorded


async def test_observe_takes_elapsed_as_httpx_gives_it(clock: FakeClock) -> None:
    """A ``timedelta`` (httpx's ``Response.elapsed``) is seconds too: the slow 429,
    sent with the first, leaves one back-off."""
    store = ra.MemoryStore(clock=clock)
    async with ra.RobotsChecker(
        "PaceBot/1.0", store=store, clock=clock, sleep=Sleeps(clock)
    ) as checker:
        url = "http://127.0.0.1:1/page"
        await checker.observe(url, 429)
        clock.advance(5.0)
        await checker.observe(url, 429, elapsed=timedelta(seconds=4.9))
        rule = PaceSettings().rule(0.0)
        assert (await store.reserve("http://127.0.0.1:1", rule, 0.0)).failures == 1


async def test_a_store_written_before_elapsed_is_called_without_it(clock: FakeClock) -> None:
    """A pace store of the protocol before ``elapsed`` (observe() without it) still
    records observations: the Pacer leaves the argument out."""

    class OlderStore(ra.MemoryStore):
        async def observe(  # type: ignore[override]
            self, unit: str, rule: PaceRule, *, busy: bool, retry_after: float | None
        ) -> None:
            await super().observe(unit, rule, busy=busy, retry_after=retry_after)

    store = OlderStore(clock=clock)
    pacer = Pacer(store, PaceSettings(), clock=clock, sleep=Sleeps(clock), loop_time=clock)
    await pacer.observe("http://127.0.0.1:1", 0.0, 429, {}, elapsed=0.5)
    assert pacer.store_errors == 0
    rule = PaceSettings().rule(0.0)
    assert (await store.reserve("http://127.0.0.1:1", rule, 0.0)).failures == 1


@pytest.mark.parametrize(("delay", "inside"), [(0.2, True), (0.3, False)])
async def test_a_turn_due_just_after_a_429_may_start_within_its_backoff(
    clock: FakeClock, delay: float, inside: bool
) -> None:
    """observed()'s premise, bounded: a turn that was under RECHECK_AFTER away when
    another worker's 429 began a back-off is not re-checked and starts within it (as a
    request already on its way); its own 429 there is the same overload, counted once.
    A turn further away is re-checked and waits the back-off out."""
    store = ra.MemoryStore(clock=clock)
    unit = "http://127.0.0.1:1"
    rule = PaceSettings().rule(delay)
    first = Pacer(store, PaceSettings(), clock=clock, sleep=Sleeps(clock), loop_time=clock)
    assert await first.wait(unit, delay) == 0.0

    async def sleep_through_a_429(seconds: float) -> None:
        if seconds == pytest.approx(delay):  # the first worker's 429 comes back meanwhile
            clock.advance(0.05)
            await first.observe(unit, delay, 429, {})
            seconds -= 0.05
        clock.advance(seconds)

    second = Pacer(store, PaceSettings(), clock=clock, sleep=sleep_through_a_429, loop_time=clock)
    slept = await second.wait(unit, delay)
    left = await store.pause_left(unit, rule, 0.0)
    if inside:
        assert slept == pytest.approx(delay)
        assert 1.7 < left < 2.0  # the second visit starts 0.15 s into a 2 s back-off
    else:
        assert slept > 2.0
        assert left == 0.0
    clock.advance(0.1)
    await second.observe(unit, delay, 429, {})
    assert (await store.reserve(unit, rule, 0.0)).failures == (1 if inside else 2)


async def test_a_turn_taken_before_a_backoff_finds_it_paused_before_sending(
    clock: FakeClock,
) -> None:
    """Pacer.left_at_send (a request held after its turn, as in Scrapy's download
    slot): another worker's 429 after the turn is found in the store, no visit
    reserved; with no pause it is 0. paused_here knows this process's observations
    only."""
    store = ra.MemoryStore(clock=clock)
    delay = 1.0  # a visit reserved by left_at_send() would make the next wait this
    unit = "http://127.0.0.1:1"
    rule = PaceSettings().rule(delay)
    first = Pacer(store, PaceSettings(), clock=clock, sleep=Sleeps(clock), loop_time=clock)
    held = Pacer(store, PaceSettings(), clock=clock, sleep=Sleeps(clock), loop_time=clock)
    assert await held.wait(unit, delay) == 0.0
    assert await held.left_at_send(unit, delay, 0.0) == (0.0, 0.0)
    await first.observe(unit, delay, 429, {})
    assert first.paused_here(unit, delay)
    assert not held.paused_here(unit, delay)  # another process's 429: in the store only
    assert (await held.left_at_send(unit, delay, 0.0))[0] == 2.0
    clock.advance(2.0 * (1 + JITTER))
    assert (await held.left_at_send(unit, delay, 2.5))[0] == 0.0
    assert (await store.reserve(unit, rule, 0.0)).wait == 0.0  # nothing was reserved
