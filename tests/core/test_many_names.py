"""Many crawler names per file (issue 32, item 2): the same verdicts as one name.

A file asked by five names in turn answers each exactly as a fresh parse asked by
that name alone (the single-name path, unchanged), for files that scan their agent
lines and files that build the agent index.
"""

from __future__ import annotations

import random

import pytest

import robots_async as ra
from robots_async.core import selection
from tests.helpers import CORPUS

NAMES = ("GPTBot", "ClaudeBot/1.0", "CCBot", "Googlebot", "bingbot", "googlebot", "*", "")
CORPUS_FILES = sorted(CORPUS.iterdir())


def _urls(body: bytes, rng: random.Random) -> list[str]:
    paths = ["/", "/robots.txt", "/search?q=x", "/wp-admin/x", "/a/b.html", "/%E4/x"]
    for line in body.decode("utf-8", "replace").splitlines():
        key, _, value = line.partition(":")
        value = value.split("#", 1)[0].strip()
        if key.strip().lower() in ("allow", "disallow") and value.startswith("/"):
            path = value.replace("*", "x").rstrip("$")
            paths += [path, path + "more?id=1"]
    return [f"https://example.com{rng.choice(paths)}" for _ in range(30)]


def _verdicts_alone(body: bytes, urls: list[str]) -> dict[tuple[str, str], bool]:
    alone: dict[tuple[str, str], bool] = {}
    for name in NAMES:
        robots = ra.parse(body)
        for url in urls:
            alone[name, url] = robots.allowed(url, robots_token=name)
    return alone


def _verdicts_mixed(body: bytes, urls: list[str]) -> dict[tuple[str, str], bool]:
    robots = ra.parse(body)
    mixed: dict[tuple[str, str], bool] = {}
    for _ in range(2):  # the second pass answers from the cached rules of each name
        for url in urls:
            for name in NAMES:
                mixed[name, url] = robots.allowed(url, robots_token=name)
    return mixed


@pytest.mark.parametrize("scan_groups", [0, 16, 10_000], ids=["index", "default", "scan"])
def test_five_names_answer_as_each_alone(monkeypatch: pytest.MonkeyPatch, scan_groups: int) -> None:
    """Every corpus file, eight names interleaved: each verdict as the name alone."""
    monkeypatch.setattr(selection, "_SCAN_GROUPS", scan_groups)
    rng = random.Random(32)
    checked = 0
    for path in CORPUS_FILES:
        body = path.read_bytes()
        urls = _urls(body, rng)
        alone = _verdicts_alone(body, urls)
        assert _verdicts_mixed(body, urls) == alone, path.name
        checked += len(alone)
    assert checked >= len(CORPUS_FILES) * 30 * 2


def test_few_groups_keep_no_agent_index() -> None:
    """A file of a few groups asked by several names builds no index (memory)."""
    robots = ra.parse(b"User-agent: GPTBot\nDisallow: /\n\nUser-agent: *\nDisallow: /x\n")
    for name in NAMES:
        robots.allowed("https://example.com/x", robots_token=name)
    assert robots._index is None
    assert robots.allowed("https://example.com/y", "GPTBot") is False
    assert robots.allowed("https://example.com/y", "CCBot") is True
