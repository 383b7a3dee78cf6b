"""tdmrep.json parsing and lookup (W3C TDMRep CG final report §4.4)."""

from __future__ import annotations

import gzip
import json
import zlib

import pytest

import robots_async as ra
from robots_async.core.tdmrep import TDMREP_MAX_ENTRIES, TdmRep, parse_tdmrep


def _file(*entries: object) -> bytes:
    return json.dumps(list(entries)).encode()


RESERVE_ALL = ({"location": "/", "tdm-reservation": 1},)


SITE = _file(
    {"location": "/public/*", "tdm-reservation": 0},
    {"location": "/news/*.html$", "tdm-reservation": 1, "tdm-policy": "https://x.test/p"},
    {"location": "/", "tdm-reservation": 1},
)


@pytest.mark.parametrize(
    ("url", "status", "policy"),
    [
        ("https://x.test/public/a", "not-reserved", None),
        ("https://x.test/news/today.html", "reserved", "https://x.test/p"),
        ("https://x.test/news/today.html?x=1", "reserved", None),  # "$" fails: falls to "/"
        ("https://x.test/other", "reserved", None),
        ("/public/b", "not-reserved", None),
    ],
)
def test_first_matching_location_decides(url: str, status: str, policy: str | None) -> None:
    answer = parse_tdmrep(SITE).lookup(url)
    assert answer.status == status
    assert answer.policy == policy


def test_no_matching_location_is_not_reserved() -> None:
    answer = parse_tdmrep(_file({"location": "/books/", "tdm-reservation": 1})).lookup("/x")
    assert answer.status == "not-reserved"
    assert answer.reservation is False
    assert parse_tdmrep(b"[]").lookup("/x").status == "not-reserved"


def test_absent_file_reserves_nothing() -> None:
    assert TdmRep.absent().lookup("https://x.test/a").status == "not-reserved"


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b"<!DOCTYPE html>\n<title>Not found</title>", "a page, not JSON"),
        (b"\xef\xbb\xbf  \n<html>", "a page, not JSON"),
        (b"Not Found", "text, not JSON"),
        # A site declaring TDMRep in every page's head, this one its soft 404 too:
        (b'<html><meta name="tdm-reservation" content="1"><p>Not found', "a page, not JSON"),
        (b"", "an empty body"),
        (b" \r\n\t", "an empty body"),
        # The soft 404 of a site that answers every path with JSON: no TDMRep property.
        (b'{"error": "Not Found", "status": 404}', "JSON without TDMRep's properties"),
    ],
)
def test_a_body_that_is_no_tdmrep_file_reserves_nothing(body: bytes, why: str) -> None:
    """TDMRep: failing to serve a machine-readable file means the origin does not
    implement the protocol. A site answering every path with a page (a soft 404) is
    the usual case: no file, not an unreadable one."""
    rep = parse_tdmrep(body)
    assert (rep.error, rep.not_a_file) == (None, why)
    answer = rep.lookup("https://x.test/books/1")
    assert answer.status == "not-reserved"
    assert answer.reason == f"no tdmrep.json ({why})"


@pytest.mark.parametrize(
    "body",
    [
        b"[{",  # a file begun: its publisher meant one
        b"\xff\xfe[\x00]\x00",  # saved as UTF-16
        b"\x00[",  # UTF-16 big-endian without its BOM
        b"\xff[]",
        b" " * 5000 + b"[]",  # blank past what the test reads: the parser decides
    ],
)
def test_a_body_begun_as_a_file_is_read_as_one(body: bytes) -> None:
    assert parse_tdmrep(body).not_a_file is None


@pytest.mark.parametrize(
    "body",
    [
        b'{"location": "/", "tdm-reservation": 1}',  # one entry, not in an array
        b'{"tdm_policy": "https://x.test/policy"}',
        b'{"Location": "/books/"}',
    ],
)
def test_json_naming_a_tdmrep_property_is_unknown_though_no_array(body: bytes) -> None:
    """JSON that is no array but names a property of TDMRep was meant as the file: it
    cannot be read, so unknown, never "nothing reserved"."""
    rep = parse_tdmrep(body)
    assert (rep.error, rep.not_a_file) == ("tdmrep.json is not a JSON array", None)
    assert rep.lookup("https://x.test/books/1").status == "unknown"


_RESERVING = _file(*RESERVE_ALL)


