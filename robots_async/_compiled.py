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

from ._matcher import compile_bucket

if TYPE_CHECKING:
    from array import array

    from ._matcher import Bucket
    from ._policy import MatchPolicy
    from ._rules import RawGroup

__all__ = ["compiled_bucket", "forget_shared"]

#: Distinct rule sets kept, least recently used dropped first. Beyond any cache's
#: max_memory, the table holds at most 256 small buckets (~2 MB worst case).
MAX_SHARED: Final = 256
#: Above this many rule bytes a file's bucket is not kept (WordPress's rules are 40
#: bytes, Drupal's 1,500; larger sets are seldom shared).
MAX_SHARED_BYTES: Final = 2048

_shared: dict[tuple[object, ...], tuple[MatchPolicy, Bucket]] = {}
_lock: Final = Lock()


def compiled_bucket(
    groups: list[RawGroup], indices: tuple[int, ...], policy: MatchPolicy
) -> Bucket:
    """The bucket of ``groups`` at ``indices``: one compiled before for the same rules,
    or a new one (kept for later files when its rules are small)."""
    blobs = tuple(groups[i].blob for i in indices)
    if sum(map(len, blobs)) > MAX_SHARED_BYTES:
        return compile_bucket(groups, indices, policy)
    # Frozen groups keep their lines in an array (RawGroup.freeze).
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
    with _lock:  # files are parsed and asked about from any thread
        if len(_shared) >= MAX_SHARED:
            del _shared[next(iter(_shared))]  # the least recently used
        _shared[key] = (policy, bucket)
    return bucket


def forget_shared() -> None:
    """Drop every shared bucket: benchmarks that parse the same files again call it,
    so each run measures compiling them rather than finding them here."""
    with _lock:
        _shared.clear()
