"""``robots-async lint``: problems in a robots.txt file or an origin's robots.txt."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ..core.parser import parse
from ..core.url import Origin
from ..core.usage import parse_preference
from .common import _agent, _fetch, _fetch_policy, _read_bytes, _setup_logging
from .options import _EPILOG, EXIT_NEGATIVE, EXIT_OK, _add_json, _add_max_bytes
from .output import _counts, _json, _problem, _usage_text

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

    from ..core.robots import RobotsTxt
    from ..core.usage import UsageRule

__all__ = ["add_parser"]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``lint``."""
    lint = sub.add_parser("lint", help="report problems in a robots.txt", epilog=_EPILOG)
    lint.add_argument(
        "file",
        metavar="FILE|URL",
        help="robots.txt to lint: a file, '-' for stdin, or an http(s) URL whose "
        "origin's robots.txt is fetched",
    )
    _add_max_bytes(lint)
    _add_json(lint)
    lint.set_defaults(handler=_cmd_lint)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


_UTF16 = "body is UTF-16 ({}), not UTF-8: crawlers find no rules in it; save it as UTF-8"


_HTML = (
    "body is an HTML page, not a robots.txt (a soft 404 or an error page served as "
    "200?): its lines are ignored"
)


def _body_warnings(body: bytes) -> list[tuple[int, str, str]]:
    """Problems only the raw body shows: a UTF-16 file, an HTML page served as robots.txt.

    The parser reads bytes as UTF-8 (RFC 9309 §2.2), so neither yields a rule: a
    UTF-16 file is NUL-riddled noise and an HTML page (often a "soft 404") has no
    ``key: value`` lines that mean anything.
    """
    head = body[:1024]
    if head.startswith(b"\xff\xfe"):
        return [(1, "utf-16", _UTF16.format("little-endian byte order mark"))]
    if head.startswith(b"\xfe\xff"):
        return [(1, "utf-16", _UTF16.format("big-endian byte order mark"))]
    if head and head.count(b"\x00") * 4 >= len(head):
        return [
            (1, "utf-16", _UTF16.format("NUL bytes between the characters, no byte order mark"))
        ]
    lowered = head.lower()
    for marker in (b"<!doctype html", b"<html", b"<head", b"<body"):
        at = lowered.find(marker)
        if at != -1:
            return [(lowered[:at].count(b"\n") + 1, "html", _HTML)]
    return []


def _lint_report(
    name: str, robots: RobotsTxt, body: bytes, extra: dict[str, Any], as_json: bool
) -> int:
    found: list[tuple[int, str, str]] = _body_warnings(body)
    found += [(w.line, w.code, w.message) for w in robots.warnings]
    found.sort(key=lambda warning: warning[0])
    usage = [(group, rule) for group in robots.groups for rule in group.usage]
    counts = _counts(robots)
    if as_json:
        record = {
            "file": name,
            **extra,
            "warnings": [{"line": line, "code": code, "message": msg} for line, code, msg in found],
            **counts,
            "usage_rules": [_usage_rule_record(group.agents, rule) for group, rule in usage],
            "truncated": robots.truncated,
        }
        print(_json(record))
    else:
        shown = [(line, f"{code}: {message}") for line, code, message in found]
        for group, rule in usage:
            # A note, not a warning: what each Content-Usage rule says, and for whom.
            reading = _usage_text(parse_preference(rule.preference)[0])
            shown.append((rule.line, f"note: for {', '.join(group.agents)}: {rule} ({reading})"))
        for line, text in sorted(shown, key=lambda item: item[0]):
            print(f"{name}:{line}: {text}")
        summary = ", ".join(_plural(n, noun[:-1]) for noun, n in counts.items())
        if usage:
            summary += f", {_plural(len(usage), 'Content-Usage rule')}"
        truncated = "truncated" if robots.truncated else "not truncated"
        print(f"{name}: {summary}, {truncated}; {_plural(len(found), 'warning')}")
    return EXIT_NEGATIVE if found else EXIT_OK


def _usage_rule_record(agents: Sequence[str], rule: UsageRule) -> dict[str, Any]:
    reading = parse_preference(rule.preference)[0]
    return {
        "line": rule.line,
        "agents": list(agents),
        "path": rule.path,
        "preference": rule.preference,
        "train-ai": reading.train_ai,
        "search": reading.search,
    }


def _is_url(text: str) -> bool:
    return text.lower().startswith(("http://", "https://"))


def _cmd_lint(args: argparse.Namespace) -> int:
    if not _is_url(args.file):
        name = "<stdin>" if args.file == "-" else args.file
        body = _read_bytes(args.file)
        robots = parse(body, policy=args.policy, max_bytes=args.max_bytes)
        return _lint_report(name, robots, body[: args.max_bytes], {}, args.json)
    _agent(args)
    origin = Origin.from_url(args.file)
    _setup_logging(args.verbose)
    policy = _fetch_policy(args, max_bytes=args.max_bytes)
    outcome = asyncio.run(_fetch(args, origin.robots_url, policy, keep_body=True))
    extra = {"status": outcome.status, "error": outcome.error, "final_url": outcome.final_url}
    if outcome.category != "ok" or outcome.robots is None:
        fate = "no robots.txt" if outcome.category == "unavailable" else "unreachable"
        message = f"{origin.robots_url}: {fate} ({_problem(outcome)}): nothing to lint"
        if args.json:
            print(_json({"file": origin.robots_url, **extra, "warnings": []}))
        else:
            print(message)
        return EXIT_NEGATIVE
    return _lint_report(origin.robots_url, outcome.robots, outcome.body or b"", extra, args.json)
