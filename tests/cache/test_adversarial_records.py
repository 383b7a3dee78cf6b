"""Adversarial shared records (issue 10 §3): whatever a hostile peer writes is a counted
miss or the observation the reader would make itself; never an exception out of a check.

The JSON path is the one RedisStore reads through (``_records.decode``); the object
path is MemoryStore's (``_records.validate``). End-to-end cases use a real server on
127.0.0.1 and a MemoryStore.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from typing import TYPE_CHECKING, Any

import pytest

import robots_async as ra
from robots_async.cache import records as _records
from robots_async.cache.resources import StoredResource, decode_resource, encode_resource
from robots_async.cache.tdmrep import TdmRepCache

from .conftest import TOKEN

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

    from .conftest import Server

RULES = "User-agent: *\nDisallow: /private\n"
URL = "http://127.0.0.1:1/robots.txt"
#: An integer JSON carries fine but no float can hold.
BIG = "1" + "0" * 400


def valid_fields(**changes: Any) -> dict[str, bytes]:
    """An encoded 200 record with a body, its metadata changed by ``changes``."""
    record = ra.StoredRobots(
        url=URL, final_url=URL, status=200, error=None, fetched_at=time.time(), body=b"x"
    )
    fields = _records.encode(record)
    meta = json.loads(fields["meta"])
    meta.update(changes)
    # "__BIG__" stands for an integer literal json.dumps cannot be asked to write.
    fields["meta"] = json.dumps(meta).replace('"__BIG__"', BIG).encode()
    return fields


FOUND = {  # each made decode() raise TypeError or OverflowError (or pass) before the fix
    "final-url-crlf": {"final_url": "http://127.0.0.1:1/robots.txt\r\nX-Forged: 1"},
    "final-url-nul": {"final_url": "http://127.0.0.1:1/\u0000"},
    "error-list": {"error": ["timeout"]},
    "error-object": {"error": {"kind": "timeout"}},
    "fetched-at-huge-int": {"fetched_at": "__BIG__"},
    "last-good-at-huge-int": {"last_good_at": "__BIG__"},
    "unreachable-since-huge-int": {"unreachable_since": "__BIG__"},
}
HELD = {  # refused before the fix too: kept as a regression table
    "status-0": {"status": 0},
    "status-600": {"status": 600},
    "status-float": {"status": 200.0},
    "status-huge": {"status": "__BIG__"},
    "hops-huge": {"hops": "__BIG__"},
    "hops-float": {"hops": 1.0},
    "v-2": {"v": 2},
    "v-string": {"v": "1"},
    "v-bool": {"v": True},
    "schema-other": {"schema": "other"},
    "extra-field": {"rules": "allow-all"},
    "fetched-at-negative": {"fetched_at": -1.0},
    "fetched-at-zero": {"fetched_at": -0.0},
    "fetched-at-string": {"fetched_at": "1700000000"},
    "header-crlf": {"headers": {"Cache-Control": "max-age=60\r\nX: y"}},
    "header-huge": {"headers": {"Cache-Control": "max-age=" + "9" * 100_000}},
    "header-unknown": {"headers": {"Set-Cookie": "a=b"}},
    "header-number": {"headers": {"Cache-Control": 60}},
    "url-javascript": {"url": "javascript:alert(1)"},
    "truncated-int": {"truncated": 1},
    "error-local": {"status": None, "error": "local-limit"},
    "no-status-no-error": {"status": None},
    "body-with-404": {"status": 404},
}


@pytest.mark.parametrize("changes", [*FOUND.values(), *HELD.values()], ids=[*FOUND, *HELD])
def test_hostile_json_metadata_is_an_invalid_record(changes: dict[str, Any]) -> None:
    """Every shape raises InvalidRecordError (a miss), never another exception."""
    with pytest.raises(ra.InvalidRecordError):
        _records.decode(valid_fields(**changes))


def test_json_nan_and_infinity_are_invalid() -> None:
    """json.loads accepts NaN/Infinity literals; they are not times."""
    for literal in ("NaN", "Infinity", "-Infinity", "1e999"):
        fields = valid_fields(fetched_at="__X__")
        fields["meta"] = fields["meta"].replace(b'"__X__"', literal.encode())
        with pytest.raises(ra.InvalidRecordError, match="fetched_at"):
            _records.decode(fields)


def test_oversized_int_literal_is_invalid() -> None:
    """More digits than int() converts (4,300): json refuses, the record is a miss."""
    fields = valid_fields(hops="__X__")
    fields["meta"] = fields["meta"].replace(b'"__X__"', b"9" * 5000)
    with pytest.raises(ra.InvalidRecordError, match="meta"):
        _records.decode(fields)


def test_deeply_nested_metadata_is_an_invalid_record() -> None:
    """A meta of 100,000 "[" raised RecursionError out of json.loads (so out of a
    check reading the store) instead of being a miss."""
    fields = valid_fields()
    fields["meta"] = b"[" * 100_000
    with pytest.raises(ra.InvalidRecordError, match="meta"):
        _records.decode(fields)


def observed(**changes: Any) -> ra.StoredRobots:
    """A valid 404 record of ``URL`` fetched now, changed by ``changes``."""
    values: dict[str, Any] = {
        "url": URL,
        "final_url": URL,
        "status": 404,
        "error": None,
        "fetched_at": time.time(),
    }
    values.update(changes)
    return ra.StoredRobots(**values)


POISONED = {  # objects a MemoryStore hands back as they were put (all but the int name
    # raised TypeError/OverflowError or passed before the fix)
    "error-list": {"status": None, "error": ["timeout"]},
    "header-name-list": {"headers": ((["Cache-Control"], "max-age=60"),)},
    "header-name-int": {"headers": ((1, "x"),)},
    "fetched-at-huge-int": {"fetched_at": 10**400},
    # The dict view checked only the last value: the first one was a 100 KB header.
    "header-twice": {"headers": (("ETag", "x" * 100_000), ("ETag", '"ok"'))},
}


@pytest.mark.parametrize("changes", list(POISONED.values()), ids=list(POISONED))
async def test_poisoned_object_is_a_counted_miss(
    server: Server, make_cache: Callable[..., ra.RobotsCache], changes: dict[str, Any]
) -> None:
    """The check is answered from a local fetch (the server's rules), the record is
    counted invalid and replaced by a valid one."""
    server.text("/robots.txt", RULES)
    origin = server.origin()
    url = origin.robots_url
    store = ra.MemoryStore()
    await store.put(origin, observed(url=url, final_url=url, **changes))
    cache = make_cache(store=store)
    entry, _ = await cache.get(origin)
    assert not entry.robots.allowed("/private", robots_token=TOKEN)
    assert (cache.stats.store_invalid, cache.stats.fetches, server.count()) == (1, 1, 1)
    replaced = await store.get(origin)
    assert replaced is not None
    assert _records.validate(replaced).body == RULES.encode()


async def test_body_beyond_the_readers_max_bytes_is_a_counted_miss(
    server: Server, make_cache: Callable[..., ra.RobotsCache]
) -> None:
    """A record whose body runs past the reader's max_bytes (a writer with a larger
    limit, or a hostile one): the reader's own fetch keeps no more than max_bytes, so
    the record is a miss; the reader fetches (same verdict) and shares a cut body."""
    limit = 1000
    body = b"User-agent: *\nDisallow: /\n" + b"#" * 2000 + b"\nAllow: /\n"
    server.text("/robots.txt", body.decode())
    origin = server.origin()
    url = origin.robots_url
    store = ra.MemoryStore()
    claim = observed(url=url, final_url=url, status=200, body=body, bytes_read=len(body))
    await store.put(origin, claim)
    reader = make_cache(policy=ra.FetchPolicy(max_bytes=limit), store=store)
    entry, _ = await reader.get(origin)
    assert not entry.robots.allowed("/a", robots_token=TOKEN)
    assert (reader.stats.store_invalid, reader.stats.fetches, server.count()) == (1, 1, 1)
    replaced = await store.get(origin)
    assert replaced is not None
    assert len(replaced.body) == limit
    assert replaced.truncated


async def test_oversized_shared_body_cannot_flush_the_readers_cache(
    make_server: Callable[[int], Awaitable[Server]], make_cache: Callable[..., ra.RobotsCache]
) -> None:
    """Found: a record with a 2 MB body (the reader's max_bytes is 512,000) was taken,
    sized at 2 MB against a 1 MB max_memory, and evicted every other entry. Now it is
    a counted miss: nothing is evicted, the local entry stays."""
    server = await make_server(2)
    server.text("/robots.txt", RULES)
    store = ra.MemoryStore()
    cache = make_cache(store=store, max_memory=1_000_000)
    await cache.get(server.origin(0))  # a local entry
    other = server.origin(1)
    url = other.robots_url
    body = b"User-agent: *\nDisallow: /\n" + b"#" * 2_000_000
    await store.put(other, observed(url=url, final_url=url, status=200, body=body))
    entry, _ = await cache.get(other)
    assert not entry.robots.allowed("/private", robots_token=TOKEN)
    assert (cache.stats.store_invalid, cache.stats.evictions) == (1, 0)
    assert cache.peek(server.origin(0)) is not None
    assert cache.stats.memory < 1_000_000


async def test_far_future_record_is_refused_and_far_past_is_stale(
    server: Server, make_cache: Callable[..., ra.RobotsCache]
) -> None:
    """fetched_at a year ahead: refused (counted); a second ahead-of-epoch (5e-324)
    record: valid but long expired, so fetched. Both answer with the server's rules."""
    server.text("/robots.txt", RULES)
    origin = server.origin()
    url = origin.robots_url
    for fetched_at, invalid in ((time.time() + 365 * 86400, 1), (5e-324, 0)):
        store = ra.MemoryStore()
        allow_all = observed(url=url, final_url=url, fetched_at=fetched_at)
        await store.put(origin, allow_all)
        cache = make_cache(store=store)
        entry, _ = await cache.get(origin)
        assert not entry.robots.allowed("/private", robots_token=TOKEN)
        assert (cache.stats.store_invalid, cache.stats.fetches) == (invalid, 1)


# --- tdmrep.json records (cache.resources) ------------------------------------------

TDM_URL = "http://127.0.0.1:1/.well-known/tdmrep.json"


def resource_fields(**changes: Any) -> dict[str, bytes]:
    """An encoded 200 tdmrep.json record, its metadata changed by ``changes``."""
    record = StoredResource("tdmrep", TDM_URL, 200, None, time.time(), time.time() + 60)
    fields = encode_resource(record)
    meta = json.loads(fields["meta"])
    meta.update(changes)
    fields["meta"] = json.dumps(meta).encode()
    return fields


UNHASHABLE = {  # each made decode_resource() raise TypeError ("unhashable type")
    "kind-list": {"kind": ["tdmrep"]},
    "kind-object": {"kind": {"name": "tdmrep"}},
    "error-list": {"error": ["timeout"]},
    "error-object": {"error": {"kind": "timeout"}},
}


@pytest.mark.parametrize("changes", list(UNHASHABLE.values()), ids=list(UNHASHABLE))
def test_hostile_resource_metadata_is_an_invalid_record(changes: dict[str, Any]) -> None:
    with pytest.raises(ra.InvalidRecordError):
        decode_resource(resource_fields(**changes))


async def test_unhashable_kind_in_a_sqlite_tdmrep_record_is_a_refetch(
    server: Server, make_cache: Callable[..., ra.RobotsCache], tmp_path: Path
) -> None:
    """Found: a tdmrep.json record whose kind was a JSON list raised TypeError out of
    SQLiteStore.get_resource() and so out of lookup() (and checker.usage()). Now a
    counted miss: fetched and overwritten."""
    server.text("/.well-known/tdmrep.json", '[{"location": "/books/*", "tdm-reservation": 1}]')
    path = tmp_path / "tdm.sqlite"
    async with ra.SQLiteStore(path) as store:
        cache = make_cache(store=store)
        tdm = TdmRepCache(cache, cache._fetcher)
        await tdm.lookup(server.url("/books/1"))  # makes the tables and a record
        await tdm.aclose()
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as conn:
        meta = json.loads(conn.execute("SELECT meta FROM resources").fetchone()[0])
        meta["kind"] = ["tdmrep"]
        conn.execute("UPDATE resources SET meta = ?", (json.dumps(meta).encode(),))
    async with ra.SQLiteStore(path) as store:
        cache = make_cache(store=store)
        tdm = TdmRepCache(cache, cache._fetcher)
        assert (await tdm.lookup(server.url("/books/1")))[0].status == "reserved"
        assert tdm.sharing is not None
        assert (tdm.sharing.invalid, tdm.sharing.errors, tdm.fetches) == (1, 0, 1)
        await tdm.aclose()
    assert server.count("/.well-known/tdmrep.json") == 2
