"""W3C TDMRep: the origin-wide ``/.well-known/tdmrep.json`` file, parsed and queried.

The TDM Reservation Protocol (W3C Community Group final report, May 2024) lets a site
reserve text-and-data-mining rights (EU DSM Directive art. 4). The file is a JSON array
of ``{"location": pattern, "tdm-reservation": 0|1, "tdm-policy": url}`` objects;
``location`` is a path pattern with robots.txt's ``*`` and ``$``, and the first entry
whose pattern matches a resource decides for it. A file that cannot be read (bad JSON,
not an array but naming TDMRep's properties, over the size cap) or an entry that
cannot be (no string location, a URL for a location, a reservation other than 0/1, a
property written twice with different values) gives "unknown" where it could decide,
never a guess.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Final, Literal

from .errors import PageInputTypeError
from .matcher import glob_match
from .url import encode_non_ascii, request_target
from .validate import integer

__all__ = [
    "SNIFF_BYTES",
    "TDMREP_PATH",
    "TDMREP_MAX_BYTES",
    "TDMREP_MAX_ENTRIES",
    "TdmAnswer",
    "TdmEntry",
    "TdmRep",
    "TdmStatus",
    "absent_status",
    "not_a_file",
    "parse_tdmrep",
]

#: Where the file lives on every origin (TDMRep §4.4).
TDMREP_PATH: Final = "/.well-known/tdmrep.json"
#: Bytes of a file read at most; a larger one is "unknown" (the robots.txt cap: a real
#: file lists a few locations, so this only stops a hostile body from costing memory).
TDMREP_MAX_BYTES: Final = 500 * 1024

#: Entries kept at most. A URL none of them matches is "unknown" in a longer file (a
#: later entry might have matched): real files list a few locations, and a 510 KB
#: file of 170,000 "{}" entries kept them all (32 MB, per origin cached).
TDMREP_MAX_ENTRIES: Final = 1000

#: A body whose first byte (after a UTF-8 BOM and whitespace) could start a JSON
#: array or object, or is not ASCII text (JSON saved in UTF-16 or UTF-32 starts with a
#: BOM or a NUL; a byte of another encoding): the publisher wrote a file, so one that
#: cannot be read is "unknown" (so is one _BINARY or _PROPERTY below finds). Anything
#: else (an HTML page, the soft 404 of a site that answers every path with one; text;
#: nothing) is no TDMRep file: TDMRep, "TDM File on the Origin Server": "Failure to
#: provide access to such a representation implies that the origin server does not
#: implement this protocol".
_JSON_START: Final = re.compile(rb"[ \t\r\n]*[\[{\x00\x80-\xff]")
#: A control byte other than JSON's whitespace: binary, neither a page nor text (a
#: gzip file served without its Content-Encoding starts 1F 8B 08 00).
_BINARY: Final = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
#: A body with TDMRep's property as a JSON key was written as a file, whatever precedes
#: its JSON (a comment, a JSONP call, an anti-XSSI prefix, a <pre> a CMS wrapped it
#: in). As a key only: a site's soft 404 carries TDMRep's own HTML meta
#: (name="tdm-reservation" content="1") when every page of the site does.
_PROPERTY: Final = re.compile(rb"""["']tdm[-_]reservation["']\s*:""", re.IGNORECASE)
#: Any of TDMRep's properties as a key: JSON that is no array and names none of them
#: is some other document, the soft 404 of a site that answers every path with JSON
#: (``{"error": "Not Found"}``), and reserves nothing; one that names one was meant
#: as a file (a lone entry, not in an array) and stays unknown.
_ANY_PROPERTY: Final = re.compile(
    rb"""["'](?:tdm[-_]reservation|tdm[-_]policy|location)["']\s*:""", re.IGNORECASE
)
_UTF8_BOM: Final = b"\xef\xbb\xbf"
#: How much of a body not_a_file() reads (whitespace before the JSON included).
SNIFF_BYTES: Final = 4096

#: What a source says about TDM rights on a resource.
TdmStatus = Literal["reserved", "not-reserved", "unknown"]


@dataclass(frozen=True, slots=True)
class TdmEntry:
    """One entry of the file, in file order; ``problem`` set if it cannot be used."""

    index: int
    location: str | None
    reservation: bool | None
    policy: str | None
    problem: str | None = None

    def matches(self, target: str) -> bool:
        """True if ``location`` matches the request target (robots.txt syntax)."""
        if self.location is None:
            return False
        return _pattern_matches(self.location, target)


@dataclass(frozen=True, slots=True)
class TdmAnswer:
    """TDMRep's answer for one resource, and why."""

    status: TdmStatus
    policy: str | None = None
    #: The entry that decided (None: no file, no matching entry, or an unreadable file).
    entry: TdmEntry | None = None
    reason: str = ""

    @property
    def reservation(self) -> bool | None:
        """True if reserved, False if not, None if unknown."""
        if self.status == "unknown":
            return None
        return self.status == "reserved"


@dataclass(frozen=True, slots=True)
class TdmRep:
    """A parsed tdmrep.json: its entries, or the reason it could not be read."""

    entries: tuple[TdmEntry, ...] = ()
    #: Set when the file as a whole is unreadable: every answer is then "unknown".
    error: str | None = None
    #: Entries past TDMREP_MAX_ENTRIES were not kept.
    more: bool = False
    #: Why there is no file when a 2xx body was not one (see not_a_file()).
    not_a_file: str | None = None

    @classmethod
    def absent(cls, not_a_file: str | None = None) -> TdmRep:
        """No file (a 404 or other 4xx, or a 2xx body that is no TDMRep file: see
        :func:`not_a_file`): nothing is reserved by the file."""
        return cls(not_a_file=not_a_file)

    @classmethod
    def unknown(cls, reason: str) -> TdmRep:
        """The file could not be had or read (5xx, network error, bad JSON)."""
        return cls(error=reason)

    def lookup(self, url: object) -> TdmAnswer:
        """The answer for ``url`` (absolute URL or request target): first match decides."""
        if self.error is not None:
            return TdmAnswer("unknown", reason=self.error)
        target = _comparable(encode_non_ascii(request_target(url)))
        # "$" and "*" cannot be written in a pattern but as %24 and %2A (TDMRep §4.1:
        # "/path/foo-%24" matches ".../path/foo-$").
        if "$" in target or "*" in target:
            target = target.replace("$", "%24").replace("*", "%2A")
        for entry in self.entries:
            if entry.location is None:
                # An unreadable location might have matched before any later entry.
                return TdmAnswer("unknown", entry=entry, reason=entry.problem or "")
            if not entry.matches(target):
                continue
            if entry.reservation is None:
                return TdmAnswer("unknown", entry=entry, reason=entry.problem or "")
            if entry.reservation:
                return TdmAnswer("reserved", entry.policy, entry, f"location {entry.location}")
            return TdmAnswer("not-reserved", None, entry, f"location {entry.location}")
        if self.more:
            why = f"no match in the first {len(self.entries)} entries of a longer file"
            return TdmAnswer("unknown", reason=why)
        if self.not_a_file is not None:
            return TdmAnswer("not-reserved", reason=f"no tdmrep.json ({self.not_a_file})")
        return TdmAnswer("not-reserved", reason="no matching location")


def not_a_file(body: bytes | bytearray | memoryview, *, cut: bool = False) -> str | None:
    """Why a 2xx body is no TDMRep file (it cannot start a JSON array or object: an
    HTML page, text, nothing), or None if it may be one. ``cut``: ``body`` is the
    start of a longer one (blank so far then says nothing)."""
    start = bytes(body[:SNIFF_BYTES]).removeprefix(_UTF8_BOM)
    if _JSON_START.match(start) or _BINARY.search(start) or _PROPERTY.search(body):
        return None
    lead = start.lstrip(b" \t\r\n")[:1]
    if not lead:  # blank so far: no file if that is all, else the parser decides
        return "an empty body" if len(body) <= SNIFF_BYTES and not cut else None
    return "a page, not JSON" if lead == b"<" else "text, not JSON"


def absent_status(status: int) -> bool:
    """True if a response's status says the origin has no file: a 4xx but 429 (a rate
    limit says nothing of the file; RFC 9309 §2.3.1.4 reads it as unreachable too)."""
    return 400 <= status < 500 and status != 429


def parse_tdmrep(
    body: bytes | bytearray | memoryview | str,
    *,
    # ``object``, checked below (as page_directives' max_head_bytes: compiled with
    # mypyc, an ``int`` parameter would take True as 1 before any check).
    max_bytes: object = TDMREP_MAX_BYTES,
) -> TdmRep:
    """Parse a tdmrep.json body (``str`` is encoded as UTF-8); never raises on content.

    :raises PageInputTypeError: for a body of another type.
    :raises ConfigurationError: for a ``max_bytes`` that is not an int >= 1.
    """
    limit = integer("parse_tdmrep(max_bytes=)", max_bytes, minimum=1)
    if isinstance(body, str):
        body = body.encode("utf-8", "surrogatepass")  # a lone surrogate: not UTF-8 below
    elif not isinstance(body, (bytes, bytearray, memoryview)):
        raise PageInputTypeError("body must be bytes, bytearray, memoryview or str", body)
    why = not_a_file(body)
    if why is not None:
        return TdmRep.absent(why)
    if len(body) > limit:
        return TdmRep.unknown(f"tdmrep.json over {limit} bytes")
    try:
        data = json.loads(bytes(body).decode("utf-8-sig"), object_pairs_hook=_object)
    except UnicodeDecodeError:
        return TdmRep.unknown("tdmrep.json is not UTF-8")
    except ValueError as exc:
        return TdmRep.unknown(f"tdmrep.json is not JSON ({exc.args[0]})")
    except RecursionError:  # "[[[[..." nested past the interpreter's limit
        return TdmRep.unknown("tdmrep.json nests too deeply")
    if not isinstance(data, list):
        if _ANY_PROPERTY.search(body) is None:
            return TdmRep.absent("JSON without TDMRep's properties")
        return TdmRep.unknown("tdmrep.json is not a JSON array")
    kept = data[:TDMREP_MAX_ENTRIES]
    entries = tuple(_entry(index, item) for index, item in enumerate(kept))
    return TdmRep(entries, more=len(data) > len(kept))


def _entry(index: int, item: object) -> TdmEntry:
    """One array item as an entry; what cannot be read is kept as a problem."""
    if not isinstance(item, dict):
        return TdmEntry(index, None, None, None, f"entry {index} is not an object")
    repeated = next((key for key in _PROPERTIES if item.get(key) is _REPEATED), None)
    if repeated is not None:
        return TdmEntry(index, None, None, None, f"entry {index} repeats {repeated!r}")
    location = item.get("location")
    if not isinstance(location, str):
        return TdmEntry(index, None, None, None, f"entry {index} has no string location")
    if _URL.match(location):
        # A path, says the report: read as one ("/https://...") it matched no URL, and
        # which origin it names is not ours to guess.
        return TdmEntry(index, None, None, None, f"entry {index}: location is a URL, not a path")
    if not location.startswith("/"):
        location = "/" + location  # a path relative to the origin either way
    if "$" in location[:-1]:
        # Only a final "$" ends the pattern (RFC 9309 §2.2.3); another one is the
        # character, which the URL side compares as %24.
        location = location[:-1].replace("$", "%24") + location[-1]
    reservation = _reservation(item.get("tdm-reservation"))
    policy = item.get("tdm-policy")
    policy = policy if isinstance(policy, str) and policy else None
    problem = None
    if reservation is None:
        problem = f"entry {index}: tdm-reservation is not 0 or 1"
    return TdmEntry(index, _comparable(encode_non_ascii(location)), reservation, policy, problem)


#: The properties an entry is read by.
_PROPERTIES: Final = ("location", "tdm-reservation", "tdm-policy")
#: Stands for a key written twice with different values (RFC 8259 §4: "the behavior
#: of software that receives such an object is unpredictable"; json keeps the last).
_REPEATED: Final = object()


def _object(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """A JSON object, a key repeated with another value mapped to ``_REPEATED``."""
    found: dict[str, object] = {}
    for key, value in pairs:
        if key in found and found[key] != value:
            value = _REPEATED
        found[key] = value
    return found


_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_ESCAPE = re.compile("%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def _comparable(text: str) -> str:
    """``text`` with %-escapes of unreserved characters decoded and the others' hex
    upper-cased: TDMRep §4.1 has unreserved escapes "unencoded prior to comparison"
    (``/%7Euser`` is ``/~user``), and ``%2f``/``%2F`` are one octet (RFC 3986 §6.2.2.1)."""
    return _ESCAPE.sub(_unescape, text) if "%" in text else text


def _unescape(escape: re.Match[str]) -> str:
    char = chr(int(escape[1], 16))
    return char if char in _UNRESERVED else "%" + escape[1].upper()


def _reservation(value: object) -> bool | None:
    """0/1 (the spec's integers; "0"/"1" strings are accepted as written in the wild)."""
    if isinstance(value, bool):  # JSON true/false: not the spec's 0/1
        return None
    if value in (0, 1, "0", "1"):
        return value in (1, "1")
    return None


def _pattern_matches(pattern: str, target: str) -> bool:
    """robots.txt matching (RFC 9309 §2.2.3): ``*`` any run, a final ``$`` ends the path."""
    anchored = pattern.endswith("$")
    body = pattern[:-1] if anchored else pattern
    if "*" not in body:
        return target == body if anchored else target.startswith(body)
    return glob_match(target, tuple(body.split("*")), anchored)
