"""The ``robots-async`` command line: check, explain, lint and fetch robots.txt.

::

    robots-async check https://example.com/private/x https://example.com/
    robots-async check --input urls.txt --json
    robots-async explain --robots robots.txt https://example.com/private/x
    robots-async lint robots.txt
    robots-async fetch https://example.com/

Exit codes: 0 for a positive answer (all allowed, no warnings, robots.txt fetched),
1 for a negative one (something disallowed, warnings, robots.txt not fetched) and
2 for a usage error (bad option, URL, User-Agent or file).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections import deque
from dataclasses import replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Protocol

from . import __version__
from ._agent import require_token
from ._errors import InvalidURLError, InvalidUserAgentError
from ._fetch_policy import FetchPolicy
from ._parser import parse
from ._url import Origin

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from ._checker import Decision, RobotsChecker
    from ._fetch_policy import Resolution
    from ._outcome import FetchOutcome
    from ._robots import RobotsTxt
    from ._rules import Verdict

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
#: URLs checked at once by ``check``.
CONCURRENCY = 64
#: Checks started ahead of the first unprinted one (bounds memory, keeps input order).
WINDOW = 1024

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

_EPILOG = """\
exit status: 0 all allowed / no warnings / fetched, 1 something disallowed /
warnings / not fetched, 2 usage error. Global options may also follow the command."""


class UsageError(Exception):
    """A mistake on the command line; reported on stderr with exit status 2."""


class _Bar(Protocol):
    def update(self, n: int = 1) -> object: ...

    def close(self) -> None: ...


class _NoBar:
    def update(self, n: int = 1) -> object:
        return None

    def close(self) -> None:
        return None


# --------------------------------------------------------------------------- parser


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


def _add_global_options(parser: argparse.ArgumentParser, *, defaults: bool) -> None:
    # Repeated on each subcommand with suppressed defaults, so that options given
    # after the command override, and options before it are not reset.
    def default(value: object) -> object:
        return value if defaults else argparse.SUPPRESS

    parser.add_argument(
        "--agent",
        metavar="UA",
        default=default(DEFAULT_AGENT),
        help=f"User-Agent header; its product token selects the group (default: {DEFAULT_AGENT})",
    )
    parser.add_argument(
        "--policy",
        choices=MATCH_POLICIES,
        default=default("google"),
        help="matching semantics (default: google)",
    )
    parser.add_argument(
        "--fetch-policy",
        choices=tuple(FETCH_POLICIES),
        default=default("rfc9309"),
        help="what HTTP errors mean (default: rfc9309)",
    )
    parser.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=_positive_float,
        default=default(30.0),
        help="total robots.txt fetch timeout (default: 30)",
    )


def _add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def _add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    check = sub.add_parser("check", help="is each URL allowed?", epilog=_EPILOG)
    check.add_argument(
        "urls", nargs="*", metavar="URL", help="absolute http(s) URLs (with --robots: or /paths)"
    )
    check.add_argument("--robots", metavar="FILE", help="use this robots.txt ('-': stdin)")
    check.add_argument("--input", metavar="FILE", help="more URLs, one a line ('-': stdin)")
    _add_json(check)
    check.set_defaults(handler=_cmd_check)

    explain = sub.add_parser("explain", help="why is a URL allowed or not?", epilog=_EPILOG)
    explain.add_argument("url", metavar="URL")
    explain.add_argument("--robots", metavar="FILE", help="use this robots.txt ('-': stdin)")
    _add_json(explain)
    explain.set_defaults(handler=_cmd_explain)

    lint = sub.add_parser("lint", help="report problems in a robots.txt file", epilog=_EPILOG)
    lint.add_argument("file", metavar="FILE", help="robots.txt to lint ('-': stdin)")
    _add_json(lint)
    lint.set_defaults(handler=_cmd_lint)

    fetch = sub.add_parser("fetch", help="fetch robots.txt and report how", epilog=_EPILOG)
    fetch.add_argument("url", metavar="URL", help="any URL of the origin")
    _add_json(fetch)
    fetch.set_defaults(handler=_cmd_fetch)

    for command in (check, explain, lint, fetch):
        _add_global_options(command, defaults=False)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``robots-async`` command."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Check URLs against robots.txt, explain verdicts, lint and fetch files.",
        epilog=_EPILOG,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    _add_global_options(parser, defaults=True)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
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


def _read_lines(path: str) -> list[str]:
    if path == "-":
        return sys.stdin.read().splitlines()
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read().splitlines()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _urls(args: argparse.Namespace) -> list[str]:
    """Positional URLs then ``--input`` lines (blank lines and # comments skipped)."""
    urls = list(args.urls)
    if args.input is not None:
        if args.input == "-" and args.robots == "-":
            raise UsageError("--robots and --input cannot both read stdin")
        lines = (line.strip() for line in _read_lines(args.input))
        urls += [line for line in lines if line and not line.startswith("#")]
    if not urls:
        raise UsageError("no URL given (pass URLs or --input FILE)")
    return urls


def _validate(urls: Iterable[str], *, paths_ok: bool) -> None:
    """Raise InvalidURLError for the first URL that is not absolute http(s).

    With a local robots.txt there is no origin to fetch, so a bare path will do.
    """
    for url in urls:
        if not (paths_ok and url.startswith("/")):
            Origin.from_url(url)


def _load_robots(path: str, policy: str) -> RobotsTxt:
    return parse(_read_bytes(path), policy=policy)


def _fetch_policy(args: argparse.Namespace) -> FetchPolicy:
    preset = FETCH_POLICIES[args.fetch_policy]()
    timeout: float = args.timeout
    return replace(
        preset, total_timeout=timeout, connect_timeout=min(preset.connect_timeout, timeout)
    )


def _checker(args: argparse.Namespace) -> RobotsChecker:
    from ._checker import RobotsChecker  # aiohttp is imported only when the network is used

    return RobotsChecker(args.agent, fetch_policy=_fetch_policy(args), policy=args.policy)


# --------------------------------------------------------------------------- output


def _when(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, tz=timezone.utc).isoformat(timespec="seconds")


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _print_fields(fields: Sequence[tuple[str, object]]) -> None:
    width = max(len(name) for name, _ in fields) + 2
    for name, value in fields:
        print(f"{name + ':':<{width}}{value}")


def _print_json(record: dict[str, Any]) -> None:
    print(json.dumps(record, ensure_ascii=False))


def _verdict_record(url: str, verdict: Verdict, decision: Decision | None) -> dict[str, Any]:
    rule = verdict.rule
    return {
        "url": url,
        "allowed": verdict.allowed,
        "reason": verdict.reason,
        "rule": rule.pattern if rule is not None else None,
        "line": verdict.line or None,
        "origin": str(decision.origin) if decision is not None else None,
        "source": decision.source if decision is not None else None,
        "status": decision.status if decision is not None else None,
    }


def _rule_text(verdict: Verdict) -> str:
    if verdict.rule is None:
        return "none"
    return f"line {verdict.line}: {verdict.rule}"


class _CheckReport:
    """Prints one line per checked URL and counts the disallowed ones."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.disallowed = 0

    def add(self, url: str, verdict: Verdict, decision: Decision | None = None) -> None:
        if not verdict.allowed:
            self.disallowed += 1
        if self.as_json:
            _print_json(_verdict_record(url, verdict, decision))
        else:
            print(f"{'allowed' if verdict.allowed else 'DISALLOWED'}  {url}")

    def add_decision(self, decision: Decision) -> None:
        self.add(decision.url, decision.verdict, decision)


# --------------------------------------------------------------------------- check


def _progress(total: int, enabled: bool) -> _Bar:
    if not enabled:
        return _NoBar()
    try:
        from tqdm import tqdm
    except ImportError:  # the optional "cli" extra is not installed: no bar
        return _NoBar()
    bar: _Bar = tqdm(total=total, unit="url", file=sys.stderr, dynamic_ncols=True)
    return bar


async def _check_remote(
    args: argparse.Namespace, urls: Sequence[str], emit: Callable[[Decision], None], bar: _Bar
) -> None:
    """Check ``urls`` concurrently, emitting the decisions in input order."""
    limit = asyncio.Semaphore(CONCURRENCY)
    async with _checker(args) as checker:

        async def check(url: str) -> Decision:
            async with limit:
                decision = await checker.explain(url)
            bar.update(1)
            return decision

        pending: deque[asyncio.Task[Decision]] = deque()
        for url in urls:
            pending.append(asyncio.create_task(check(url)))
            if len(pending) >= WINDOW:
                emit(await pending.popleft())
        while pending:
            emit(await pending.popleft())


def _cmd_check(args: argparse.Namespace) -> int:
    token = _agent(args)
    urls = _urls(args)
    _validate(urls, paths_ok=args.robots is not None)
    report = _CheckReport(args.json)
    if args.robots is not None:
        robots = _load_robots(args.robots, args.policy)
        for url in urls:
            report.add(url, robots.explain(url, robots_token=token))
    else:
        bar = _progress(len(urls), args.input is not None and sys.stderr.isatty())
        try:
            asyncio.run(_check_remote(args, urls, report.add_decision, bar))
        finally:
            bar.close()
    return EXIT_NEGATIVE if report.disallowed else EXIT_OK


# --------------------------------------------------------------------------- explain


async def _explain_remote(args: argparse.Namespace, url: str) -> Decision:
    async with _checker(args) as checker:
        return await checker.explain(url)


def _explain_fields(verdict: Verdict) -> list[tuple[str, object]]:
    return [
        ("verdict", "allowed" if verdict.allowed else "DISALLOWED"),
        ("rule", _rule_text(verdict)),
        ("user agents", ", ".join(verdict.agents) or "none"),
        ("token", verdict.token),
        ("reason", f"{verdict.reason}: {_REASONS.get(verdict.reason, verdict.reason)}"),
    ]


def _provenance_fields(decision: Decision) -> list[tuple[str, object]]:
    outcome = decision.outcome
    status = outcome.status if outcome.status is not None else f"none ({outcome.error})"
    return [
        ("robots.txt", decision.origin.robots_url),
        ("status", status),
        ("source", decision.source),
        ("from cache", _yes(decision.from_cache)),
        ("fetched at", _when(decision.fetched_at)),
        ("expires at", _when(decision.expires_at)),
    ]


def _explain_record(url: str, verdict: Verdict, decision: Decision | None) -> dict[str, Any]:
    record = _verdict_record(url, verdict, decision)
    record.update(agents=list(verdict.agents), token=verdict.token, robots_url=None)
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
    _validate([url], paths_ok=args.robots is not None)
    decision: Decision | None = None
    if args.robots is not None:
        verdict = _load_robots(args.robots, args.policy).explain(url, robots_token=token)
    else:
        decision = asyncio.run(_explain_remote(args, url))
        verdict = decision.verdict
    if args.json:
        _print_json(_explain_record(url, verdict, decision))
    else:
        fields = [("URL", url), *_explain_fields(verdict)]
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


def _cmd_lint(args: argparse.Namespace) -> int:
    name = "<stdin>" if args.file == "-" else args.file
    robots = _load_robots(args.file, args.policy)
    warnings = robots.warnings
    counts = _counts(robots)
    if args.json:
        found = [{"line": w.line, "code": w.code, "message": w.message} for w in warnings]
        _print_json({"file": name, "warnings": found, **counts, "truncated": robots.truncated})
    else:
        for warning in warnings:
            print(f"{name}:{warning.line}: {warning.code}: {warning.message}")
        summary = ", ".join(_plural(n, noun[:-1]) for noun, n in counts.items())
        truncated = "truncated" if robots.truncated else "not truncated"
        print(f"{name}: {summary}, {truncated}; {_plural(len(warnings), 'warning')}")
    return EXIT_NEGATIVE if warnings else EXIT_OK


# --------------------------------------------------------------------------- fetch


async def _fetch(args: argparse.Namespace, url: str, policy: FetchPolicy) -> FetchOutcome:
    from ._fetcher import AiohttpFetcher

    fetcher = AiohttpFetcher(user_agent=args.agent, policy=policy, match_policy=args.policy)
    try:
        return await fetcher.fetch(url)
    finally:
        await fetcher.aclose()


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
    policy = _fetch_policy(args)
    outcome = asyncio.run(_fetch(args, origin.robots_url, policy))
    record = _fetch_record(outcome, policy.resolve(outcome, None, time.time()))
    if args.json:
        _print_json(record)
    else:
        _print_fetch(record)
    return EXIT_OK if outcome.category == "ok" else EXIT_NEGATIVE


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
