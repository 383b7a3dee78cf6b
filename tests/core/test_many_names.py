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
    monkeypatch.setattr(selection, "_NAMES_BEFORE_INDEX", 0 if scan_groups == 0 else 8)
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
    assert robots._agent_text == b"gptbot\n*"
    assert robots.allowed("https://example.com/y", "GPTBot") is False
    assert robots.allowed("https://example.com/y", "CCBot") is True


def test_later_names_are_kept_as_asked_only() -> None:
    """Five names keep five dict entries beside the first (no lower-cased copies, no
    entries by group indices), and names selecting the same groups share a bucket."""
    robots = ra.parse(b"User-agent: GPTBot\nDisallow: /\n\nUser-agent: *\nDisallow: /x\n")
    for name in ("GPTBot", "ClaudeBot", "CCBot", "gptbot", "Bingbot"):
        robots.allowed("https://example.com/x", robots_token=name)
    assert robots._buckets is not None
    # "*": the bucket of every name no agent line contains.
    assert list(robots._buckets) == ["*", "ClaudeBot", "CCBot", "gptbot", "Bingbot"]
    assert robots._buckets["gptbot"] is robots._first[1]
    assert robots._buckets["CCBot"] is robots._buckets["ClaudeBot"] is robots._buckets["Bingbot"]
    assert robots._buckets["*"] is robots._buckets["CCBot"]


@pytest.mark.parametrize("policy", ["google", "google-reference", "rfc9309", "first-match"])
def test_names_absent_from_the_agent_lines(policy: str) -> None:
    """A later name no agent line contains selects the ``*`` groups; a line that only
    lower-cases to the name in Unicode (the Kelvin sign is "k") still selects it."""
    body = (
        "User-agent: GPTBot\nDisallow: /gpt\n\n"
        "User-agent: \u212abot\nDisallow: /kelvin\n\n"
        "User-agent: * crawler\nDisallow: /star\n\n"
        "User-agent: Googlebot-Image\nDisallow: /image\n"
    ).encode()
    for names in (("GPTBot", "kbot", "CCBot", "googlebot"), ("kbot", "CCBot", "googlebot")):
        robots = ra.parse(body, policy=policy)
        mixed = {
            (name, path): robots.allowed(f"https://example.com{path}", robots_token=name)
            for name in names
            for path in ("/gpt", "/kelvin", "/star", "/image")
        }
        for (name, path), verdict in mixed.items():
            alone = ra.parse(body, policy=policy)
            assert alone.allowed(f"https://example.com{path}", robots_token=name) == verdict
    robots = ra.parse(body)
    robots.allowed("https://example.com/", robots_token="GPTBot")
    assert robots.allowed("https://example.com/kelvin", robots_token="kbot") is False
    assert robots.allowed("https://example.com/star", robots_token="CCBot") is False
    # Found in "googlebot-image" (so scanned), whose token is not "googlebot".
    assert robots.allowed("https://example.com/image", robots_token="googlebot") is True


def test_a_non_ascii_agent_line_keeps_the_one_search_for_absent_names() -> None:
    """One agent line outside ASCII (www.koreanair.com has one among 477 groups) made
    every later name scan every agent line, 160-200 us a name there: an absent name
    now takes the ``*`` bucket by one search, as in an ASCII file, and the line is
    searched in its Unicode lower case too."""
    body = (
        "User-agent: GPTBot\nDisallow: /gpt\n\n"
        "User-agent: B\u00dcCHERbot\nDisallow: /b\n\n"
        "User-agent: *\nDisallow: /star\n"
    ).encode()
    robots = ra.parse(body)
    assert robots.allowed("https://example.com/gpt", robots_token="GPTBot") is False
    assert robots.allowed("https://example.com/star", robots_token="ClaudeBot") is False
    assert robots.allowed("https://example.com/gpt", robots_token="CCBot") is True
    assert robots._agent_text == "gptbot\nb\u00dccherbot\n*\nb\u00fccherbot".encode()
    assert robots._buckets is not None
    assert list(robots._buckets) == ["*", "ClaudeBot", "CCBot"]
    assert robots._buckets["CCBot"] is robots._buckets["*"]
    assert robots.allowed("https://example.com/b", robots_token="b\u00fccherbot") is False


def test_many_groups_build_the_index_only_for_many_names() -> None:
    """A file of many groups is scanned for its first later names (two scans cost
    less than the index); past _NAMES_BEFORE_INDEX names it is indexed."""
    body = "".join(f"User-agent: bot{i}\nDisallow: /b{i}\n\n" for i in range(40)).encode()
    robots = ra.parse(body + b"User-agent: *\nDisallow: /all\n")
    for i in range(selection._NAMES_BEFORE_INDEX + 1):  # the first, then 8 cached
        assert robots.allowed(f"https://example.com/b{i}", robots_token=f"bot{i}") is False
    assert robots._index is None
    assert robots.allowed("https://example.com/b30", robots_token="bot30") is False
    assert robots._index is not None
    assert robots.allowed("https://example.com/all", robots_token="bot31") is True
    assert robots.allowed("https://example.com/all", robots_token="other") is False
