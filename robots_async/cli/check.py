"""``robots-async check``: is each URL allowed? (local file, or fetched; bulk input)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING

from ..core.errors import InvalidURLError
from ..core.url import Origin
from .common import _agent, _checker, _judged, _load_robots, _setup_logging, _stdin
from .hints import url_error
from .options import (
    _EPILOG,
    CONCURRENCY,
    EXIT_NEGATIVE,
    EXIT_OK,
    EXIT_USAGE,
    PROG,
    WINDOW,
    UsageError,
    _add_json,
    _add_store,
    _count,
)
from .output import _json, _verdict_record, _why

if TYPE_CHECKING:
    from ..checker.checker import Decision
    from ..core.results import Verdict
    from .bulk import Line, Progress

__all__ = ["add_parser"]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``check``."""
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


def _check_input(args: argparse.Namespace) -> None:
    """Refuse what cannot work before anything is checked."""
    if args.input is None:
        if not args.urls:
            raise UsageError("no URL given (pass URLs or --input FILE)")
        return
    if args.input == "-" and args.robots == "-":
        raise UsageError("--robots and --input cannot both read stdin")
    if args.input == "-":
        _stdin()
    if args.input != "-":
        try:
            with open(args.input, "rb"):
                pass
        except OSError as exc:
            raise UsageError(f"cannot read {args.input}: {exc.strerror or exc}") from exc


def _check_line(url: str, verdict: Verdict, decision: Decision | None) -> str:
    return f"{'allowed' if verdict.allowed else 'DISALLOWED'}  {url}  ({_why(verdict, decision)})"


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
            url = _judged(line.text)  # the URL sent, as the remote check judges it
            verdict = robots.explain(url, robots_token=token)
        except InvalidURLError as exc:
            report.bad(line, url_error(exc, paths_ok=True, robots_option=False))
            continue
        report.add(url, verdict)


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
