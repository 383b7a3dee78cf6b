"""Shared-store records: what one worker observed when it fetched an origin's robots.txt.

A record holds facts, never a verdict: the status or error kind, the response headers
that caching depends on, the 2xx body, when it was fetched, and the last good body
with its own fetch time. Each reader applies its *own* fetch and match policy to it,
so a worker with laxer settings cannot loosen another worker's verdicts. Records are
checked against a versioned schema by the pure functions here (no I/O), so every
store encodes and validates them the same way; anything that does not conform raises
:class:`InvalidRecordError`, which a cache treats as a miss.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeGuard, get_args

from ..core.errors import InvalidRecordError
from ..fetch.outcome import SHARED_HEADERS, ErrorKind, FetchOutcome, observed_headers

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..fetch.outcome import Category
    from ..fetch.policy import FetchPolicy

__all__ = [
    "LOCAL_ERRORS",
    "MAX_CLOCK_SKEW",
    "SCHEMA",
    "SHARED_HEADERS",
    "VERSION",
    "StoredRobots",
    "check_clock",
    "check_size",
    "check_url",
    "decode",
    "encode",
    "observed_headers",
    "unlike_own_fetch",
    "validate",
]

#: Name and version of the record layout; a record of any other is refused.
SCHEMA = "robots_async.record"
VERSION = 1
#: A fetch time at most this far ahead of the reader's clock counts as "now"; further
#: ahead the record is refused (a writer whose clock runs fast must not extend TTLs).
MAX_CLOCK_SKEW = 60.0

#: Error kinds that describe the fetching worker, not the origin (its own resource
#: limits): never shared, and refused in a record.
LOCAL_ERRORS = frozenset({"local-limit", "ignored"})
_ERROR_KINDS: frozenset[str] = frozenset(get_args(ErrorKind)) - LOCAL_ERRORS
_MAX_URL = 16_384
_MAX_HEADER_VALUE = 4096
#: Far beyond any policy's max_hops; a larger count is nonsense, not an observation.
_MAX_HOPS = 1000
_FIELDS = (
    "schema",
    "v",
    "url",
    "final_url",
    "status",
    "error",
    "headers",
    "fetched_at",
    "hops",
    "bytes_read",
    "truncated",
    "failures",
    "unreachable_since",
    "last_good_at",
)


@dataclass(frozen=True, slots=True)
class StoredRobots:
    """One origin's robots.txt fetch as kept in a shared store: observations only.

    Times are seconds since the epoch on the writer's clock.
    """

    url: str
    final_url: str
    #: HTTP status of the final response (None after a network error).
    status: int | None
    error: ErrorKind | None
    fetched_at: float
    #: The :data:`SHARED_HEADERS` the final response carried, as (name, value) pairs.
    headers: tuple[tuple[str, str], ...] = ()
    hops: int = 0
    bytes_read: int = 0
    truncated: bool = False
    #: Consecutive unreachable fetches up to this one (0 after a response).
    failures: int = 0
    #: When the current run of unreachable fetches began.
    unreachable_since: float | None = None
    #: The 2xx body as received (at most the writer's max_bytes); b"" otherwise.
    body: bytes = b""
    #: The body of the last 2xx fetch and when it was fetched (stale-if-error).
    last_good_body: bytes | None = None
    last_good_at: float | None = None

    @property
    def category(self) -> Category:
        """RFC 9309 §2.3.1 reading of the observation (as :attr:`FetchOutcome.category`)."""
        return FetchOutcome(self.url, self.final_url, self.status, error=self.error).category

    def metadata(self) -> dict[str, Any]:
        """Everything but the bodies as JSON-safe values, with the schema version."""
        return {
            "schema": SCHEMA,
            "v": VERSION,
            "url": self.url,
            "final_url": self.final_url,
            "status": self.status,
            "error": self.error,
            "headers": dict(self.headers),
            "fetched_at": self.fetched_at,
            "hops": self.hops,
            "bytes_read": self.bytes_read,
            "truncated": self.truncated,
            "failures": self.failures,
            "unreachable_since": self.unreachable_since,
            "last_good_at": self.last_good_at,
        }

    @classmethod
    def from_parts(cls, metadata: object, body: object, last_good_body: object) -> StoredRobots:
        """Rebuild a record from :meth:`metadata` and its bodies, checking every field.

        :raises InvalidRecordError: naming the first field that does not conform.
        """
        meta = _check_metadata(metadata)
        record = cls(
            url=meta["url"],
            final_url=meta["final_url"],
            status=meta["status"],
            error=meta["error"],
            fetched_at=float(meta["fetched_at"]),
            headers=tuple(meta["headers"].items()),
            hops=meta["hops"],
            bytes_read=meta["bytes_read"],
            truncated=meta["truncated"],
            failures=meta["failures"],
            unreachable_since=_float_or_none(meta["unreachable_since"]),
            body=_bytes("body", body),
            last_good_body=None if last_good_body is None else _bytes("last_good", last_good_body),
            last_good_at=_float_or_none(meta["last_good_at"]),
        )
        _check_consistency(record)
        return record

    @staticmethod
    def digest(body: bytes) -> str:
        """Content hash of a body: the key of the per-process parsed-rules cache."""
        return hashlib.blake2b(body, digest_size=16).hexdigest()


def encode(record: StoredRobots) -> dict[str, bytes]:
    """A record as named byte strings: JSON ``meta``, raw ``body``, optional ``last_good``."""
    fields = {
        "meta": json.dumps(record.metadata(), allow_nan=False).encode(),
        "body": record.body,
    }
    if record.last_good_body is not None:
        fields["last_good"] = record.last_good_body
    return fields


def decode(fields: Mapping[str, object]) -> StoredRobots:
    """The record :func:`encode` produced (fields by name), checked.

    :raises InvalidRecordError: if a part is missing, is not JSON, or does not conform.
    """
    raw = fields.get("meta")
    if not isinstance(raw, (bytes, str)):
        raise InvalidRecordError("meta", "missing or not a string")
    try:
        metadata = json.loads(raw)
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError alike
        raise InvalidRecordError("meta", f"not JSON ({exc})") from exc
    except RecursionError as exc:  # "[[[[..." nested past the interpreter's limit
        raise InvalidRecordError("meta", "nests too deeply") from exc
    record = StoredRobots.from_parts(metadata, fields.get("body", b""), fields.get("last_good"))
    if "body" not in fields:
        # encode() always writes it: a hash without it was cut or edited, and a 2xx
        # read with an empty body would allow everything.
        raise InvalidRecordError("body", "missing")
    return record


def validate(record: object) -> StoredRobots:
    """``record`` if it is a :class:`StoredRobots` whose every field conforms.

    For stores that hand back objects rather than bytes (a third-party store, or
    :class:`MemoryStore` holding whatever was put).
    :raises InvalidRecordError: naming the first field that does not conform.
    """
    if not isinstance(record, StoredRobots):
        raise InvalidRecordError("record", f"a {type(record).__name__}, not a StoredRobots")
    headers: object = record.headers
    if not isinstance(headers, tuple) or not all(
        isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], str) for pair in headers
    ):
        raise InvalidRecordError("headers", "not a tuple of (name, value) pairs")
    if len({name for name, _ in headers}) != len(headers):
        # Only one value per name is checked through the dict below.
        raise InvalidRecordError("headers", "a header named twice")
    metadata = {**record.metadata(), "headers": dict(headers)}
    StoredRobots.from_parts(metadata, record.body, record.last_good_body)
    return record


def unlike_own_fetch(record: StoredRobots, policy: FetchPolicy) -> str | None:
    """Why ``policy``'s own fetch could have observed something else, or None.

    A record is an observation made under the writer's fetch limits; one that the
    reader's limits would have ended differently (more redirects followed, a longer
    body read, a redirect it would refuse, a guard whose setting is unknown) is
    not used: the reader fetches itself.
    """
    if record.error == "redirect-limit" and record.hops - 1 < policy.max_hops:
        return f"the writer stopped after {record.hops - 1} redirects"
    if record.error != "redirect-limit" and record.hops > policy.max_hops:
        return f"{record.hops} redirects followed, more than max_hops"
    if record.error == "blocked-redirect":
        return "a redirect refused by the writer's guard"
    if not policy.cross_origin_redirects and _origin(record.final_url) != _origin(record.url):
        return "a redirect to another origin"
    limit: int | None = policy.max_bytes
    if record.truncated and (limit is None or len(record.body) < limit):
        return f"a body cut at {len(record.body)} bytes"
    return None


def check_url(record: StoredRobots, robots_url: str) -> None:
    """Refuse a record of another robots.txt than ``robots_url`` (the key's origin).

    :raises InvalidRecordError: the record was fetched from another URL.
    """
    if record.url != robots_url:
        raise InvalidRecordError("url", f"{record.url[:200]!r} is not {robots_url!r}")


def check_size(record: StoredRobots, max_bytes: int | None) -> None:
    """Refuse bodies longer than the reader's ``max_bytes``: its own fetch keeps no
    more, and a larger one would count against (and could flush) its memory bound.

    :raises InvalidRecordError: naming the body that is too long.
    """
    if max_bytes is None:
        return
    for name, body in (("body", record.body), ("last_good", record.last_good_body)):
        if body is not None and len(body) > max_bytes:
            raise InvalidRecordError(name, f"{len(body)} bytes, more than max_bytes={max_bytes}")


def check_clock(record: StoredRobots, now: float) -> None:
    """Refuse a record fetched further in the future than :data:`MAX_CLOCK_SKEW`.

    :raises InvalidRecordError: the writer's clock is ahead of ``now`` (the reader's).
    """
    ahead = record.fetched_at - now
    if ahead > MAX_CLOCK_SKEW:
        raise InvalidRecordError(
            "fetched_at", f"{ahead:.0f} s ahead of this clock (more than {MAX_CLOCK_SKEW:g} s)"
        )


# --- field checks -------------------------------------------------------------------


def _check_metadata(metadata: object) -> dict[str, Any]:
    if not isinstance(metadata, dict):
        raise InvalidRecordError("meta", f"a JSON {_json_type(metadata)}, not an object")
    if "v" not in metadata or "schema" not in metadata:
        raise InvalidRecordError("v", "no schema version (written by an older robots_async?)")
    if metadata["schema"] != SCHEMA or not _is_int(metadata["v"]):
        raise InvalidRecordError("v", f"not a {SCHEMA} record")
    if metadata["v"] != VERSION:
        raise InvalidRecordError("v", f"unknown schema version {metadata['v']}")
    for name in metadata:
        if name not in _FIELDS:
            raise InvalidRecordError(str(name), "unknown field")
    for name in _FIELDS:
        if name not in metadata:
            raise InvalidRecordError(name, "missing")
    _check_url("url", metadata["url"])
    _check_url("final_url", metadata["final_url"])
    _check_status(metadata["status"])
    _check_error(metadata["error"])
    _check_headers(metadata["headers"])
    _check_time("fetched_at", metadata["fetched_at"])
    _check_count("hops", metadata["hops"], _MAX_HOPS)
    _check_count("bytes_read", metadata["bytes_read"])
    if not isinstance(metadata["truncated"], bool):
        raise InvalidRecordError("truncated", f"{_json_type(metadata['truncated'])}, not a bool")
    _check_count("failures", metadata["failures"])
    for name in ("unreachable_since", "last_good_at"):
        if metadata[name] is not None:
            _check_time(name, metadata[name])
    return metadata


def _check_consistency(record: StoredRobots) -> None:
    if record.status is None and record.error is None:
        raise InvalidRecordError("status", "neither a status nor an error")
    if record.body and record.category != "ok":
        raise InvalidRecordError("body", f"a body with a non-2xx observation ({record.status})")
    if (record.last_good_body is None) != (record.last_good_at is None):
        raise InvalidRecordError("last_good_at", "set without last_good, or the reverse")
    for name in ("unreachable_since", "last_good_at"):
        when = getattr(record, name)
        if when is not None and when > record.fetched_at:
            raise InvalidRecordError(name, "later than fetched_at")


def _check_url(name: str, value: object) -> None:
    if not isinstance(value, str):
        raise InvalidRecordError(name, f"{_json_type(value)}, not a string")
    if not value.startswith(("http://", "https://")) or len(value) > _MAX_URL:
        raise InvalidRecordError(name, "not an http(s) URL of a sane length")
    if any(c in value for c in "\r\n\0"):  # no fetch yields one (log injection)
        raise InvalidRecordError(name, "holds CR, LF or NUL")


def _check_status(value: object) -> None:
    if value is None:
        return
    if not _is_int(value):
        raise InvalidRecordError("status", f"{_json_type(value)}, not an int or null")
    if not 100 <= value <= 599:  # RFC 9110 §15: three digits, 1xx to 5xx
        raise InvalidRecordError("status", f"unknown status {value}")


def _check_error(value: object) -> None:
    if value is not None and (not isinstance(value, str) or value not in _ERROR_KINDS):
        raise InvalidRecordError("error", f"unknown error kind {value!r}"[:200])


def _check_headers(value: object) -> None:
    if not isinstance(value, dict):
        raise InvalidRecordError("headers", f"a JSON {_json_type(value)}, not an object")
    for name, text in value.items():
        if name not in SHARED_HEADERS:
            raise InvalidRecordError("headers", f"unexpected header {name!r}"[:200])
        if not isinstance(text, str) or len(text) > _MAX_HEADER_VALUE:
            raise InvalidRecordError("headers", f"{name} is not a string of a sane length")
        if any(c in text for c in "\r\n\0"):
            raise InvalidRecordError("headers", f"{name} holds CR, LF or NUL")


def _check_time(name: str, value: object) -> None:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise InvalidRecordError(name, f"{_json_type(value)}, not a number")
    try:
        finite = math.isfinite(value)
    except OverflowError:  # an int beyond any float
        finite = False
    if not finite or value <= 0:
        raise InvalidRecordError(name, f"{value!r} is not a finite time after the epoch"[:200])


def _check_count(name: str, value: object, limit: int | None = None) -> None:
    if not _is_int(value):
        raise InvalidRecordError(name, f"{_json_type(value)}, not an int")
    if value < 0 or (limit is not None and value > limit):
        raise InvalidRecordError(name, f"{value} is out of range")


def _bytes(name: str, value: object) -> bytes:
    if type(value) is not bytes:
        raise InvalidRecordError(name, f"{type(value).__name__}, not bytes")
    return value


def _origin(url: str) -> tuple[str, str]:
    """Scheme and authority of an http(s) URL (enough to compare origins)."""
    scheme, _, rest = url.partition("://")
    return scheme.lower(), rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0].lower()


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _float_or_none(value: float | None) -> float | None:
    return None if value is None else float(value)


def _json_type(value: object) -> str:
    names = {dict: "object", list: "list", str: "string", bool: "bool", type(None): "null"}
    return names.get(type(value), type(value).__name__)
