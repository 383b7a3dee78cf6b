"""SitemapParser, sans-I/O: formats told by content, fields, namespaces, limits."""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import pytest

from robots_async.core.errors import ConfigurationError
from robots_async.core.sitemap_values import parse_changefreq, parse_lastmod, parse_priority
from robots_async.core.sitemaps import SitemapLimits, SitemapParser, SitemapUrl, in_path_scope

BASE = "https://example.com/sitemap.xml"
SITEMAP = (
    b'\xef\xbb\xbf\n  <?xml version="1.0" encoding="UTF-8"?>\n'
    b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"\n'
    b'  xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">\n'
    b"<url><loc> https://example.com/a?x=1&amp;y=2 </loc><lastmod>2024-02-03</lastmod>"
    b"<changefreq>Weekly</changefreq><priority>0.8</priority>"
    b"<image:image><image:loc>https://cdn.example.com/i.png</image:loc></image:image>"
    b"<unknown><loc>https://example.com/not-this</loc></unknown></url>\n"
    b"<url><loc>https://example.com/b</loc><priority>7</priority></url>\n"
    b"<url><lastmod>2024-01-01</lastmod></url>\n"
    b"</urlset>\n"
)


@dataclass
class Parsed:
    """A parser after all its input, with the URLs it gave (kept beside it: a compiled
    build's SitemapParser takes no attribute it does not declare)."""

    parser: SitemapParser
    found: list[SitemapUrl]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.parser, name)


def parse(data: bytes, step: int = 0, url: str = BASE, **limits: int) -> Parsed:
    parser = SitemapParser(url, SitemapLimits(**limits))
    found = []
    for start in range(0, len(data), step or len(data) or 1):
        found += parser.feed(data[start : start + (step or len(data))])
    found += parser.close()
    return Parsed(parser, [SitemapUrl.from_raw(raw, url) for raw in found])


@pytest.mark.parametrize("step", [0, 1, 7, 64])
@pytest.mark.parametrize("zipped", [False, True])
def test_sitemap_in_any_pieces_plain_or_gzipped(step: int, zipped: bool) -> None:
    parser = parse(gzip.compress(SITEMAP) if zipped else SITEMAP, step)
    assert parser.kind == "urlset"
    assert parser.format == ("xml+gzip" if zipped else "xml")
    first, second = parser.found
    assert first.loc == "https://example.com/a?x=1&y=2"
    assert first.lastmod == datetime(2024, 2, 3, tzinfo=timezone.utc)
    assert (first.changefreq, first.priority) == ("weekly", 0.8)
    assert (second.loc, second.priority, second.lastmod) == ("https://example.com/b", None, None)
    assert not parser.stopped


@pytest.mark.parametrize(
    "namespace", ['xmlns="http://www.google.com/schemas/sitemap/0.84"', "", 'xmlns:s="x"']
)
def test_any_root_namespace(namespace: str) -> None:
    data = f"<urlset {namespace}><url><loc>https://e.com/</loc></url></urlset>".encode()
    assert [u.loc for u in parse(data).found] == ["https://e.com/"]


def test_plain_text_sitemap() -> None:
    data = b"https://e.com/1\r\n\n  https://e.com/2  \nftp://e.com/x\nnot a url\nhttps://e.com/3"
    parser = parse(data, 3)
    assert parser.kind == "text"
    assert [u.loc for u in parser.found] == [f"https://e.com/{i}" for i in (1, 2, 3)]


@pytest.mark.parametrize("step", [64, 4097, 5000])
def test_overlong_text_line_is_skipped_whole(step: int) -> None:
    """A line longer than a URL may be is skipped to its end: its tail, in a later
    piece, is not read as a line of its own."""
    data = b"x" * 5000 + b"https://e.com/tail\nhttps://e.com/ok\n"
    assert [u.loc for u in parse(data, step).found] == ["https://e.com/ok"]


