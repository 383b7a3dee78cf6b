"""Shared stores: two caches fetch an origin once; leases; a failing store is survivable."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from typing import TYPE_CHECKING, Any

import pytest
from aiohttp import web

import robots_async as ra
from robots_async.cache import records as _records

from .conftest import TOKEN

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from .conftest import FakeClock, Server

RULES = "User-agent: *\nDisallow: /private\n"


async def test_shared_store_one_fetch_sequential(
    server: Server, make_cache: Callable[..., ra.RobotsCache]
) -> None:
    """Two caches on one MemoryStore: the second finds the first's record (1 request)."""
    server.text("/robots.txt", RULES)
    store = ra.MemoryStore()
    first = make_cache(store=store)
    second = make_cache(store=store)
    origin = server.origin()
    entry_a, _ = await first.get(origin)
    entry_b, from_cache = await second.get(origin)
    assert server.count() == 1
    assert not from_cache
    assert second.stats.store_hits == 1
    assert second.stats.fetches == 0
    assert first.stats.fetches == 1
    assert entry_b.source == "fetched"
    assert entry_b.expires_at == entry_a.expires_at
    assert not entry_b.robots.allowed("/private", robots_token=TOKEN)
    assert entry_b.robots.allowed("/public", robots_token=TOKEN)


async def test_shared_store_one_fetch_concurrent(
    server: Server, make_cache: Callable[..., ra.RobotsCache]
) -> None:
    """Two caches asking at once: one fetches under the lease, the other waits for it."""
    server.text("/robots.txt", RULES, delay=0.3)
    store = ra.MemoryStore()
    caches = [make_cache(store=store) for _ in range(2)]
    origin = server.origin()
    results = await asyncio.gather(*(c.get(origin) for c in caches for _ in range(5)))
    assert server.count() == 1
    assert sum(c.stats.fetches for c in caches) == 1
    assert sum(c.stats.store_hits for c in caches) == 1
    assert all(not e.robots.allowed("/private", robots_token=TOKEN) for e, _ in results)


async def test_shared_store_carries_error_state_and_stale_copy(
    server: Server, make_cache: Callable[..., ra.RobotsCache], clock: FakeClock
) -> None:
    """A second cache that never saw the good copy serves it stale from the store on 503."""
    server.text("/robots.txt", RULES, headers={"Cache-Control": "max-age=60"})
    store = ra.MemoryStore()
    first = make_cache(store=store, clock=clock)
    second = make_cache(store=store, clock=clock)
    origin = server.origin()
    await first.get(origin)
    server.text("/robots.txt", status=503)
    clock.advance(61)
    entry, _ = await second.get(origin)
    assert server.count() == 2
    assert entry.source == "stale"
    assert not entry.robots.allowed("/private", robots_token=TOKEN)
    assert entry.robots.allowed("/public", robots_token=TOKEN)
    # The first cache now reads the 503's record from the store instead of fetching.
    again, _ = await first.get(origin)
    assert server.count() == 2
    assert again.source == "stale"
    assert not again.robots.allowed("/private", robots_token=TOKEN)
    assert first.stats.store_hits == 1


@pytest.mark.scenario
async def test_dead_lease_delays_until_it_expires(
    server: Server, make_cache: Callable[..., ra.RobotsCache]
) -> None:
    """A lease whose holder died delays the fetch until the lease expires, not forever."""
    fetched_at: list[float] = []

    async def robots(_: web.Request) -> web.Response:
        fetched_at.append(time.time())
        return web.Response(text=RULES)

    server.route("/robots.txt", robots)
    policy = ra.FetchPolicy.rfc9309(total_timeout=0.5)
    store = ra.MemoryStore()
    origin = server.origin()
    # A "dead" worker with the same policy took the lease and will never release it.
    dead = await store.acquire(origin, policy.total_timeout + 5.0)
    assert dead is not None
    cache = make_cache(policy=policy, store=store)
    entry, _ = await asyncio.wait_for(cache.get(origin), timeout=dead.expires_at - time.time() + 3)
    assert server.count() == 1
    assert fetched_at[0] >= dead.expires_at  # nobody fetched while the lease was held
    assert entry.source == "fetched"
    assert not await store.release(dead)  # the dead worker's lease is gone
    record = await store.get(origin)
    assert record is not None
    assert (record.status, record.body) == (200, RULES.encode())


