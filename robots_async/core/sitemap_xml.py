"""Streaming reader of sitemap XML, sitemap indexes, RSS 2.0 and Atom feeds.

Built on the standard library's expat (``xml.parsers.expat``), fed piece by piece.
Why expat and not lxml or defusedxml: it is maintained with CPython, needs no extra
dependency, parses incrementally in C with one callback per element, and refuses
what makes XML dangerous when told to: here any entity declaration (billion laughs,
quadratic blow-up) and any external entity or DTD fetch raise :class:`SitemapError`,
which ends the sitemap. That is defusedxml's default policy, applied with expat's
own handlers instead of a dependency whose last release was in 2021.

Tolerant of namespaces: a ``urlset`` or ``sitemapindex`` may use any namespace (or
none, or Google's old 0.84 one); its fields are read in the root's namespace, so the
image, news and video extensions (other namespaces) and unknown tags are ignored.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Literal, NamedTuple
from xml.parsers import expat

from .errors import SitemapError

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["RawEntry", "XmlKind", "XmlSitemapReader"]

#: What the document's root says it is ("unknown": not a sitemap or a feed).
XmlKind = Literal["urlset", "index", "rss", "atom", "unknown"]
_ATOM: Final = "http://www.w3.org/2005/Atom"
#: Characters kept of one field: longer values are not URLs or dates (sitemaps.org
#: caps a loc at 2,048 characters) and are dropped, bounding the text held.
MAX_FIELD = 4096
#: The fields read per kind: element name -> field slot (loc, lastmod, changefreq, priority).
#: Element nesting read at most: a sitemap needs 4 (urlset/url/image:image/image:loc),
#: a feed's XHTML content a few dozen; expat holds every open element (4 million
#: levels, 12 MB of ``<a>``: 519 MiB).
MAX_DEPTH = 256
#: Bytes of one unfinished token (a tag, a comment, a declaration) at most. Expat
#: buffers it and scans it again on each piece: one 50 MB comment in 64 KiB pieces
#: cost 21 s of CPU. Text is no token (delivered as it arrives), so long CDATA passes.
MAX_TOKEN = 1 << 20
_SITEMAP_FIELDS: Final = {"loc": 0, "lastmod": 1, "changefreq": 2, "priority": 3}
_RSS_FIELDS: Final = {"link": 0, "pubDate": 1}
_ATOM_FIELDS: Final = {"updated": 1}


class RawEntry(NamedTuple):
    """A URL (or child sitemap) as written: text fields, parsed when yielded."""

    loc: str
    lastmod: str
    changefreq: str
    priority: str
    #: True for a child sitemap of an index.
    is_sitemap: bool


def _split(name: str) -> tuple[str, str]:
    """(namespace, local name) of an expat name ("ns local" or "local")."""
    namespace, _, local = name.rpartition(" ")
    return namespace, local


class XmlSitemapReader:
    """Feeds bytes to expat and hands each finished entry to ``emit``."""

    def __init__(self, emit: Callable[[RawEntry], None]) -> None:
        self._emit = emit
        self.kind: XmlKind | None = None
        self._root_ns = ""
        self._depth = 0
        #: Depth of the entry element (url, sitemap, item, entry) and of its fields.
        self._entry_depth = 0
        self._fields: dict[str, int] = {}
        self._record: list[str] = ["", "", "", ""]
        self._field = -1  # the slot being collected, -1 for none
        self._text: list[str] = []
        self._size = 0
        self._in_entry = False
        self._fed = 0  # bytes given to expat
        parser = expat.ParserCreate(namespace_separator=" ")
        parser.buffer_text = True
        parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
        parser.StartElementHandler = self._start
        parser.EndElementHandler = self._end
        parser.CharacterDataHandler = self._chars
        parser.EntityDeclHandler = _refuse_entity
        parser.UnparsedEntityDeclHandler = _refuse_unparsed
        parser.ExternalEntityRefHandler = _refuse_external
        self._parser = parser

    def feed(self, data: bytes, final: bool = False) -> None:
        """Parse ``data``; :raises SitemapError: for refused or malformed XML."""
        parser = self._parser
        self._fed += len(data)
        try:
            parser.Parse(data, final)
        except expat.ExpatError as exc:
            raise SitemapError(f"malformed XML: {exc}") from None
        # After Parse, CurrentByteIndex is where the unfinished token starts.
        if self._fed - parser.CurrentByteIndex > MAX_TOKEN:
            raise SitemapError(f"an XML token (tag, comment...) over {MAX_TOKEN} bytes refused")

    def _start(self, name: str, attributes: dict[str, str]) -> None:
        self._depth += 1
        depth = self._depth
        if depth > MAX_DEPTH:
            raise SitemapError(f"XML nested deeper than {MAX_DEPTH} elements")
        if depth == 1:
            self._open_root(name)
        elif self._in_entry:
            if depth == self._entry_depth + 1:
                self._open_field(name, attributes)
        elif depth == self._entry_depth and self._is_entry(name):
            self._in_entry = True
            self._record = ["", "", "", ""]

    def _open_root(self, name: str) -> None:
        namespace, local = _split(name)
        self._root_ns = namespace
        if local == "urlset":
            self.kind, self._entry_depth, self._fields = "urlset", 2, _SITEMAP_FIELDS
        elif local == "sitemapindex":
            self.kind, self._entry_depth, self._fields = "index", 2, _SITEMAP_FIELDS
        elif local == "rss":
            self.kind, self._entry_depth, self._fields = "rss", 3, _RSS_FIELDS
        elif local == "feed" and namespace == _ATOM:
            self.kind, self._entry_depth, self._fields = "atom", 2, _ATOM_FIELDS
        else:
            self.kind = "unknown"
            self._entry_depth = 0

    def _is_entry(self, name: str) -> bool:
        namespace, local = _split(name)
        if namespace != self._root_ns:
            return False
        kind = self.kind
        if kind == "urlset":
            return local == "url"
        if kind == "index":
            return local == "sitemap"
        if kind == "rss":
            return local == "item" and self._depth == 3
        return local == "entry"

    def _open_field(self, name: str, attributes: dict[str, str]) -> None:
        namespace, local = _split(name)
        if namespace != self._root_ns:
            return  # an extension's element (image:loc, news:title...): not ours
        if self.kind == "atom" and local == "link":
            # Atom's link is an attribute; rel defaults to "alternate" (RFC 4287 §4.2.7.2).
            if attributes.get("rel", "alternate") == "alternate" and not self._record[0]:
                self._record[0] = attributes.get("href", "")[:MAX_FIELD]
            return
        slot = self._fields.get(local, -1)
        if slot >= 0:
            self._field = slot
            self._text = []
            self._size = 0

    def _chars(self, data: str) -> None:
        if self._field >= 0:
            self._size += len(data)
            if self._size <= MAX_FIELD:
                self._text.append(data)

    def _end(self, name: str) -> None:
        depth = self._depth
        self._depth -= 1
        if not self._in_entry:
            return
        if depth == self._entry_depth:
            self._in_entry = False
            self._field = -1
            record = self._record
            if record[0]:
                loc, lastmod, changefreq, priority = record
                self._emit(RawEntry(loc, lastmod, changefreq, priority, self.kind == "index"))
        elif self._field >= 0 and depth == self._entry_depth + 1:
            if self._size <= MAX_FIELD:
                self._record[self._field] = "".join(self._text).strip()
            self._field = -1


def _refuse_entity(name: str, *_: object) -> None:
    # Entity declarations are how billion-laughs and external-entity attacks start;
    # no sitemap needs one (defusedxml's forbid_entities policy).
    raise SitemapError(f"entity declaration {name!r} refused")


def _refuse_unparsed(name: str, *_: object) -> None:
    raise SitemapError(f"unparsed entity {name!r} refused")


def _refuse_external(context: str, base: str | None, system_id: str | None, *_: object) -> int:
    raise SitemapError(f"external entity {system_id!r} refused")
