"""A newcomer's mistakes on the command line, each answered with its fix (issue 28)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from aiohttp import web

from robots_async.cli import main

if TYPE_CHECKING:
    from ..conftest import Serve

ROBOTS = "User-agent: *\nDisallow: /cart\n"
#: An error page as a site might serve for /robots.txt: 31 lines of markup.
PAGE = (
    "<!DOCTYPE html>\n<html lang='en'>\n<head>\n<meta charset='utf-8'>\n"
    "<title>Not found</title>\n</head>\n<body>\n"
    + "".join(f"<p>Item {n}: sold out</p>\n" for n in range(22))
    + "</body>\n</html>\n"
)


def write(tmp_path: Path, text: str, name: str = "robots.txt") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def serving(body: str, status: int) -> web.Application:
    async def robots(request: web.Request) -> web.Response:
        return web.Response(text=body, status=status, content_type="text/html")

    app = web.Application()
    app.router.add_get("/robots.txt", robots)
    return app


# ------------------------------------------------------------------ a URL without a scheme


@pytest.mark.parametrize(
    ("argv", "suggested"),
    [
        (["check", "www.example.com/cart"], "https://www.example.com/cart"),
        (["check", "https://e.com/", "example.com"], "https://example.com"),
        (["explain", "shop.example.co.uk/a?b=1"], "https://shop.example.co.uk/a?b=1"),
        (["fetch", "localhost:8080/x"], "https://localhost:8080/x"),
        (["fetch", "127.0.0.1:8080"], "https://127.0.0.1:8080"),
        (["check", "[::1]:8080/x"], "https://[::1]:8080/x"),
        (["lint", "www.example.com"], "https://www.example.com"),
    ],
)
def test_host_without_scheme_suggests_https(
    argv: list[str], suggested: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A first segment that names a host: the error says which URL was meant."""
    assert main(argv) == 2
    assert f"did you mean '{suggested}'?" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["check", "explain"])