@pytest.mark.parametrize("step", [0, 1, 7, 64])
def test_every_gzip_member_is_read(step: int) -> None:
    """A gzip file is a series of members (RFC 1952 §2.2; ``cat a.gz b.gz``, gzip's
    append mode): all are read; bytes after the last one are ignored, as browsers do;
    a member cut short is reported."""
    first, second = gzip.compress(b"https://e.com/1\n"), gzip.compress(b"https://e.com/2\n")
    text = first + second
    assert [u.loc for u in parse(text + b"\0\0\0", step).found] == [
        "https://e.com/1",
        "https://e.com/2",
    ]
    xml = SITEMAP.split(b"<url><loc>https://example.com/b")
    split = gzip.compress(xml[0]) + gzip.compress(b"<url><loc>https://example.com/b" + xml[1])
    parsed = parse(split, step)
    assert (parsed.stopped, len(parsed.found)) == ("", 2)
    cut = parse(first + second[:12], step)
    assert (cut.stopped, len(cut.found)) == ("gzip stream cut short", 1)


def test_limits_end_the_sitemap_with_a_reason() -> None:
    rows = b"".join(b"<url><loc>https://e.com/%d</loc></url>" for i in range(10))
    data = b"<urlset>" + rows + b"</urlset>"
    parser = parse(data, 16, max_urls=4)
    assert len(parser.found) == 4
    assert parser.limit_hit
    assert parser.stopped == "limit: more than 4 entries"
    assert parse(data, max_compressed_bytes=50).stopped.startswith("limit: more than 50 bytes")
    bomb = gzip.compress(bytes(10_000_000))
    stopped = parse(bomb, 4096, max_uncompressed_bytes=1_000_000)
    assert stopped.stopped == "limit: more than 1000000 bytes uncompressed"
    assert stopped.uncompressed_bytes < 1_200_000


def test_refused_and_malformed_xml() -> None:
    laughs = b'<!DOCTYPE x [<!ENTITY a "aaaa">]><urlset><url><loc>&a;</loc></url></urlset>'
    refused = parse(laughs)
    assert refused.stopped == "entity declaration 'a' refused"
    assert not refused.limit_hit
    broken = parse(b"<urlset><url><loc>https://e.com/</loc></url><url>")
    assert broken.stopped.startswith("malformed XML")
    assert [u.loc for u in broken.found] == ["https://e.com/"]
    assert parse(b"<html><body>hi</body></html>").kind == "unknown"
    assert parse(b"\x1f\x8b\x08\x00broken").stopped


def test_loc_is_the_text_a_client_sends() -> None:
    """Tab, CR and LF inside a loc are removed (WHATWG URL, yarl), other controls and
    line separators %-encoded as yarl encodes them: no loc holds a line break."""
    data = (
        b"<urlset><url><loc>https://e.com/a&#10;https://e.com/b&#13;c&#9;d</loc></url>"
        b"<url><loc>https://e.com/\xc2\x85x\xe2\x80\xa8y</loc></url></urlset>"
    )
    assert [u.loc for u in parse(data).found] == [
        "https://e.com/ahttps://e.com/bcd",
        "https://e.com/%C2%85x%E2%80%A8y",
    ]
    text = parse(b"https://e.com/1\rhttps://e.com/2\x0bz\x1c\n").found
    assert [u.loc for u in text] == ["https://e.com/1https://e.com/2%0Bz%1C"]


def test_deep_nesting_and_endless_tokens_are_refused() -> None:
    """Expat holds every open element and buffers an unfinished token, scanning it again
    on each piece: 12 MB of ``<a>`` (4 million levels) took 519 MiB, and one 50 MB
    comment or attribute in 64 KiB pieces 21 s of CPU. Both end the sitemap early;
    long text (CDATA too) is delivered as it arrives and is not a token."""
    deep = parse(b"<urlset>" + b"<a>" * 100_000, 65536)
    assert deep.stopped == "XML nested deeper than 256 elements"
    assert deep.uncompressed_bytes < 65536 * 2
    for token in (b"<!--" + b"a" * 2**21, b'<url a="' + b"a" * 2**21, b"<?pi " + b"a" * 2**21):
        endless = parse(b"<urlset>" + token, 65536)
        assert endless.stopped == "an XML token (tag, comment...) over 1048576 bytes refused"
        assert endless.uncompressed_bytes < 2**20 + 65536 * 2
    text = b"<![CDATA[" + b"a" * 2**21 + b"]]>"
    kept = parse(SITEMAP.replace(b"<priority>7", text + b"<priority>0.7"), 65536)
    assert (kept.stopped, len(kept.found)) == ("", 2)


