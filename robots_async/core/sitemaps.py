"""Sitemaps, sans-I/O: limits, an incremental parser for every format, URL scope.

:class:`SitemapParser` is fed a sitemap's bytes as they arrive and returns the
entries found so far. It tells the format from the content, never from the name or
Content-Type: gzip by its magic bytes (1f 8b), then XML (a sitemap, an index, RSS
2.0 or Atom: ``sitemap_xml``) if the text starts with ``<``, else a plain-text
sitemap (one URL per line). Every limit (compressed and uncompressed bytes, entries)
ends that sitemap with a reason in :attr:`SitemapParser.stopped`; nothing is raised.
"""

from __future__ import annotations

import posixpath
import re
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final
from urllib.parse import quote, urljoin, urlsplit

from .errors import SitemapError
from .policy import remove_dot_segments, rfc3986_normalise
from .sitemap_values import parse_changefreq, parse_lastmod, parse_priority
from .sitemap_xml import MAX_FIELD, RawEntry, XmlSitemapReader
from .validate import integer

if TYPE_CHECKING:
    from collections.abc import Iterable
    from datetime import datetime

    from .results import Verdict
    from .sitemap_values import ChangeFreq
    from .sitemap_xml import XmlKind

__all__ = [
    "SitemapLimits",
    "SitemapParser",
    "SitemapUrl",
    "in_path_scope",
    "join",
    "named_sitemaps",
]

#: sitemaps.org: at most 50,000 URLs and 50 MB (52,428,800 bytes) uncompressed per file.
SITEMAPS_ORG_URLS: Final = 50_000
SITEMAPS_ORG_BYTES: Final = 52_428_800
_GZIP_MAGIC: Final = b"\x1f\x8b"
#: Output bound of one decompression step: a bomb expands one step at a time.
_STEP = 64 * 1024
_BOM: Final = b"\xef\xbb\xbf"
_NO_TAB_OR_NEWLINE: Final = str.maketrans("", "", "\t\n\r")
#: C0 and C1 controls, DEL and the Unicode line and paragraph separators.
_UNSENT: Final = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]+")


@dataclass(frozen=True, slots=True)
class SitemapLimits:
    """Bounds on reading sitemaps; reaching one ends that sitemap with a warning.

    Defaults are sitemaps.org's per-file limits; the others bound one walk over an
    origin's sitemaps. Checked at construction (:class:`ConfigurationError`).
    """

    #: Bytes of a sitemap's body as received (after HTTP content coding) at most.
    max_compressed_bytes: int = SITEMAPS_ORG_BYTES
    #: Bytes after gunzipping a gzipped sitemap (sitemaps.org: 50 MB).
    max_uncompressed_bytes: int = SITEMAPS_ORG_BYTES
    #: URLs (or child sitemaps of an index) read from one file (sitemaps.org: 50,000).
    max_urls: int = SITEMAPS_ORG_URLS
    #: Sitemaps fetched at most in one walk of an origin (indexes included).
    max_sitemaps: int = 500
    #: Index nesting followed at most: 1 reads an index's children but no deeper.
    max_depth: int = 3
    #: Other origins whose robots.txt is read for cross-submission, per walk.
    max_foreign_origins: int = 16

    def __post_init__(self) -> None:
        for name in (
            "max_compressed_bytes",
            "max_uncompressed_bytes",
            "max_urls",
            "max_sitemaps",
            "max_foreign_origins",
        ):
            integer(f"SitemapLimits.{name}", getattr(self, name), minimum=1)
        integer("SitemapLimits.max_depth", self.max_depth, minimum=0)


@dataclass(frozen=True, slots=True)
class SitemapUrl:
    """One URL from a sitemap, with its optional fields and where it came from."""

    loc: str
    lastmod: datetime | None
    changefreq: ChangeFreq | None
    priority: float | None
    #: The URL of the sitemap that listed it (as named, before any redirect).
    sitemap: str
    #: The robots.txt verdict, when the walk was asked for every URL (else None).
    verdict: Verdict | None = None

    @classmethod
    def from_raw(cls, raw: RawEntry, sitemap: str, verdict: Verdict | None = None) -> SitemapUrl:
        """Parse the text fields of ``raw`` (a bad value becomes None)."""
        return cls(
            raw.loc,
            parse_lastmod(raw.lastmod) if raw.lastmod else None,
            parse_changefreq(raw.changefreq) if raw.changefreq else None,
            parse_priority(raw.priority) if raw.priority else None,
            sitemap,
            verdict,
        )


