"""Every (name, value) field line of a response's headers, whatever holds them.

Crawlers hand us aiohttp's ``CIMultiDict``, httpx's ``Headers``, Scrapy's ``Headers``
(bytes keys, a list of bytes values per key), a plain dict, or a list of pairs. A
repeated field must keep its separate lines: ``X-Robots-Tag: googlebot: noindex`` and
``X-Robots-Tag: nofollow`` mean something else once joined with a comma (the second
would read as scoped to googlebot), so httpx's merging ``items()`` is not used.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .errors import PageInputTypeError

__all__ = ["header_pairs", "header_text"]

_EXPECTED = (
    "headers must be a mapping, a multi-dict (aiohttp, httpx, Scrapy) or an iterable "
    "of (name, value) pairs of str or bytes"
)


def header_pairs(headers: object) -> Iterator[tuple[str, str]]:
    """Yield ``(lower-case name, value)`` for every field line of ``headers``.

    :raises PageInputTypeError: for something that is not a mapping or pairs.
    """
    if headers is None:
        return
    for name, value in _raw_pairs(headers):
        key = header_text(name).strip().lower()
        if isinstance(value, (list, tuple)):  # Scrapy's Headers: a list per name
            for item in value:
                yield key, header_text(item)
        else:
            yield key, header_text(value)


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
