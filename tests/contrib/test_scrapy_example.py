"""examples/scrapy_project runs as shipped: ``scrapy crawl site`` against a local site."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

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