def test_path_without_site_names_full_url_and_robots_option(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bare path: give the full URL, or a robots.txt file with --robots."""
    assert main([command, "/cart"]) == 2
    assert capsys.readouterr().err.endswith(
        "relative URL: '/cart'; give a full URL (https://HOST/cart), "
        "or a robots.txt file to check it against with --robots FILE\n"
    )


def test_file_name_is_not_taken_for_a_host(capsys: pytest.CaptureFixture[str]) -> None:
    """robots.txt is a file to pass with --robots, never https://robots.txt."""
    assert main(["check", "robots.txt"]) == 2
    err = capsys.readouterr().err
    assert "https://robots.txt" not in err
    assert "--robots FILE" in err


def test_fetch_path_has_no_robots_hint(capsys: pytest.CaptureFixture[str]) -> None:
    """fetch takes no --robots: the hint is only the full URL."""
    assert main(["fetch", "/x"]) == 2
    assert capsys.readouterr().err.endswith("; give a full URL (https://HOST/x)\n")


def test_with_robots_file_a_path_needs_its_slash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With --robots, /paths are fine: "cart" is told to be '/cart'."""
    path = write(tmp_path, ROBOTS)
    assert main(["explain", "--robots", path, "cart"]) == 2
    assert "or the path '/cart'" in capsys.readouterr().err
    assert main(["explain", "--robots", path, "/cart"]) == 1


def test_wrong_scheme_or_host_gets_no_guess(capsys: pytest.CaptureFixture[str]) -> None:
    """A scheme was written, or the host is bad: the error alone, no made-up fix."""
    assert main(["check", "ftp://x.test/", "https:/x"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "robots-async: argument 1: unsupported scheme 'ftp': 'ftp://x.test/'",
        "robots-async: argument 2: URL has no host: 'https:/x'",
    ]


# ------------------------------------------------------------------ lint of an absent file


@pytest.mark.parametrize("status", [404, 410, 403])
async def test_lint_url_without_robots_txt_exits_0(
    serve: Serve, status: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 4xx is "no robots.txt" (allowed to crawl all): said on stderr, exit 0 as fetch."""
    base = await serve(serving("gone", status))
    assert await asyncio.to_thread(main, ["lint", base]) == 0
    assert await asyncio.to_thread(main, ["fetch", base]) == 0
    captured = capsys.readouterr()
    assert captured.err == f"{base}/robots.txt: no robots.txt (HTTP {status}): nothing to lint\n"
    assert "status:" in captured.out  # fetch's fields only: lint printed nothing on stdout
    assert "nothing to lint" not in captured.out


async def test_lint_url_without_robots_txt_json(
    serve: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    """--json: the record still goes to stdout (no warnings), exit 0."""
    base = await serve(serving("gone", 404))
    assert await asyncio.to_thread(main, ["lint", "--json", base]) == 0
    record = json.loads(capsys.readouterr().out)
    assert (record["status"], record["warnings"]) == (404, [])


async def test_lint_url_unreachable_exits_1(
    serve: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 5xx leaves the rules unknown: exit 1, said on stderr."""
    base = await serve(serving("down", 503))
    assert await asyncio.to_thread(main, ["lint", base]) == 1
    assert capsys.readouterr().err == (
        f"{base}/robots.txt: unreachable (HTTP 503): nothing to lint\n"
    )


def test_docs_state_lint_exit_status() -> None:
    """The CLI guide says what lint exits with when the site has no robots.txt."""
    guide = Path(__file__).resolve().parents[2] / "docs" / "getting-started" / "cli.md"
    text = " ".join(guide.read_text(encoding="utf-8").split())
    assert "`lint` of a URL whose robots.txt is absent (4xx) exits 0" in text


# ------------------------------------------------------------------ lint of an HTML page


def test_html_page_is_one_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An HTML page: the html warning once, not one no-separator line per tag."""
    path = write(tmp_path, PAGE)
    assert main(["lint", path]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert len(PAGE.splitlines()) == 31
    assert len(lines) == 2, lines
    assert lines[0].startswith(f"{path}:1: html: body is an HTML page")
    assert lines[0].endswith("(31 warnings about them not shown)")
    assert lines[1].endswith("; 1 warning")


async def test_html_page_served_is_one_warning_in_json(
    serve: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same over HTTP and in JSON: one warning."""
    base = await serve(serving(PAGE, 200))
    assert await asyncio.to_thread(main, ["lint", "--json", base]) == 1
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    assert [(w["line"], w["code"]) for w in warnings] == [(1, "html")]


def test_warnings_before_the_page_are_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Lines before the markup are the file's own: their warnings stay."""
    path = write(tmp_path, "not a robots line\n" + PAGE)
    main(["lint", "--json", path])
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    assert [(w["line"], w["code"]) for w in warnings] == [(1, "no-separator"), (2, "html")]


def test_tag_in_a_comment_is_not_a_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """'# see <html>' is a comment: no html warning, and real warnings are not hidden."""
    path = write(tmp_path, "User-agent: *\n# see <html> and <body>\nDisallow /x\n")
    main(["lint", "--json", path])
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    assert [w["code"] for w in warnings] == ["missing-colon"]


def test_file_level_warning_has_no_line_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A warning about the whole file (line 0) prints as "file:", never "file:0:"."""
    path = write(tmp_path, ROBOTS)
    assert main(["lint", "--max-bytes", "5", path]) == 1
    out = capsys.readouterr().out
    assert f"{path}: truncated: body longer than 5 bytes" in out
    assert ":0:" not in out


# ------------------------------------------------------------------ a --store that cannot be


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("missing/robots.sqlite", "(No such file or directory)"),
        (".", "(this is a directory)"),
    ],
)
def test_store_where_no_file_can_be_is_a_usage_error(
    tmp_path: Path, name: str, why: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 2 naming --store, before any fetch: it used to log a warning only with -v and
    check without a store (exit 1 for the unreachable site, as if answered)."""
    path = str(tmp_path / name)
    assert main(["check", "--store", path, "http://127.0.0.1:9/x"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"robots-async: error: --store={path!r} is not accepted: expected ")
    assert err.rstrip().endswith(why)


def test_store_that_is_no_database_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--store robots.txt`` (typed for ``--robots``): exit 2 naming the file, which is
    left as it was; it ran with no store at all and exit 0 (a warning only with -v)."""
    path = tmp_path / "robots.txt"
    path.write_bytes(b"User-agent: *\nDisallow: /x\n")
    assert main(["check", "--store", str(path), "http://127.0.0.1:9/x"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"robots-async: error: --store {path}: not a SQLite database")
    assert path.read_bytes() == b"User-agent: *\nDisallow: /x\n"
    empty = tmp_path / "new.sqlite"
    empty.touch()  # an empty file is a new database (SQLite makes one there)
    assert main(["check", "--store", str(empty), "http://127.0.0.1:9/x"]) == 1  # unreachable
    assert "not a SQLite database" not in capsys.readouterr().err


def test_store_of_another_program_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Another program's SQLite file: one line and exit 2 (it was a StoreSchemaError
    traceback and exit 1, the status of a disallowed URL)."""
    import sqlite3

    path = tmp_path / "other.sqlite"
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.execute("CREATE TABLE notes (text)")
    assert main(["check", "--store", str(path), "http://127.0.0.1:9/x"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("robots-async: error: --store: ")
    assert "is not a robots_async store" in err
    assert "Traceback" not in err
