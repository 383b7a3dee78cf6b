"""``robots-async fetch``: fetch an origin's robots.txt and report how it went."""

from __future__ import annotations

import asyncio
import sys
import time
from typing import TYPE_CHECKING, Any, BinaryIO

from ..core.url import Origin
from .common import _agent, _fetch, _fetch_policy, _setup_logging
from .options import _EPILOG, EXIT_NEGATIVE, EXIT_OK, _add_json, _add_max_bytes
from .output import _counts, _json, _print_fields, _yes

if TYPE_CHECKING:
    import argparse

    from ..fetch.outcome import FetchOutcome
    from ..fetch.policy import Resolution

__all__ = ["add_parser"]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``fetch``."""
    fetch = sub.add_parser("fetch", help="fetch robots.txt and report how", epilog=_EPILOG)
    fetch.add_argument("url", metavar="URL", help="any URL of the origin")
    fetch.add_argument("--body", action="store_true", help="also print the body (2xx only)")
    _add_max_bytes(fetch)
    _add_json(fetch)
    fetch.set_defaults(handler=_cmd_fetch)


def _fetch_record(outcome: FetchOutcome, resolution: Resolution) -> dict[str, Any]:
    return {
        "robots_url": outcome.url,
        "final_url": outcome.final_url,
        "status": outcome.status,
        "hops": outcome.hops,
        "bytes_read": outcome.bytes_read,
        "truncated": outcome.truncated,
        "error": outcome.error,
        "error_detail": outcome.error_detail or None,
        "category": outcome.category,
        "source": resolution.source,
        "rules_in_force": resolution.robots.synthetic or "parsed",
        "ttl": resolution.ttl,
        "elapsed": round(outcome.elapsed, 6),
        **_counts(resolution.robots),
    }


def _print_fetch(record: dict[str, Any]) -> None:
    error = record["error"]
    if error is not None and record["error_detail"]:
        error = f"{error} ({record['error_detail']})"
    status = record["status"]
    fields: list[tuple[str, object]] = [
        ("robots.txt", record["robots_url"]),
        ("final URL", record["final_url"]),
        ("status", "none" if status is None else status),
        ("hops", record["hops"]),
        ("bytes read", record["bytes_read"]),
        ("truncated", _yes(record["truncated"])),
        ("error", error or "none"),
        ("category", record["category"]),
        ("source", record["source"]),
        ("rules in force", record["rules_in_force"]),
        ("ttl", f"{record['ttl']:g} s"),
        ("elapsed", f"{record['elapsed']:.3f} s"),
        *((name, record[name]) for name in ("groups", "rules", "sitemaps")),
    ]
    _print_fields(fields)


def _write_all(stream: BinaryIO, data: bytes) -> None:
    """Write all of ``data``: under ``python -u`` or PYTHONUNBUFFERED, stdout's binary
    layer is a raw file whose ``write()`` may write only part and say how much (to a
    pipe whose reader left: 64 KiB, the rest dropped unseen and the exit status 0).
    Written in full, a broken pipe raises BrokenPipeError on the next write instead.
    """
    view = memoryview(data)
    while view:
        written = stream.write(view)
        view = view[written or 0 :]
    stream.flush()


def _cmd_fetch(args: argparse.Namespace) -> int:
    _agent(args)
    origin = Origin.from_url(args.url)
    _setup_logging(args.verbose)
    policy = _fetch_policy(args, max_bytes=args.max_bytes)
    outcome = asyncio.run(_fetch(args, origin.robots_url, policy, keep_body=args.body))
    record = _fetch_record(outcome, policy.resolve(outcome, None, time.time()))
    if args.json:
        if args.body:
            record["body"] = (
                None if outcome.body is None else outcome.body.decode("utf-8", "replace")
            )
        print(_json(record))
    else:
        _print_fetch(record)
        if args.body and outcome.body is not None:
            print()
            sys.stdout.flush()
            _write_all(sys.stdout.buffer, outcome.body)
    # A 404 is the normal "no robots.txt" (allow all), not a failure.
    return EXIT_NEGATIVE if outcome.category == "unreachable" else EXIT_OK
