"""``robots-async sitemaps``: URLs streamed as text or JSON lines, exit status."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import TYPE_CHECKING

from robots_async.cli import main

from ..sitemap_site import gz, index, site, urlset

if TYPE_CHECKING:
    import pytest

    from ..conftest import Serve

XML = "application/xml"


async def test_sitemaps_text_and_json(serve: Serve, capsys: pytest.CaptureFixture[str]) -> None:
    hits: Counter[str] = Counter()
    pages: dict[str, tuple[bytes, str]] = {}
    robots = "User-agent: *\nDisallow: /private\nSitemap: /index.xml\n"
    base = await serve(site(pages, hits, robots))
    pages["/index.xml"] = (index([f"{base}/a.xml.gz"]), XML)
    pages["/a.xml.gz"] = (gz(urlset([f"{base}/x", f"{base}/private/y"])), "application/gzip")

    code = await asyncio.to_thread(main, ["sitemaps", base])
    captured = capsys.readouterr()
    assert code == 0
    assert captured.out == f"{base}/x\n"
    assert captured.err == ""  # stderr is no terminal here: no progress line

    code = await asyncio.to_thread(main, ["sitemaps", "--json", "--all", base])
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0
    assert [(r["loc"], r["allowed"], r["sitemap"]) for r in records] == [
        (f"{base}/x", True, f"{base}/a.xml.gz"),
        (f"{base}/private/y", False, f"{base}/a.xml.gz"),
    ]
    assert records[0]["lastmod"].startswith("2024-05-01")


async def test_a_line_break_inside_a_loc_prints_no_unchecked_line(
    serve: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    """A loc with a line break inside (``&#10;`` in XML, a bare CR in a text sitemap)
    is one URL, judged as the client sends it (breaks removed); printed as it was
    written, its second half read as a URL of its own that nothing checked."""
    hits: Counter[str] = Counter()
    pages: dict[str, tuple[bytes, str]] = {}
    robots = "User-agent: *\nDisallow: /private\nSitemap: /s.xml\nSitemap: /s.txt\n"
    base = await serve(site(pages, hits, robots))
    pages["/s.xml"] = (urlset([f"{base}/a&#10;{base}/private/y", f"{base}/t&#9;u"]), XML)
    pages["/s.txt"] = (f"{base}/b\r{base}/private/z\n".encode(), "text/plain")

    code = await asyncio.to_thread(main, ["sitemaps", base])
    lines = capsys.readouterr().out.splitlines()  # as a Python reader splits them
    assert code == 0
    assert lines == [f"{base}/a{base}/private/y", f"{base}/tu", f"{base}/b{base}/private/z"]


async def test_sitemaps_failure_is_negative(
    serve: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    hits: Counter[str] = Counter()
    base = await serve(site({}, hits, "Sitemap: /missing.xml\n"))
    code = await asyncio.to_thread(main, ["sitemaps", base])
    assert code == 1
    assert capsys.readouterr().out == ""


def test_sitemaps_bad_limit_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sitemaps", "--max-sitemaps", "0", "http://127.0.0.1:9/"]) == 2
    assert "max_sitemaps" in capsys.readouterr().err


async def test_progress_line_only_on_a_terminal(serve: Serve) -> None:
    """With stderr on a terminal (a pty) a progress line is drawn there; stdout
    carries the URLs only."""
    import os
    import pty
    import sys

    hits: Counter[str] = Counter()
    pages: dict[str, tuple[bytes, str]] = {}
    base = await serve(site(pages, hits, "Sitemap: /s.xml\n"))
    pages["/s.xml"] = (urlset([f"{base}/{i}" for i in range(3)]), XML)
    leader, follower = pty.openpty()
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "robots_async", "sitemaps", base,
            stdout=asyncio.subprocess.PIPE, stderr=follower,
        )  # fmt: skip
        out, _ = await asyncio.wait_for(proc.communicate(), 30)
        os.set_blocking(leader, False)
        err = os.read(leader, 65536).decode()
    finally:
        os.close(leader)
        os.close(follower)
    assert proc.returncode == 0
    assert out.decode().split() == [f"{base}/{i}" for i in range(3)]
    assert "3 URLs from 1 sitemaps" in err
