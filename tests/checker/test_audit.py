"""AuditLog against a local site: one JSON line per response, the robots.txt sha256,
batches written off the loop, nothing lost on aclose."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

import pytest

import robots_async as ra

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from ..servers import Server

ROBOTS = "User-agent: *\nDisallow: /private/\nContent-Signal: ai-train=no\n"


async def test_one_line_per_response_with_the_robots_sha256(
    server: Server, make_checker: Callable[..., ra.RobotsChecker], tmp_path: Path
) -> None:
    server.text("/robots.txt", ROBOTS)
    log = ra.AuditLog(tmp_path / "audit.jsonl", batch=4)
    checker = make_checker()
    urls = [server.url(f"/page{i}") for i in range(9)] + [server.url("/private/x")]
    for url in urls:
        await log.record(checker, url, {"X-Robots-Tag": "noindex"})
    assert log.written == 8  # two batches of four written, two lines still buffered
    await log.aclose()
    lines = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert [line["url"] for line in lines] == urls
    sha = hashlib.sha256(ROBOTS.encode()).hexdigest()
    assert {line["robots_sha256"] for line in lines} == {sha}
    assert lines[0]["allowed"] is True
    assert lines[0]["usage"] == {"train-ai": "disallowed", "search": "disallowed"}
    assert {s["source"] for s in lines[0]["sources"]} == {
        "robots-content-signal",
        "page-directives",
    }
    assert lines[-1]["allowed"] is False
    assert lines[-1]["rule"] == "Disallow: /private/"
    assert lines[-1]["line"] == 2
    with pytest.raises(ra.ClosedError):
        await log.record(checker, urls[0])


def test_bad_configuration_fails_at_construction(tmp_path: Path) -> None:
    with pytest.raises(ra.ConfigurationError, match="batch"):
        ra.AuditLog(tmp_path / "a.jsonl", batch=0)
    with pytest.raises(ra.ConfigurationError, match="existing directory"):
        ra.AuditLog(tmp_path / "missing" / "a.jsonl")


def test_path_that_cannot_be_appended_to_fails_at_construction(
    tmp_path: Path, read_only_dir: Path
) -> None:
    """A directory (``ROBOTSASYNC_AUDIT_LOG = "logs/"``) or a read-only file system was
    accepted; the first batch then raised IsADirectoryError / OSError in the crawl's
    response path and its lines were lost."""
    with pytest.raises(ra.ConfigurationError, match="a directory"):
        ra.AuditLog(tmp_path)
    with pytest.raises(ra.ConfigurationError, match="Read-only file system"):
        ra.AuditLog(read_only_dir / "audit.jsonl")
