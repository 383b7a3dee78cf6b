"""``robots-async lint --tdmrep`` (and a file named tdmrep.json): a TDMRep file's problems."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

import pytest
from aiohttp import web

from robots_async.cli import main

if TYPE_CHECKING:
    from pathlib import Path

    from ..conftest import Serve

FLAWED = [
    {"location": "/news/", "tdm-reservation": 1, "tdm-policy": "https://x.test/p"},
    {"location": "books", "tdm_reservation": 1},  # misspelt key, relative location
    {"location": "/", "tdm-reservation": 0},
    {"location": "/late", "tdm-reservation": 1},  # after "/": never reached
]
CLEAN = [{"location": "/", "tdm-reservation": 1}]


def write(tmp_path: Path, entries: object, name: str = "tdmrep.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(entries))
    return str(path)


def test_a_file_named_tdmrep_json_is_linted_as_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, FLAWED)
    assert main(["lint", path]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[:4] == [
        f"{path}: entry 1: invalid-entry: tdm-reservation is not 0 or 1",
        f"{path}: entry 1: unknown-key: 'tdm_reservation' is not a TDMRep property",
        f"{path}: entry 1: relative-location: 'books' is read as '/books'",
        f"{path}: entry 3: unreachable: entry 2 matches every path first",
    ]
    assert f"{path}: entry 0: note: /news/: reserved, policy https://x.test/p" in lines
    assert lines[-1] == f"{path}: 4 entries, 2 reserving; 4 warnings"


def test_clean_file_exits_0_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, CLEAN, name="policy.json")
    assert main(["lint", "--tdmrep", "--json", path]) == 0
    record = json.loads(capsys.readouterr().out)
    assert (record["entries"], record["reserved"], record["warnings"]) == (1, 1, [])


@pytest.mark.parametrize(
    ("body", "code", "message"),
    [
        (b'{"location": "/"}', "unreadable", "not a JSON array"),
        (b"[{", "unreadable", "not JSON"),
        (b"\xff[]", "unreadable", "not UTF-8"),
        # An HTML page (a soft 404), text or nothing: crawlers read no file at all.
        (b"<!DOCTYPE html><p>Page not found", "not-a-file", "a page"),
        (b"Not Found", "not-a-file", "text"),
        (b'{"error": "Not Found"}', "not-a-file", "JSON without TDMRep's properties"),
        (b"", "not-a-file", "empty"),
    ],
)
def test_a_file_crawlers_cannot_read_is_one_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], body: bytes, code: str, message: str
) -> None:
    path = tmp_path / "tdmrep.json"
    path.write_bytes(body)
    assert main(["lint", str(path)]) == 1
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith(f"{path}: {code}: ")
    assert message in first
    unknown = "crawlers treat every resource as unknown"
    assert (unknown if code == "unreadable" else "nothing reserved") in first


def tdmrep_app(status: int, body: bytes = b"") -> web.Application:
    async def handler(request: web.Request) -> web.Response:
        return web.Response(status=status, body=body, content_type="application/json")

    app = web.Application()
    app.router.add_get("/.well-known/tdmrep.json", handler)
    return app


async def test_url_lints_the_origins_file(serve: Serve, capsys: pytest.CaptureFixture[str]) -> None:
    base = await serve(tdmrep_app(200, json.dumps(FLAWED).encode()))
    code = await asyncio.to_thread(main, ["lint", "--tdmrep", f"{base}/some/page"])
    out = capsys.readouterr().out.splitlines()
    assert code == 1
    assert out[-1] == f"{base}/.well-known/tdmrep.json: 4 entries, 2 reserving; 4 warnings"


@pytest.mark.parametrize(
    ("status", "code", "fate"), [(404, 0, "no tdmrep.json"), (503, 1, "unreachable")]
)
async def test_url_without_a_file(
    serve: Serve, capsys: pytest.CaptureFixture[str], status: int, code: int, fate: str
) -> None:
    """A 4xx: the site reserves nothing by file (exit 0); a 5xx: unknown (exit 1)."""
    base = await serve(tdmrep_app(status))
    assert await asyncio.to_thread(main, ["lint", "--tdmrep", base]) == code
    assert fate in capsys.readouterr().err


def redirect_app(location: str | None) -> web.Application:
    """tdmrep.json answers 301, with ``location`` (None: no Location header)."""

    async def handler(request: web.Request) -> web.Response:
        headers = {} if location is None else {"Location": location}
        return web.Response(status=301, headers=headers)

    app = web.Application()
    app.router.add_get("/.well-known/tdmrep.json", handler)
    return app


@pytest.mark.parametrize(
    ("app", "status"),
    [
        (redirect_app(None), "a redirect without Location"),
        (tdmrep_app(429), "HTTP 429"),
        # Part of a file, unasked: it said "not-a-file: crawlers read no tdmrep.json".
        (tdmrep_app(206, b'location": "/books/*", "tdm-'), "HTTP 206"),
    ],
    ids=["bad-redirect", "429", "206"],
)
async def test_url_whose_file_is_unknown_exits_1(
    serve: Serve, capsys: pytest.CaptureFixture[str], app: web.Application, status: str
) -> None:
    """What crawlers read as unknown (TdmRepCache) is not "no tdmrep.json": a bad
    redirect exited 0 saying there was no file."""
    base = await serve(app)
    assert await asyncio.to_thread(main, ["lint", "--tdmrep", base]) == 1
    assert "unreachable" in capsys.readouterr().err


async def test_url_over_the_cap_says_so(serve: Serve, capsys: pytest.CaptureFixture[str]) -> None:
    """A valid file over the cap is unreadable for its size; it was reported as "not
    JSON (Expecting value: line 1 column 512001)", the fetch having cut it."""
    big = json.dumps([{"location": f"/p{i}", "tdm-reservation": 1} for i in range(20_000)])
    base = await serve(tdmrep_app(200, big.encode()))
    assert await asyncio.to_thread(main, ["lint", "--tdmrep", base]) == 1
    first = capsys.readouterr().out.splitlines()[0]
    assert first.endswith(
        "unreadable: tdmrep.json over 512000 bytes: crawlers treat every resource as unknown"
    )


