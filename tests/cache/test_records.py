"""The shared-record schema (robots_async.cache.records): pure encode, decode and checks."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from multidict import CIMultiDict

import robots_async as ra
from robots_async.cache import records as _records


def good(**changes: Any) -> ra.StoredRobots:
    """A valid record of a 200 fetch with a last good copy, changed."""
    now = time.time()
    values: dict[str, Any] = {
        "url": "https://example.com/robots.txt",
        "final_url": "https://www.example.com/robots.txt",
        "status": 200,
        "error": None,
        "fetched_at": now,
        "headers": (("Cache-Control", "max-age=60"), ("Last-Modified", "Sun, 01 Nov 2026")),
        "hops": 1,
        "bytes_read": 12,
        "truncated": False,
        "body": b"User-agent: *\xff\x00\n",
        "last_good_body": b"User-agent: *\xff\x00\n",
        "last_good_at": now,
    }
    values.update(changes)
    return ra.StoredRobots(**values)


def test_encode_decode_round_trip() -> None:
    """encode() gives JSON meta with the schema version and raw bodies; decode() inverts it."""
    record = good()
    fields = _records.encode(record)
    assert set(fields) == {"meta", "body", "last_good"}
    meta = json.loads(fields["meta"])
    assert (meta["schema"], meta["v"]) == (_records.SCHEMA, _records.VERSION)
    assert fields["body"] == record.body
    assert _records.decode(fields) == record
    assert _records.validate(record) is record
    unreachable = good(
        status=None, error="timeout", body=b"", failures=3, unreachable_since=time.time() - 9
    )
    fields = _records.encode(unreachable)
    assert _records.decode(fields) == unreachable
    no_last_good = good(status=404, body=b"", last_good_body=None, last_good_at=None)
    assert set(_records.encode(no_last_good)) == {"meta", "body"}
    assert _records.decode(_records.encode(no_last_good)) == no_last_good


@pytest.mark.parametrize(
    ("meta", "field"),
    [
        ({"v": 1}, "v"),
        ([], "meta"),
        ("text", "meta"),
        (None, "meta"),
        (7, "meta"),
    ],
)
def test_decode_refuses_metadata_that_is_not_a_record(meta: object, field: str) -> None:
    """Metadata that is not a versioned object is refused, naming the part."""
    with pytest.raises(ra.InvalidRecordError) as refused:
        _records.decode({"meta": json.dumps(meta), "body": b""})
    assert refused.value.field == field


def test_decode_refuses_non_bytes_body() -> None:
    """Bodies must be bytes (a store returning str would otherwise parse text)."""
    fields: dict[str, object] = {**_records.encode(good()), "body": "User-agent: *"}
    with pytest.raises(ra.InvalidRecordError, match="body: str, not bytes"):
        _records.decode(fields)


def test_check_clock_allows_the_skew_allowance_only() -> None:
    """A fetch time up to MAX_CLOCK_SKEW ahead passes; further ahead is refused."""
    now = time.time()
    _records.check_clock(good(fetched_at=now + _records.MAX_CLOCK_SKEW - 1), now)
    _records.check_clock(good(fetched_at=now - 10 * 86_400), now)
    with pytest.raises(ra.InvalidRecordError, match=r"fetched_at: .* ahead of this clock"):
        _records.check_clock(good(fetched_at=now + _records.MAX_CLOCK_SKEW + 1), now)


def test_observed_headers_keeps_only_what_caching_needs() -> None:
    """Only SHARED_HEADERS are kept (case-insensitively from a real header map), in order."""
    headers = CIMultiDict(
        {"etag": '"x"', "Set-Cookie": "a=b", "cache-control": "no-cache", "Server": "s"}
    )
    assert _records.observed_headers(headers) == (("Cache-Control", "no-cache"), ("ETag", '"x"'))
    assert _records.observed_headers({}) == ()


def test_invalid_record_error_is_a_store_error() -> None:
    """Stores that only know StoreError still handle a refused record."""
    exc = ra.InvalidRecordError("status", "unknown status 999")
    assert isinstance(exc, ra.StoreError)
    assert str(exc) == "invalid record: status: unknown status 999"
    assert (exc.field, exc.reason) == ("status", "unknown status 999")


def test_check_url_refuses_another_origins_record() -> None:
    """A record stored under one origin but fetched from another is refused."""
    record = good()
    _records.check_url(record, "https://example.com/robots.txt")
    with pytest.raises(ra.InvalidRecordError, match=r"url: .* is not"):
        _records.check_url(record, "https://evil.test/robots.txt")
