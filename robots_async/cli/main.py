"""The ``robots-async`` command line: check, explain, lint and fetch robots.txt.

::

    robots-async check https://example.com/private/x https://example.com/
    robots-async check --input urls.txt --json
    robots-async explain --robots robots.txt https://example.com/private/x
    robots-async lint robots.txt
    robots-async lint https://example.com/
    robots-async fetch --body https://example.com/

Exit codes: 0 for a positive answer (all allowed, no warnings, robots.txt fetched or
absent), 1 for a negative one (something disallowed, warnings, robots.txt
unreachable) and 2 for a usage error (bad option, URL, User-Agent or file; for
``check``, any bad input line, after the others were checked).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import math
import os
import sys
import time
from dataclasses import replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..core.agent import require_token
from ..core.errors import InvalidURLError, InvalidUserAgentError
from ..core.parser import DEFAULT_MAX_BYTES, parse
from ..core.url import Origin
from ..core.usage import parse_preference
from ..fetch.policy import FetchPolicy

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Sequence

    from ..checker.checker import Decision, RobotsChecker
    from ..core.policy import PolicyName
    from ..core.robots import RobotsTxt
    from ..core.rules import Verdict
    from ..core.usage import UsagePreferences, UsageRule
    from ..fetch.outcome import FetchOutcome
    from ..fetch.policy import Resolution
    from .bulk import Line, Progress

__all__ = ["build_parser", "main"]

PROG = "robots-async"
DEFAULT_AGENT = f"robots-async/{__version__} (+https://pypi.org/project/robots-async/)"
MATCH_POLICIES = ("google", "google-reference", "rfc9309", "first-match")
FETCH_POLICIES: dict[str, Callable[..., FetchPolicy]] = {
    "rfc9309": FetchPolicy.rfc9309,
    "googlebot": FetchPolicy.googlebot,
    "yandex": FetchPolicy.yandex,
    "legacy-allow-on-error": FetchPolicy.legacy_allow_on_error,
}
EXIT_OK, EXIT_NEGATIVE, EXIT_USAGE = 0, 1, 2
#: robots.txt fetches at once by default (``--concurrency``).
CONCURRENCY = 64
#: URLs read but not yet printed by ``check``, at most (bounds memory; with
#: ``--ordered``, how far checking runs ahead of a slow line).
WINDOW = 50_000

_REASONS = {
    "allow": "the deciding rule allows the URL",
    "disallow": "the deciding rule disallows the URL",
    "empty-rule": "only an empty Allow/Disallow matched, which allows everything",
    "no-match": "no rule of the agent's groups matches the URL",
    "no-group": "no group applies to this agent",
    "robots-txt": "/robots.txt itself is always allowed",
    "allow-all": "no robots.txt in force (unavailable): everything is allowed",
    "disallow-all": "robots.txt unreachable: everything is disallowed",
}
#: The reason of a verdict without a rule, in the few words of a ``check`` line.
_SHORT = {
    "no-match": "no rule matches",
    "no-group": "no group for this agent",
    "robots-txt": "robots.txt itself is always allowed",
    "allow-all": "everything allowed",
    "disallow-all": "everything disallowed",
}

_EPILOG = """\
exit status: 0 all allowed / no warnings / robots.txt fetched or absent, 1 something
disallowed / warnings / robots.txt unreachable, 2 usage error or bad input line.
Global options may also follow the command."""

# Which shared options each command takes (lint and fetch never match URLs against
# a fetch policy's verdicts; lint of a file never fetches).
_NETWORK = ("agent", "policy", "fetch-policy", "timeout", "private-redirects", "verbose")
_OPTIONS = {
    "check": _NETWORK,
    "explain": _NETWORK,
    "lint": ("agent", "policy", "timeout", "private-redirects", "verbose"),
    "fetch": _NETWORK,
}


class UsageError(Exception):
    """A mistake on the command line; reported on stderr with exit status 2."""


# --------------------------------------------------------------------------- parser


def _seconds(text: str) -> float:
    """A finite, positive number of seconds (inf, nan, 0 and negatives are refused)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(
            f"must be a finite number of seconds greater than 0: {text!r}"
        )
    return value