async def test_released_lease_without_record_does_not_stall_waiter(
    server: Server, make_cache: Callable[..., ra.RobotsCache]
) -> None:
    """If the lease holder gives up (closed) without a record, a waiter fetches promptly."""
    server.text("/robots.txt", RULES, delay=1.0)
    policy = ra.FetchPolicy.rfc9309(total_timeout=3.0)  # lease TTL 8 s
    store = ra.MemoryStore()
    holder = make_cache(policy=policy, store=store)
    waiter = make_cache(policy=policy, store=store)
    origin = server.origin()
    holding = asyncio.create_task(holder.get(origin))
    await asyncio.sleep(0.2)
    waiting = asyncio.create_task(waiter.get(origin))
    await asyncio.sleep(0.2)
    # A caller's cancellation no longer stops a fetch others may share: closing the
    # holder's cache does (its fetch task is cancelled, the lease given back).
    await holder.aclose()
    [gave_up] = await asyncio.gather(holding, return_exceptions=True)
    assert isinstance(gave_up, ra.ClosedError)
    # The lease is free again at once; the waiter should not sit out the 8 s lease TTL.
    done, _ = await asyncio.wait({waiting}, timeout=4.0)
    if not done:
        waiting.cancel()
        await asyncio.gather(waiting, return_exceptions=True)
    assert done, "the waiter was still blocked 4 s after the lease holder gave up"
    entry, _ = waiting.result()
    assert entry.source == "fetched"
    assert server.count() == 2


async def test_lease_wait_ends_with_a_fake_clock(
    server: Server, make_cache: Callable[..., ra.RobotsCache], clock: FakeClock
) -> None:
    """With an injected (frozen) clock, waiting on an expired dead lease still ends."""
    server.text("/robots.txt", RULES)
    policy = ra.FetchPolicy.rfc9309(total_timeout=0.5)
    store = ra.MemoryStore()  # leases on real time
    origin = server.origin()
    dead = await store.acquire(origin, 0.5)
    assert dead is not None
    cache = make_cache(policy=policy, store=store, clock=clock)
    getting = asyncio.create_task(cache.get(origin))
    done, _ = await asyncio.wait({getting}, timeout=8.0)
    if not done:
        getting.cancel()
        await asyncio.gather(getting, return_exceptions=True)
    assert done, "still waiting 8 s after a 0.5 s lease (lease TTL 5.5 s) expired"
    entry, _ = getting.result()
    assert entry.source == "fetched"
    assert server.count() == 1


class BrokenStore:
    """A RobotsStore whose every method fails."""

    def __init__(self) -> None:
        self.calls = 0

    async def get(self, origin: ra.Origin) -> ra.StoredRobots | None:
        self.calls += 1
        raise ra.StoreError("store down")

    async def put(self, origin: ra.Origin, record: ra.StoredRobots) -> None:
        self.calls += 1
        raise ra.StoreError("store down")

    async def acquire(self, origin: ra.Origin, ttl: float) -> ra.Lease | None:
        self.calls += 1
        raise ra.StoreError("store down")

    async def release(self, lease: ra.Lease) -> bool:
        self.calls += 1
        raise ra.StoreError("store down")

    async def aclose(self) -> None:
        """Nothing to close."""


class FlakyStore(ra.MemoryStore):
    """A MemoryStore whose put or release fails."""

    def __init__(self, *, fail_put: bool = False, fail_release: bool = False) -> None:
        super().__init__()
        self.fail_put = fail_put
        self.fail_release = fail_release

    async def put(self, origin: ra.Origin, record: ra.StoredRobots) -> None:
        if self.fail_put:
            raise ra.StoreError("write refused")
        await super().put(origin, record)

    async def release(self, lease: ra.Lease) -> bool:
        if self.fail_release:
            raise ra.StoreError("release refused")
        return await super().release(lease)


