"""``robots-async sitemaps``: stream the URLs of an origin's sitemaps.

One URL per line (or a JSON object per line with ``--json``), as the sitemaps are
read; only URLs the agent may fetch unless ``--all``. A progress line goes to stderr
when stderr is a terminal, so piped output stays clean.
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import TYPE_CHECKING, Any, TextIO

from ..core.errors import ConfigurationError
from ..core.sitemaps import SitemapLimits
from ..core.url import Origin
from .common import _agent, _checker, _setup_logging
from .options import _EPILOG, EXIT_NEGATIVE, EXIT_OK, UsageError, _add_json
from .output import _json

if TYPE_CHECKING:
    import argparse

    from ..checker.sitemaps import SitemapStats
    from ..core.sitemaps import SitemapUrl

__all__ = ["add_parser", "run"]

#: Seconds between progress redraws (a redraw per URL would cost more than the URL).
_REDRAW = 0.25
_DEFAULTS = SitemapLimits()


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``sitemaps``."""
    command = sub.add_parser(
        "sitemaps", help="stream the URLs of an origin's sitemaps", epilog=_EPILOG
    )
    command.add_argument("url", metavar="URL", help="any URL of the origin")
    command.add_argument(
        "--sitemap",
        action="append",
        metavar="URL",
        help="read this sitemap instead of robots.txt's (repeatable)",
    )
    command.add_argument(
        "--all", action="store_true", help="also list disallowed URLs, with their verdict"
    )
    command.add_argument(
        "--max-sitemaps",
        type=int,
        default=_DEFAULTS.max_sitemaps,
        help=f"sitemaps read at most (default {_DEFAULTS.max_sitemaps})",
    )
    command.add_argument(
        "--max-depth",
        type=int,
        default=_DEFAULTS.max_depth,
        help=f"index nesting followed at most (default {_DEFAULTS.max_depth})",
    )
    _add_json(command)
    command.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run ``sitemaps``: 0 when every sitemap was read whole, 1 otherwise."""
    _agent(args)
    Origin.from_url(args.url)  # a bad URL is a usage error before any request
    try:
        limits = SitemapLimits(max_sitemaps=args.max_sitemaps, max_depth=args.max_depth)
    except ConfigurationError as exc:
        raise UsageError(str(exc)) from None
    _setup_logging(args.verbose)
    stats = asyncio.run(_stream(args, limits))
    if stats.sitemaps_failed or stats.limits_hit:
        return EXIT_NEGATIVE
    return EXIT_OK


async def _stream(args: argparse.Namespace, limits: SitemapLimits) -> SitemapStats:
    progress = _Progress(sys.stderr) if sys.stderr.isatty() else None
    async with _checker(args) as checker:
        walk = checker.sitemap_urls(
            args.url, sitemaps=args.sitemap, include_disallowed=args.all, limits=limits
        )
        async for item in walk:
            print(_json(_record(item)) if args.json else item.loc, flush=progress is not None)
            if progress is not None:
                progress.show(walk.stats)
        if progress is not None:
            progress.done(walk.stats)
        return walk.stats


def _record(item: SitemapUrl) -> dict[str, Any]:
    record: dict[str, Any] = {
        "loc": item.loc,
        "lastmod": item.lastmod.isoformat() if item.lastmod else None,
        "changefreq": item.changefreq,
        "priority": item.priority,
        "sitemap": item.sitemap,
    }
    if item.verdict is not None:
        record["allowed"] = item.verdict.allowed
    return record


class _Progress:
    """One line on a terminal's stderr, redrawn at most every ``_REDRAW`` seconds."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._last = 0.0

    def show(self, stats: SitemapStats) -> None:
        now = time.monotonic()
        if now - self._last >= _REDRAW:
            self._last = now
            self._stream.write("\r\x1b[K" + _summary(stats))
            self._stream.flush()

    def done(self, stats: SitemapStats) -> None:
        self._stream.write("\r\x1b[K" + _summary(stats) + "\n")
        self._stream.flush()


def _summary(stats: SitemapStats) -> str:
    return (
        f"{stats.urls_yielded} URLs from {stats.sitemaps_fetched} sitemaps; dropped: "
        f"{stats.dropped_robots} by robots.txt, {stats.dropped_scope} out of scope; "
        f"{stats.limits_hit} limits hit"
    )
