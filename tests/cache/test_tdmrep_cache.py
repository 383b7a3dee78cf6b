"""TdmRepCache against a real local server: one fetch per origin, outcomes never fail open."""

from __future__ import annotations

import asyncio
import gzip
import json
from typing import TYPE_CHECKING, Any

import pytest

import robots_async as ra
from robots_async.cache.tdmrep import TdmRepCache

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..servers import FakeClock, Server

PATH = "/.well-known/tdmrep.json"
FILE = json.dumps([{"location": "/books/*", "tdm-reservation": 1, "tdm-policy": "/p.json"}])


def _tdm(make_cache: Callable[..., ra.RobotsCache], **kwargs: Any) -> TdmRepCache:
    cache = make_cache()
    return TdmRepCache(cache, cache._fetcher, **kwargs)


async def test_hundred_concurrent_questions_make_one_request(
    server: Server, make_cache: Callable[..., ra.RobotsCache]
) -> None:
    server.text(PATH, FILE, delay=0.2, headers={"Content-Type": "application/json"})
    tdm = _tdm(make_cache)
    urls = [server.url(f"/books/{i}") for i in range(50)] + [
        server.url(f"/x/{i}") for i in range(50)
    ]
    answers = await asyncio.gather(*(tdm.lookup(url) for url in urls))
    assert server.count(PATH) == 1
    assert [a.status for a, _ in answers] == ["reserved"] * 50 + ["not-reserved"] * 50
    assert answers[0][0].policy == "/p.json"
    await tdm.lookup(server.url("/books/again"))
    assert server.count(PATH) == 1
    await tdm.aclose()


@pytest.mark.parametrize(
    ("status", "expected"),
    # 429 is a rate limit, not "no file": it read "not-reserved" for a whole ttl.
    [(404, "not-reserved"), (403, "not-reserved"), (429, "unknown"), (500, "unknown")],
)
async def test_status_outcomes(
    server: Server, make_cache: Callable[..., ra.RobotsCache], status: int, expected: str
) -> None:
    server.text(PATH, FILE, status=status)
    answer, record = await _tdm(make_cache).lookup(server.url("/books/1"))
    assert answer.status == expected
    assert record.status == status


async def test_network_error_is_unknown(
    free_port: int, make_cache: Callable[..., ra.RobotsCache]
) -> None:
    answer, record = await _tdm(make_cache).lookup(f"http://127.0.0.1:{free_port}/books/1")
    assert answer.status == "unknown"
    assert "connect" in answer.reason
    assert record.status is None


async def test_oversized_and_broken_files_are_unknown(
    make_server: Callable[..., Any], make_cache: Callable[..., ra.RobotsCache]
) -> None:
    big, broken = await make_server(1), await make_server(1)
    big.text(PATH, "[" + " " * 600_000 + "]")
    broken.text(PATH, "[{")
    tdm = _tdm(make_cache)
    assert (await tdm.lookup(big.url("/a")))[0].status == "unknown"
    assert (await tdm.lookup(broken.url("/a")))[0].status == "unknown"


async def test_unknown_is_asked_again_after_error_ttl(
    server: Server, make_cache: Callable[..., ra.RobotsCache], clock: FakeClock
) -> None:
    server.text(PATH, FILE, status=503)
    tdm = _tdm(make_cache, clock=clock)
    assert (await tdm.lookup(server.url("/books/1")))[0].status == "unknown"
    server.text(PATH, FILE)
    assert (await tdm.lookup(server.url("/books/1")))[0].status == "unknown"  # kept a while
    clock.advance(ra.FetchPolicy().error_ttl + 1)
    assert (await tdm.lookup(server.url("/books/1")))[0].status == "reserved"
    assert server.count(PATH) == 2


@pytest.mark.parametrize(
    "soft_404",
    [
        ("<!DOCTYPE html><h1>Not found</h1>", "text/html", "a page, not JSON"),
        ("<html>" + "<p>x</p>" * 100_000, "text/html", "a page, not JSON"),
        ('{"error": "Not Found"}', "application/json", "JSON without TDMRep's properties"),
    ],
    ids=["page", "long-page", "json"],
)
async def test_a_site_answering_every_path_with_a_page_has_no_file(
    server: Server,
    make_cache: Callable[..., ra.RobotsCache],
    clock: FakeClock,
    soft_404: tuple[str, str, str],
) -> None:
    """A soft 404 (an HTML page with 200; one past the byte cap too; an API's JSON
    error): no TDMRep file, kept the whole ttl, not asked again every error_ttl as an
    unreadable file is."""
    page, kind, why = soft_404
    server.text(PATH, page, headers={"Content-Type": kind})
    tdm = _tdm(make_cache, clock=clock)
    answer, record = await tdm.lookup(server.url("/books/1"))
    assert (answer.status, answer.reason) == ("not-reserved", f"no tdmrep.json ({why})")
    assert record.expires - record.fetched_at == ra.FetchPolicy().ttl
    clock.advance(ra.FetchPolicy().error_ttl + 1)
    await tdm.lookup(server.url("/books/2"))
    assert server.count(PATH) == 1
    assert tdm.stats.unknown == 0


