"""RedisStore in one process: records, expiry, leases, failures, and checkers sharing it."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from typing import TYPE_CHECKING, Any

import pytest
import redis.asyncio as aioredis

import robots_async as ra
from robots_async.contrib.redis import RedisStore

from .conftest import ROBOTS, USER_AGENT, FakeClock, free_port

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from .conftest import RedisServer, Sites

ORIGIN = ra.Origin.from_url("http://shop.example.test:8080/")
#: Hang guard for calls that must fail fast.
QUICK = 3.0


def record(**changes: Any) -> ra.StoredRobots:
    """A StoredRobots of a 2xx fetch made just now, unless changed."""
    now = time.time()
    values: dict[str, Any] = {
        "url": "http://shop.example.test:8080/robots.txt",
        "final_url": "http://shop.example.test:8080/robots.txt",
        "status": 200,
        "error": None,
        "fetched_at": now,
        "headers": (("Cache-Control", "max-age=3600"), ("ETag", '"v1"')),
        "hops": 0,
        "bytes_read": len(ROBOTS),
        "truncated": False,
        "failures": 0,
        "unreachable_since": None,
        "body": ROBOTS,
        "last_good_body": ROBOTS,
        "last_good_at": now,
    }
    values.update(changes)
    return ra.StoredRobots(**values)


@pytest.fixture
async def make_store(
    redis_server: RedisServer, prefix: str
) -> AsyncIterator[Callable[..., RedisStore]]:
    """Factory of RedisStores on the shared server (this test's prefix), closed at teardown."""
    stores: list[RedisStore] = []

    def make(url: str | None = None, **options: Any) -> RedisStore:
        options.setdefault("prefix", prefix)
        store = RedisStore(url or redis_server.url, **options)
        stores.append(store)
        return store

    yield make
    for store in stores:
        await store.aclose()


@pytest.fixture
async def make_checker() -> AsyncIterator[Callable[..., ra.RobotsChecker]]:
    """Factory of RobotsCheckers (closed at teardown)."""
    checkers: list[ra.RobotsChecker] = []

    def make(store: ra.RobotsStore | None, **options: Any) -> ra.RobotsChecker:
        checker = ra.RobotsChecker(USER_AGENT, store=store, **options)
        checkers.append(checker)
        return checker

    yield make
    for checker in checkers:
        await checker.aclose()


async def keys(raw: aioredis.Redis, prefix: str) -> list[bytes]:
    """Every key under ``prefix``."""
    return sorted([key async for key in raw.scan_iter(match=f"{prefix}:*")])


# --- records ------------------------------------------------------------------------


async def test_round_trip_keeps_metadata_and_bodies_as_json_and_bytes(
    make_store: Callable[..., RedisStore], raw: aioredis.Redis, prefix: str
) -> None:
    """put then get returns an equal record; the raw hash is JSON meta plus raw bodies."""
    store = make_store()
    body = b"User-agent: *\nDisallow: /\xff\x00binary\n"
    rec = record(body=body, last_good_body=ROBOTS + b"# older\n", failures=2)
    await store.put(ORIGIN, rec)
    assert await store.get(ORIGIN) == rec
    [key] = await keys(raw, prefix)
    assert await raw.type(key) == b"hash"
    fields = await raw.hgetall(key)
    assert set(fields) == {b"meta", b"body", b"last_good"}
    meta = json.loads(fields[b"meta"])
    assert meta == rec.metadata()
    assert (meta["schema"], meta["v"]) == ("robots_async.record", 1)
    assert meta["headers"] == {"Cache-Control": "max-age=3600", "ETag": '"v1"'}
    assert fields[b"body"] == body
    assert fields[b"last_good"] == ROBOTS + b"# older\n"


async def test_record_without_last_good_body_replaces_one_with(
    make_store: Callable[..., RedisStore], raw: aioredis.Redis, prefix: str
) -> None:
    """A put replaces the whole hash: a record without last_good drops the old field."""
    store = make_store()
    await store.put(ORIGIN, record())
    now = time.time()
    unreachable = record(
        status=503,
        body=b"",
        failures=1,
        unreachable_since=now,
        last_good_body=None,
        last_good_at=None,
        fetched_at=now,
    )
    await store.put(ORIGIN, unreachable)
    assert await store.get(ORIGIN) == unreachable
    [key] = await keys(raw, prefix)
    assert set(await raw.hkeys(key)) == {b"meta", b"body"}


async def test_get_of_unknown_origin_is_none(make_store: Callable[..., RedisStore]) -> None:
    """get returns None for an origin never stored."""
    assert await make_store().get(ORIGIN) is None


async def test_put_sets_key_expiry_to_keep_for(
    make_store: Callable[..., RedisStore], raw: aioredis.Redis, prefix: str
) -> None:
    """The record key's PTTL is keep_for from the write, whatever the record says."""
    store = make_store(keep_for=100.0)
    await store.put(ORIGIN, record(headers=(("Cache-Control", "max-age=50"),)))
    [key] = await keys(raw, prefix)
    pttl = await raw.pttl(key)
    assert 99_000 < pttl <= 100_000
    # An old record is kept as long (its last good copy may still serve a reader).
    old = time.time() - 5 * 86_400
    await store.put(ORIGIN, record(fetched_at=old, last_good_at=old))
    pttl = await raw.pttl(key)
    assert 99_000 < pttl <= 100_000


async def test_unreadable_record_raises_store_error_and_cache_replaces_it(
    make_store: Callable[..., RedisStore],
    make_checker: Callable[..., ra.RobotsChecker],
    raw: aioredis.Redis,
    prefix: str,
    sites: Sites,
) -> None:
    """Garbage under a record key is an InvalidRecordError; a checker fetches and
    overwrites it (a miss, counted as invalid, not as a store failure)."""
    store = make_store()
    [site] = await sites.add()
    await store.put(site.origin, record())
    [key] = await keys(raw, prefix)
    await raw.hset(key, "meta", b"\x80\x04not json")
    with pytest.raises(ra.InvalidRecordError, match="meta: not JSON"):
        await store.get(site.origin)
    checker = make_checker(store)
    assert not await checker.allowed(site.url("/private/x"))
    assert checker.stats.cache.store_invalid == 1
    assert checker.stats.cache.store_errors == 0
    assert site.count() == 1
    fixed = await store.get(site.origin)
    assert fixed is not None
    assert fixed.body == ROBOTS


async def test_record_without_its_body_field_is_refused_not_read_as_empty(
    make_store: Callable[..., RedisStore],
    make_checker: Callable[..., ra.RobotsChecker],
    raw: aioredis.Redis,
    prefix: str,
    sites: Sites,
) -> None:
    """A 200 record whose hash lost its body field (cut or edited by hand) is invalid:
    read as an empty robots.txt it would allow everything (fail open)."""
    store = make_store()
    [site] = await sites.add()
    url = site.origin.robots_url
    await store.put(
        site.origin, record(url=url, final_url=url, last_good_body=None, last_good_at=None)
    )
    [key] = await keys(raw, prefix)
    await raw.hdel(key, "body")
    with pytest.raises(ra.InvalidRecordError, match="body: missing"):
        await store.get(site.origin)
    checker = make_checker(store)
    assert not await checker.allowed(site.url("/private/x"))
    assert checker.stats.cache.store_invalid == 1
    assert site.count() == 1


# --- leases -------------------------------------------------------------------------


async def test_acquire_is_exclusive_until_released(
    make_store: Callable[..., RedisStore], raw: aioredis.Redis, prefix: str
) -> None:
    """A held lease refuses a second acquire; release with its token frees the key once."""
    first, second = make_store(), make_store()
    lease = await first.acquire(ORIGIN, ttl=30)
    assert lease is not None
    assert lease.origin == ORIGIN
    assert await second.acquire(ORIGIN, ttl=30) is None
    assert await first.acquire(ORIGIN, ttl=30) is None
    [key] = await keys(raw, prefix)
    assert await raw.get(key) == lease.token.encode()
    assert 28_000 < await raw.pttl(key) <= 30_000
    assert await first.release(lease) is True
    assert await keys(raw, prefix) == []
    assert await first.release(lease) is False
    again = await second.acquire(ORIGIN, ttl=30)
    assert again is not None
    assert again.token != lease.token


async def test_release_of_expired_lease_keeps_the_new_holders(
    make_store: Callable[..., RedisStore], raw: aioredis.Redis, prefix: str
) -> None:
    """A lease released after it expired and was re-taken returns False; the new one stays."""
    slow, fast = make_store(), make_store()
    old = await slow.acquire(ORIGIN, ttl=0.2)
    assert old is not None
    await asyncio.sleep(0.4)
    new = await fast.acquire(ORIGIN, ttl=30)
    assert new is not None
    assert await slow.release(old) is False
    [key] = await keys(raw, prefix)
    assert await raw.get(key) == new.token.encode()
    assert await slow.acquire(ORIGIN, ttl=30) is None
    assert await fast.release(new) is True


async def test_release_of_expired_lease_nobody_took_is_false(
    make_store: Callable[..., RedisStore], raw: aioredis.Redis, prefix: str
) -> None:
    """A lease that expired on its own is gone: releasing it returns False."""
    store = make_store()
    lease = await store.acquire(ORIGIN, ttl=0.2)
    assert lease is not None
    await asyncio.sleep(0.4)
    assert await keys(raw, prefix) == []
    assert await store.release(lease) is False


async def test_lease_and_record_keys_are_separate(
    make_store: Callable[..., RedisStore], raw: aioredis.Redis, prefix: str
) -> None:
    """Holding a lease does not hide the record, and releasing it does not delete it."""
    store = make_store()
    rec = record()
    await store.put(ORIGIN, rec)
    lease = await store.acquire(ORIGIN, ttl=30)
    assert lease is not None
    assert len(await keys(raw, prefix)) == 2
    assert await store.get(ORIGIN) == rec
    assert await store.release(lease)
    assert len(await keys(raw, prefix)) == 1
    assert await store.get(ORIGIN) == rec


async def test_prefixes_keep_crawls_apart(make_store: Callable[..., RedisStore]) -> None:
    """A store with another prefix sees neither the record nor the lease."""
    mine = make_store()
    other = make_store(prefix="ra-test-other-" + os.urandom(4).hex())
    await mine.put(ORIGIN, record())
    assert await mine.acquire(ORIGIN, ttl=30) is not None
    assert await other.get(ORIGIN) is None
    lease = await other.acquire(ORIGIN, ttl=30)
    assert lease is not None
    assert await other.release(lease)


# --- clients and failures -----------------------------------------------------------


async def test_client_with_decoded_responses_is_refused(redis_server: RedisServer) -> None:
    """A redis.asyncio client with decode_responses=True raises ValueError."""
    client = aioredis.Redis.from_url(redis_server.url, decode_responses=True)
    try:
        with pytest.raises(ValueError, match="decode_responses"):
            RedisStore(client)
    finally:
        await client.aclose()


async def test_given_client_is_used_and_left_open(redis_server: RedisServer, prefix: str) -> None:
    """A bytes client passed in works for the store and is not closed by aclose."""
    client = redis_server.client()
    try:
        store = RedisStore(client, prefix=prefix)
        await store.put(ORIGIN, record())
        assert (await store.get(ORIGIN)) is not None
        await store.aclose()
        assert await client.ping()
        assert len(await keys(client, prefix)) == 1
    finally:
        await client.aclose()


@pytest.mark.parametrize("method", ["get", "put", "acquire", "release"])
async def test_redis_down_every_method_raises_store_error_quickly(
    make_store: Callable[..., RedisStore], method: str
) -> None:
    """Against a closed port each store method raises StoreError, not a redis/OS error."""
    store = make_store(f"redis://127.0.0.1:{free_port()}/0", timeout=1.0)
    calls = {
        "get": lambda: store.get(ORIGIN),
        "put": lambda: store.put(ORIGIN, record()),
        "acquire": lambda: store.acquire(ORIGIN, 5.0),
        "release": lambda: store.release(ra.Lease(ORIGIN, "token", time.time() + 5)),
    }
    start = time.monotonic()
    with pytest.raises(ra.StoreError):
        await asyncio.wait_for(calls[method](), QUICK * 3)
    assert time.monotonic() - start < QUICK


async def test_frozen_redis_raises_store_error_after_socket_timeout(
    private_redis: RedisServer, prefix: str
) -> None:
    """A server that stops answering (SIGSTOP) makes get raise StoreError near the timeout."""
    store = RedisStore(private_redis.url, prefix=prefix, timeout=0.5)
    try:
        assert await store.get(ORIGIN) is None
        os.kill(private_redis.pid, signal.SIGSTOP)
        try:
            for call in (store.get(ORIGIN), store.acquire(ORIGIN, 5.0)):
                start = time.monotonic()
                with pytest.raises(ra.StoreError):
                    await asyncio.wait_for(call, 30)
                assert time.monotonic() - start < QUICK
        finally:
            os.kill(private_redis.pid, signal.SIGCONT)
    finally:
        await store.aclose()


# --- checkers sharing a store -------------------------------------------------------


async def test_two_checkers_fetch_an_origin_once(
    make_store: Callable[..., RedisStore],
    make_checker: Callable[..., ra.RobotsChecker],
    sites: Sites,
) -> None:
    """Two checkers (own stores and clients, one prefix): one robots.txt request in all."""
    [site] = await sites.add()
    first, second = make_checker(make_store()), make_checker(make_store())
    assert not await first.allowed(site.url("/private/x"))
    decision = await second.explain(site.url("/private/x"))
    assert not decision.allowed
    assert decision.source == "fetched"
    assert await second.allowed(site.url("/public"))
    assert site.count() == 1
    assert first.stats.cache.fetches == 1
    assert second.stats.cache.fetches == 0
    assert second.stats.cache.store_hits >= 1
    assert first.stats.cache.store_errors == second.stats.cache.store_errors == 0


async def test_two_checkers_asking_at_once_fetch_once(
    make_store: Callable[..., RedisStore],
    make_checker: Callable[..., ra.RobotsChecker],
    sites: Sites,
) -> None:
    """Concurrent checks from two checkers on a slow origin: the lease lets one fetch."""
    [site] = await sites.add(delay=0.3)
    checkers = [make_checker(make_store()) for _ in range(2)]
    urls = [site.url("/private/x"), site.url("/a")] * 5
    verdicts = await asyncio.gather(*(c.allowed(u) for c in checkers for u in urls))
    assert verdicts == [False, True] * 10
    assert site.count() == 1
    assert sum(c.stats.cache.fetches for c in checkers) == 1
    assert sum(c.stats.cache.store_hits for c in checkers) == 1


class PausingStore:
    """A store whose ``pause_at``-th get answers only once ``resume`` is set: the caller
    is delayed between reading the record and taking the lease (a slow worker)."""

    def __init__(self, inner: RedisStore, pause_at: int, resume: asyncio.Event) -> None:
        self._inner = inner
        self._pause_at = pause_at
        self._resume = resume
        self.gets = 0
        self.paused = asyncio.Event()

    async def get(self, origin: ra.Origin) -> ra.StoredRobots | None:
        """The inner get; the pause_at-th one then waits for ``resume``."""
        found = await self._inner.get(origin)
        self.gets += 1
        if self.gets == self._pause_at:
            self.paused.set()
            await self._resume.wait()
        return found

    async def put(self, origin: ra.Origin, record: ra.StoredRobots) -> None:
        """The inner put."""
        await self._inner.put(origin, record)

    async def acquire(self, origin: ra.Origin, ttl: float) -> ra.Lease | None:
        """The inner acquire."""
        return await self._inner.acquire(origin, ttl)

    async def release(self, lease: ra.Lease) -> bool:
        """The inner release."""
        return await self._inner.release(lease)

    async def aclose(self) -> None:
        """The inner aclose."""
        await self._inner.aclose()


@pytest.mark.parametrize(
    "pause_at",
    [
        pytest.param(1, id="first-read"),
        pytest.param(2, id="read-while-waiting"),
    ],
)
async def test_lease_taken_after_another_worker_finished_does_not_refetch(
    make_store: Callable[..., RedisStore],
    make_checker: Callable[..., ra.RobotsChecker],
    sites: Sites,
    pause_at: int,
) -> None:
    """Taking the lease after another checker shared the record uses it instead of refetching."""
    [site] = await sites.add(delay=0.3)
    resume = asyncio.Event()
    slow_store = PausingStore(make_store(), pause_at, resume)
    fast, slow = make_checker(make_store()), make_checker(slow_store)
    fast_task = asyncio.create_task(fast.allowed(site.url("/private/x")))
    await asyncio.wait_for(site.requested.wait(), 30)  # holds the lease, is fetching
    slow_task = asyncio.create_task(slow.allowed(site.url("/private/x")))
    await asyncio.wait_for(slow_store.paused.wait(), 30)
    assert await asyncio.wait_for(fast_task, 30) is False  # fetched, shared, released
    resume.set()
    assert await asyncio.wait_for(slow_task, 30) is False
    assert fast.stats.cache.fetches == 1
    assert site.count() == 1, "fetched again although the record was shared before the lease"
    assert slow.stats.cache.fetches == 0


async def test_unreachable_state_is_shared_within_error_ttl(
    make_store: Callable[..., RedisStore],
    make_checker: Callable[..., ra.RobotsChecker],
    sites: Sites,
) -> None:
    """A 503 fetched by one checker: the other disallows all from the record, no request."""
    [site] = await sites.add(status=503, body=b"down")
    clock = FakeClock()
    first = make_checker(make_store(), clock=clock)
    second = make_checker(make_store(), clock=clock)
    assert not await first.allowed(site.url("/a"))
    clock.advance(250)  # within the first error TTL (5 minutes)
    decision = await second.explain(site.url("/a"))
    assert not decision.allowed
    assert decision.source == "unreachable"
    assert decision.status == 503
    assert site.count() == 1
    assert second.stats.cache.store_hits == 1
    assert second.stats.cache.fetches == 0
    assert decision.expires_at - decision.fetched_at == pytest.approx(300)


async def test_unavailable_state_is_shared_as_allow_all(
    make_store: Callable[..., RedisStore],
    make_checker: Callable[..., ra.RobotsChecker],
    sites: Sites,
) -> None:
    """A 404 fetched by one checker: the other allows all from the record, no request."""
    [site] = await sites.add(status=404, body=b"not here")
    first, second = make_checker(make_store()), make_checker(make_store())
    assert await first.allowed(site.url("/private/x"))
    decision = await second.explain(site.url("/private/x"))
    assert (decision.allowed, decision.source, decision.status) == (True, "unavailable", 404)
    assert site.count() == 1
    assert second.stats.cache.store_hits == 1


async def test_stale_copy_and_error_backoff_are_shared(
    make_store: Callable[..., RedisStore],
    make_checker: Callable[..., ra.RobotsChecker],
    sites: Sites,
) -> None:
    """A 503 record carries the good copy (served stale) and the failure count to other checkers."""
    [site] = await sites.add(headers={"Cache-Control": "max-age=60"})
    clock = FakeClock()
    store = make_store()
    first = make_checker(make_store(), clock=clock)
    assert not await first.allowed(site.url("/private/x"))
    site.serve(status=503, body=b"down")
    clock.advance(61)
    second = make_checker(make_store(), clock=clock)
    decision = await second.explain(site.url("/private/x"))
    assert site.count() == 2
    assert decision.source == "stale"
    assert not decision.allowed
    assert await second.allowed(site.url("/public"))
    shared = await store.get(site.origin)
    assert shared is not None
    assert (shared.status, shared.failures, shared.body) == (503, 1, b"")
    assert shared.last_good_body == ROBOTS
    assert shared.last_good_at is not None
    assert shared.last_good_at < shared.fetched_at
    # The first checker's own copy expired: it takes the 503 record instead of fetching.
    again = await first.explain(site.url("/private/x"))
    assert (again.source, again.allowed) == ("stale", False)
    third = make_checker(make_store(), clock=clock)
    assert await third.allowed(site.url("/public"))
    assert not await third.allowed(site.url("/private/x"))
    assert site.count() == 2
    # Past the error TTL a fresh checker refetches, continuing the shared failure count.
    clock.advance(301)
    fourth = make_checker(make_store(), clock=clock)
    later = await fourth.explain(site.url("/private/x"))
    assert site.count() == 3
    assert (later.source, later.allowed) == ("stale", False)
    assert later.expires_at - later.fetched_at == pytest.approx(600)
    shared = await store.get(site.origin)
    assert shared is not None
    assert shared.failures == 2


@pytest.mark.parametrize("outage", ["stopped", "frozen"])
async def test_redis_lost_mid_crawl_checks_answered_locally(
    private_redis: RedisServer,
    prefix: str,
    make_checker: Callable[..., ra.RobotsChecker],
    sites: Sites,
    outage: str,
) -> None:
    """Redis stopped or frozen mid-crawl: checks answered by local fetches, store used once back."""
    stores = [RedisStore(private_redis.url, prefix=prefix, timeout=0.5) for _ in range(2)]
    try:
        first, second = (make_checker(store) for store in stores)
        before, during, after = [await sites.add(5) for _ in range(3)]
        for site in before:
            assert not await first.allowed(site.url("/private/x"))
            assert await second.allowed(site.url("/a"))
        assert first.stats.cache.store_errors == second.stats.cache.store_errors == 0
        assert second.stats.cache.store_hits == 5
        if outage == "stopped":
            private_redis.stop()
        else:
            os.kill(private_redis.pid, signal.SIGSTOP)
        try:
            start = time.monotonic()
            checks = [
                checker.allowed(site.url(path))
                for site in during
                for checker, path in ((first, "/private/x"), (second, "/a"))
            ]
            verdicts = await asyncio.wait_for(asyncio.gather(*checks), 60)
            assert verdicts == [False, True] * 5
            assert time.monotonic() - start < 20  # hang guard (a socket timeout is 0.5 s)
        finally:
            if outage == "stopped":
                private_redis.start()
            else:
                os.kill(private_redis.pid, signal.SIGCONT)
        assert [site.count() for site in during] == [2] * 5  # each checker fetched itself
        assert first.stats.cache.store_errors > 0
        assert second.stats.cache.store_errors > 0
        errors = first.stats.cache.store_errors + second.stats.cache.store_errors
        for site in after:
            assert not await first.allowed(site.url("/private/x"))
            assert await second.allowed(site.url("/a"))
            assert site.count() == 1
        assert second.stats.cache.store_hits == 10
        assert first.stats.cache.store_errors + second.stats.cache.store_errors == errors
        assert [site.count() for site in before] == [1] * 5
    finally:
        for store in stores:
            await store.aclose()


async def test_scrapy_settings_build_a_redis_store(redis_server: RedisServer, prefix: str) -> None:
    """ROBOTSASYNC_REDIS_URL/PREFIX make the Scrapy middleware's store a RedisStore there."""
    pytest.importorskip("scrapy")
    from scrapy.settings import Settings

    from robots_async.contrib import scrapy as ra_scrapy

    settings = Settings({"ROBOTSASYNC_REDIS_URL": redis_server.url})
    assert ra_scrapy._store_from(ra_scrapy.read_settings(Settings())) is None
    settings.set("ROBOTSASYNC_REDIS_PREFIX", prefix)
    store = ra_scrapy._store_from(ra_scrapy.read_settings(settings))
    assert isinstance(store, RedisStore)
    client = redis_server.client()
    try:
        lease = await store.acquire(ORIGIN, ttl=30)
        assert lease is not None
        assert len(await keys(client, prefix)) == 1
        assert await store.release(lease)
    finally:
        await store.aclose()
        await client.aclose()
