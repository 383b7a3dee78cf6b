"""Compiled buckets shared between files whose rules for an agent are the same.

Many sites serve the same rules (WordPress's two lines, Drupal's forty): on the
corpus 23% of files' buckets repeat one compiled before. A bucket depends only on
the policy, the group indices and each group's rule values and signed lines, so it
is kept under exactly that key; a hit skips compiling and shares the index (and its
memory) with the earlier file. Buckets are immutable apart from memoised lookups
(parents, a glob index), which any sharer may fill in with the same values.
"""

from __future__ import annotations

from threading import Lock
from typing import TYPE_CHECKING, Final, cast

from .matcher import compile_bucket

if TYPE_CHECKING:
    from array import array

    from .matcher import Bucket
    from .policy import MatchPolicy
    from .rules import RawGroup

__all__ = ["compiled_bucket", "forget_shared"]

#: Distinct rule sets kept, least recently used dropped first. Beyond any cache's
#: max_memory, the table holds at most 256 small buckets (MAX_SHARED_WEIGHT: ~2 MB).
MAX_SHARED: Final = 256
#: Above this many rule bytes a file's bucket is not kept (WordPress's rules are 40
#: bytes, Drupal's 1,500; larger sets are seldom shared).
MAX_SHARED_BYTES: Final = 2048
#: What the kept buckets may retain together, in _weight() estimates: 2 KB of rules
#: can be 682 ``*a`` globs (~240 KB a bucket: 256 of them pinned 42 MB outside every
#: cache's max_memory). Corpus rule sets weigh 5 KB on average (256 of them: 1.3 MB).
MAX_SHARED_WEIGHT: Final = 2 * 1024 * 1024
#: Heavier rule sets are not kept (one would flush much of the table).
_MAX_ENTRY_WEIGHT: Final = MAX_SHARED_WEIGHT // 16

_shared: dict[tuple[object, ...], tuple[MatchPolicy, Bucket, int]] = {}
_weights = [0]  # the sum of the kept entries' weights
_lock: Final = Lock()


def compiled_bucket(
    groups: list[RawGroup], indices: tuple[int, ...], policy: MatchPolicy
) -> Bucket:
    """The bucket of ``groups`` at ``indices``: one compiled before for the same rules,
    or a new one (kept for later files when its rules are small)."""
    # One group, most buckets: no generator (the key cost 2.5 us a bucket with them,
    # compiling 23). Frozen groups keep their lines in an array (RawGroup.freeze).
    if len(indices) == 1:
        blobs: tuple[bytes, ...] = (groups[indices[0]].blob,)
        size = len(blobs[0])
    else:
        blobs = tuple(groups[i].blob for i in indices)
        size = sum(map(len, blobs))
    if size > MAX_SHARED_BYTES:  # never kept: no key to build (its lines copied)
        return compile_bucket(groups, indices, policy)
    if len(indices) == 1:
        lines: tuple[bytes, ...] = (cast("array[int]", groups[indices[0]].lines).tobytes(),)
    else:
        lines = tuple(cast("array[int]", groups[i].lines).tobytes() for i in indices)
    # The policy by identity, and kept in the value: its id cannot be reused then.
    key = (id(policy), indices, blobs, lines)
    found = _shared.get(key)
    if found is not None and found[0] is policy:
        with _lock:  # most recently used last
            if _shared.pop(key, None) is not None:
                _shared[key] = found
        return found[1]
    bucket = compile_bucket(groups, indices, policy)
    weight = _weight(size, sum(map(len, lines)) // 4, b"".join(blobs))
    if weight > _MAX_ENTRY_WEIGHT:
        return bucket
    with _lock:  # files are parsed and asked about from any thread
        kept = _shared.pop(key, None)  # (another thread kept the same rules meanwhile)
        if kept is not None:
            _weights[0] -= kept[2]
        while _shared and (len(_shared) >= MAX_SHARED or _weights[0] + weight > MAX_SHARED_WEIGHT):
            _weights[0] -= _shared.pop(next(iter(_shared)))[2]  # the least recently used
        _shared[key] = (policy, bucket, weight)
        _weights[0] += weight
    return bucket


def _weight(size: int, rules: int, text: bytes) -> int:
    """Bytes a bucket of ``rules`` rules (``text``, ``size`` bytes of them) and its key
    retain, over-estimated (tracemalloc: a literal rule ~90 bytes, a ``$`` rule ~190, a
    glob 350-470, each star more)."""
    return size + 104 * rules + 320 * (text.count(b"*") + text.count(b"$"))


def forget_shared() -> None:
    """Drop every shared bucket: benchmarks that parse the same files again call it,
    so each run measures compiling them rather than finding them here."""
    with _lock:
        _shared.clear()
        _weights[0] = 0
