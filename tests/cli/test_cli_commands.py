"""``robots-async`` lint, fetch and explain details, and the documentation of every flag."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from aiohttp import web

from robots_async.cli import build_parser, main
from robots_async.cli.common import _fetch_policy

if TYPE_CHECKING:
    import argparse

    from ..conftest import Serve

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
USAGE_ROBOTS = """\
Content-Usage: train-ai=n
User-agent: *
Content-Usage: train-ai=n
Content-Usage: /news/ train-ai=y, search=y
Content-Usage: news/ search=n
Content-Usage: /odd TRAIN=n, foo=y
Disallow: /private
"""
HTML = b"<!DOCTYPE html>\n<html><head><title>Not found</title></head><body>x</body></html>\n"


def app_serving(
    body: bytes, status: int = 200, content_type: str = "text/plain"
) -> web.Application:
    """/robots.txt answers ``body``; /moved redirects to it (for the redirect guard)."""

    async def robots(request: web.Request) -> web.Response:
        return web.Response(body=body, status=status, content_type=content_type)

    async def moved(request: web.Request) -> web.Response:
        return web.Response(status=301, headers={"Location": "/real"})

    app = web.Application()
    app.router.add_get("/robots.txt", robots)
    app.router.add_get("/real", robots)
    app.router.add_get("/moved", moved)
    return app


def write(tmp_path: Path, data: bytes | str) -> str:
    path = tmp_path / "robots.txt"
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return str(path)


# --------------------------------------------------------------------------- lint


def test_lint_html_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An HTML page saved as robots.txt gets a specific "html" warning on line 1."""
    path = write(tmp_path, HTML)
    assert main(["lint", path]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"{path}:1: html: body is an HTML page, not a robots.txt")


def test_lint_html_after_blank_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The warning names the line the page starts on."""
    path = write(tmp_path, b"\n\n" + HTML[16:])
    main(["lint", "--json", path])
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    assert ("html", 3) in [(w["code"], w["line"]) for w in warnings]


@pytest.mark.parametrize(
    ("encoding", "said"),
    [
        ("utf-16", "byte order mark"),
        ("utf-16-le", "no byte order mark"),
        ("utf-16-be", "no byte order mark"),
    ],
)
def test_lint_utf16(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], encoding: str, said: str
) -> None:
    """UTF-16 with or without a byte order mark: a "utf-16" warning, not bytes noise."""
    path = write(tmp_path, "User-agent: *\nDisallow: /x\n".encode(encoding))
    assert main(["lint", "--json", path]) == 1
    first = json.loads(capsys.readouterr().out)["warnings"][0]
    assert first["code"] == "utf-16"
    assert said in first["message"]


def test_lint_utf8_with_bom_is_clean(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A UTF-8 byte order mark is fine (the parser skips it): no warning at all."""
    path = write(tmp_path, b"\xef\xbb\xbfUser-agent: *\nDisallow: /x\n")
    assert main(["lint", path]) == 0
    assert capsys.readouterr().out.endswith("; 0 warnings\n")


