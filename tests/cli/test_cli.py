"""The robots-async command line: exit codes, output formats, and fetching over loopback."""

from __future__ import annotations

import asyncio
import io
import json
import socket
import subprocess
import sys
from collections import Counter
from typing import TYPE_CHECKING

import pytest
from aiohttp import web

from robots_async.cli import main

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

    from ..conftest import Serve

ROBOTS = """\
User-agent: *
Disallow: /private/
Allow: /private/ok

User-agent: FooBot
Disallow: /
"""
# Line 1: rule before any user-agent; line 3: a typo; line 4: an unknown key.
MESSY = """\
Disallow: /early
User-agent: *
Dissallow: /typo
Noindex: /x
Disallow: /private/
"""


@pytest.fixture
def robots_file(tmp_path: Path) -> str:
    """A robots.txt on disk disallowing /private/ (but /private/ok) for everyone."""
    path = tmp_path / "robots.txt"
    path.write_text(ROBOTS)
    return str(path)


def robots_app(hits: Counter[str], body: str = ROBOTS, status: int = 200) -> web.Application:
    """An app answering /robots.txt with ``body`` and ``status``, counting requests."""

    async def robots(request: web.Request) -> web.Response:
        hits[request.host] += 1
        return web.Response(text=body, status=status)

    app = web.Application()
    app.router.add_get("/robots.txt", robots)
    return app


def redirect_app() -> web.Application:
    """/robots.txt -> 301 /one -> 302 /two -> 200 ROBOTS."""

    def to(location: str, status: int) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def handler(request: web.Request) -> web.Response:
            return web.Response(status=status, headers={"Location": location})

        return handler

    async def final(request: web.Request) -> web.Response:
        return web.Response(text=ROBOTS)

    app = web.Application()
    app.router.add_get("/robots.txt", to("/one", 301))
    app.router.add_get("/one", to("/two", 302))
    app.router.add_get("/two", final)
    return app


def run_cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m robots_async`` in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "robots_async", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def json_lines(text: str) -> list[dict[str, object]]:
    """Parse one JSON object per non-empty line."""
    return [json.loads(line) for line in text.splitlines() if line]


# --------------------------------------------------------------------------- check, local


