"""README.md's examples run as written, so they cannot drift from the code.

Every ```python block is executed with ``https://www.example.com`` pointed at a local
server that serves examples/robots.txt; a ``print(...)  # text`` line must print
exactly ``text``. The offline ``robots-async`` command lines are run through main().
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import re
import shlex
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from aiohttp import web

from robots_async.cli import main as cli_main

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```(python|bash)\n(.*?)```", README, re.DOTALL)
PYTHON = [code for lang, code in BLOCKS if lang == "python"]
EXPECTED = re.compile(r"print\(.*\)\s+#\s(.*)$")


@pytest.fixture(scope="module")
def example_site() -> Iterator[str]:
    """A local stand-in for www.example.com, serving examples/robots.txt."""
    robots = (ROOT / "examples" / "robots.txt").read_bytes()
    ready = threading.Event()
    state: dict[str, object] = {}

    async def robots_txt(request: web.Request) -> web.Response:
        # Its Sitemap: line names this local site, so a sitemap walk stays on it.
        local = robots.replace(b"https://www.example.com", str(state["base"]).encode())
        return web.Response(body=local, content_type="text/plain")

    async def sitemap(request: web.Request) -> web.Response:
        # docs/sitemaps.md walks it as DemoBot: /drafts/ is disallowed for DemoBot.
        base = str(state["base"])
        body = (
            '<?xml version="1.0" encoding="UTF-8"?>'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"<url><loc>{base}/about.html</loc><lastmod>2026-01-02</lastmod>"
            "<priority>0.5</priority></url>"
            f"<url><loc>{base}/drafts/plan.html</loc></url>"
            "</urlset>"
        )
        return web.Response(text=body, content_type="application/xml")

    async def page(request: web.Request) -> web.Response:
        return web.Response(text="<html></html>", content_type="text/html")

    async def serve() -> None:
        app = web.Application()
        app.router.add_get("/robots.txt", robots_txt)
        app.router.add_get("/sitemap.xml", sitemap)
        app.router.add_get("/{tail:.*}", page)
        runner = web.AppRunner(app)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        state["base"] = f"http://127.0.0.1:{runner.addresses[0][1]}"
        stop = asyncio.Event()
        state["stop"] = (asyncio.get_running_loop(), stop)
        ready.set()
        await stop.wait()
        await runner.cleanup()

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    assert ready.wait(10)
    yield str(state["base"])
    loop, stop = state["stop"]  # type: ignore[misc]
    loop.call_soon_threadsafe(stop.set)
    thread.join(10)


def test_readme_has_two_setup_commands_first() -> None:
    """The first two code blocks are the install-and-demo and install-and-test commands."""
    first, second = BLOCKS[0], BLOCKS[1]
    assert first[0] == "bash"
    assert "examples/demo.py" in first[1]
    assert second[0] == "bash"
    assert "pytest" in second[1]
    assert (ROOT / ".ci" / "run").read_text().count("python -m pytest") == 1


@pytest.mark.parametrize("code", PYTHON, ids=[f"block{i}" for i in range(len(PYTHON))])
def test_python_block_runs_and_prints_what_it_says(
    code: str, example_site: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each python block runs; its commented print() outputs are exact."""
    monkeypatch.chdir(ROOT)
    source = code.replace("https://www.example.com", example_site)
    expected = [m.group(1).strip() for line in code.splitlines() if (m := EXPECTED.search(line))]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, "README.md", "exec"), {"__name__": "readme"})
    printed = [line.strip() for line in out.getvalue().splitlines()]
    assert printed == expected


def test_offline_command_lines_run(capsys: pytest.CaptureFixture[str]) -> None:
    """The README's offline robots-async lines run with the documented exit codes."""
    commands = [
        shlex.split(line.split("#")[0])[1:]
        for lang, code in BLOCKS
        if lang == "bash"
        for line in code.splitlines()
        if line.startswith("robots-async") and ("--robots" in line or " lint " in line)
    ]
    assert len(commands) == 3
    codes = [cli_main(argv) for argv in commands]
    # check: /cart is disallowed -> 1; explain: /drafts/ disallowed for DemoBot -> 1;
    # lint: the sample file is clean -> 0.
    assert codes == [1, 1, 0]
    assert "Disallow: /drafts/" in capsys.readouterr().out


#: Every ```python block of the documentation pages, as (page, code).
DOC_PYTHON = [
    (str(page.relative_to(ROOT)), code)
    for page in sorted((ROOT / "docs").rglob("*.md"))
    for code in re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.DOTALL)
]


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real redis-server on a free loopback port, for the blocks that share a store."""
    from .contrib.redis_store.conftest import RedisServer, redis_binary

    server = RedisServer(redis_binary(), tmp_path_factory.mktemp("redis") / "docs.log")
    server.start()
    yield server.url
    server.stop()


@pytest.mark.parametrize(
    ("page", "code"), DOC_PYTHON, ids=[f"{page}-{i}" for i, (page, _) in enumerate(DOC_PYTHON)]
)
def test_docs_python_block_runs_and_prints_what_it_says(
    page: str, code: str, example_site: str, request: pytest.FixtureRequest
) -> None:
    """Each python block of docs/ runs as written against a local www.example.com serving
    examples/robots.txt (and a real Redis for the store examples); its commented print()
    outputs are exact."""
    source = code.replace("https://www.example.com", example_site)
    if "redis://localhost:6379/0" in source:
        source = source.replace("redis://localhost:6379/0", request.getfixturevalue("redis_url"))
    expected = [m.group(1).strip() for line in code.splitlines() if (m := EXPECTED.search(line))]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, page, "exec"), {"__name__": "docs"})
    printed = [line.strip() for line in out.getvalue().splitlines()]
    assert printed == expected


def test_guides_use_the_example_crawler() -> None:
    """The guides' outputs are DemoBot's (examples/robots.txt has a DemoBot group), so the
    code names DemoBot too: no MyBot whose results would differ."""
    offenders = [page for page, code in DOC_PYTHON if "MyBot" in code]
    assert not offenders, offenders
    assert any("Disallow: /drafts/ (line 9)" in code for page, code in DOC_PYTHON)
    # A response is released by `async with session.get(...)`, never left to the GC.
    unreleased = [page for page, code in DOC_PYTHON if "await session.get(" in code]
    assert not unreleased, unreleased


def test_cli_guide_commands_run(
    example_site: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """docs/getting-started/cli.md's commands run as written (www.example.com served
    locally, urls.txt made of the guide's own URLs) with their documented exit codes,
    and `check` says why, as the text below the block quotes it."""
    text = (ROOT / "docs" / "getting-started" / "cli.md").read_text(encoding="utf-8")
    block = re.findall(r"```bash\n(.*?)```", text, re.DOTALL)[0]
    lines = [line.split("#")[0] for line in block.splitlines() if line.startswith("robots-async")]
    (tmp_path / "urls.txt").write_text(f"{example_site}/cart\n{example_site}/drafts/a\n")
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    codes = []
    outputs = []
    for line in lines:
        codes.append(
            cli_main(shlex.split(line.replace("https://www.example.com", example_site))[1:])
        )
        outputs.append(capsys.readouterr().out)
    # check: /cart disallowed -> 1; explain: /drafts/ disallowed for DemoBot -> 1; lint: clean
    # -> 0; the two bulk checks hit /cart -> 1; fetch -> 0.
    assert codes == [1, 1, 0, 1, 1, 0], outputs
    assert f"DISALLOWED  {example_site}/cart  (line 3: Disallow: /cart)" in outputs[0]
