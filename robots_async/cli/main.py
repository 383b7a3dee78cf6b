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
import contextlib
import io
import os
import sys
from typing import TYPE_CHECKING, TextIO

from .. import __version__
from ..core.errors import InvalidURLError, InvalidUserAgentError
from . import check, explain, fetch, lint, sitemaps
from .common import _setup_logging
from .hints import url_error
from .options import (
    _EPILOG,
    _NETWORK,
    _OPTIONS,
    EXIT_NEGATIVE,
    EXIT_OK,
    EXIT_USAGE,
    PROG,
    UsageError,
    _add_shared_options,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence


__all__ = ["build_parser", "main"]


#: The commands, each a module with ``add_parser(subparsers)``: adding one is a
#: module and a line here.
COMMANDS = (check, explain, lint, fetch, sitemaps)


def _add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    for command in COMMANDS:
        command.add_parser(sub)
    for name, parser in sub.choices.items():
        _add_shared_options(parser, _OPTIONS[name], defaults=False)


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


def _exit_status(exc: SystemExit) -> int:
    if exc.code is None:
        return EXIT_OK
    return exc.code if isinstance(exc.code, int) else EXIT_USAGE


def _url_error(args: argparse.Namespace, exc: InvalidURLError) -> str:
    """The message of a bad URL argument, with its fix (``--robots`` where it applies)."""
    has_robots = hasattr(args, "robots")
    return url_error(
        exc, paths_ok=getattr(args, "robots", None) is not None, robots_option=has_robots
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command with ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits after --help, --version and usage errors
        return _exit_status(exc)
    handler: Callable[[argparse.Namespace], int] = args.handler
    restore = _escape_surrogates(sys.stdout)
    try:
        return handler(args)
    except InvalidURLError as exc:
        print(f"{PROG}: error: {_url_error(args, exc)}", file=sys.stderr)
        return EXIT_USAGE
    except (UsageError, InvalidUserAgentError) as exc:
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
        restore()


def _escape_surrogates(stream: TextIO) -> Callable[[], None]:
    """Print what cannot be encoded as ``\\udcff`` on ``stream``; return the undo.

    An argument or a name with a byte that is not UTF-8 reaches Python as a lone
    surrogate: a strict UTF-8 stdout (en_US.UTF-8) raised UnicodeEncodeError, and a C
    locale's ``surrogateescape`` wrote the raw byte, invalid UTF-8 inside a JSON line.
    Escaped, a text line shows it as stderr does, and a JSON string holds the
    ``\\udcff`` escape JSON itself defines (RFC 8259 §7): still valid JSON.
    """
    if not isinstance(stream, io.TextIOWrapper):
        return lambda: None
    errors = stream.errors
    stream.reconfigure(errors="backslashreplace")

    def restore() -> None:
        with contextlib.suppress(OSError, ValueError):  # a closed or broken stdout
            stream.reconfigure(errors=errors)

    return restore
