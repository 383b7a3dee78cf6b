"""AuditLog against a local site: one JSON line per response, the robots.txt sha256,
batches written off the loop, nothing lost on aclose."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

import aiohttp
import pytest

import robots_async as ra

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
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


async def test_a_header_value_that_is_not_utf8_is_logged_not_lost(
    raw_server: Callable[[bytes], Awaitable[str]],
    make_checker: Callable[..., ra.RobotsChecker],
    tmp_path: Path,
) -> None:
    # aiohttp decodes a header's non-UTF-8 byte as a lone surrogate ("\udce9"); the
    # tdm-policy URL goes into a source's detail. Written as UTF-8 it raised
    # UnicodeEncodeError from record() and the batch's lines were gone.
    base = await raw_server(
        b"HTTP/1.1 200 OK\r\ntdm-reservation: 1\r\n"
        b"tdm-policy: https://example.org/politique-\xe9\r\n"
        b"Content-Length: 0\r\nConnection: close\r\n\r\n"
    )
    log = ra.AuditLog(tmp_path / "audit.jsonl", batch=1)
    checker = make_checker()
    async with aiohttp.ClientSession() as session, session.get(base + "/page") as response:
        answer = await log.record(checker, base + "/page", response.headers)
    await log.aclose()
    assert answer.get("train-ai") == "disallowed"
    (line,) = [json.loads(x) for x in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert line["usage"] == {"train-ai": "disallowed"}
    (source,) = line["sources"]
    assert (
        source["detail"] == "tdm-reservation: 1; tdm-policy: https://example.org/politique-\udce9"
    )


async def test_the_usage_answer_is_for_the_user_agent_recorded(
    server: Server, make_checker: Callable[..., ra.RobotsChecker], tmp_path: Path
) -> None:
    # record(user_agent=) judged the verdict with that agent but the usage answer with
    # the checker's own token: OtherBot's own opt-outs were missing from both the
    # line and the answer returned (train-ai unknown where the site said no).
    server.text(
        "/robots.txt",
        "User-agent: OtherBot\nContent-Usage: search=n\nAllow: /\n\n"
        "User-agent: *\nContent-Usage: search=y\nAllow: /\n",
    )
    log = ra.AuditLog(tmp_path / "audit.jsonl")
    checker = make_checker()
    headers = {"X-Robots-Tag": "OtherBot: noai"}
    answer = await log.record(checker, server.url("/page"), headers, user_agent="OtherBot/2.0")
    await log.aclose()
    assert answer.get("train-ai") == "disallowed"
    assert answer.get("search") == "disallowed"
    (line,) = [json.loads(x) for x in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert line["usage"] == {"search": "disallowed", "train-ai": "disallowed"}


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
