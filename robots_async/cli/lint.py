"""``robots-async lint``: problems in a robots.txt file or an origin's robots.txt (or,
with ``--tdmrep`` or a file named ``tdmrep.json``, in a TDMRep file: lint_tdmrep.py)."""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Any

from ..core.parser import parse
from ..core.results import W
from ..core.url import Origin
from ..core.usage import parse_preference
from .common import _agent, _fetch, _fetch_policy, _read_bytes, _setup_logging
from .hints import scheme_hint
from .lint_tdmrep import is_tdmrep_name, lint_tdmrep, tdmrep_unavailable, tdmrep_url
from .options import _EPILOG, EXIT_NEGATIVE, EXIT_OK, UsageError, _add_json, _add_max_bytes
from .output import _counts, _json, _problem, _usage_text

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

    from ..core.robots import RobotsTxt
    from ..core.usage import UsageRule
    from ..fetch.outcome import FetchOutcome

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
    lint.add_argument(
        "--tdmrep",
        action="store_true",
        help="lint a W3C TDMRep tdmrep.json instead: the file given, or for a URL the "
        "origin's /.well-known/tdmrep.json (implied for a file named tdmrep.json; "
        "--max-bytes caps it too)",
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
    # A tag that opens a line: "# see <html>" in a comment is not a page (and would
    # otherwise hide the file's real warnings, see _warnings).
    for number, line in enumerate(head.lower().removeprefix(b"\xef\xbb\xbf").split(b"\n"), 1):
        if line.lstrip().startswith((b"<!doctype html", b"<html", b"<head", b"<body")):
            return [(number, "html", _HTML)]
    return []


# What the parser says about a line that is not a robots.txt line at all: on an HTML
# page that is every line, so the one "html" warning says it instead.
_LINE_NOISE = frozenset({W.NO_SEPARATOR, W.UNKNOWN_KEY, W.TYPO, W.MISSING_COLON, W.LINE_TOO_LONG})
_LINE_NOISE_CAP = frozenset({W.TOO_MANY_WARNINGS})


def _warnings(robots: RobotsTxt, body: bytes) -> list[tuple[int, str, str]]:
    """The body's and the parser's warnings by line; on an HTML page, the html one alone.

    After an ``html`` warning, the parser's per-line complaints about the page's markup
    (31 ``no-separator`` lines for a small page) say nothing more: they are counted in
    the html warning instead of listed.
    """
    found = _body_warnings(body)
    parsed = [(w.line, w.code, w.message) for w in robots.warnings]
    html = [line for line, code, _ in found if code == "html"]
    if html:
        start = html[0]
        noise = [
            item
            for item in parsed
            if item[1] in _LINE_NOISE_CAP or (item[1] in _LINE_NOISE and item[0] >= start)
        ]
        if noise:
            parsed = [item for item in parsed if item not in noise]
            found = [
                (line, code, f"{message} ({_plural(len(noise), 'warning')} about them not shown)")
                if code == "html"
                else (line, code, message)
                for line, code, message in found
            ]
    return sorted(found + parsed, key=lambda warning: warning[0])


def _where(name: str, line: int) -> str:
    """``file:line:``, or ``file:`` for what concerns the whole file (line 0)."""
    return f"{name}:{line}:" if line else f"{name}:"


def _lint_report(
    name: str, robots: RobotsTxt, body: bytes, extra: dict[str, Any], as_json: bool
) -> int:
    found = _warnings(robots, body)
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
            print(f"{_where(name, line)} {text}")
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


def _read_file(path: str, max_bytes: int) -> bytes:
    try:
        return _read_bytes(path, max_bytes)
    except UsageError as exc:
        hint = scheme_hint(path)  # "lint www.example.com": a site, not a file
        raise UsageError(f"{exc}; {hint}" if hint else str(exc)) from exc


def _cmd_lint(args: argparse.Namespace) -> int:
    if args.tdmrep or is_tdmrep_name(args.file):
        return _cmd_lint_tdmrep(args)
    if not _is_url(args.file):
        name = "<stdin>" if args.file == "-" else args.file
        body = _read_file(args.file, args.max_bytes)
        robots = parse(body, policy=args.policy, max_bytes=args.max_bytes)
        return _lint_report(name, robots, body[: args.max_bytes], {}, args.json)
    _agent(args)
    origin = Origin.from_url(args.file)
    _setup_logging(args.verbose)
    policy = _fetch_policy(args, max_bytes=args.max_bytes)
    outcome = asyncio.run(_fetch(args, origin.robots_url, policy, keep_body=True))
    extra = {"status": outcome.status, "error": outcome.error, "final_url": outcome.final_url}
    if outcome.category != "ok" or outcome.robots is None:
        return _nothing_to_lint(origin.robots_url, outcome, extra, args.json)
    return _lint_report(origin.robots_url, outcome.robots, outcome.body or b"", extra, args.json)


def _cmd_lint_tdmrep(args: argparse.Namespace) -> int:
    if not _is_url(args.file):
        name = "<stdin>" if args.file == "-" else args.file
        return lint_tdmrep(name, _read_file(args.file, args.max_bytes), args.json, args.max_bytes)
    _agent(args)
    url = tdmrep_url(str(Origin.from_url(args.file)))
    _setup_logging(args.verbose)
    # One byte past the cap: a longer file is then "over N bytes", not cut JSON.
    policy = _fetch_policy(args, max_bytes=args.max_bytes + 1)
    outcome = asyncio.run(_fetch(args, url, policy, keep_body=True))
    if outcome.category != "ok" or outcome.status == 206:  # a part: unknown (cache.tdmrep)
        return tdmrep_unavailable(url, outcome, args.json)
    return lint_tdmrep(url, outcome.body or b"", args.json, args.max_bytes)


def _nothing_to_lint(
    robots_url: str, outcome: FetchOutcome, extra: dict[str, Any], as_json: bool
) -> int:
    """No body: said on stderr; absent (4xx) is a fine answer, unreachable is not.

    RFC 9309 §2.3.1.3: a 4xx means there is no robots.txt and crawlers may fetch
    everything, so ``lint`` exits 0 on it as ``fetch`` does; a 5xx or a network
    error leaves the site's rules unknown (exit 1).
    """
    absent = outcome.category == "unavailable"
    fate = "no robots.txt" if absent else "unreachable"
    print(f"{robots_url}: {fate} ({_problem(outcome)}): nothing to lint", file=sys.stderr)
    if as_json:
        print(_json({"file": robots_url, **extra, "warnings": []}))
    return EXIT_OK if absent else EXIT_NEGATIVE