@pytest.mark.parametrize(
    "body",
    [
        gzip.compress(_RESERVING),  # served compressed without Content-Encoding
        zlib.compress(_RESERVING),  # (its first byte is "x": read as text)
        b"\x0c" + _RESERVING,  # a form feed: not JSON's whitespace, nor text
        b"// reservations for the whole site\n" + _RESERVING,
        b"/* TDMRep */ " + _RESERVING,
        b"callback(" + _RESERVING + b");",  # JSONP
        b")]}',\n" + _RESERVING,  # an anti-XSSI prefix
        b"<pre>" + _RESERVING + b"</pre>",  # a CMS that wraps what it serves
    ],
    ids=["gzip", "zlib", "form-feed", "line-comment", "block-comment", "jsonp", "xssi", "pre"],
)
def test_a_file_that_does_not_begin_as_json_is_unknown_not_absent(body: bytes) -> None:
    """Binary bytes or a body naming a TDMRep property is a file its publisher meant:
    unreadable, so unknown. Read as text or a page (no file), the reservation it
    makes was lost: "not-reserved" for a whole ttl (failing open)."""
    rep = parse_tdmrep(body)
    assert rep.not_a_file is None
    assert rep.lookup("https://x.test/a").status == "unknown"


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b'{"location": "/", "tdm-reservation": 1}',  # an object, not an array
        b"\xff\xfe[]",
        b"[" * 200_000 + b"]" * 200_000,  # nests past the interpreter's limit
        b"[" + b" " * (600 * 1024) + b"]",  # over the size cap
    ],
)
def test_unreadable_file_is_unknown(body: bytes) -> None:
    answer = parse_tdmrep(body).lookup("https://x.test/a")
    assert answer.status == "unknown"
    assert answer.reservation is None
    assert answer.reason


def test_bad_entries_are_unknown_only_where_they_could_decide() -> None:
    rep = parse_tdmrep(
        _file(
            {"location": "/ok/", "tdm-reservation": 0},
            {"location": "/bad/", "tdm-reservation": "yes"},
            {"tdm-reservation": 1},  # no location: might cover anything after it
            {"location": "/", "tdm-reservation": 0},
        )
    )
    assert rep.lookup("/ok/a").status == "not-reserved"
    assert rep.lookup("/bad/a").status == "unknown"
    assert rep.lookup("/elsewhere").status == "unknown"


@pytest.mark.parametrize(
    ("value", "status"),
    [(1, "reserved"), (0, "not-reserved"), ("1", "reserved"), (True, "unknown"), (2, "unknown")],
)
def test_reservation_values(value: object, status: str) -> None:
    rep = parse_tdmrep(_file({"location": "/", "tdm-reservation": value}))
    assert rep.lookup("/a").status == status


def test_bom_and_non_ascii_locations() -> None:
    body = b"\xef\xbb\xbf" + _file({"location": "/caf\u00e9/", "tdm-reservation": 1})
    rep = parse_tdmrep(body)
    assert rep.lookup("https://x.test/caf%C3%A9/menu").status == "reserved"
    assert rep.lookup("https://x.test/caf\u00e9/menu").status == "reserved"


# TDMRep §4.1: unreserved escapes are decoded before comparing, on both sides; a
# pattern writes a literal "$" or "*" as %24 / %2A (the report's own example).
ESCAPED = parse_tdmrep(
    json.dumps(
        [
            {"location": "/path/foo-%24", "tdm-reservation": 1},
            {"location": "/%7euser/*", "tdm-reservation": 1},
            {"location": "/a%2fb", "tdm-reservation": 1},
            {"location": "/stars/%2A$", "tdm-reservation": 1},
        ]
    ).encode()
)


@pytest.mark.parametrize(
    ("url", "status"),
    [
        ("https://provider.com/path/foo-$", "reserved"),
        ("https://provider.com/path/foo-%24", "reserved"),
        ("https://provider.com/path/foo-", "not-reserved"),
        ("https://provider.com/~user/a", "reserved"),
        ("https://provider.com/%7Euser/a", "reserved"),
        ("https://provider.com/a%2Fb", "reserved"),
        ("https://provider.com/a/b", "not-reserved"),
        ("https://provider.com/stars/*", "reserved"),
        ("https://provider.com/stars/x", "not-reserved"),
    ],
)
def test_escapes_compare_as_the_report_says(url: str, status: str) -> None:
    assert ESCAPED.lookup(url).status == status