def _count(text: str) -> int:
    """A whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def _add_shared_options(
    parser: argparse.ArgumentParser, names: Sequence[str], *, defaults: bool
) -> None:
    # Repeated on each subcommand with suppressed defaults, so that options given
    # after the command override, and options before it are not reset.
    def default(value: object) -> object:
        return value if defaults else argparse.SUPPRESS

    if "agent" in names:
        parser.add_argument(
            "--agent",
            metavar="UA",
            default=default(DEFAULT_AGENT),
            help="User-Agent header sent; its product token selects the group "
            f"(default: {DEFAULT_AGENT})",
        )
    if "policy" in names:
        parser.add_argument(
            "--policy",
            choices=MATCH_POLICIES,
            default=default("google"),
            help="matching semantics (default: google)",
        )
    if "fetch-policy" in names:
        parser.add_argument(
            "--fetch-policy",
            choices=tuple(FETCH_POLICIES),
            default=default("rfc9309"),
            help="what HTTP errors mean: which rules apply after a 4xx, 5xx or network "
            "error (default: rfc9309)",
        )
    if "timeout" in names:
        parser.add_argument(
            "--timeout",
            metavar="SECONDS",
            type=_seconds,
            default=default(30.0),
            help="total robots.txt fetch timeout, a finite number > 0 (default: 30)",
        )
    if "private-redirects" in names:
        parser.add_argument(
            "--private-redirects",
            choices=("block", "allow"),
            default=default(None),
            help="follow robots.txt redirects to loopback, private and link-local "
            "addresses, or refuse them (SSRF guard; default: the fetch policy's)",
        )
    if "verbose" in names:
        parser.add_argument(
            "-v",
            "--verbose",
            action="count",
            default=default(0),
            help="log the library's messages on stderr (-v: info, one line per "
            "robots.txt fetched; -vv: debug)",
        )


def _add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def _add_max_bytes(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-bytes",
        metavar="N",
        type=_count,
        default=DEFAULT_MAX_BYTES,
        help=f"bytes of robots.txt parsed at most (default: {DEFAULT_MAX_BYTES})",
    )


def _add_store(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store",
        metavar="PATH",
        help="keep robots.txt records in this SQLite file: a later run (or another "
        "process) reuses them within their TTL instead of fetching again",
    )


def _add_check(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    check = sub.add_parser("check", help="is each URL allowed?", epilog=_EPILOG)
    check.add_argument(
        "urls", nargs="*", metavar="URL", help="absolute http(s) URLs (with --robots: or /paths)"
    )
    check.add_argument("--robots", metavar="FILE", help="use this robots.txt ('-': stdin)")
    check.add_argument(
        "--input",
        metavar="FILE",
        help="more URLs, one a line ('-': stdin); blank lines and # comments skipped; "
        "a bad line is reported with its number and the run goes on",
    )
    check.add_argument(
        "--ordered",
        action="store_true",
        help="print results in input order (default: as they complete); a slow "
        f"robots.txt holds back printing, not checking, of up to {WINDOW:,} later URLs",
    )
    check.add_argument(
        "--concurrency",
        metavar="N",
        type=_count,
        default=CONCURRENCY,
        help=f"robots.txt fetches at once (default: {CONCURRENCY})",
    )
    _add_store(check)
    check.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bar on stderr (default: on when stderr is a terminal and "
        "--input is given; needs tqdm: pip install 'robots-async[cli]')",
    )
    _add_json(check)
    check.set_defaults(handler=_cmd_check)


def _add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    _add_check(sub)

    explain = sub.add_parser("explain", help="why is a URL allowed or not?", epilog=_EPILOG)
    explain.add_argument(
        "url",
        metavar="URL",
        help="absolute http(s) URL (with --robots: or a /path); its robots.txt is fetched",
    )
    explain.add_argument("--robots", metavar="FILE", help="use this robots.txt ('-': stdin)")
    _add_store(explain)
    _add_json(explain)
    explain.set_defaults(handler=_cmd_explain)

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

    fetch = sub.add_parser("fetch", help="fetch robots.txt and report how", epilog=_EPILOG)
    fetch.add_argument("url", metavar="URL", help="any URL of the origin")
    fetch.add_argument("--body", action="store_true", help="also print the body (2xx only)")
    _add_max_bytes(fetch)
    _add_json(fetch)
    fetch.set_defaults(handler=_cmd_fetch)

    for name, command in sub.choices.items():
        _add_shared_options(command, _OPTIONS[name], defaults=False)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``robots-async`` command."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Check URLs against robots.txt, explain verdicts, lint and fetch files.",
        epilog=_EPILOG,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    _add_shared_options(parser, _NETWORK, defaults=True)
    sub = parser.add_subparsers(
        dest="command",
        required=True,
        metavar="COMMAND",
        help="what to do; 'robots-async COMMAND --help' lists its options",
    )
    _add_commands(sub)
    return parser


# --------------------------------------------------------------------------- input


def _agent(args: argparse.Namespace) -> str:
    """The product token of ``--agent`` (InvalidUserAgentError when it has none)."""
    return require_token(args.agent)


def _read_bytes(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _check_input(args: argparse.Namespace) -> None:
    """Refuse what cannot work before anything is checked."""
    if args.input is None:
        if not args.urls:
            raise UsageError("no URL given (pass URLs or --input FILE)")
        return
    if args.input == "-" and args.robots == "-":
        raise UsageError("--robots and --input cannot both read stdin")
    if args.input != "-":
        try:
            with open(args.input, "rb"):
                pass
        except OSError as exc:
            raise UsageError(f"cannot read {args.input}: {exc.strerror or exc}") from exc


def _load_robots(path: str, policy: PolicyName, max_bytes: int = DEFAULT_MAX_BYTES) -> RobotsTxt:
    return parse(_read_bytes(path), policy=policy, max_bytes=max_bytes)


def _fetch_policy(args: argparse.Namespace, **changes: Any) -> FetchPolicy:
    preset = FETCH_POLICIES[getattr(args, "fetch_policy", "rfc9309")]()
    timeout: float = args.timeout
    policy = replace(
        preset,
        total_timeout=timeout,
        connect_timeout=min(preset.connect_timeout, timeout),
        **changes,
    )
    if args.private_redirects is not None:
        policy = replace(policy, private_redirects=args.private_redirects)
    return policy


@contextlib.asynccontextmanager
async def _checker(args: argparse.Namespace, **options: Any) -> AsyncIterator[RobotsChecker]:
    """The checker for ``args``, on the ``--store`` file when one is given (closed after)."""
    from ..checker.checker import RobotsChecker  # aiohttp is imported only when the network is used

    path = getattr(args, "store", None)
    async with contextlib.AsyncExitStack() as stack:
        if path is not None:
            from ..cache.sqlite import SQLiteStore

            options["store"] = await stack.enter_async_context(SQLiteStore(path))
        checker = RobotsChecker(
            args.agent, fetch_policy=_fetch_policy(args), policy=args.policy, **options
        )
        yield await stack.enter_async_context(checker)


def _setup_logging(verbose: int, progress: Progress | None = None) -> None:
    """-v: the library's INFO messages on stderr; -vv: DEBUG (through the bar if any).

    0 removes what an earlier call added (``main`` may run again in one process).
    """
    logger = logging.getLogger("robots_async")
    for old in list(logger.handlers):
        if isinstance(old, _StderrHandler):
            logger.removeHandler(old)
            logger.setLevel(logging.NOTSET)
    if not verbose:
        return
    handler = _StderrHandler(progress)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG if verbose > 1 else logging.INFO)


class _StderrHandler(logging.Handler):
    """Writes log records to the current stderr, clearing the progress bar first."""

    def __init__(self, progress: Progress | None) -> None:
        super().__init__()
        self._progress = progress

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = self.format(record)
            if self._progress is not None:
                self._progress.write(text, err=True)
            else:
                print(text, file=sys.stderr)
        except (OSError, ValueError):  # a closed or broken stderr: the stdlib's way
            self.handleError(record)


# --------------------------------------------------------------------------- output


def _when(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, tz=timezone.utc).isoformat(timespec="seconds")


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _print_fields(fields: Sequence[tuple[str, object]]) -> None:
    width = max(len(name) for name, _ in fields) + 2
    for name, value in fields:
        print(f"{name + ':':<{width}}{value}")


def _json(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False)


def _problem(outcome: FetchOutcome) -> str:
    """What went wrong fetching robots.txt: the error kind and detail, or the status."""
    if outcome.error is not None:
        return f"{outcome.error}: {outcome.error_detail}" if outcome.error_detail else outcome.error
    return f"HTTP {outcome.status}"


def _why(verdict: Verdict, decision: Decision | None) -> str:
    """The reason of a verdict in a few words: the rule and line, or robots.txt's fate."""
    if verdict.rule is not None:
        text = f"line {verdict.line}: {verdict.rule}"
        if decision is not None and decision.source == "stale":
            text += f"; robots.txt unreachable ({_problem(decision.outcome)}), last good copy"
        return text
    short = _SHORT.get(verdict.reason, verdict.reason)
    if decision is None or decision.source == "fetched":
        return short
    if decision.source == "unavailable":
        return f"no robots.txt ({_problem(decision.outcome)}): {short}"
    return f"robots.txt unreachable ({_problem(decision.outcome)}): {short}"