def test_a_loc_urllib_cannot_split_is_dropped() -> None:
    """``//[::1/x`` resolves to no URL (urllib raises ValueError): dropped, the
    sitemap read on; it raised ValueError out of feed()."""
    data = b"<urlset><url><loc>//[::1/x</loc></url><url><loc>//a]b/</loc></url>"
    data += b"<url><loc>/ok</loc></url></urlset>"
    parsed = parse(data)
    assert ([u.loc for u in parsed.found], parsed.stopped) == (["https://example.com/ok"], "")


def test_overlong_field_is_dropped() -> None:
    data = b"<urlset><url><loc>https://e.com/" + b"a" * 5000 + b"</loc></url></urlset>"
    assert parse(data).found == []


def test_index_children_and_feeds() -> None:
    index = b"<sitemapindex><sitemap><loc>https://e.com/s1.xml</loc></sitemap></sitemapindex>"
    parser = SitemapParser(BASE)
    entries = parser.feed(index) + parser.close()
    assert [(e.loc, e.is_sitemap) for e in entries] == [("https://e.com/s1.xml", True)]
    atom = (
        b'<feed xmlns="http://www.w3.org/2005/Atom"><entry><link rel="self" href="/self"/>'
        b'<link href="/post"/><updated>2003-12-13T18:30:02+01:00</updated></entry></feed>'
    )
    (entry,) = parse(atom, url="https://e.com/feed").found
    assert entry.loc == "https://e.com/post"
    assert entry.lastmod is not None
    assert entry.lastmod.utcoffset() is not None


def test_field_values() -> None:
    assert parse_lastmod("2024") == datetime(2024, 1, 1, tzinfo=timezone.utc)
    assert parse_lastmod("2024-07") == datetime(2024, 7, 1, tzinfo=timezone.utc)
    assert parse_lastmod("2024-07-01T10:00:00.5Z") is not None
    assert parse_lastmod("Tue, 10 Jun 2003 04:00:00 GMT") is not None
    assert parse_lastmod("yesterday") is None
    assert parse_lastmod("9" * 100) is None
    assert parse_changefreq(" NEVER ") == "never"
    assert parse_changefreq("sometimes") is None
    assert parse_priority("1.0") == 1.0
    assert parse_priority("-0.1") is None
    assert parse_priority("nan") is None


def test_path_scope() -> None:
    assert in_path_scope("https://e.com/cat/x", "https://e.com/cat/sitemap.xml")
    assert not in_path_scope("https://e.com/catalog", "https://e.com/cat/sitemap.xml")
    assert not in_path_scope("http://e.com/cat/x", "https://e.com/cat/sitemap.xml")
    assert not in_path_scope("https://e.com:8443/x", "https://e.com/sitemap.xml")
    assert in_path_scope("https://E.com/x", "https://e.com/sitemap.xml")


def test_path_scope_sees_the_path_the_client_sends() -> None:
    """Dot segments (also %-escaped) are resolved before the prefix test, as the client
    resolves them before sending: ``/cat/../admin`` is ``/admin``, outside ``/cat/``."""
    sitemap = "https://e.com/cat/sitemap.xml"
    for escape in ("/cat/../admin/x", "/cat/%2e%2E/admin", "/cat/./../admin", "/cat/.."):
        assert not in_path_scope("https://e.com" + escape, sitemap), escape
    assert in_path_scope("https://e.com/cat/a/../b", sitemap)
    assert in_path_scope("https://e.com/cat/x", "https://e.com/other/../cat/sitemap.xml")


def test_limits_are_checked() -> None:
    with pytest.raises(ConfigurationError, match="max_urls"):
        SitemapLimits(max_urls=0)
    with pytest.raises(ConfigurationError, match="max_depth"):
        SitemapLimits(max_depth=-1)
