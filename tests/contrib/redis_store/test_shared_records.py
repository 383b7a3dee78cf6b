"""Shared records cannot lie: observations judged by each reader's own policy and clock,
poisoned records read as misses, a Redis that never answers, and clock skew."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import TYPE_CHECKING, Any, Literal

import pytest
import redis.asyncio as aioredis

import robots_async as ra
from robots_async.contrib.redis import RedisStore

from .conftest import ROBOTS, USER_AGENT, FakeClock

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from .conftest import RedisServer, Site, Sites

DAY = 86_400.0


@pytest.fixture
async def make_store(
    redis_server: RedisServer, prefix: str
) -> AsyncIterator[Callable[..., RedisStore]]:
    """Factory of RedisStores on the shared server (this test's prefix), closed at teardown."""
    stores: list[RedisStore] = []

    def make(**options: Any) -> RedisStore:
        options.setdefault("prefix", prefix)
        store = RedisStore(redis_server.url, **options)
        stores.append(store)
        return store

    yield make
    for store in stores:
        await store.aclose()


@pytest.fixture
async def make_checker(
    make_store: Callable[..., RedisStore],
) -> AsyncIterator[Callable[..., ra.RobotsChecker]]:
    """Factory of RobotsCheckers, each on its own RedisStore of one prefix (a worker)."""
    checkers: list[ra.RobotsChecker] = []

    def make(**options: Any) -> ra.RobotsChecker:
        options.setdefault("store", make_store())
        checker = ra.RobotsChecker(USER_AGENT, **options)
        checkers.append(checker)
        return checker

    yield make
    for checker in checkers:
        await checker.aclose()


def record_key(prefix: str, site: Site) -> str:
    """The Redis key of ``site``'s record."""
    return f"{prefix}:rec:{{http://127.0.0.1:{site.port}}}"


# --- each reader applies its own policy to what was observed ------------------------


@pytest.mark.parametrize("writer_policy", ["yandex", "legacy_allow_on_error"])
async def test_lax_worker_observing_503_cannot_make_default_worker_allow(
    make_checker: Callable[..., ra.RobotsChecker], sites: Sites, writer_policy: str
) -> None:
    """A worker whose policy allows all on 503 shares the observed 503; a default-policy
    worker reads it (no request of its own) and disallows, as it would alone."""
    [site] = await sites.add(status=503, body=b"down")
    writer = make_checker(fetch_policy=getattr(ra.FetchPolicy, writer_policy)())
    assert await writer.allowed(site.url("/private/x"))  # its own policy: allow all
    reader = make_checker()
    decision = await reader.explain(site.url("/a"))
    assert (decision.allowed, decision.source, decision.status) == (False, "unreachable", 503)
    assert not await reader.allowed(site.url("/private/x"))
    assert reader.stats.cache.store_hits == 1
    assert reader.stats.cache.fetches == 0
    assert site.count() == 1
    # The same worker alone (no store) says the same.
    alone = make_checker(store=None)
    assert not await alone.allowed(site.url("/a"))


async def test_strict_worker_reading_a_lax_workers_503_keeps_its_stale_copy(
    make_checker: Callable[..., ra.RobotsChecker], sites: Sites
) -> None:
    """After a good fetch and then a 503 observed by a yandex worker, a default worker
    uses the shared last good copy (its stale rule) and the yandex worker allows all."""
    [site] = await sites.add(headers={"Cache-Control": "max-age=60"})
    clock = FakeClock()
    first = make_checker(clock=clock)
    assert not await first.allowed(site.url("/private/x"))
    site.serve(status=503, body=b"down")
    clock.advance(61)
    lax = make_checker(fetch_policy=ra.FetchPolicy.yandex(), clock=clock)
    assert await lax.allowed(site.url("/private/x"))  # yandex: no stale copy, allow all
    assert site.count() == 2
    strict = make_checker(clock=clock)
    decision = await strict.explain(site.url("/private/x"))
    assert (decision.allowed, decision.source, decision.status) == (False, "stale", 503)
    assert await strict.allowed(site.url("/public"))
    assert strict.stats.cache.fetches == 0
    assert site.count() == 2


@pytest.mark.parametrize(
    ("writer", "reader", "expected"),
    [
        pytest.param("allow", "disallow", False, id="default-writer-disallow-reader"),
        pytest.param("disallow", "allow", True, id="disallow-writer-default-reader"),
    ],
)
async def test_403_is_judged_by_the_readers_forbidden_setting(
    make_checker: Callable[..., ra.RobotsChecker],
    sites: Sites,
    writer: Literal["allow", "disallow"],
    reader: Literal["allow", "disallow"],
    expected: bool,
) -> None:
    """An observed 403 means what the *reader's* forbidden= says, whoever fetched it."""
    [site] = await sites.add(status=403, body=b"no")
    first = make_checker(fetch_policy=ra.FetchPolicy(forbidden=writer))
    assert await first.allowed(site.url("/a")) is (not expected)
    second = make_checker(fetch_policy=ra.FetchPolicy(forbidden=reader))
    decision = await second.explain(site.url("/a"))
    assert (decision.allowed, decision.status) == (expected, 403)
    assert second.stats.cache.store_hits == 1
    assert site.count() == 1


async def test_readers_match_policy_parses_the_shared_body(
    make_checker: Callable[..., ra.RobotsChecker], sites: Sites
) -> None:
    """The body is shared raw: a first-match reader and a google reader disagree as
    they would alone (first-match: the first matching rule; google: the longest)."""
    body = b"User-agent: *\nDisallow: /a\nAllow: /a/b\n"
    [site] = await sites.add(body=body)
    google = make_checker()
    assert await google.allowed(site.url("/a/b"))
    first_match = make_checker(policy="first-match")
    assert not await first_match.allowed(site.url("/a/b"))
    assert first_match.stats.cache.store_hits == 1
    assert site.count() == 1


# --- poisoned records ---------------------------------------------------------------


def _meta(**changes: Any) -> dict[str, Any]:
    """Metadata of a valid 404 observation (allow all, if it were believed), changed."""
    now = time.time()
    meta: dict[str, Any] = {
        "schema": "robots_async.record",
        "v": 1,
        "url": "http://127.0.0.1:{port}/robots.txt",
        "final_url": "http://127.0.0.1:{port}/robots.txt",
        "status": 404,
        "error": None,
        "headers": {"Cache-Control": "max-age=3600"},
        "fetched_at": now,
        "hops": 0,
        "bytes_read": 0,
        "truncated": False,
        "failures": 0,
        "unreachable_since": None,
        "last_good_at": None,
    }
    meta.update(changes)
    return {k: v for k, v in meta.items() if v is not _DROP}


_DROP = object()
_LEGACY = {  # the format before schema versions: a verdict, served until expires_at
    "url": "http://127.0.0.1:1/robots.txt",
    "final_url": "http://127.0.0.1:1/robots.txt",
    "status": 503,
    "error": None,
    "hops": 0,
    "bytes_read": 0,
    "truncated": False,
    "source": "unreachable",
    "rules": "allow-all",
    "fetched_at": time.time(),
    "expires_at": time.time() + 10 * 365 * DAY,
    "failures": 1,
    "unreachable_since": time.time(),
    "last_good_at": None,
}

#: (id, hash fields, the field the refusal names)
POISONED: list[tuple[str, dict[str, bytes], str]] = [
    ("meta-is-a-list", {"meta": b"[1, 2, 3]", "body": b""}, "meta"),
    ("meta-not-json", {"meta": b"\x80not json", "body": b""}, "meta"),
    ("meta-missing", {"body": b""}, "meta"),
    ("legacy-allow-all", {"meta": json.dumps(_LEGACY).encode(), "body": b""}, "v"),
    ("unknown-version", {"meta": json.dumps(_meta(v=2)).encode(), "body": b""}, "v"),
    ("fetched-at-string", {"meta": json.dumps(_meta(fetched_at="soon")).encode()}, "fetched_at"),
    ("fetched-at-null", {"meta": json.dumps(_meta(fetched_at=None)).encode()}, "fetched_at"),
    ("fetched-at-nan", {"meta": json.dumps(_meta(fetched_at=float("nan"))).encode()}, "fetched_at"),
    ("fetched-at-inf", {"meta": json.dumps(_meta(fetched_at=float("inf"))).encode()}, "fetched_at"),
    (
        "url-of-another-origin",
        {"meta": json.dumps(_meta(url="http://127.0.0.1:1/robots.txt")).encode(), "body": b""},
        "url",
    ),
    (
        "fetched-at-2-days-ahead",
        {"meta": json.dumps(_meta(fetched_at=time.time() + 2 * DAY)).encode(), "body": b""},
        "fetched_at",
    ),
    (
        "expires-at-10-years",
        {"meta": json.dumps(_meta(expires_at="2036-01-01")).encode()},
        "expires_at",
    ),
    ("rules-allow-all", {"meta": json.dumps(_meta(rules="allow-all")).encode()}, "rules"),
    ("status-unknown", {"meta": json.dumps(_meta(status=999)).encode()}, "status"),
    ("status-string", {"meta": json.dumps(_meta(status="404")).encode()}, "status"),
    ("error-unknown", {"meta": json.dumps(_meta(status=None, error="fine")).encode()}, "error"),
    ("no-status-no-error", {"meta": json.dumps(_meta(status=None)).encode()}, "status"),
    ("bytes-read-negative", {"meta": json.dumps(_meta(bytes_read=-1)).encode()}, "bytes_read"),
    ("hops-negative", {"meta": json.dumps(_meta(hops=-3)).encode()}, "hops"),
    ("failures-float", {"meta": json.dumps(_meta(failures=1.5)).encode()}, "failures"),
    ("truncated-string", {"meta": json.dumps(_meta(truncated="no")).encode()}, "truncated"),
    (
        "headers-list",
        {"meta": json.dumps(_meta(headers=[["Cache-Control", "max-age=9"]])).encode()},
        "headers",
    ),
    (
        "header-unknown",
        {"meta": json.dumps(_meta(headers={"X-Verdict": "allow"})).encode()},
        "headers",
    ),
    ("field-missing", {"meta": json.dumps(_meta(hops=_DROP)).encode()}, "hops"),
    (
        "body-with-404",
        {"meta": json.dumps(_meta()).encode(), "body": b"User-agent: *\nAllow: /\n"},
        "body",
    ),
    (
        "last-good-without-time",
        {"meta": json.dumps(_meta()).encode(), "last_good": b"User-agent: *\nAllow: /\n"},
        "last_good_at",
    ),
    (
        "last-good-after-fetch",
        {
            "meta": json.dumps(
                _meta(last_good_at=time.time() + 30, fetched_at=time.time())
            ).encode(),
            "last_good": b"",
        },
        "last_good_at",
    ),
]


#: Shapes that conform to the schema, refused by the reader (its clock, its origin).
CONFORMING = {"fetched-at-2-days-ahead", "url-of-another-origin"}


@pytest.mark.parametrize(
    ("name", "fields", "field"),
    [pytest.param(name, fields, field, id=name) for name, fields, field in POISONED],
)
async def test_poisoned_record_is_a_counted_miss_and_is_overwritten(
    *,
    make_checker: Callable[..., ra.RobotsChecker],
    make_store: Callable[..., RedisStore],
    raw: aioredis.Redis,
    prefix: str,
    sites: Sites,
    caplog: pytest.LogCaptureFixture,
    name: str,
    fields: dict[str, bytes],
    field: str,
) -> None:
    """Each poisoned shape, written straight into Redis: the checker ignores it (never
    allow-all, never a crash), fetches, counts one invalid record, logs one WARNING
    naming the field, and overwrites it with a valid record."""
    [site] = await sites.add()
    port = str(site.port).encode()
    fields = {part: value.replace(b"{port}", port) for part, value in fields.items()}
    await raw.hset(record_key(prefix, site), mapping=fields)  # type: ignore[arg-type]
    if name in CONFORMING:
        assert await make_store().get(site.origin) is not None
    else:
        with pytest.raises(ra.InvalidRecordError) as refused:
            await make_store().get(site.origin)
        assert refused.value.field == field
    checker = make_checker()
    with caplog.at_level(logging.WARNING, logger="robots_async"):
        assert not await checker.allowed(site.url("/private/x"))
        assert await checker.allowed(site.url("/a"))
    stats = checker.stats.cache
    assert (stats.store_invalid, stats.store_errors, stats.store_hits, stats.fetches) == (
        1,
        0,
        0,
        1,
    )
    assert site.count() == 1
    warnings = [r for r in caplog.records if "ignored" in r.getMessage()]
    assert len(warnings) == 1
    assert f"invalid record: {field}:" in warnings[0].getMessage()
    fixed = await make_store().get(site.origin)
    assert fixed is not None
    assert (fixed.status, fixed.body) == (200, ROBOTS)
    # The overwritten record now serves other workers.
    other = make_checker()
    assert not await other.allowed(site.url("/private/x"))
    assert other.stats.cache.store_hits == 1
    assert other.stats.cache.store_invalid == 0
    assert site.count() == 1


# --- freshness on the reader's clock ------------------------------------------------


async def test_writer_clock_two_days_fast_cannot_extend_the_readers_ttl(
    make_checker: Callable[..., ra.RobotsChecker],
    make_store: Callable[..., RedisStore],
    sites: Sites,
) -> None:
    """A record fetched "2 days from now" is refused (counted), fetched and overwritten;
    the reader serves its own copy for its own TTL, then fetches again."""
    [site] = await sites.add()
    fast, clock = FakeClock(), FakeClock()
    fast.advance(2 * DAY)
    writer = make_checker(clock=fast)
    assert not await writer.allowed(site.url("/private/x"))
    written = await make_store().get(site.origin)
    assert written is not None
    assert written.fetched_at == pytest.approx(clock.now + 2 * DAY)
    reader = make_checker(clock=clock)
    decision = await reader.explain(site.url("/private/x"))
    assert (decision.allowed, decision.source, decision.from_cache) == (False, "fetched", False)
    assert (reader.stats.cache.store_invalid, reader.stats.cache.store_hits) == (1, 0)
    assert site.count() == 2
    assert decision.expires_at == pytest.approx(clock.now + DAY)  # its own TTL, from now
    fixed = await make_store().get(site.origin)
    assert fixed is not None
    assert fixed.fetched_at == pytest.approx(clock.now)
    clock.advance(DAY + 1)
    later = await reader.explain(site.url("/private/x"))
    assert later.fetched_at == pytest.approx(clock.now)
    assert site.count() == 3


async def test_small_skew_is_served_at_most_the_readers_ttl_from_first_sight(
    make_checker: Callable[..., ra.RobotsChecker], sites: Sites
) -> None:
    """A writer 30 s fast (within the allowance): its record counts as fetched when the
    reader first saw it, and is not served again after that TTL, although by its own
    fetch time it would still be fresh for 30 s."""
    [site] = await sites.add()
    ahead, clock = FakeClock(), FakeClock()
    ahead.advance(30)
    assert not await make_checker(clock=ahead).allowed(site.url("/private/x"))
    reader = make_checker(clock=clock)
    first = await reader.explain(site.url("/private/x"))
    assert (first.allowed, first.source) == (False, "fetched")
    assert reader.stats.cache.store_hits == 1
    assert first.fetched_at == pytest.approx(clock.now)
    assert first.expires_at == pytest.approx(clock.now + DAY)
    assert site.count() == 1
    clock.advance(DAY + 10)  # past the first sight's TTL, within the record's own
    again = await reader.explain(site.url("/private/x"))
    assert not again.allowed
    assert site.count() == 2
    assert reader.stats.cache.fetches == 1
    assert again.fetched_at == pytest.approx(clock.now)


async def test_ten_year_max_age_is_capped_at_the_readers_max_ttl(
    make_checker: Callable[..., ra.RobotsChecker], sites: Sites
) -> None:
    """A writer that allows a 10-year TTL shares the header, not its verdict: the reader
    serves the record for its own max_ttl (24 h) and then fetches."""
    ten_years = 10 * 365 * DAY
    [site] = await sites.add(headers={"Cache-Control": f"max-age={ten_years:.0f}"})
    clock = FakeClock()
    writer = make_checker(fetch_policy=ra.FetchPolicy(max_ttl=ten_years), clock=clock)
    mine = await writer.explain(site.url("/private/x"))
    assert mine.expires_at - mine.fetched_at == pytest.approx(ten_years)
    reader = make_checker(clock=clock)
    shared = await reader.explain(site.url("/private/x"))
    assert reader.stats.cache.store_hits == 1
    assert shared.expires_at - shared.fetched_at == pytest.approx(DAY)
    clock.advance(DAY + 1)
    assert not await reader.allowed(site.url("/private/x"))
    assert site.count() == 2
    assert reader.stats.cache.fetches == 1


# --- a Redis that never answers -----------------------------------------------------


@pytest.fixture
async def black_hole() -> AsyncIterator[int]:
    """A TCP server on 127.0.0.1 that accepts connections and never answers: its port."""
    writers: list[asyncio.StreamWriter] = []

    async def swallow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writers.append(writer)
        while await reader.read(65_536):
            pass
        writer.close()

    server = await asyncio.start_server(swallow, "127.0.0.1", 0)
    port: int = server.sockets[0].getsockname()[1]
    yield port
    for writer in writers:
        writer.close()
    server.close()
    await server.wait_closed()


@pytest.mark.parametrize(
    ("client_kind", "store_timeout"),
    [
        pytest.param("given", None, id="given-default-client"),
        pytest.param("given", 300.0, id="given-client-store-timeout-300s-cache-bounds-it"),
        pytest.param("url", None, id="store-built-from-url"),
    ],
)
async def test_black_hole_redis_answers_each_check_in_seconds(
    black_hole: int, sites: Sites, prefix: str, client_kind: str, store_timeout: float | None
) -> None:
    """A Redis that accepts and never answers, with a redis.asyncio.Redis() of library
    defaults passed in (or a URL): every check is answered by a local fetch within a
    few seconds, as a store error (bounded by the store's timeout, and by the cache's
    whatever the store allows)."""
    origins = await sites.add(4)
    options = {} if store_timeout is None else {"timeout": store_timeout}
    client = aioredis.Redis(host="127.0.0.1", port=black_hole)
    target = client if client_kind == "given" else f"redis://127.0.0.1:{black_hole}/0"
    store = RedisStore(target, prefix=prefix, **options)
    checker = ra.RobotsChecker(USER_AGENT, store=store)
    try:
        took: list[float] = []

        async def timed(url: str) -> bool:
            start = time.monotonic()
            allowed = await checker.allowed(url)
            took.append(time.monotonic() - start)
            return allowed

        checks = [timed(site.url(path)) for site in origins for path in ("/private/x", "/a")]
        assert await asyncio.wait_for(asyncio.gather(*checks), 60) == [False, True] * 4
        assert max(took) < 5.0, took
        assert min(took) > 1.0, took  # the store call did wait for its timeout (2 s)
        assert checker.stats.cache.store_errors == 4
        assert checker.stats.cache.fetches == 4
        assert [site.count() for site in origins] == [1] * 4
    finally:
        await checker.aclose()
        await store.aclose()
        await client.aclose()


# --- closing ------------------------------------------------------------------------


async def _client_names(raw: aioredis.Redis) -> set[str]:
    return {str(client.get("name", "")) for client in await raw.client_list()}


async def test_async_with_closes_store_and_checker_leaves_a_given_store_open(
    redis_server: RedisServer, raw: aioredis.Redis, prefix: str, sites: Sites
) -> None:
    """``async with RedisStore(...) as store, RobotsChecker(store=store)``: the checker's
    aclose leaves the store open (the caller's), the store's exit closes its client."""
    [site] = await sites.add()
    name = f"h5-{prefix}"
    url = f"{redis_server.url}?client_name={name}"
    async with RedisStore(url, prefix=prefix) as store:
        async with ra.RobotsChecker(USER_AGENT, store=store) as checker:
            assert not await checker.allowed(site.url("/private/x"))
        assert await store.get(site.origin) is not None  # still usable
        assert name in await _client_names(raw)
    for _ in range(100):  # the server notices the close at once; poll briefly
        if name not in await _client_names(raw):
            break
        await asyncio.sleep(0.02)
    assert name not in await _client_names(raw)
    async with ra.MemoryStore() as memory:
        assert isinstance(memory, ra.MemoryStore)


@pytest.mark.parametrize("setting", ["timeout", "keep_for"])
@pytest.mark.parametrize("value", [0, -1.0, float("nan"), float("inf"), "2", True])
def test_bad_store_settings_raise_naming_the_setting(
    redis_server: RedisServer, setting: str, value: object
) -> None:
    """A RedisStore timeout or keep_for that is not a positive finite number is refused."""
    with pytest.raises(ValueError, match=f"RedisStore {setting} must be"):
        RedisStore(redis_server.url, **{setting: value})  # type: ignore[arg-type]


@pytest.mark.parametrize("method", ["get", "put", "acquire", "release"])
async def test_black_hole_every_store_method_raises_store_error_at_its_timeout(
    black_hole: int, prefix: str, method: str
) -> None:
    """Each RedisStore method on a silent server raises StoreError after ``timeout``,
    with a default redis.asyncio client passed in (no socket timeout of ours)."""
    origin = ra.Origin.from_url("http://127.0.0.1:1/")
    client = aioredis.Redis(host="127.0.0.1", port=black_hole)
    store = RedisStore(client, prefix=prefix, timeout=0.5)
    calls = {
        "get": lambda: store.get(origin),
        "put": lambda: store.put(
            origin, ra.StoredRobots(origin.robots_url, origin.robots_url, 404, None, time.time())
        ),
        "acquire": lambda: store.acquire(origin, 5.0),
        "release": lambda: store.release(ra.Lease(origin, "token", time.time() + 5)),
    }
    try:
        start = time.monotonic()
        with pytest.raises(ra.StoreError, match=r"no answer within 0\.5 s"):
            await asyncio.wait_for(calls[method](), 30)
        assert 0.4 < time.monotonic() - start < 2.0
    finally:
        await store.aclose()
        await client.aclose()
