"""Shared-store records of an origin's other resources (today: tdmrep.json).

Like :class:`~robots_async.cache.records.StoredRobots`, a :class:`StoredResource` is what
one worker observed, never a conclusion: the HTTP status or the failure kind, the 2xx
body as received (at most :data:`~robots_async.core.tdmrep.TDMREP_MAX_BYTES`), when it
was fetched and until when the writer keeps it. Every reader parses the body itself.
Records carry a schema name and version; one of another version (a newer
robots_async), or one that does not conform, raises :class:`InvalidRecordError`, which
a reader treats as a miss (it fetches and overwrites), never as an answer.

The store methods, all optional (found with ``getattr``, as pacing's are):
``get_resource(origin, kind)``, ``put_resource(origin, record)``,
``acquire_resource(origin, kind, ttl)`` and ``release_resource(lease)``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, get_args

from ..core.errors import InvalidRecordError
from ..core.tdmrep import TDMREP_MAX_BYTES, TDMREP_PATH
from ..fetch.outcome import ErrorKind
from .records import LOCAL_ERRORS, MAX_CLOCK_SKEW

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..core.url import Origin

__all__ = [
    "RESOURCE_KINDS",
    "RESOURCE_SCHEMA",
    "RESOURCE_VERSION",
    "ResourceKind",
    "StoredResource",
    "check_resource",
    "decode_resource",
    "encode_resource",
    "resource_url",
    "validate_resource",
]

#: Resources an origin may have beside robots.txt (a closed set: room for more).
ResourceKind = Literal["tdmrep"]
RESOURCE_KINDS: frozenset[str] = frozenset(get_args(ResourceKind))
RESOURCE_SCHEMA = "robots_async.resource"
RESOURCE_VERSION = 1

_PATHS: dict[str, str] = {"tdmrep": TDMREP_PATH}
_MAX_BYTES: dict[str, int] = {"tdmrep": TDMREP_MAX_BYTES}
_ERROR_KINDS: frozenset[str] = frozenset(get_args(ErrorKind)) - LOCAL_ERRORS
_FIELDS = frozenset(
    {"schema", "v", "kind", "url", "status", "error", "truncated", "fetched_at", "expires"}
)


@dataclass(frozen=True, slots=True)
class StoredResource:
    """One fetch of an origin's resource as kept in a shared store: observations only.

    Times are seconds since the epoch on the writer's clock.
    """

    kind: ResourceKind
    url: str
    #: HTTP status of the final response (None after a network error).
    status: int | None
    error: ErrorKind | None
    fetched_at: float
    #: Until when the writer's policy keeps it (ttl, or error_ttl for a failure).
    expires: float
    #: The body was longer than the cap (then ``body`` is empty).
    truncated: bool = False
    #: The 2xx body as received; b"" otherwise. Of a page served as the file (no file:
    #: see core.tdmrep.not_a_file), its first SNIFF_BYTES, not truncated.
    body: bytes = b""

    def metadata(self) -> dict[str, Any]:
        """Everything but the body as JSON-safe values, with the schema version."""
        return {
            "schema": RESOURCE_SCHEMA,
            "v": RESOURCE_VERSION,
            "kind": self.kind,
            "url": self.url,
            "status": self.status,
            "error": self.error,
            "truncated": self.truncated,
            "fetched_at": self.fetched_at,
            "expires": self.expires,
        }


def resource_url(origin: Origin, kind: ResourceKind) -> str:
    """Where ``kind`` lives on ``origin``."""
    return f"{origin}{_PATHS[kind]}"


def encode_resource(record: StoredResource) -> dict[str, bytes]:
    """A record as named byte strings: JSON ``meta`` and the raw ``body``."""
    return {
        "meta": json.dumps(record.metadata(), allow_nan=False).encode(),
        "body": record.body,
    }


def decode_resource(fields: Mapping[str, object]) -> StoredResource:
    """The record :func:`encode_resource` produced (fields by name), checked.

    :raises InvalidRecordError: a part is missing, is not JSON, or does not conform.
    """
    raw = fields.get("meta")
    if not isinstance(raw, (bytes, str)):
        raise InvalidRecordError("meta", "missing or not a string")
    body = fields.get("body")
    if body is None:  # encode_resource always writes it, if only b""
        raise InvalidRecordError("body", "missing")
    try:
        meta = json.loads(raw)
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError alike
        raise InvalidRecordError("meta", f"not JSON ({exc})") from exc
    except RecursionError as exc:  # "[[[[..." nested past the interpreter's limit
        raise InvalidRecordError("meta", "nests too deeply") from exc
    return _from_parts(meta, body)


def validate_resource(record: object) -> StoredResource:
    """``record`` if it is a :class:`StoredResource` whose every field conforms (for
    stores that hand back objects, as :class:`MemoryStore` does).

    :raises InvalidRecordError: naming the first field that does not conform.
    """
    if not isinstance(record, StoredResource):
        raise InvalidRecordError("record", f"a {type(record).__name__}, not a StoredResource")
    _from_parts(record.metadata(), record.body)
    return record


def check_resource(
    record: StoredResource, origin: Origin, kind: ResourceKind, now: float
) -> StoredResource:
    """``record`` if it is ``kind`` of ``origin`` and not fetched in the reader's future.

    :raises InvalidRecordError: another resource's record (a key pointing elsewhere),
        or a writer clock more than ``MAX_CLOCK_SKEW`` ahead (it would extend TTLs).
    """
    if record.kind != kind:
        raise InvalidRecordError("kind", f"{record.kind!r} where {kind!r} was asked")
    expected = resource_url(origin, kind)
    if record.url != expected:
        raise InvalidRecordError("url", f"{record.url[:200]!r} is not {expected!r}")
    if record.fetched_at - now > MAX_CLOCK_SKEW:
        ahead = record.fetched_at - now
        raise InvalidRecordError("fetched_at", f"{ahead:.0f} s ahead of this clock")
    return record


# --- field checks -------------------------------------------------------------------


def _from_parts(meta: object, body: object) -> StoredResource:
    meta = _check_layout(meta)
    kind, status, error = meta["kind"], meta["status"], meta["error"]
    # Tested as str first: a JSON list or object is unhashable, and a set membership
    # test of one raised TypeError out of every store's read (records.py does so too).
    if not isinstance(meta["kind"], str) or kind not in RESOURCE_KINDS:
        raise InvalidRecordError("kind", f"unknown resource {kind!r}"[:200])
    if not isinstance(meta["url"], str) or not meta["url"].startswith(("http://", "https://")):
        raise InvalidRecordError("url", "not an http(s) URL")
    if status is not None and (not _is_int(status) or not 100 <= status <= 599):
        raise InvalidRecordError("status", f"{status!r} is not an HTTP status"[:200])
    if error is not None and (not isinstance(meta["error"], str) or error not in _ERROR_KINDS):
        raise InvalidRecordError("error", f"unknown error kind {error!r}"[:200])
    if status is None and error is None:
        raise InvalidRecordError("status", "neither a status nor an error")
    if not isinstance(meta["truncated"], bool):
        raise InvalidRecordError("truncated", "not a bool")
    fetched_at, expires = _time("fetched_at", meta["fetched_at"]), _time("expires", meta["expires"])
    if expires < fetched_at:
        raise InvalidRecordError("expires", "earlier than fetched_at")
    if type(body) is not bytes:
        raise InvalidRecordError("body", f"{type(body).__name__}, not bytes")
    _check_body(kind, body, status, error, meta["truncated"])
    return StoredResource(
        kind, meta["url"], status, error, fetched_at, expires, meta["truncated"], body
    )


def _check_layout(meta: object) -> dict[str, Any]:
    """``meta`` if it is an object of this schema and version with exactly its fields."""
    if not isinstance(meta, dict):
        raise InvalidRecordError("meta", "not a JSON object")
    if meta.get("schema") != RESOURCE_SCHEMA or not _is_int(meta.get("v")):
        raise InvalidRecordError("v", f"not a {RESOURCE_SCHEMA} record")
    if meta["v"] != RESOURCE_VERSION:
        raise InvalidRecordError("v", f"unknown schema version {meta['v']} (a newer robots_async?)")
    for name in meta:
        if name not in _FIELDS:
            raise InvalidRecordError(str(name)[:100], "unknown field")
    missing = sorted(_FIELDS - meta.keys())
    if missing:
        raise InvalidRecordError(missing[0], "missing")
    return meta


def _check_body(kind: str, body: bytes, status: int | None, error: object, cut: bool) -> None:
    if len(body) > _MAX_BYTES[kind]:
        raise InvalidRecordError("body", f"{len(body)} bytes, more than {_MAX_BYTES[kind]}")
    ok = error is None and status is not None and 200 <= status < 300 and not cut
    if body and not ok:
        # A body beside a failure would be read as a file the site did not serve.
        raise InvalidRecordError("body", "a body with a non-2xx or cut observation")


def _time(name: str, value: object) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise InvalidRecordError(name, "not a number")
    try:
        finite = math.isfinite(value)
    except OverflowError:  # an int beyond any float
        finite = False
    if not finite or value <= 0:
        raise InvalidRecordError(name, f"{value!r} is not a finite time after the epoch"[:200])
    return float(value)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