def _verdict_record(url: str, verdict: Verdict, decision: Decision | None) -> dict[str, Any]:
    rule = verdict.rule
    outcome = decision.outcome if decision is not None else None
    return {
        "url": url,
        "allowed": verdict.allowed,
        "reason": verdict.reason,
        "rule": rule.pattern if rule is not None else None,
        "line": verdict.line or None,
        "why": _why(verdict, decision),
        "origin": str(decision.origin) if decision is not None else None,
        "source": decision.source if decision is not None else None,
        "status": decision.status if decision is not None else None,
        "error": outcome.error if outcome is not None else None,
    }


def _check_line(url: str, verdict: Verdict, decision: Decision | None) -> str:
    return f"{'allowed' if verdict.allowed else 'DISALLOWED'}  {url}  ({_why(verdict, decision)})"


def _usage_text(usage: UsagePreferences | None) -> str:
    if usage is None:
        return "none (a URL that may not be fetched has no usage preference)"
    return f"train-ai {usage.train_ai}, search {usage.search}"


def _usage_record(usage: UsagePreferences | None) -> dict[str, Any] | None:
    if usage is None:
        return None
    return {
        "train-ai": usage.train_ai,
        "search": usage.search,
        "rules": [{"line": rule.line, "rule": str(rule)} for rule in usage.rules],
        "unknown_labels": dict(usage.unknown_labels),
    }


