"""``robots-async lint --tdmrep``: problems in a W3C TDMRep ``tdmrep.json``.

What the library reads (:func:`~robots_async.core.tdmrep.parse_tdmrep`, so a crawler's
reading) plus what only the raw JSON shows: keys the report does not define (a
misspelt ``tdm_reservation``, the 2022 drafts' ``TDM-a``), a ``tdm-policy`` crawlers
drop (not a non-empty string), a ``location`` without its
leading "/", and entries no URL can reach because an earlier ``/`` or ``/*`` entry
matches every path first ("the most specific match is the first in sequence").
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any, Final

from ..core.tdmrep import TDMREP_MAX_BYTES, TDMREP_PATH, TdmRep, absent_status, parse_tdmrep
from .options import EXIT_NEGATIVE, EXIT_OK
from .output import _json, _problem

if TYPE_CHECKING:
    from ..fetch.outcome import FetchOutcome

__all__ = ["is_tdmrep_name", "lint_tdmrep", "tdmrep_unavailable", "tdmrep_url"]

#: The keys an entry may have (TDMRep, "TDM File on the Origin Server").
_KEYS: Final = frozenset({"location", "tdm-reservation", "tdm-policy"})
#: Locations that match every path: entries after one are never reached.
_EVERYTHING: Final = frozenset({"/", "/*", "/*$"})


def is_tdmrep_name(path: str) -> bool:
    """True for a file or URL path naming a tdmrep.json."""
    return path.rstrip("/").lower().endswith("tdmrep.json")


def lint_tdmrep(name: str, body: bytes, as_json: bool, max_bytes: int = TDMREP_MAX_BYTES) -> int:
    """Print the problems of ``body`` (read as crawlers would, to ``max_bytes``); exit
    status 1 if there is any."""
    rep = parse_tdmrep(body, max_bytes=max_bytes)
    found = _problems(rep, body)
    if as_json:
        record = {
            "file": name,
            "error": rep.error,
            "entries": len(rep.entries),
            "reserved": sum(1 for e in rep.entries if e.reservation),
            "warnings": [{"entry": i, "code": c, "message": m} for i, c, m in found],
        }
        print(_json(record))
    else:
        for index, code, message in found:
            where = f"{name}: entry {index}:" if index >= 0 else f"{name}:"
            print(f"{where} {code}: {message}")
        for entry in rep.entries:
            if entry.problem is None:
                said = "reserved" if entry.reservation else "not reserved"
                policy = f", policy {entry.policy}" if entry.policy and entry.reservation else ""
                print(f"{name}: entry {entry.index}: note: {entry.location}: {said}{policy}")
        reserved = sum(1 for e in rep.entries if e.reservation)
        print(
            f"{name}: {_plural(len(rep.entries), 'entry', 'entries')}, {reserved} reserving; "
            f"{_plural(len(found), 'warning', 'warnings')}"
        )
    return EXIT_NEGATIVE if found else EXIT_OK


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def tdmrep_unavailable(url: str, outcome: FetchOutcome, as_json: bool) -> int:
    """No body to lint. A 4xx but 429 means the site has no file (nothing reserved by
    it): exit 0; a 429 or 5xx, an unasked 206, a redirect fault or a network error
    leaves its reservations unknown, as crawlers read it (``cache.tdmrep``): exit 1."""
    status = outcome.status
    absent = outcome.error is None and status is not None and absent_status(status)
    fate = "no tdmrep.json" if absent else "unreachable"
    print(f"{url}: {fate} ({_problem(outcome)}): nothing to lint", file=sys.stderr)
    if as_json:
        print(_json({"file": url, "status": outcome.status, "error": outcome.error}))
    return EXIT_OK if absent else EXIT_NEGATIVE


def tdmrep_url(origin_url: str) -> str:
    """The origin's tdmrep.json URL."""
    return origin_url.rstrip("/") + TDMREP_PATH


def _problems(rep: TdmRep, body: bytes) -> list[tuple[int, str, str]]:
    """(entry index or -1 for the file, code, message), in entry order."""
    if rep.error is not None:
        return [(-1, "unreadable", f"{rep.error}: crawlers treat every resource as unknown")]
    if rep.not_a_file is not None:
        message = f"{rep.not_a_file}: crawlers read no tdmrep.json here (nothing reserved)"
        return [(-1, "not-a-file", message)]
    found = [
        (e.index, "invalid-entry", e.problem.removeprefix(f"entry {e.index}: "))
        for e in rep.entries
        if e.problem
    ]
    raw = _raw_entries(body)
    if rep.more:
        kept = f"crawlers read the first {len(rep.entries)}"
        message = f"{len(raw)} entries: {kept} (a URL none of them matches is unknown)"
        found.append((-1, "too-many-entries", message))
    for index, item in enumerate(raw[: len(rep.entries)]):
        if not isinstance(item, dict):
            continue
        found += [
            (index, "unknown-key", f"{key!r} is not a TDMRep property")
            for key in sorted(set(item) - _KEYS)
        ]
        location = item.get("location")
        read = rep.entries[index].location is not None  # not a URL (invalid-entry)
        if read and isinstance(location, str) and not location.startswith("/"):
            found.append((index, "relative-location", f"{location!r} is read as '/{location}'"))
        policy = item.get("tdm-policy")
        if "tdm-policy" in item and not (isinstance(policy, str) and policy):
            found.append((index, "invalid-policy", f"tdm-policy {policy!r} is not a URL: ignored"))
    first_all = next(
        (e.index for e in rep.entries if e.location is not None and e.location in _EVERYTHING),
        None,
    )
    if first_all is not None:
        found += [
            (entry.index, "unreachable", f"entry {first_all} matches every path first")
            for entry in rep.entries[first_all + 1 :]
        ]
    return sorted(found, key=lambda item: item[0])


def _raw_entries(body: bytes) -> list[Any]:
    """The JSON array as written (parse_tdmrep has accepted it: this cannot fail)."""
    data = json.loads(body.decode("utf-8-sig"))
    return data if isinstance(data, list) else []