async def test_broken_store_falls_back_to_local_fetch(
    server: Server, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """A store that raises StoreError: answers still come (fetched locally), errors counted."""
    server.text("/robots.txt", RULES)
    store = BrokenStore()
    checker = make_checker(store=store)
    assert isinstance(store, ra.RobotsStore)
    assert not await checker.allowed(server.url("/private"))
    assert await checker.allowed(server.url("/public"))
    stats = checker.stats.cache
    assert stats.store_errors > 0
    assert stats.fetches == 1
    assert store.calls > 0
    assert server.count() == 1


async def test_failed_store_write_does_not_refetch(
    server: Server, make_cache: Callable[..., ra.RobotsCache]
) -> None:
    """When only the store write fails, the fetched answer is used: still one request."""
    server.text("/robots.txt", RULES)
    cache = make_cache(store=FlakyStore(fail_put=True))
    entry, _ = await cache.get(server.origin())
    assert not entry.robots.allowed("/private", robots_token=TOKEN)
    assert cache.stats.store_errors == 1
    assert server.count() == 1
    assert cache.stats.fetches == 1


async def test_failed_lease_release_is_counted(
    server: Server, make_cache: Callable[..., ra.RobotsCache]
) -> None:
    """A release that fails is counted; the fetched entry is used and shared."""
    server.text("/robots.txt", RULES)
    store = FlakyStore(fail_release=True)
    cache = make_cache(store=store)
    entry, _ = await cache.get(server.origin())
    assert entry.source == "fetched"
    assert cache.stats.store_errors == 1
    assert server.count() == 1
    assert await store.get(server.origin()) is not None


async def test_memory_store_lease_tokens() -> None:
    """MemoryStore leases: exclusive while held, released only with the right token."""
    store = ra.MemoryStore()
    origin = ra.Origin.from_url("https://example.com/")
    lease = await store.acquire(origin, 30.0)
    assert lease is not None
    assert await store.acquire(origin, 30.0) is None
    forged = ra.Lease(origin, "not-the-token", lease.expires_at)
    assert not await store.release(forged)
    assert await store.acquire(origin, 30.0) is None
    assert await store.release(lease)
    assert not await store.release(lease)
    assert await store.acquire(origin, 30.0) is not None


class SwitchableStore(ra.MemoryStore):
    """A MemoryStore that fails every call while ``down`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.down = False

    def _check(self) -> None:
        if self.down:
            raise ra.StoreError("store down")

    async def get(self, origin: ra.Origin) -> ra.StoredRobots | None:
        self._check()
        return await super().get(origin)

    async def put(self, origin: ra.Origin, record: ra.StoredRobots) -> None:
        self._check()
        await super().put(origin, record)

    async def acquire(self, origin: ra.Origin, ttl: float) -> ra.Lease | None:
        self._check()
        return await super().acquire(origin, ttl)


async def test_stale_record_after_store_outage_never_allows_all(
    server: Server, make_cache: Callable[..., ra.RobotsCache], clock: FakeClock
) -> None:
    """A stale record shared after a store outage must not read as allow-all elsewhere."""
    server.text("/robots.txt", RULES, headers={"Cache-Control": "max-age=60"})
    store = SwitchableStore()
    first = make_cache(store=store, clock=clock)
    second = make_cache(store=store, clock=clock)
    origin = server.origin()
    store.down = True
    good, _ = await first.get(origin)  # fetched locally while the store is down
    assert good.source == "fetched"
    store.down = False
    server.text("/robots.txt", status=503)
    clock.advance(61)
    stale, _ = await first.get(origin)
    assert stale.source == "stale"
    assert not stale.robots.allowed("/private", robots_token=TOKEN)
    shared, _ = await second.get(origin)
    assert server.count() == 2
    # The origin is unreachable: the second worker may use the good copy or disallow
    # all, but never allow what the site's robots.txt forbids.
    assert not shared.robots.allowed("/private", robots_token=TOKEN)


# --- records are observations, validated, judged by the reader ----------------------


def observed(**changes: Any) -> ra.StoredRobots:
    """A valid record of a 404 (allow all, if believed) fetched just now, changed."""
    values: dict[str, Any] = {
        "url": "http://127.0.0.1:1/robots.txt",
        "final_url": "http://127.0.0.1:1/robots.txt",
        "status": 404,
        "error": None,
        "fetched_at": time.time(),
    }
    values.update(changes)
    return ra.StoredRobots(**values)


async def test_shared_record_holds_observations_not_a_verdict(
    server: Server, make_cache: Callable[..., ra.RobotsCache]
) -> None:
    """A shared record is status, caching headers, body and fetch time; no rules/TTL."""
    headers = {"Cache-Control": "max-age=600", "ETag": '"abc"', "X-Other": "dropped"}
    server.text("/robots.txt", RULES, headers=headers)
    store = ra.MemoryStore()
    cache = make_cache(store=store)
    entry, _ = await cache.get(server.origin())
    record = await store.get(server.origin())
    assert record is not None
    assert (record.status, record.error, record.body) == (200, None, RULES.encode())
    shared = dict(record.headers)
    assert shared.pop("Date")  # aiohttp adds one
    assert shared == {"Cache-Control": "max-age=600", "ETag": '"abc"'}
    assert record.fetched_at == entry.fetched_at
    assert (record.last_good_body, record.last_good_at) == (RULES.encode(), entry.fetched_at)
    assert set(record.metadata()) == set(_records._FIELDS)
    assert "rules" not in record.metadata()
    assert "expires_at" not in record.metadata()


POISONED_OBJECTS = {
    "body-str": observed(status=200, body="User-agent: *\nAllow: /\n"),
    "body-memoryview": observed(status=200, body=memoryview(b"User-agent: *\nAllow: /\n")),
    "last-good-str": observed(last_good_body="x", last_good_at=time.time() - 5),
    "headers-dict": observed(headers={"Cache-Control": "max-age=60"}),
    "fetched-at-none": observed(fetched_at=None),
    "fetched-at-nan": observed(fetched_at=float("nan")),
    "fetched-at-string": observed(fetched_at="2026-01-01"),
    "status-999": observed(status=999),
    "status-bool": observed(status=True),
    "error-unknown": observed(status=None, error="allow-all"),
    "hops-negative": observed(hops=-1),
    "bytes-read-negative": observed(bytes_read=-10),
    "not-a-record": {"status": 404},
}


@pytest.mark.parametrize("name", list(POISONED_OBJECTS))
async def test_poisoned_memory_record_is_a_counted_miss_and_is_overwritten(
    server: Server,
    make_cache: Callable[..., ra.RobotsCache],
    caplog: pytest.LogCaptureFixture,
    name: str,
) -> None:
    """Whatever object a store hands back, one that does not conform is a miss: fetched,
    counted once, logged once at WARNING, and replaced by a valid record."""
    server.text("/robots.txt", RULES)
    store = ra.MemoryStore()
    origin = server.origin()
    await store.put(origin, POISONED_OBJECTS[name])  # type: ignore[arg-type]
    cache = make_cache(store=store)
    with caplog.at_level(logging.WARNING, logger="robots_async"):
        entry, _ = await cache.get(origin)
    assert not entry.robots.allowed("/private", robots_token=TOKEN)
    assert (cache.stats.store_invalid, cache.stats.store_errors, cache.stats.fetches) == (1, 0, 1)
    assert len([r for r in caplog.records if "invalid record" in r.getMessage()]) == 1
    record = await store.get(origin)
    assert record is not None
    assert _records.validate(record).body == RULES.encode()


async def test_huge_failure_count_in_a_record_does_not_overflow(
    make_cache: Callable[..., ra.RobotsCache], server: Server
) -> None:
    """A 503 record claiming 10**9 failures: the reader backs off max_error_ttl, no crash."""
    store = ra.MemoryStore()
    origin = server.origin()
    now = time.time()
    url = origin.robots_url
    poisoned = observed(url=url, final_url=url, status=503, failures=10**9, unreachable_since=now)
    await store.put(origin, poisoned)
    cache = make_cache(store=store)
    entry, _ = await cache.get(origin)
    assert (entry.source, cache.stats.store_hits, server.count()) == ("unreachable", 1, 0)
    assert not entry.robots.allowed("/a", robots_token=TOKEN)
    assert entry.expires_at - entry.fetched_at == pytest.approx(cache.policy.max_error_ttl)


async def test_max_bytes_none_with_a_store(
    server: Server, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """FetchPolicy(max_bytes=None) with a store: no TypeError; the body is shared whole."""
    body = "User-agent: *\n" + "Allow: /x\n" * 60_000 + "Disallow: /private\n"  # > 512,000 B
    server.text("/robots.txt", body)
    store = ra.MemoryStore()
    policy = ra.FetchPolicy(max_bytes=None)  # type: ignore[arg-type]
    first = make_checker(store=store, fetch_policy=policy)
    assert not await first.allowed(server.url("/private"))
    second = make_checker(store=store, fetch_policy=policy)
    assert not await second.allowed(server.url("/private"))
    assert await second.allowed(server.url("/x"))
    assert second.stats.cache.store_hits == 1
    record = await store.get(server.origin())
    assert record is not None
    assert len(record.body) == len(body)
    assert server.count() == 1


class HangingStore(ra.MemoryStore):
    """A MemoryStore whose chosen methods never answer (a store with no timeouts)."""

    def __init__(self, *hang: str) -> None:
        super().__init__()
        self.hang = set(hang)

    async def _maybe_hang(self, method: str) -> None:
        if method in self.hang:
            await asyncio.Event().wait()

    async def get(self, origin: ra.Origin) -> ra.StoredRobots | None:
        await self._maybe_hang("get")
        return await super().get(origin)

    async def put(self, origin: ra.Origin, record: ra.StoredRobots) -> None:
        await self._maybe_hang("put")
        await super().put(origin, record)


@pytest.mark.parametrize("hang", ["get", "put"])
async def test_store_that_never_answers_is_bounded_by_the_cache(
    server: Server, make_cache: Callable[..., ra.RobotsCache], hang: str
) -> None:
    """Any store call is cut at the store timeout (2 s): the check is answered locally,
    the failure counted, and a lease taken is released."""
    server.text("/robots.txt", RULES)
    store = HangingStore(hang)
    cache = make_cache(store=store)
    start = time.monotonic()
    entry, _ = await asyncio.wait_for(cache.get(server.origin()), 30)
    took = time.monotonic() - start
    assert 1.5 < took < 5.0
    assert entry.source == "fetched"
    assert not entry.robots.allowed("/private", robots_token=TOKEN)
    assert cache.stats.store_errors == 1
    assert server.count() == 1
    assert await store.acquire(server.origin(), 5.0) is not None  # no lease left behind


@pytest.mark.parametrize(
    ("writer", "reader"),
    [
        pytest.param({"max_hops": 1}, {}, id="writer-stopped-redirects-earlier"),
        pytest.param({}, {"max_hops": 1}, id="writer-followed-more-redirects"),
        pytest.param({"max_bytes": 40}, {}, id="writer-cut-the-body-shorter"),
    ],
)
async def test_record_made_under_other_fetch_limits_is_not_used(
    server: Server,
    make_checker: Callable[..., ra.RobotsChecker],
    writer: dict[str, Any],
    reader: dict[str, Any],
) -> None:
    """A record the reader's own fetch limits would have ended differently is not used:
    the reader fetches and answers as it would alone."""
    body = "User-agent: *\n" + "# padding line\n" * 5 + "Disallow: /private\n"
    server.redirect("/robots.txt", "/r1")
    server.redirect("/r1", "/r2")
    server.text("/r2", body)
    store = ra.MemoryStore()
    first = make_checker(store=store, fetch_policy=ra.FetchPolicy.rfc9309(**writer))
    alone = make_checker(fetch_policy=ra.FetchPolicy.rfc9309(**reader))
    second = make_checker(store=store, fetch_policy=ra.FetchPolicy.rfc9309(**reader))
    await first.allowed(server.url("/private"))
    expected = await alone.allowed(server.url("/private"))
    assert await second.allowed(server.url("/private")) is expected
    assert second.stats.cache.store_hits == 0
    assert second.stats.cache.fetches == 1
    assert server.count() == 3


@pytest.mark.parametrize(
    ("changes", "policy", "unlike"),
    [
        ({"error": "redirect-limit", "status": 301, "hops": 3}, {}, "stopped after 2"),
        ({"error": "redirect-limit", "status": 301, "hops": 6}, {}, None),
        ({"error": "redirect-limit", "status": 301, "hops": 6}, {"max_hops": 3}, None),
        ({"hops": 6}, {}, "6 redirects followed"),
        ({"hops": 5}, {}, None),
        ({"error": "blocked-redirect", "status": 302, "hops": 1}, {}, "guard"),
        ({"final_url": "https://other.test/robots.txt"}, {}, None),
        (
            {"final_url": "https://other.test/robots.txt"},
            {"cross_origin_redirects": False},
            "another origin",
        ),
        ({"truncated": True, "body": b"x" * 100}, {}, "cut at 100"),
        ({"truncated": True, "body": b"x" * 100}, {"max_bytes": 100}, None),
        ({"truncated": True, "body": b"x" * 100}, {"max_bytes": 50}, None),
    ],
)
def test_unlike_own_fetch_table(
    changes: dict[str, Any], policy: dict[str, Any], unlike: str | None
) -> None:
    """Which observations a reader's fetch limits could have made differently."""
    record = observed(
        status=200, url="https://example.test/robots.txt", final_url="https://example.test/x"
    )
    record = dataclasses.replace(record, **changes)
    reason = _records.unlike_own_fetch(_records.validate(record), ra.FetchPolicy(**policy))
    if unlike is None:
        assert reason is None
    else:
        assert reason is not None
        assert unlike in reason


async def test_record_claiming_a_huge_size_cannot_flush_the_readers_cache(
    server: Server, make_cache: Callable[..., ra.RobotsCache]
) -> None:
    """bytes_read is a claim: the reader accounts the body it holds, so a record saying
    10**15 bytes cannot push its other entries out of the memory bound."""
    server.text("/robots.txt", RULES)
    store = ra.MemoryStore()
    cache = make_cache(store=store, max_memory=1_000_000)
    await cache.get(server.origin())  # a local entry
    other = ra.Origin.from_url("http://127.0.0.1:1/")
    url = other.robots_url
    body = b"User-agent: *\nDisallow: /\n"
    claim = observed(url=url, final_url=url, status=200, body=body, bytes_read=10**15)
    await store.put(other, claim)
    entry, _ = await cache.get(other)
    assert not entry.robots.allowed("/a", robots_token=TOKEN)
    assert cache.stats.store_hits == 1
    assert cache.stats.evictions == 0
    assert cache.peek(server.origin()) is not None
    assert cache.stats.memory < 1_000_000


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_renew_extends_only_a_lease_still_held(kind: str, tmp_path: Path) -> None:
    """renew() moves a held lease's expiry forward; a released, expired or taken-over
    lease is not renewed (None), so a lost lease is never silently resurrected."""
    origin = ra.Origin.from_url("http://renew.test")
    store: ra.MemoryStore | ra.SQLiteStore = (
        ra.MemoryStore() if kind == "memory" else ra.SQLiteStore(str(tmp_path / "s.sqlite"))
    )
    async with store:
        lease = await store.acquire(origin, 0.3)
        assert lease is not None
        renewed = await store.renew(lease, 5.0)
        assert renewed is not None
        assert renewed.expires_at > lease.expires_at + 4
        await asyncio.sleep(0.4)  # past the first TTL: the renewal kept it
        assert await store.acquire(origin, 1.0) is None
        assert await store.release(renewed)
        assert await store.renew(renewed, 5.0) is None  # released: gone
        short = await store.acquire(origin, 0.1)
        assert short is not None
        await asyncio.sleep(0.2)
        assert await store.renew(short, 5.0) is None  # expired
        taker = await store.acquire(origin, 5.0)
        assert taker is not None
        assert await store.renew(short, 5.0) is None  # someone else's now