class SitemapParser:
    """Incremental parser of one sitemap body in any supported format.

    :param url: the sitemap's URL (relative links in feeds resolve against it).
    :param limits: byte and entry bounds.
    """

    def __init__(self, url: str, limits: SitemapLimits | None = None) -> None:
        self.url = url
        self.limits = limits or SitemapLimits()
        #: Why reading stopped early (a limit, refused or malformed XML), else "".
        self.stopped = ""
        #: Whether the reason in ``stopped`` is one of our limits (vs. the document).
        self.limit_hit = False
        self.compressed_bytes = 0
        self.uncompressed_bytes = 0
        self.entries = 0
        self.format = ""  # "xml", "text" (or "" before any content), "+gzip" appended
        self._head = b""
        self._gunzip: zlib._Decompress | None = None
        self._member_start = b""  # the first byte of a next gzip member, while cut
        self._gunzip_done = False  # bytes after the last gzip member: ignored
        self._sniffed = False
        self._xml: XmlSitemapReader | None = None
        self._line = b""
        self._skipping = False  # inside an overlong text line, until its line break
        self._start = b""  # the first bytes, while they may be a BOM
        self._found: list[RawEntry] = []

    @property
    def kind(self) -> XmlKind | str:
        """ "urlset", "index", "rss", "atom", "unknown" (XML) or "text"."""
        if self._xml is not None:
            return self._xml.kind or "unknown"
        return "text" if self.format.startswith("text") else "unknown"

    def feed(self, data: bytes) -> list[RawEntry]:
        """Parse ``data`` (the next bytes of the body); return the entries it completed.

        After a limit or a refusal (see :attr:`stopped`) further data is ignored.
        """
        if self.stopped or not data:
            return self._drain()
        self.compressed_bytes += len(data)
        if self.compressed_bytes > self.limits.max_compressed_bytes:
            self._limit(f"more than {self.limits.max_compressed_bytes} bytes received")
            return self._drain()
        if self._gunzip is None and not self._sniffed:
            self._head += data
            if len(self._head) < 2:
                return []
            data, self._head = self._head, b""
            if data.startswith(_GZIP_MAGIC):
                self._gunzip = zlib.decompressobj(16 + zlib.MAX_WBITS)
        if self._gunzip is not None:
            if not self._gunzip_done:
                self._inflate(data)
        else:
            self._content(data)
        return self._drain()

    def close(self) -> list[RawEntry]:
        """End of the body: parse what is left; return the last entries."""
        if not self.stopped:
            if self._head:
                head, self._head = self._head, b""
                self._content(head)
            if self._gunzip is not None and not self._gunzip.eof:
                self._fail("gzip stream cut short")
            self._finish()
        return self._drain()

    def _inflate(self, data: bytes) -> None:
        gunzip = self._gunzip
        assert gunzip is not None
        data, self._member_start = self._member_start + data, b""
        while data and not self.stopped:
            if gunzip.eof:
                # A gzip file is a series of members (RFC 1952 §2.2: `cat a.gz b.gz`,
                # gzip's append mode), all read; other bytes after the last one are
                # ignored, as browsers and the HTTP decoder (fetch/codings) do.
                if len(data) < len(_GZIP_MAGIC) and _GZIP_MAGIC.startswith(data):
                    self._member_start = data  # perhaps a member's magic cut in two
                    return
                if not data.startswith(_GZIP_MAGIC):
                    self._gunzip_done = True
                    return
                gunzip = self._gunzip = zlib.decompressobj(16 + zlib.MAX_WBITS)
            piece = gunzip.decompress(data, _STEP)
            data = gunzip.unconsumed_tail or gunzip.unused_data
            if piece:
                self._content(piece)
            elif not data:
                break

    def _content(self, data: bytes) -> None:
        """Uncompressed bytes: counted, sniffed once, then parsed."""
        self.uncompressed_bytes += len(data)
        if self.uncompressed_bytes > self.limits.max_uncompressed_bytes:
            self._limit(f"more than {self.limits.max_uncompressed_bytes} bytes uncompressed")
            return
        if not self._sniffed:
            data = self._sniff(data)
            if not data:
                return  # only a BOM or whitespace so far: not yet known
            self._sniffed = True
            suffix = "+gzip" if self._gunzip is not None else ""
            if data[:1] == b"<":
                self.format = "xml" + suffix
                self._xml = XmlSitemapReader(self._add)
            else:
                self.format = "text" + suffix
        try:
            if self._xml is not None:
                self._xml.feed(data)
            else:
                self._text(data)
        except SitemapError as exc:
            if not self.stopped:
                self._fail(str(exc))

    def _sniff(self, data: bytes) -> bytes:
        """``data`` without a leading UTF-8 BOM and whitespace (expat refuses an XML
        declaration after whitespace, which some servers send); b"" while unknown."""
        data, self._start = self._start + data, b""
        if len(data) < len(_BOM) and _BOM.startswith(data):
            self._start = data  # perhaps a BOM cut between pieces
            return b""
        data = data.removeprefix(_BOM)
        return data.lstrip()

    def _text(self, data: bytes) -> None:
        """Plain-text sitemap: one absolute URL per line (sitemaps.org, UTF-8)."""
        if self._skipping:
            end = data.find(b"\n")
            if end < 0:
                return
            data, self._skipping = data[end + 1 :], False
        lines = (self._line + data).split(b"\n")
        self._line = lines.pop()
        if len(self._line) > MAX_FIELD:
            # An overlong line is no URL: skipped to its end, never its tail read as one.
            self._line, self._skipping = b"", True
        for line in lines:
            self._text_line(line)
            if self.stopped:
                return

    def _text_line(self, line: bytes) -> None:
        loc = line.strip().decode("utf-8", "replace")
        if loc.startswith(("http://", "https://")) and len(loc) <= MAX_FIELD:
            self._add(RawEntry(loc, "", "", "", is_sitemap=False))

    def _finish(self) -> None:
        try:
            if self._xml is not None:
                self._xml.feed(b"", final=True)
            elif self._line:
                self._text_line(self._line)
        except SitemapError as exc:
            self._fail(str(exc))

    def _add(self, raw: RawEntry) -> None:
        if self.stopped:
            return
        if self.entries >= self.limits.max_urls:
            self._limit(f"more than {self.limits.max_urls} entries")
            raise SitemapError(self.stopped)  # stops expat at once
        loc = raw.loc
        if not loc.isprintable():  # rare: one C test on the usual loc
            loc = _sent_text(loc)
            raw = raw._replace(loc=loc)
        if not loc.startswith(("http://", "https://")):
            loc = join(self.url, loc) or ""  # feeds may link relatively
            if not loc.startswith(("http://", "https://")):
                return
            raw = raw._replace(loc=loc)
        self.entries += 1
        self._found.append(raw)

    def _limit(self, reason: str) -> None:
        self.stopped = f"limit: {reason}"
        self.limit_hit = True

    def _fail(self, reason: str) -> None:
        self.stopped = reason

    def _drain(self) -> list[RawEntry]:
        found, self._found = self._found, []
        return found


