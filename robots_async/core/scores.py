"""A rule as one integer: its *score* orders rules as Google decides between them.

A score is (priority << 33) | (allow << 32) | (LINE_MAX - line): the larger score
is the better rule (RFC 9309 §2.2.2 longest match, Allow on a tie, then the first
line, which only explain() reports). A score below NON_EMPTY is an empty pattern.
Groups keep each rule's line *signed*, negative for an Allow (RawGroup): the low
bits are then ALLOW_LOW + line for an Allow, LINE_MAX - line for a Disallow.
"""

from __future__ import annotations

from typing import Final

__all__ = ["ALLOW_BIT", "ALLOW_LOW", "LINE_MAX", "LOW_BITS", "NON_EMPTY"]

LINE_MAX: Final = (1 << 31) - 1
ALLOW_BIT: Final = 1 << 32
NON_EMPTY: Final = 1 << 33
#: The bits holding the line.
LOW_BITS: Final = (1 << 32) - 1
#: An Allow's low bits less its (negative) signed line.
ALLOW_LOW: Final = ALLOW_BIT + LINE_MAX
