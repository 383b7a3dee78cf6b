"""Run Scrapy the way users do: the ``scrapy runspider`` command, with ``-s`` settings."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

from .conftest import BASE_SETTINGS

if TYPE_CHECKING:
    from pathlib import Path

SPIDER = """
import scrapy


class Probe(scrapy.Spider):
    name = "probe"

    def __init__(self, url="", **kwargs):
        super().__init__(**kwargs)
        self.start_urls = url.split()

    def parse(self, response):
        yield {"url": response.url}
"""


def runspider(tmp_path: Path, url: str, *settings: str) -> subprocess.CompletedProcess[str]:
    """``scrapy runspider`` (the command users run) with ``-s`` settings; ``url`` may
    hold several start URLs separated by spaces."""
    spider = tmp_path / "probe.py"
    spider.write_text(SPIDER, encoding="utf-8")
    options = [
        "ROBOTSTXT_OBEY=True",
        "TELNETCONSOLE_ENABLED=False",
        "REMOTE_CONTROL_ENABLED=False",
        "LOG_LEVEL=INFO",
        *settings,
    ]
    middlewares = json.dumps(BASE_SETTINGS["DOWNLOADER_MIDDLEWARES"])
    command = [sys.executable, "-m", "scrapy", "runspider", str(spider), "-a", f"url={url}"]
    command += ["-s", f"DOWNLOADER_MIDDLEWARES={middlewares}"]
    for option in options:
        command += ["-s", option]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path
    )
