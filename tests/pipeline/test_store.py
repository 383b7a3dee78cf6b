"""Shared stores: two caches fetch an origin once; leases; a failing store is survivable."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from aiohttp import web

import robots_async as ra

from .conftest import TOKEN

if TYPE_CHECKING:
    from collections.abc import Callable

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
    assert record.rules == "body"


async def test_released_lease_without_record_does_not_stall_waiter(
    server: Server, make_cache: Callable[..., ra.RobotsCache]
) -> None:
    """If the lease holder gives up (cancelled) without a record, a waiter fetches promptly."""
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
    holding.cancel()
    await asyncio.gather(holding, return_exceptions=True)
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
