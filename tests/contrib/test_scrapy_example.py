"""examples/scrapy_project runs as shipped: ``scrapy crawl site`` against a local site."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..servers import start_http_server

if TYPE_CHECKING:
    from .conftest import Site

PROJECT = Path(__file__).resolve().parents[2] / "examples" / "scrapy_project"


@pytest.mark.slow
def test_example_project_obeys_robots_and_reports_usage(site: Site, tmp_path: Path) -> None:
    """The example follows links, skips the disallowed one and records each page's
    Content-Usage preference."""
    host = site.host()
    host.serve("/robots.txt", "User-agent: *\nDisallow: /private\nContent-Usage: train-ai=n\n")
    host.serve("/", '<a href="/a">a</a> <a href="/private/b">b</a>')
    host.serve("/a", "<p>a</p>", headers={"Content-Usage": "search=y"})
    out = tmp_path / "items.json"
    command = [sys.executable, "-m", "scrapy", "crawl", "site", "-a", f"start={host.url('/')}"]
    command += ["-O", str(out), "-s", "REMOTE_CONTROL_ENABLED=False", "-s", "LOG_LEVEL=WARNING"]
    proc = subprocess.run(
        command, cwd=PROJECT, capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    items = {item["url"]: item for item in json.loads(out.read_text(encoding="utf-8"))}
    assert set(items) == {host.url("/"), host.url("/a")}
    assert items[host.url("/")]["content_usage"] == "train-ai=n"
    assert items[host.url("/a")]["content_usage"] == "train-ai=n, search=y"
    assert host.count("/private/b") == 0


ROOT = PROJECT.parents[1]
SPIDER = PROJECT / "demo_project" / "spiders" / "site.py"


def _documented_commands() -> tuple[list[str], list[str]]:
    """The offline commands of the spider's docstring: the server and the crawl."""
    lines = [line.strip() for line in SPIDER.read_text(encoding="utf-8").splitlines()]
    server = next(line for line in lines if line.startswith("python -m http.server"))
    crawl = next(line for line in lines if line.startswith("cd examples/scrapy_project && "))
    return shlex.split(server.removesuffix("&")), shlex.split(crawl.partition("&& ")[2])


@pytest.mark.slow
def test_documented_offline_crawl_skips_the_disallowed_page(tmp_path: Path) -> None:
    """The docstring's two commands, as written (another port): the server binds
    127.0.0.1, the crawl gets / and /about.html, never /drafts/plan.html (examples/
    robots.txt disallows it for DemoBot), and never its own output file."""
    server, crawl = _documented_commands()
    assert server[server.index("--bind") + 1] == "127.0.0.1"
    # Port 0 (the kernel picks; read from the server's first line), -u to print it.
    server = [sys.executable if word == "python" else word for word in server]
    server[server.index("8000")] = "0"
    server.insert(1, "-u")
    http, bound = start_http_server(server, ROOT, stderr=subprocess.PIPE)
    port = str(bound)
    out = tmp_path / "pages.jsonl"  # not in the project directory
    crawl = [str(out) if w == "pages.jsonl" else w.replace(":8000/", f":{port}/") for w in crawl]
    crawl = [sys.executable, "-m", *crawl, "-s", "REMOTE_CONTROL_ENABLED=False"]
    with http:
        try:
            proc = subprocess.run(
                crawl, cwd=PROJECT, capture_output=True, text=True, timeout=60, check=False
            )
        finally:
            http.terminate()
        served = http.communicate(timeout=10)[1]
    assert proc.returncode == 0, proc.stderr[-3000:]
    base = f"http://127.0.0.1:{port}"
    urls = {json.loads(line)["url"] for line in out.read_text(encoding="utf-8").splitlines()}
    assert urls == {f"{base}/", f"{base}/about.html"}
    assert "'robotsasync/forbidden/rules': 1" in proc.stderr
    assert "GET /robots.txt" in served
    assert "/drafts/" not in served
    assert "pages.jsonl" not in served