def test_check_allowed_exits_0(robots_file: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Only allowed URLs: exit 0 and one "allowed" line per URL."""
    code = main(["check", "--robots", robots_file, "https://e.com/", "https://e.com/private/ok"])
    out = capsys.readouterr().out
    assert code == 0
    assert out.splitlines() == [
        "allowed  https://e.com/  (no rule matches)",
        "allowed  https://e.com/private/ok  (line 3: Allow: /private/ok)",
    ]


def test_check_disallowed_exits_1(robots_file: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A disallowed URL: exit 1 and a DISALLOWED line."""
    code = main(["check", "--robots", robots_file, "https://e.com/private/x"])
    assert code == 1
    assert capsys.readouterr().out == (
        "DISALLOWED  https://e.com/private/x  (line 2: Disallow: /private/)\n"
    )


def test_check_mixed_keeps_order(robots_file: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Mixed verdicts: exit 1, lines in argument order; bare paths work with --robots."""
    code = main(["check", "--robots", robots_file, "/a", "/private/b", "https://e.com/c"])
    assert code == 1
    assert capsys.readouterr().out.splitlines() == [
        "allowed  /a  (no rule matches)",
        "DISALLOWED  /private/b  (line 2: Disallow: /private/)",
        "allowed  https://e.com/c  (no rule matches)",
    ]


def test_check_json_local(robots_file: str, capsys: pytest.CaptureFixture[str]) -> None:
    """--json: one object per URL with rule and line; no provenance for a local file."""
    main(["check", "--json", "--robots", robots_file, "https://e.com/private/x", "/free"])
    first, second = json_lines(capsys.readouterr().out)
    assert first == {
        "url": "https://e.com/private/x",
        "allowed": False,
        "reason": "disallow",
        "rule": "/private/",
        "line": 2,
        "why": "line 2: Disallow: /private/",
        "origin": None,
        "source": None,
        "status": None,
        "error": None,
    }
    assert second["allowed"] is True
    assert second["reason"] == "no-match"
    assert second["rule"] is None


def test_check_agent_selects_group(robots_file: str, capsys: pytest.CaptureFixture[str]) -> None:
    """--agent (also after the command) picks the FooBot group, which disallows all."""
    assert main(["check", "--robots", robots_file, "/a"]) == 0
    assert main(["--agent", "FooBot/2.0", "check", "--robots", robots_file, "/a"]) == 1
    assert main(["check", "--agent", "FooBot/2.0", "--robots", robots_file, "/a"]) == 1
    assert capsys.readouterr().out.count("DISALLOWED  /a  (line 6: Disallow: /)") == 2


def test_check_policy_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--policy rfc9309 ignores Google's accepted typo "Dissallow"."""
    path = tmp_path / "robots.txt"
    path.write_text("User-agent: *\nDissallow: /x\n")
    assert main(["check", "--robots", str(path), "/x"]) == 1
    assert main(["--policy", "rfc9309", "check", "--robots", str(path), "/x"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "DISALLOWED  /x  (line 2: Disallow: /x)",
        "allowed  /x  (no rule matches)",
    ]


def test_check_robots_from_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--robots - reads the rules from stdin."""
    stdin = io.TextIOWrapper(io.BytesIO(b"User-agent: *\nDisallow: /\n"))
    monkeypatch.setattr(sys, "stdin", stdin)
    assert main(["check", "--robots", "-", "https://e.com/x"]) == 1
    assert "DISALLOWED  https://e.com/x" in capsys.readouterr().out


def test_check_input_skips_blanks_and_comments(
    robots_file: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--input adds URLs after the positional ones; blank and # lines are skipped."""
    urls = tmp_path / "urls.txt"
    urls.write_text("# header\n\nhttps://e.com/private/1\n   \nhttps://e.com/2\n")
    code = main(["check", "--robots", robots_file, "--input", str(urls), "https://e.com/0"])
    assert code == 1
    assert capsys.readouterr().out.splitlines() == [
        "allowed  https://e.com/0  (no rule matches)",
        "DISALLOWED  https://e.com/private/1  (line 2: Disallow: /private/)",
        "allowed  https://e.com/2  (no rule matches)",
    ]


# --------------------------------------------------------------------------- usage errors


def test_check_without_url_exits_2(robots_file: str, capsys: pytest.CaptureFixture[str]) -> None:
    """No URL at all is a usage error."""
    assert main(["check", "--robots", robots_file]) == 2
    assert "no URL given" in capsys.readouterr().err


def test_invalid_url_exits_2(robots_file: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A non-http(s) URL is reported with its position; the others are still checked."""
    assert main(["check", "--robots", robots_file, "https://e.com/", "ftp://e.com/x"]) == 2
    captured = capsys.readouterr()
    assert captured.err == ("robots-async: argument 2: unsupported scheme 'ftp': 'ftp://e.com/x'\n")
    assert captured.out == "allowed  https://e.com/  (no rule matches)\n"


def test_relative_url_needs_robots_file(capsys: pytest.CaptureFixture[str]) -> None:
    """Without --robots a bare path has no origin to fetch: usage error."""
    assert main(["check", "/private/x"]) == 2
    assert "relative URL" in capsys.readouterr().err


def test_missing_robots_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An unreadable --robots file is a usage error naming the file."""
    missing = str(tmp_path / "nope.txt")
    assert main(["check", "--robots", missing, "https://e.com/"]) == 2
    assert f"cannot read {missing}" in capsys.readouterr().err


def test_missing_input_file_exits_2(robots_file: str, capsys: pytest.CaptureFixture[str]) -> None:
    """An unreadable --input file is a usage error."""
    assert main(["check", "--robots", robots_file, "--input", "/nonexistent/urls"]) == 2
    assert "cannot read /nonexistent/urls" in capsys.readouterr().err


def test_agent_without_token_exits_2(robots_file: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A User-Agent without a product token is a usage error."""
    assert main(["--agent", "/1.0 (x)", "check", "--robots", robots_file, "/a"]) == 2
    assert "no product token" in capsys.readouterr().err


def test_bad_timeout_and_missing_command_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    """argparse errors (no command, non-positive timeout) return 2 instead of exiting."""
    assert main([]) == 2
    assert main(["--timeout", "0", "fetch", "https://e.com/"]) == 2
    assert "must be a finite number of seconds greater than 0" in capsys.readouterr().err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    """--version prints the program name and returns 0."""
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("robots-async ")


# --------------------------------------------------------------------------- check, network


async def test_check_many_urls_fetch_each_robots_once(
    serve: Serve, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """200 URLs over two origins, --ordered: each robots.txt requested once, input order."""
    hits: Counter[str] = Counter()
    bases = [await serve(robots_app(hits)), await serve(robots_app(hits))]
    urls = [f"{bases[i % 2]}/{'private/' if i % 10 == 0 else ''}page{i}" for i in range(200)]
    (tmp_path / "urls.txt").write_text("\n".join(urls) + "\n")
    args = ["check", "--ordered", "--input", str(tmp_path / "urls.txt")]
    code = await asyncio.to_thread(main, args)
    lines = capsys.readouterr().out.splitlines()
    assert code == 1
    assert [line.split()[1] for line in lines] == urls
    assert sum(line.startswith("DISALLOWED") for line in lines) == 20
    assert sorted(hits.values()) == [1, 1]


async def test_check_json_reports_provenance(
    serve: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    """Fetched rules: JSON names the origin, source "fetched" and status 200."""
    base = await serve(robots_app(Counter()))
    code = await asyncio.to_thread(main, ["check", "--json", f"{base}/private/x"])
    (record,) = json_lines(capsys.readouterr().out)
    assert code == 1
    assert record["origin"] == base
    assert record["source"] == "fetched"
    assert record["status"] == 200
    assert record["line"] == 2


async def test_check_fetch_policy_decides_on_503(
    serve: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    """503: rfc9309 disallows everything; legacy-allow-on-error allows everything."""
    base = await serve(robots_app(Counter(), body="", status=503))
    assert await asyncio.to_thread(main, ["check", f"{base}/a"]) == 1
    policy = ["--fetch-policy", "legacy-allow-on-error"]
    assert await asyncio.to_thread(main, [*policy, "check", f"{base}/a"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"DISALLOWED  {base}/a  (robots.txt unreachable (HTTP 503): everything disallowed)",
        f"allowed  {base}/a  (robots.txt unreachable (HTTP 503): everything allowed)",
    ]


async def test_check_progress_bar_on_tty(
    serve: Serve,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """With --input and a terminal on stderr, tqdm draws a bar reaching the total."""
    base = await serve(robots_app(Counter()))
    (tmp_path / "urls.txt").write_text("".join(f"{base}/p{i}\n" for i in range(30)))
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    code = await asyncio.to_thread(main, ["check", "--input", str(tmp_path / "urls.txt")])
    assert code == 0
    assert "30/30" in capsys.readouterr().err


async def test_check_without_tqdm_has_no_bar(
    serve: Serve,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Without tqdm installed, --input on a terminal still works and says why no bar."""
    base = await serve(robots_app(Counter()))
    (tmp_path / "urls.txt").write_text(f"{base}/a\n{base}/private/b\n")
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.setitem(sys.modules, "tqdm", None)
    code = await asyncio.to_thread(main, ["check", "--input", str(tmp_path / "urls.txt")])
    captured = capsys.readouterr()
    assert code == 1
    assert captured.err == (
        "robots-async: no progress bar: tqdm is not installed (pip install 'robots-async[cli]')\n"
    )
    assert len(captured.out.splitlines()) == 2


# --------------------------------------------------------------------------- explain


def test_explain_prints_deciding_rule(robots_file: str, capsys: pytest.CaptureFixture[str]) -> None:
    """explain names the rule with its line number, the group's agents and the reason."""
    code = main(["explain", "--robots", robots_file, "https://e.com/private/x"])
    out = capsys.readouterr().out
    assert code == 1
    assert "line 2: Disallow: /private/" in out
    assert "user agents: *" in out
    assert "DISALLOWED" in out
    assert "disallow: the deciding rule disallows the URL" in out


def test_explain_allowed_without_rule(robots_file: str, capsys: pytest.CaptureFixture[str]) -> None:
    """An URL no rule matches: exit 0, rule "none", reason no-match."""
    code = main(["explain", "--robots", robots_file, "https://e.com/open"])
    out = capsys.readouterr().out
    assert code == 0
    assert "rule:        none" in out
    assert "no-match" in out


def test_explain_json_local(robots_file: str, capsys: pytest.CaptureFixture[str]) -> None:
    """explain --json carries the verdict, agents and token; no robots URL offline."""
    main(["explain", "--json", "--robots", robots_file, "https://e.com/private/ok"])
    record = json.loads(capsys.readouterr().out)
    assert record["allowed"] is True
    assert record["reason"] == "allow"
    assert (record["rule"], record["line"]) == ("/private/ok", 3)
    assert record["agents"] == ["*"]
    assert record["token"] == "robots-async"
    assert record["robots_url"] is None


async def test_explain_fetched(serve: Serve, capsys: pytest.CaptureFixture[str]) -> None:
    """Fetched rules: explain shows the robots.txt URL, status, source and cache flag."""
    base = await serve(robots_app(Counter()))
    code = await asyncio.to_thread(main, ["explain", f"{base}/private/x"])
    out = capsys.readouterr().out
    assert code == 1
    assert f"robots.txt:  {base}/robots.txt" in out
    assert "status:      200" in out
    assert "source:      fetched" in out
    assert "from cache:  no" in out
    assert "line 2: Disallow: /private/" in out


# --------------------------------------------------------------------------- lint


def test_lint_reports_warnings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Unknown key, typo and a rule before any user-agent: FILE:LINE lines, exit 1."""
    path = tmp_path / "robots.txt"
    path.write_text(MESSY)
    assert main(["lint", str(path)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == [
        f"{path}:1: rule-outside-group: Disallow before any user-agent line ignored",
        f"{path}:3: typo: misspelt directive 'Dissallow' accepted",
        f"{path}:4: unknown-key: unknown directive 'Noindex' ignored",
    ]
    assert lines[3] == f"{path}: 1 group, 2 rules, 0 sitemaps, not truncated; 3 warnings"


def test_lint_clean_file_exits_0(robots_file: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A clean file: only the summary, exit 0."""
    assert main(["lint", robots_file]) == 0
    assert capsys.readouterr().out == (
        f"{robots_file}: 2 groups, 3 rules, 0 sitemaps, not truncated; 0 warnings\n"
    )


def test_lint_json_from_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """lint - --json: warnings as objects, counts, and the file named <stdin>."""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(MESSY.encode())))
    assert main(["lint", "--json", "-"]) == 1
    record = json.loads(capsys.readouterr().out)
    assert record["file"] == "<stdin>"
    assert [(w["line"], w["code"]) for w in record["warnings"]] == [
        (1, "rule-outside-group"),
        (3, "typo"),
        (4, "unknown-key"),
    ]
    assert (record["groups"], record["rules"], record["truncated"]) == (1, 2, False)


def test_lint_missing_file_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    """lint of a file that does not exist is a usage error."""
    assert main(["lint", "/nonexistent/robots.txt"]) == 2
    assert "cannot read /nonexistent/robots.txt" in capsys.readouterr().err


# --------------------------------------------------------------------------- fetch


async def test_fetch_ok(serve: Serve, capsys: pytest.CaptureFixture[str]) -> None:
    """200: exit 0, category ok, source fetched, the file's groups and rules counted."""
    base = await serve(robots_app(Counter()))
    code = await asyncio.to_thread(main, ["fetch", "--json", f"{base}/some/page?q=1"])
    record = json.loads(capsys.readouterr().out)
    assert code == 0
    assert record["robots_url"] == f"{base}/robots.txt"
    assert (record["status"], record["category"], record["source"]) == (200, "ok", "fetched")
    assert (record["groups"], record["rules"], record["sitemaps"]) == (2, 3, 0)
    assert record["bytes_read"] == len(ROBOTS)
    assert record["ttl"] == 86_400


async def test_fetch_503_is_unreachable(serve: Serve, capsys: pytest.CaptureFixture[str]) -> None:
    """503: exit 1, category unreachable, everything disallowed for a short TTL."""
    base = await serve(robots_app(Counter(), body="down", status=503))
    code = await asyncio.to_thread(main, ["fetch", base])
    out = capsys.readouterr().out
    assert code == 1
    assert "status:         503" in out
    assert "category:       unreachable" in out
    assert "rules in force: disallow-all" in out
    assert "ttl:            300 s" in out


async def test_fetch_404_is_unavailable(serve: Serve, capsys: pytest.CaptureFixture[str]) -> None:
    """404 is the normal "no robots.txt": exit 0, category and source unavailable."""
    base = await serve(robots_app(Counter(), body="", status=404))
    assert await asyncio.to_thread(main, ["fetch", "--json", base]) == 0
    record = json.loads(capsys.readouterr().out)
    assert (record["category"], record["source"]) == ("unavailable", "unavailable")
    assert record["rules_in_force"] == "allow-all"


async def test_fetch_redirect_chain(serve: Serve, capsys: pytest.CaptureFixture[str]) -> None:
    """Two redirects: hops 2, the final URL reported, the body parsed."""
    base = await serve(redirect_app())
    code = await asyncio.to_thread(main, ["fetch", base])
    out = capsys.readouterr().out
    assert code == 0
    assert "hops:           2" in out
    assert f"final URL:      {base}/two" in out
    assert "groups:         2" in out


def test_fetch_connection_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """Nothing listening: exit 1, error kind connect, no status."""
    with socket.socket() as sock:  # bound, not listening: refused, and no one else's
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        code = main(["--timeout", "5", "fetch", "--json", f"http://127.0.0.1:{port}/"])
    record = json.loads(capsys.readouterr().out)
    assert code == 1
    assert (record["status"], record["error"], record["category"]) == (
        None,
        "connect",
        "unreachable",
    )


def test_fetch_invalid_url_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    """fetch of a relative URL is a usage error naming it."""
    assert main(["fetch", "example.com"]) == 2
    assert "'example.com'" in capsys.readouterr().err


# --------------------------------------------------------------------------- python -m


def test_module_help_exits_0() -> None:
    """python -m robots_async --help lists the commands and exits 0."""
    result = run_cli("--help")
    assert result.returncode == 0
    for command in ("check", "explain", "lint", "fetch"):
        assert command in result.stdout


def test_module_check_exit_codes(robots_file: str) -> None:
    """python -m robots_async check: exit 1 when disallowed, 0 when allowed."""
    disallowed = run_cli("check", "--robots", robots_file, "https://e.com/private/x")
    allowed = run_cli("check", "--robots", robots_file, "https://e.com/x")
    assert (disallowed.returncode, allowed.returncode) == (1, 0)
    assert (
        disallowed.stdout == "DISALLOWED  https://e.com/private/x  (line 2: Disallow: /private/)\n"
    )


def test_module_usage_error_has_no_traceback() -> None:
    """A bad User-Agent exits 2 with a one-line message, not a traceback."""
    result = run_cli("--agent", "/1.0", "explain", "--robots", "-", "/x", stdin="")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("robots-async: error: no product token")


def test_module_check_input_from_stdin(robots_file: str) -> None:
    """--input - reads URLs from stdin in a real process."""
    result = run_cli("check", "--robots", robots_file, "--input", "-", stdin="/a\n/private/b\n")
    assert result.returncode == 1
    assert [line.split("  (")[0] for line in result.stdout.splitlines()] == [
        "allowed  /a",
        "DISALLOWED  /private/b",
    ]
