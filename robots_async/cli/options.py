"""Options shared by the commands, their value types, exit codes and constants."""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING

from .. import __version__
from ..core.parser import DEFAULT_MAX_BYTES
from ..fetch.policy import FetchPolicy

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence


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
    "sitemaps": _NETWORK,
}


class UsageError(Exception):
    """A mistake on the command line; reported on stderr with exit status 2."""


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