def _sent_text(loc: str) -> str:
    """``loc`` as a client sends it: tab, CR and LF removed (WHATWG URL; yarl does the
    same), other controls and line separators %-encoded as UTF-8 (as yarl encodes
    them). The URL judged is the URL yielded, and no loc carries a line break into a
    line-based output (the CLI's, a crawler's queue file) to be read as another URL."""
    return _UNSENT.sub(_encode, loc.translate(_NO_TAB_OR_NEWLINE))


def _encode(match: re.Match[str]) -> str:
    return quote(match.group(), safe="")


def join(base: str, ref: str) -> str | None:
    """``urljoin(base, ref)``, or None where urllib raises ValueError (``//[::1/x``,
    ``http://a]b``): a document's unreadable link costs that link, not its reader."""
    try:
        return urljoin(base, ref)
    except ValueError:
        return None


def named_sitemaps(robots_url: str, values: Iterable[str]) -> tuple[str, ...]:
    """The sitemaps a robots.txt names (its ``Sitemap:`` values), resolved against
    its URL, each once, in order; a value that resolves to no URL is skipped."""
    return tuple(dict.fromkeys(u for u in (join(robots_url, v) for v in values) if u))


def in_path_scope(url: str, sitemap: str) -> bool:
    """sitemaps.org: a sitemap may list URLs on its own host and port, under its
    own directory (``/catalog/sitemap.xml`` covers ``/catalog/...`` only).

    Both paths are compared as a client sends them, dot segments (also %-escaped
    ones) resolved: ``/catalog/../admin`` is requested as ``/admin``, outside.
    """
    target, base = urlsplit(url), urlsplit(sitemap)
    if (target.scheme, target.netloc.lower()) != (base.scheme, base.netloc.lower()):
        return False
    directory = posixpath.dirname(_sent_path(base.path))
    directory = directory if directory.endswith("/") else directory + "/"
    return _sent_path(target.path).startswith(directory)


def _sent_path(path: str) -> str:
    """``path`` with unreserved escapes decoded and dot segments removed (RFC 3986
    §6.2.2.2, §5.2.4): what yarl puts on the wire for it."""
    return remove_dot_segments(rfc3986_normalise(path or "/"))