# --------------------------------------------------------------------------- check


class _CheckReport:
    """Prints one line per checked URL (or its input error) and counts both."""

    def __init__(self, as_json: bool, progress: Progress | None = None) -> None:
        self.as_json = as_json
        self.progress = progress
        self.answered = 0
        self.disallowed = 0
        self.bad_lines = 0

    def add(self, url: str, verdict: Verdict, decision: Decision | None = None) -> None:
        self.answered += 1
        if not verdict.allowed:
            self.disallowed += 1
        if self.as_json:
            self._out(_json(_verdict_record(url, verdict, decision)))
        else:
            self._out(_check_line(url, verdict, decision))

    def bad(self, line: Line, message: str) -> None:
        self.answered += 1
        self.bad_lines += 1
        self._out(f"{PROG}: {line.where}: {message}", err=True)
        if self.as_json:
            self._out(_json({"url": line.text, "input": line.where, "error": message}))

    def answer(self, line: Line, decision: Decision | None, error: str | None) -> None:
        """One answer of the bulk check (see ``_cli_bulk.Bulk``)."""
        if decision is not None:
            self.add(decision.url, decision.verdict, decision)
        else:
            self.bad(line, error or "invalid URL")
        if self.progress is not None:
            self.progress.advance()

    def exit_status(self) -> int:
        if not self.answered:
            raise UsageError("no URL given (pass URLs or --input FILE)")
        if self.bad_lines:
            return EXIT_USAGE
        return EXIT_NEGATIVE if self.disallowed else EXIT_OK

    def _out(self, text: str, *, err: bool = False) -> None:
        if self.progress is not None:
            self.progress.write(text, err=err)
        else:
            print(text, file=sys.stderr if err else sys.stdout)


def _check_local(args: argparse.Namespace, report: _CheckReport) -> None:
    """Against a robots.txt file: no origin needed, so bare /paths are fine too."""
    from .bulk import read_lines

    token = _agent(args)
    robots = _load_robots(args.robots, args.policy)
    for line in read_lines(args.urls, args.input):
        try:
            if not line.text.startswith("/"):
                Origin.from_url(line.text)
            verdict = robots.explain(line.text, robots_token=token)
        except InvalidURLError as exc:
            report.bad(line, str(exc))
            continue
        report.add(line.text, verdict)


async def _check_remote(args: argparse.Namespace, report: _CheckReport) -> None:
    from .bulk import Bulk, read_lines_async

    progress = report.progress
    ticker = asyncio.create_task(progress.tick()) if progress is not None else None
    try:
        async with _checker(args, max_concurrent_fetches=args.concurrency) as checker:
            bulk = Bulk(checker, report.answer, ordered=args.ordered, window=WINDOW)
            await bulk.run(read_lines_async(args.urls, args.input))
    finally:
        if ticker is not None:
            ticker.cancel()


def _want_progress(args: argparse.Namespace) -> bool:
    if args.progress is not None:
        return bool(args.progress)
    return args.input is not None and sys.stderr.isatty()


def _cmd_check(args: argparse.Namespace) -> int:
    _agent(args)
    _check_input(args)
    if args.robots is not None:
        report = _CheckReport(args.json)
        _check_local(args, report)
        return report.exit_status()
    from .bulk import Progress, count_lines

    progress = Progress.start(
        len(args.urls) + (count_lines(args.input) or 0) if args.input != "-" else None,
        _want_progress(args),
    )
    _setup_logging(args.verbose, progress)
    report = _CheckReport(args.json, progress)
    try:
        asyncio.run(_check_remote(args, report))
    finally:
        progress.close()
    return report.exit_status()