def test_max_bytes_applies_to_a_tdmrep_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--max-bytes was accepted with --tdmrep and silently ignored."""
    path = write(tmp_path, CLEAN)
    assert main(["lint", "--tdmrep", "--max-bytes", "10", path]) == 1
    assert "tdmrep.json over 10 bytes" in capsys.readouterr().out


def test_a_url_as_location_is_an_invalid_entry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, [{"location": "https://x.test/", "tdm-reservation": 1}])
    assert main(["lint", path]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{path}: entry 0: invalid-entry: location is a URL, not a path"
    assert lines[-1] == f"{path}: 1 entry, 0 reserving; 1 warning"


@pytest.mark.parametrize("policy", [["https://x.test/p"], 5, ""])
def test_a_policy_crawlers_cannot_read_is_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], policy: object
) -> None:
    """A tdm-policy that is not a non-empty string is dropped by crawlers (the entry
    still reserves); the linter said "0 warnings"."""
    path = write(tmp_path, [{"location": "/", "tdm-reservation": 1, "tdm-policy": policy}])
    assert main(["lint", path]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert (
        lines[0] == f"{path}: entry 0: invalid-policy: tdm-policy {policy!r} is not a URL: ignored"
    )


def test_a_file_longer_than_crawlers_read_is_one_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    entries = [{"location": f"/s{i}/", "tdm-reservation": 1} for i in range(1001)]
    entries[1000]["tdm_reservation"] = 1  # past the cap: not read, not reported
    path = write(tmp_path, entries)
    assert main(["lint", path]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        f"{path}: too-many-entries: 1001 entries: crawlers read the first 1000 "
        "(a URL none of them matches is unknown)"
    )
    assert lines[-1] == f"{path}: 1000 entries, 1000 reserving; 1 warning"