def test_lint_messages_are_text_not_bytes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Values in messages are shown as text: Request-rate '10', never b'10'."""
    path = write(tmp_path, "User-agent: *\nRequest-rate: 10\nCrawl-delay: soon\n")
    main(["lint", path])
    out = capsys.readouterr().out
    assert "Request-rate '10'" in out
    assert "Crawl-delay 'soon'" in out
    assert "b'" not in out


def test_lint_content_usage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Content-Usage rules are listed as notes; a rule outside a group, a path without
    "/", an invalid dictionary and an unknown label are warnings."""
    path = write(tmp_path, USAGE_ROBOTS)
    assert main(["lint", path]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert (
        lines[0]
        == f"{path}:1: rule-outside-group: Content-Usage before any user-agent line ignored"
    )
    assert (
        f"{path}:3: note: for *: Content-Usage: train-ai=n (train-ai disallowed, search unknown)"
        in lines
    )
    assert (
        f"{path}:4: note: for *: Content-Usage: /news/ train-ai=y, search=y "
        "(train-ai allowed, search allowed)"
    ) in lines
    codes = [line.split(": ")[1] for line in lines if ": note:" not in line][:-1]
    assert codes.count("usage-path") == 1
    assert codes.count("content-usage") >= 1
    assert lines[-1].startswith(f"{path}: 1 group, 1 rule, 0 sitemaps, 4 Content-Usage rules,")


def test_lint_content_usage_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--json lists each Content-Usage rule with its agents and reading."""
    main(["lint", "--json", write(tmp_path, USAGE_ROBOTS)])
    record = json.loads(capsys.readouterr().out)
    assert record["usage_rules"][1] == {
        "line": 4,
        "agents": ["*"],
        "path": "/news/",
        "preference": "train-ai=y, search=y",
        "train-ai": "allowed",
        "search": "allowed",
    }
    codes = {(w["line"], w["code"]) for w in record["warnings"]}
    assert {(1, "rule-outside-group"), (5, "usage-path"), (6, "content-usage")} <= codes


def test_lint_max_bytes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--max-bytes cuts the file: truncated, and the rules past the cut are not counted."""
    path = write(tmp_path, "User-agent: *\nDisallow: /a\n" + "Disallow: /b\n" * 100)
    assert main(["lint", "--json", "--max-bytes", "40", path]) == 1
    record = json.loads(capsys.readouterr().out)
    assert record["truncated"] is True
    assert record["rules"] < 5
    assert "truncated" in {w["code"] for w in record["warnings"]}
    assert main(["lint", "--max-bytes", "0", path]) == 2
    assert "must be at least 1" in capsys.readouterr().err


async def test_lint_url(serve: Serve, capsys: pytest.CaptureFixture[str]) -> None:
    """lint URL fetches the origin's robots.txt and lints it like a file."""
    base = await serve(app_serving(USAGE_ROBOTS.encode()))
    code = await asyncio.to_thread(main, ["lint", f"{base}/some/page"])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1
    assert lines[0].startswith(f"{base}/robots.txt:1: rule-outside-group")
    assert lines[-1].startswith(f"{base}/robots.txt: 1 group, 1 rule,")


async def test_lint_url_serving_html(serve: Serve, capsys: pytest.CaptureFixture[str]) -> None:
    """A site answering robots.txt with an HTML page (a soft 404) is warned about."""
    base = await serve(app_serving(HTML, content_type="text/html"))
    code = await asyncio.to_thread(main, ["lint", "--json", base])
    record = json.loads(capsys.readouterr().out)
    assert code == 1
    assert record["status"] == 200
    assert record["warnings"][0]["code"] == "html"


# --------------------------------------------------------------------------- fetch


async def test_fetch_body(serve: Serve, capsys: pytest.CaptureFixture[str]) -> None:
    """--body prints the fields, a blank line, then the body as served."""
    body = b"User-agent: *\nDisallow: /x\n"
    base = await serve(app_serving(body))
    code = await asyncio.to_thread(main, ["fetch", "--body", base])
    out = capsys.readouterr().out
    assert code == 0
    assert out.endswith("\n\n" + body.decode())
    assert "status:         200" in out


async def test_fetch_body_json_and_max_bytes(
    serve: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    """--json --body carries the body; --max-bytes cuts it and says truncated."""
    body = b"User-agent: *\n" + b"Disallow: /x\n" * 10
    base = await serve(app_serving(body))
    code = await asyncio.to_thread(main, ["fetch", "--json", "--body", "--max-bytes", "20", base])
    record = json.loads(capsys.readouterr().out)
    assert code == 0
    assert record["truncated"] is True
    assert record["body"] == body[:20].decode()


async def test_fetch_404_text_exit_0(serve: Serve, capsys: pytest.CaptureFixture[str]) -> None:
    """A 404 is "no robots.txt": exit 0, everything allowed; --body prints no body."""
    base = await serve(app_serving(b"not here", status=404))
    code = await asyncio.to_thread(main, ["fetch", "--body", base])
    out = capsys.readouterr().out
    assert code == 0
    assert "rules in force: allow-all" in out
    assert "not here" not in out


async def test_private_redirects_flag(serve: Serve, capsys: pytest.CaptureFixture[str]) -> None:
    """--private-redirects sets FetchPolicy.private_redirects; a private origin may
    redirect within private space either way (an intranet crawl keeps working)."""
    parser = build_parser()
    for value in ("block", "allow"):
        args = parser.parse_args(["--private-redirects", value, "fetch", "http://h/"])
        assert _fetch_policy(args).private_redirects == value
    base = await serve(app_serving(b"User-agent: *\nDisallow: /\n"))

    async def moved(request: web.Request) -> web.Response:
        return web.Response(status=301, headers={"Location": f"{base}/real"})

    app = web.Application()
    app.router.add_get("/robots.txt", moved)
    start = await serve(app)
    for value in ("block", "allow"):
        code = await asyncio.to_thread(
            main, ["--private-redirects", value, "fetch", "--json", start]
        )
        record = json.loads(capsys.readouterr().out)
        assert (code, record["status"], record["hops"]) == (0, 200, 1)


# --------------------------------------------------------------------------- explain


def test_explain_usage_local(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """explain shows the usage preference and the Content-Usage rule and line."""
    path = write(tmp_path, USAGE_ROBOTS)
    assert main(["explain", "--robots", path, "https://e.com/news/a"]) == 0
    out = capsys.readouterr().out
    assert "usage:       train-ai allowed, search allowed\n" in out
    assert "usage rule:  line 4: Content-Usage: /news/ train-ai=y, search=y\n" in out
    assert main(["explain", "--robots", path, "https://e.com/private"]) == 1
    assert "usage:       none (a URL that may not be fetched" in capsys.readouterr().out


async def test_explain_usage_fetched_json(serve: Serve, capsys: pytest.CaptureFixture[str]) -> None:
    """Fetched rules: --json carries the usage preference with its rule and line."""
    base = await serve(app_serving(USAGE_ROBOTS.encode()))
    code = await asyncio.to_thread(main, ["explain", "--json", f"{base}/page"])
    record = json.loads(capsys.readouterr().out)
    assert code == 0
    assert record["usage"] == {
        "train-ai": "disallowed",
        "search": "unknown",
        # Line 5's "news/ search=n" is a preference for every path (no "/": no path),
        # and an invalid one: it joins line 3 and says nothing.
        "rules": [
            {"line": 3, "rule": "Content-Usage: train-ai=n"},
            {"line": 5, "rule": "Content-Usage: news/ search=n"},
        ],
        "unknown_labels": {},
    }


# --------------------------------------------------------------------------- options


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "-1", "0", "1e400"])
def test_timeout_must_be_finite_and_positive(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """--timeout inf/nan/negative: a usage error (exit 2) naming the option."""
    assert main([f"--timeout={value}", "fetch", "http://127.0.0.1:9/"]) == 2
    err = capsys.readouterr().err
    assert (
        f"argument --timeout: must be a finite number of seconds greater than 0: {value!r}" in err
    )


def test_timeout_inf_has_no_traceback() -> None:
    """In a real process, --timeout inf prints one usage error and no traceback."""
    result = subprocess.run(
        [sys.executable, "-m", "robots_async", "check", "--timeout", "inf", "http://127.0.0.1:9/"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.splitlines()[-1].startswith(
        "robots-async check: error: argument --timeout"
    )


def subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if a.dest == "command")
    choices: dict[str, argparse.ArgumentParser] = action.choices  # type: ignore[assignment]
    return {"": parser, **choices}


def flags(parser: argparse.ArgumentParser) -> set[str]:
    return {flag for action in parser._actions for flag in action.option_strings}


def test_every_flag_has_help() -> None:
    """Every option and positional of every command is documented in --help."""
    for name, parser in subcommands().items():
        for action in parser._actions:
            assert action.help, f"{name or 'robots-async'}: {action.dest} has no help"


def test_lint_help_lists_only_what_applies(capsys: pytest.CaptureFixture[str]) -> None:
    """lint --help: no fetch policy, concurrency or ordering; --max-bytes is there."""
    assert main(["lint", "--help"]) == 0
    out = capsys.readouterr().out
    for absent in ("--fetch-policy", "--concurrency", "--ordered", "--input", "--robots"):
        assert absent not in out
    assert "--max-bytes" in out
    assert "http(s) URL" in out


def test_explain_url_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    """explain --help describes its URL argument."""
    assert main(["explain", "--help"]) == 0
    assert re.search(r"URL\s+absolute http\(s\) URL", capsys.readouterr().out)


def test_flags_named_in_readme_exist() -> None:
    """Every --flag the README's command-line section uses is accepted by some command."""
    section = README.split("### Command line", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    named = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*|-v)\b", section))
    known = set().union(*(flags(parser) for parser in subcommands().values()))
    assert named, "the README's command-line section names no flag"
    assert named <= known, named - known


# --------------------------------------------------------------------------- --store


async def test_store_file_survives_the_run(
    serve: Serve, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """check --store PATH: a second run (a new process would be the same) reuses the
    records in the SQLite file and sends no robots.txt request; explain too."""
    requests = 0

    async def robots(request: web.Request) -> web.Response:
        nonlocal requests
        requests += 1
        return web.Response(text="User-agent: *\nDisallow: /private\n")

    app = web.Application()
    app.router.add_get("/robots.txt", robots)
    base = await serve(app)
    store = str(tmp_path / "robots.sqlite")
    argv = ["check", "--store", store, f"{base}/public", f"{base}/private/x"]
    assert await asyncio.to_thread(main, argv) == 1
    assert requests == 1
    first = capsys.readouterr().out
    assert await asyncio.to_thread(main, argv) == 1
    assert requests == 1  # answered from the file
    assert sorted(capsys.readouterr().out.splitlines()) == sorted(first.splitlines())
    explain = ["explain", "--store", store, f"{base}/private/y"]
    assert await asyncio.to_thread(main, explain) == 1
    assert requests == 1
    assert "Disallow: /private" in capsys.readouterr().out


def test_lint_reports_content_signal_lines_that_do_not_parse(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Content-Signal part that is not label=yes|no is a warning on its line."""
    body = "User-agent: *\nContent-Signal: search=yes, ai-train=maybe\nDisallow: /x\n"
    main(["lint", "--json", write(tmp_path, body)])
    record = json.loads(capsys.readouterr().out)
    assert {(w["line"], w["code"]) for w in record["warnings"]} == {(2, "content-signal")}
