"""A parsed file's warnings, kept in a few flat buffers when there are many.

An HTML page served as robots.txt gives a warning a line up to the cap (100 by
default, ``parse(max_warnings=)``): as (line, code, detail) records a page then
retains ~14 KB in all, ~156 KB with 1,000 kept. Packed, a warning costs ~10 bytes
and its detail's own: ~5 KB and ~40 KB.
"""

from __future__ import annotations

from array import array
from itertools import accumulate, compress, count, repeat
from sys import getsizeof
from typing import TYPE_CHECKING, Final

from .results import W, WarningRecord

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["PACK_FROM", "PackedWarnings"]

#: Fewer warnings stay records: packing them would save a few hundred bytes.
PACK_FROM: Final = 16

_INT_LIMIT: Final = 2**31
_CODES: Final = tuple(value for name, value in vars(W).items() if name.isupper())
_CODE_NUMBERS: Final = {code: number for number, code in enumerate(_CODES)}
# Text details (numbers; our messages, which quote the file) are stored encoded; a
# lone surrogate, which decoding with errors="surrogateescape" can leave, survives.
_TEXT_ERRORS: Final = "surrogatepass"


class PackedWarnings:
    """Warning records as parallel buffers: line numbers, code numbers, every detail
    end to end as bytes (``ends``: where each stops) and which details were text."""

    __slots__ = ("codes", "details", "ends", "lines", "texts")

    def __init__(self, records: list[WarningRecord]) -> None:
        """``records``: at least one."""
        # A few C-level passes (one transposes): ~0.1 ms for a thousand records.
        lines, codes, details = zip(*records, strict=True)
        # (A body of over 2**31 lines, with max_bytes=None, needs 8-byte numbers.)
        self.lines = array("i" if max(lines) < _INT_LIMIT else "q", lines)
        self.codes = bytes(map(_CODE_NUMBERS.__getitem__, codes))
        self.texts = bytes(map(isinstance, details, repeat(str)))
        parts = list(details)
        for i in compress(count(), self.texts):
            parts[i] = parts[i].encode("utf-8", _TEXT_ERRORS)
        self.details = b"".join(parts)
        self.ends = array("I", accumulate(map(len, parts)))

    def __len__(self) -> int:
        return len(self.lines)

    def __iter__(self) -> Iterator[WarningRecord]:
        """The records, as they were given."""
        details, start = self.details, 0
        rows = zip(self.lines, self.codes, self.ends, self.texts, strict=True)
        for line, code, end, text in rows:
            detail = details[start:end]
            yield line, _CODES[code], detail.decode("utf-8", _TEXT_ERRORS) if text else detail
            start = end

    def retained(self) -> int:
        """Bytes held: the objects' own sizes (arrays built from iterators
        over-allocate; getsizeof counts it) and 512 bytes of margin (tracemalloc
        measured 160-260 bytes more around a thousand records)."""
        parts = (self, self.lines, self.codes, self.texts, self.details, self.ends)
        return sum(map(getsizeof, parts)) + 512