@pytest.mark.parametrize(
    "body",
    [gzip.compress(FILE.encode()), b"// TDMRep\n" + FILE.encode()],
    ids=["gzip-unlabelled", "comment"],
)
async def test_a_file_served_oddly_stays_unknown(
    server: Server, make_cache: Callable[..., ra.RobotsCache], body: bytes
) -> None:
    """A gzip file without Content-Encoding (a static host's missing header) or one
    begun by a comment: its publisher meant a file, so unknown for error_ttl. Both
    read "no file" (text) kept ttl: the site's reservation of /books/ lost."""
    server.text(PATH, body, headers={"Content-Type": "application/json"})
    tdm = _tdm(make_cache)
    answer, record = await tdm.lookup(server.url("/books/1"))
    assert answer.status == "unknown"
    assert record.expires - record.fetched_at == ra.FetchPolicy().error_ttl
    assert tdm.stats.unknown == 1
    await tdm.aclose()


async def test_a_partial_content_answer_is_unknown(
    server: Server, make_cache: Callable[..., ra.RobotsCache]
) -> None:
    """A 206 nobody asked for (no Range is sent) is part of a file (RFC 9110 §15.3.7):
    neither the file nor proof of none. Its piece began with text, so it read "no
    file" (not-reserved) for a whole ttl."""
    piece = FILE.encode()[3:30]  # 'location": "/books/*", "tdm'
    server.text(PATH, piece, status=206, headers={"Content-Range": f"bytes 3-29/{len(FILE)}"})
    tdm = _tdm(make_cache)
    answer, record = await tdm.lookup(server.url("/books/1"))
    assert (answer.status, record.status) == ("unknown", 206)
    assert record.expires - record.fetched_at == ra.FetchPolicy().error_ttl
    await tdm.aclose()


async def test_records_are_bounded_by_memory(
    make_server: Callable[..., Any], make_cache: Callable[..., ra.RobotsCache]
) -> None:
    """Records of large files count their entries against max_memory (only a count
    bounded them: 10,000 origins of 1,000-entry files, ~2.5 GB); the oldest go."""
    servers = [await make_server(1) for _ in range(5)]
    big = json.dumps([{"location": f"/section{i}/", "tdm-reservation": 1} for i in range(1000)])
    for server in servers:
        server.text(PATH, big)
    tdm = _tdm(make_cache, max_memory=600_000)
    for server in servers:
        assert (await tdm.lookup(server.url("/section7/a")))[0].status == "reserved"
    assert 0 < tdm.memory <= 600_000
    assert (await tdm.lookup(servers[0].url("/section7/a")))[0].status == "reserved"
    assert servers[0].count(PATH) == 2  # evicted, fetched again
    assert (await tdm.lookup(servers[-1].url("/section7/a")))[0].status == "reserved"
    assert servers[-1].count(PATH) == 1
    await tdm.aclose()


def test_max_memory_must_be_a_positive_int(make_cache: Callable[..., ra.RobotsCache]) -> None:
    for bad in (0, True, "1000"):
        with pytest.raises(ra.ConfigurationError, match="max_memory"):
            _tdm(make_cache, max_memory=bad)


async def test_closing_mid_fetch_gives_waiters_closed_error(
    server: Server, make_cache: Callable[..., ra.RobotsCache]
) -> None:
    """As RobotsCache's waiters do: a bare CancelledError reached callers that were not
    cancelled themselves (a gather or TaskGroup then saw a cancelled task)."""
    server.text(PATH, FILE, delay=5.0)
    tdm = _tdm(make_cache)
    asks = [asyncio.ensure_future(tdm.lookup(server.url(f"/books/{i}"))) for i in range(3)]
    await asyncio.sleep(0.2)
    await tdm.aclose()
    for ask in asks:
        with pytest.raises(ra.ClosedError):
            await ask
    with pytest.raises(ra.ClosedError):
        await tdm.lookup(server.url("/books/1"))