# --------------------------------------------------------------------------- explain


async def _explain_remote(args: argparse.Namespace, url: str) -> Decision:
    async with _checker(args) as checker:
        return await checker.explain(url)


def _explain_fields(verdict: Verdict, usage: UsagePreferences | None) -> list[tuple[str, object]]:
    rule = "none" if verdict.rule is None else f"line {verdict.line}: {verdict.rule}"
    usage_rules = ", ".join(f"line {r.line}: {r}" for r in usage.rules) if usage else ""
    return [
        ("verdict", "allowed" if verdict.allowed else "DISALLOWED"),
        ("rule", rule),
        ("user agents", ", ".join(verdict.agents) or "none"),
        ("token", verdict.token),
        ("reason", f"{verdict.reason}: {_REASONS.get(verdict.reason, verdict.reason)}"),
        ("usage", _usage_text(usage)),
        ("usage rule", usage_rules or "none"),
    ]


def _provenance_fields(decision: Decision) -> list[tuple[str, object]]:
    outcome = decision.outcome
    status = outcome.status if outcome.status is not None else f"none ({_problem(outcome)})"
    return [
        ("robots.txt", decision.origin.robots_url),
        ("status", status),
        ("source", decision.source),
        ("from cache", _yes(decision.from_cache)),
        ("fetched at", _when(decision.fetched_at)),
        ("expires at", _when(decision.expires_at)),
    ]


def _explain_record(
    url: str, verdict: Verdict, decision: Decision | None, usage: UsagePreferences | None
) -> dict[str, Any]:
    record = _verdict_record(url, verdict, decision)
    record.update(
        agents=list(verdict.agents),
        token=verdict.token,
        usage=_usage_record(usage),
        robots_url=None,
    )
    if decision is not None:
        record.update(
            robots_url=decision.origin.robots_url,
            from_cache=decision.from_cache,
            fetched_at=_when(decision.fetched_at),
            expires_at=_when(decision.expires_at),
        )
    return record


def _cmd_explain(args: argparse.Namespace) -> int:
    token = _agent(args)
    url: str = args.url
    if not (args.robots is not None and url.startswith("/")):
        Origin.from_url(url)
    _setup_logging(args.verbose)
    decision: Decision | None = None
    if args.robots is not None:
        robots = _load_robots(args.robots, args.policy)
        verdict = robots.explain(url, robots_token=token)
        usage = robots.usage(url, robots_token=token)
    else:
        decision = asyncio.run(_explain_remote(args, url))
        verdict, usage = decision.verdict, decision.usage
    if args.json:
        print(_json(_explain_record(url, verdict, decision, usage)))
    else:
        fields = [("URL", url), *_explain_fields(verdict, usage)]
        _print_fields(fields + (_provenance_fields(decision) if decision else []))
    return EXIT_OK if verdict.allowed else EXIT_NEGATIVE


# --------------------------------------------------------------------------- lint


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _counts(robots: RobotsTxt) -> dict[str, int]:
    groups = robots.groups
    return {
        "groups": len(groups),
        "rules": sum(len(group.rules) for group in groups),
        "sitemaps": len(robots.sitemaps),
    }


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


async def _fetch(
    args: argparse.Namespace, url: str, policy: FetchPolicy, *, keep_body: bool
) -> FetchOutcome:
    from ..fetch.fetcher import AiohttpFetcher

    fetcher = AiohttpFetcher(user_agent=args.agent, policy=policy, match_policy=args.policy)
    try:
        return await fetcher.fetch(url, keep_body=keep_body)
    finally:
        await fetcher.aclose()


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


# --------------------------------------------------------------------------- fetch


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
            sys.stdout.buffer.write(outcome.body)
            sys.stdout.buffer.flush()
    # A 404 is the normal "no robots.txt" (allow all), not a failure.
    return EXIT_NEGATIVE if outcome.category == "unreachable" else EXIT_OK


# --------------------------------------------------------------------------- main


def _exit_status(exc: SystemExit) -> int:
    if exc.code is None:
        return EXIT_OK
    return exc.code if isinstance(exc.code, int) else EXIT_USAGE


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command with ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits after --help, --version and usage errors
        return _exit_status(exc)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except (UsageError, InvalidURLError, InvalidUserAgentError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (``| head``): silence the flush at interpreter exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_NEGATIVE
    finally:
        _setup_logging(0)
