"""Shared helpers: test data loading and chunked parsing."""

from __future__ import annotations

import contextlib
import gc
import itertools
import json
import shutil
import subprocess
import tracemalloc
from pathlib import Path
from typing import TYPE_CHECKING, Any, final

import pytest

import robots_async as ra
from robots_async.core.prefixes import UNKNOWN

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence

    from robots_async.core.prefixes import LiteralPrefixes

DATA = Path(__file__).parent / "data"
CORPUS = DATA / "corpus"
#: A soft-404 HTML page served as robots.txt: a warning on nearly every line (past
#: the cap of 1,000), a line over the length cap, a directive after the cap.
HTML_PAGE = (
    b"<!DOCTYPE html>\n<html><head><title>Not found</title>\n"
    + b"<script>" + b"x" * 20_000 + b"</script>\n"
    + b"".join(b'<div class="row-%d">Item %d: <a href="/p/%d">more</a></div>\n' % (i, i, i)
               for i in range(1500))
    + b"User-agent: *\nDisallow: /private\n</html>\n"
)  # fmt: skip
UNLIMITED: Any = None  # max_bytes=None: no parsing limit


def load_jsonl(name: str) -> list[dict[str, Any]]:
    """Read one JSON object per line from tests/data/<name>."""
    with (DATA / name).open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def case_body(case: dict[str, Any]) -> bytes:
    """The robots.txt bytes of a case (``robots_encoding`` when given, else UTF-8)."""
    return str(case["robots"]).encode(case.get("robots_encoding", "utf-8"))


def split_at(body: bytes, cuts: Iterable[int]) -> list[bytes]:
    """Split ``body`` at the given offsets (any order, duplicates allowed)."""
    points = sorted({0, len(body), *(min(max(c, 0), len(body)) for c in cuts)})
    return [body[a:b] for a, b in itertools.pairwise(points)]


def parse_chunks(
    chunks: Iterable[bytes | bytearray | memoryview],
    *,
    policy: str | ra.MatchPolicy = "google",
    max_bytes: int | None = ra.DEFAULT_MAX_BYTES,
) -> ra.RobotsTxt:
    """Feed ``chunks`` one by one to a fresh parser and close it."""
    parser = ra.RobotsParser(policy, max_bytes=max_bytes)
    for chunk in chunks:
        parser.feed(chunk)
    return parser.close()


def summary(robots: ra.RobotsTxt, urls: Sequence[str], tokens: Sequence[str]) -> dict[str, object]:
    """Everything observable about a parsed file, for equality checks."""
    verdicts = {
        (token, url): (
            robots.explain(url, robots_token=token),
            robots.allowed(url, robots_token=token),
        )
        for token in tokens
        for url in urls
    }
    extensions = {
        token: (
            robots.crawl_delay(robots_token=token),
            robots.request_rate(robots_token=token),
            robots.visit_time(robots_token=token),
            robots.groups_for(robots_token=token),
        )
        for token in tokens
    }
    return {
        "groups": robots.groups,
        "sitemaps": robots.sitemaps,
        "host": robots.host,
        "clean_params": robots.clean_params,
        "truncated": robots.truncated,
        "warnings": robots.warnings,
        "verdicts": verdicts,
        "extensions": extensions,
    }


def bytes_kept_by(make: Callable[[], Any]) -> tuple[Any, int]:
    """What ``make()`` returns, and the bytes it keeps allocated, wherever made
    (tracemalloc's running total: OwnGrowth's snapshots would count themselves)."""
    gc.collect()
    tracemalloc.start()
    try:
        made = make()
        gc.collect()
        return made, tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()


@final
class OwnGrowth:
    """Bytes robots_async's own code allocates and keeps between :meth:`mark` and
    :meth:`grown` (tracemalloc, traced from ``__enter__``)."""

    def __enter__(self) -> OwnGrowth:
        self._ours = [tracemalloc.Filter(True, "*/robots_async/*")]
        tracemalloc.start()
        self.mark()
        return self

    def __exit__(self, *exc: object) -> None:
        tracemalloc.stop()

    def mark(self) -> None:
        """Start counting from here."""
        self._before = tracemalloc.take_snapshot().filter_traces(self._ours)

    def grown(self) -> tuple[int, list[tracemalloc.StatisticDiff]]:
        """Bytes kept since :meth:`mark` (after a collection), and the top five lines."""
        gc.collect()
        after = tracemalloc.take_snapshot().filter_traces(self._ours)
        total = sum(stat.size_diff for stat in after.compare_to(self._before, "filename"))
        return total, after.compare_to(self._before, "lineno")[:5]


def all_linked(index: LiteralPrefixes) -> bool:
    """True once every literal of ``index`` has its parent (``link_all`` ran): read
    from its state, not by patching the method, which a compiled build cannot."""
    return bool(index.parents) and UNKNOWN not in index.parents


class ShortOfDescriptors:
    """A fetcher whose first ``failures`` fetches fail for want of descriptors (what a
    real one reports on EMFILE, which a test cannot time), then answers ``rules``."""

    def __init__(
        self, failures: int, rules: bytes = b"User-agent: *\nDisallow: /private\n"
    ) -> None:
        self.failures = failures
        self.rules = rules
        self.calls = 0

    async def fetch(self, url: str, *, keep_body: bool = False, **_: Any) -> ra.FetchOutcome:
        """ "local-limit" while ``failures`` last, then a 200 with ``rules``."""
        self.calls += 1
        if self.calls <= self.failures:
            return ra.FetchOutcome(url, url, None, error="local-limit", error_detail="EMFILE")
        return ra.FetchOutcome(url, url, 200, robots=ra.parse(self.rules))

    async def aclose(self) -> None:
        """Nothing to release."""


@contextlib.contextmanager
def tmpfs(mount: Path, options: str, what: str) -> Iterator[Path]:
    """A tmpfs mounted at ``mount`` (made) with ``options``, unmounted after; skip
    (saying ``what`` could not be made) where mounting is not allowed (needs root)."""
    mount.mkdir()
    command = ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(mount)]
    if shutil.which("mount") is None or subprocess.run(command, check=False).returncode:
        pytest.skip(f"cannot mount {what} here")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)
