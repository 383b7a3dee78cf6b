"""The field lines we want from a response's headers, whatever holds them.

Crawlers hand us aiohttp's ``CIMultiDict``, httpx's ``Headers``, Scrapy's ``Headers``
(bytes keys, a list of bytes values per key), a plain dict, or a list of pairs. A
repeated field must keep its separate lines: ``X-Robots-Tag: googlebot: noindex`` and
``X-Robots-Tag: nofollow`` mean something else once joined with a comma (the second
would read as scoped to googlebot), so httpx's merging ``items()`` is not used.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from .errors import PageInputTypeError

__all__ = ["header_text", "selected_headers"]

_EXPECTED = (
    "headers must be a mapping, a multi-dict (aiohttp, httpx, Scrapy) or an iterable "
    "of (name, value) pairs of str or bytes"
)


def selected_headers(headers: object, names: tuple[str, ...]) -> list[tuple[str, str]]:
    """``(name, value)`` for every field line of ``headers`` whose lower-case name is
    in ``names``; values as text. A multi-dict is asked for those names only (a
    response carries 15-20 fields, of which we want a few: 3 us instead of 12).

    :raises PageInputTypeError: for something that is not a mapping or pairs.
    """
    if headers is None:
        return []
    lookup = _lookup(headers)
    if lookup is not None:
        return [(name, header_text(value)) for name in names for value in lookup(name)]
    found: list[tuple[str, str]] = []
    for name, value in _raw_pairs(headers):
        key = (name if isinstance(name, str) else header_text(name)).lower().strip()
        if key not in names:
            continue
        if isinstance(value, (list, tuple)):  # Scrapy's Headers: a list per name
            found.extend((key, header_text(item)) for item in value)
        else:
            found.append((key, header_text(value)))
    return found


def _lookup(headers: object) -> Callable[[str], Iterable[object]] | None:
    """Every value of one field, case-insensitively, when ``headers`` can tell."""
    getall = getattr(headers, "getall", None)  # multidict (aiohttp)
    if callable(getall):
        return lambda name: getall(name, ())
    get_list = getattr(headers, "get_list", None)  # httpx
    if callable(get_list):
        return get_list  # type: ignore[no-any-return]
    getlist = getattr(headers, "getlist", None)  # Scrapy (bytes values)
    if callable(getlist):
        return lambda name: getlist(name) or ()
    return None


def _raw_pairs(headers: object) -> Iterable[Any]:
    multi_items = getattr(headers, "multi_items", None)
    if callable(multi_items):  # httpx.Headers: items() would join repeated fields
        return multi_items()  # type: ignore[no-any-return]
    if isinstance(headers, Mapping) or hasattr(headers, "items"):
        # A multidict's items() yields every line; Scrapy's gives lists of values.
        return headers.items()  # type: ignore[no-any-return]
    if isinstance(headers, (str, bytes)) or not isinstance(headers, Iterable):
        raise PageInputTypeError(_EXPECTED, headers)
    return _checked_pairs(headers)


def _checked_pairs(pairs: Iterable[object]) -> Iterator[tuple[object, object]]:
    for pair in pairs:
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise PageInputTypeError(_EXPECTED, pair)
        yield pair[0], pair[1]


def header_text(value: object) -> str:
    """A header name or value as text: bytes as UTF-8 when valid, else Latin-1
    (RFC 9110 §5.5: field values are octets, historically ISO-8859-1)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw.decode("latin-1")
    if isinstance(value, str):
        return value
    raise PageInputTypeError(_EXPECTED, value)