@pytest.mark.parametrize(
    "body",
    [
        b'[{"location": "/a", "tdm-reservation": 1, "tdm-reservation": 0}]',
        b'[{"location": "/b", "location": "/a", "tdm-reservation": 0}]',
    ],
)
def test_a_key_repeated_with_another_value_is_unknown(body: bytes) -> None:
    """RFC 8259 §4: a repeated name's meaning is unpredictable. Python's json kept the
    last value, so a file reserving /a and then un-reserving it read "not-reserved"."""
    answer = parse_tdmrep(body).lookup("https://x.test/a")
    assert answer.status == "unknown"
    assert "repeats" in answer.reason


def test_a_key_repeated_with_its_own_value_is_read() -> None:
    body = b'[{"location": "/a", "tdm-reservation": 1, "tdm-reservation": 1, "x": 1, "x": 2}]'
    assert parse_tdmrep(body).lookup("https://x.test/a").status == "reserved"


@pytest.mark.parametrize(
    ("url", "status"),
    [
        ("https://x.test/a$b", "reserved"),
        ("https://x.test/a%24b", "reserved"),
        ("https://x.test/price$", "reserved"),
        ("https://x.test/price$x", "not-reserved"),
    ],
)
def test_a_dollar_inside_a_location_is_literal(url: str, status: str) -> None:
    """Only a final "$" ends a pattern (RFC 9309 §2.2.3, Google's matcher): "/a$b"
    never matched any URL, since the URL's "$" is compared as %24."""
    rep = parse_tdmrep(
        _file(
            {"location": "/a$b", "tdm-reservation": 1},
            {"location": "/price$$", "tdm-reservation": 1},
        )
    )
    assert rep.lookup(url).status == status


def test_a_url_as_location_is_unknown_where_it_could_decide() -> None:
    """The report's location is a path; "https://x.test/books/" was read as the path
    "/https://x.test/books/", which no URL has, so a reservation written that way
    silently reserved nothing."""
    rep = parse_tdmrep(
        _file(
            {"location": "/public/", "tdm-reservation": 0},
            {"location": "https://x.test/books/", "tdm-reservation": 1},
        )
    )
    assert rep.lookup("https://x.test/public/a").status == "not-reserved"
    answer = rep.lookup("https://x.test/books/a")
    assert answer.status == "unknown"
    assert "URL" in answer.reason


@pytest.mark.parametrize(
    "body", ['[{"location": "/", "tdm-reservation": 1}]', memoryview(_file(*RESERVE_ALL))]
)
def test_text_and_memoryview_bodies_are_read(body: object) -> None:
    """parse() takes str and memoryview; parse_tdmrep() raised AttributeError on both."""
    assert parse_tdmrep(body).lookup("/a").status == "reserved"  # type: ignore[arg-type]


def test_a_body_of_another_type_is_a_typed_error() -> None:
    with pytest.raises(ra.PageInputTypeError, match="NoneType"):
        parse_tdmrep(None)  # type: ignore[arg-type]


@pytest.mark.parametrize("max_bytes", [True, 0, -1, 1.5, "512000"])
def test_a_bad_max_bytes_fails_loudly(max_bytes: object) -> None:
    """max_bytes=True was taken as 1 byte: every file "over True bytes", unknown."""
    with pytest.raises(ra.ConfigurationError, match="max_bytes"):
        parse_tdmrep(b"[]", max_bytes=max_bytes)  # type: ignore[arg-type]


def test_entries_past_the_cap_are_not_kept_and_leave_the_rest_unknown() -> None:
    """A 510 KB file of 170,000 "{}" entries kept every one (32 MB per origin, the
    tdmrep cache holding 10,000 origins). The first TDMREP_MAX_ENTRIES decide as
    before; a URL none of them matches is unknown (a later entry might have)."""
    cap = TDMREP_MAX_ENTRIES
    spam = parse_tdmrep(b"[" + b",".join([b"{}"] * 170_000) + b"]")
    assert len(spam.entries) == cap
    many = [{"location": f"/s{i}/", "tdm-reservation": i % 2} for i in range(cap + 5)]
    rep = parse_tdmrep(_file(*many))
    assert len(rep.entries) == cap
    assert rep.lookup("/s3/a").status == "reserved"
    assert rep.lookup(f"/s{cap + 1}/a").status == "unknown"
    assert "entries" in rep.lookup("/elsewhere").reason
    exact = parse_tdmrep(_file(*many[:cap]))
    assert exact.lookup("/elsewhere").status == "not-reserved"
