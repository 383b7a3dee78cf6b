"""The ``<meta name=... content=...>`` tags of an HTML head, by a bounded scan.

No DOM and no tokenizer callbacks: the scan jumps from one tag that matters to the
next with case-insensitive regular expressions over at most ``max_bytes`` bytes,
skips comments and the raw text of ``<script>``, ``<style>`` and their kin (a
``<meta>`` written inside a script is not one), and stops at ``</head>``, at
``<body>`` or at the byte cap. We wrote it rather than use ``html.parser``: the
standard parser calls back for every tag and reads the whole input it is fed, and
a page's head must cost well under a millisecond (see ``bench/bench_directives.py``).
Broken HTML is read as browsers read it where it matters: names in any case,
attribute values double-quoted, single-quoted or bare, the first of a repeated
attribute kept, character references in values decoded, a UTF-16 page decoded.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Final

__all__ = ["DEFAULT_HEAD_BYTES", "HeadScan", "looks_like_html", "scan_head", "utf16_codec"]

#: How much of a body the scan reads at most (the head of nearly every page fits).
DEFAULT_HEAD_BYTES: Final = 65_536

# The tags that matter, found in a lower-cased copy: "<!--", a meta, the elements
# whose content is raw text (skipped to their end tag), and what ends the head.
_TAG: Final = re.compile(
    rb"<(!--|meta|script|style|title|textarea|template|xmp|noembed|noframes|iframe"
    rb"|/head|body)(?=[\s/>]|$)|<!--",
    re.IGNORECASE,
)
# One attribute: a name, then optionally "=" and a double-, single- or un-quoted value.
_ATTRIBUTE: Final = re.compile(
    rb"""[\s/]*([^\s/>][^\s/>=]*)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?"""
)
_SPACE: Final = re.compile(rb"[\s/]*")
# What ends a comment begun by "<!--": "-->", or "--!>" (HTML tokenizer, "comment end
# bang state"; see _comment_end for the empty ones).
_COMMENT_END: Final = re.compile(rb"--!?>")
_GT: Final = ord(">")
_BOM: Final = b"\xef\xbb\xbf"
_HTML_MARKERS: Final = (b"<!doctype html", b"<html", b"<head", b"<meta", b"<title", b"<body")
#: The WHATWG Encoding Standard's labels of UTF-16, the one encoding browsers read HTML
#: in whose ASCII characters are not ASCII bytes, and Python's codec for each.
_UTF16_LABELS: Final[dict[str, str]] = {
    **dict.fromkeys(
        ("csunicode", "iso-10646-ucs-2", "ucs-2", "unicode", "unicodefeff", "utf-16", "utf-16le"),
        "utf-16-le",
    ),
    **dict.fromkeys(("unicodefffe", "utf-16be"), "utf-16-be"),
}
_CHARSET: Final = re.compile(r";\s*charset\s*=\s*[\"']?([^\s;\"']+)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class HeadScan:
    """The metas found, as ``(name, content)`` text pairs in document order, and
    whether the byte cap ended the scan before the head did."""

    metas: tuple[tuple[str, str], ...]
    truncated: bool


def looks_like_html(body: bytes) -> bool:
    """True if ``body`` starts like an HTML document (for a response without a
    Content-Type): a ``<`` first, and a doctype, html, head or meta tag early on."""
    codec = utf16_codec(body, None)
    if codec is not None:
        body = body[:1024].decode(codec, "replace").encode("utf-8")
    start = body[:1024].removeprefix(_BOM).lstrip()
    if not start.startswith(b"<"):
        return False
    lowered = start.lower()
    return any(marker in lowered for marker in _HTML_MARKERS)


def utf16_codec(body: bytes, content_type: str | None) -> str | None:
    """Python's codec for a ``body`` in UTF-16, None for one scanned as it is (every
    other encoding a browser reads HTML in writes ASCII as ASCII bytes).

    Decided as browsers decide (WHATWG HTML, "encoding sniffing"): a byte order mark
    first, then the ``charset`` of ``content_type``. Scanned as bytes, a UTF-16
    page's ``<meta name=robots content=noindex>`` was never seen. A charset alone is
    believed only of bytes with a NUL in their first KB: UTF-16 markup has one in
    every ASCII character, and a page misdeclared as UTF-16 is read as it is (its
    metas would be lost, never gained, by decoding it).
    """
    if body.startswith(b"\xff\xfe"):
        return "utf-16-le"
    if body.startswith(b"\xfe\xff"):
        return "utf-16-be"
    if content_type is None or body.startswith(_BOM):
        return None
    found = _CHARSET.search(content_type)
    codec = None if found is None else _UTF16_LABELS.get(found[1].lower())
    return codec if codec is not None and b"\x00" in body[:1024] else None


def scan_head(
    body: bytes, max_bytes: int = DEFAULT_HEAD_BYTES, codec: str | None = None
) -> HeadScan:
    """Every meta with a name and a content attribute in the head of ``body``.

    Reads at most ``max_bytes`` bytes; a tag cut by the cap is dropped and
    ``truncated`` is set (our limit, not the page's answer: callers say so).
    ``codec``: the body's UTF-16 codec (:func:`utf16_codec`), if it has one.
    """
    cut = len(body) > max_bytes
    limit = min(len(body), max_bytes)  # searches stop there: no copy of the body
    if codec is not None:
        # Those bytes as UTF-8, which the patterns read (the cap counts the page's bytes).
        body = body[:limit].decode(codec, "replace").encode("utf-8")
        limit = len(body)
    metas: list[tuple[str, str]] = []
    position = 0
    while (found := _TAG.search(body, position, limit)) is not None:
        tag = found.group(1)
        tag = None if tag is None else tag.lower()
        if tag in (b"/head", b"body"):
            return HeadScan(tuple(metas), truncated=False)
        if tag == b"meta":
            end = _meta(body, found.end(), limit, metas)
        elif tag is None or tag == b"!--":
            end = _comment_end(body, found.end(), limit)
        else:
            end = _end_tag(body, tag, found.end(), limit)
        if end < 0:  # the tag or the raw text runs past what we read
            return HeadScan(tuple(metas), truncated=cut)
        position = end
    return HeadScan(tuple(metas), truncated=cut)


def _comment_end(data: bytes, start: int, limit: int) -> int:
    """The offset after the comment whose ``<!--`` ends at ``start``, or -1: where a
    browser ends it. ``<!-->`` and ``<!--->`` are empty comments (HTML tokenizer,
    "abrupt-closing-of-empty-comment") and ``--!>`` closes one as ``-->`` does
    ("incorrectly-closed-comment"): read to the next ``-->``, the real metas between
    were hidden (a ``noindex`` not seen)."""
    for closing in (b">", b"->"):
        if data.startswith(closing, start, limit):
            return start + len(closing)
    found = _COMMENT_END.search(data, start, limit)
    return -1 if found is None else found.end()


def _end_tag(data: bytes, name: bytes, start: int, limit: int) -> int:
    """The offset after ``</name`` (any case) from ``start``, or -1: a literal find
    of ``</`` runs in C, where a case-insensitive pattern scans byte by byte (a
    60 KB inline script: 20 us instead of 60)."""
    end = len(name) + 2
    while (at := data.find(b"</", start, limit)) >= 0:
        if data[at + 2 : at + end].lower() == name and at + end <= limit:
            return at + end
        start = at + 2
    return -1


def _meta(data: bytes, position: int, size: int, metas: list[tuple[str, str]]) -> int:
    """Read one meta's attributes from ``position``; append (name, content) when it
    has both. Returns the offset after its ``>``, or -1 when the data ends first."""
    attributes: dict[bytes, bytes] = {}
    while True:
        position = _SPACE.match(data, position, size).end()  # type: ignore[union-attr]
        if position >= size:
            return -1
        if data[position] == _GT:
            break
        found = _ATTRIBUTE.match(data, position, size)
        if found is None or found.end() == position:  # pragma: no cover - the
            position += 1  # attribute pattern matches any non-space, non-">" byte
            continue
        name, double, single, bare = found.groups()
        value = double if double is not None else single if single is not None else bare
        # HTML keeps the first of a repeated attribute (tokenizer, "duplicate-attribute").
        attributes.setdefault(name.lower(), value or b"")
        position = found.end()
    name, content = attributes.get(b"name"), attributes.get(b"content")
    if name is not None and content is not None:
        metas.append((_text(name).strip(), _text(content)))
    return position + 1


def _text(value: bytes) -> str:
    return html.unescape(value.decode("utf-8", "replace"))
