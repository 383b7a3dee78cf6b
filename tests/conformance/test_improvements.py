"""Every difference between ``google`` and Google's reference on real files is documented.

For each vendored real robots.txt (tests/data/corpus), a set of agents, among them the
real crawlers whose names the reference mangles (``360Spider``, ``MJ12bot``,
``archive.org_bot``, ``008``), and ~30 URLs per file: wherever ``google`` and
``google-reference`` disagree, the difference must fall in a documented improvement
class (tests/conformance/test_google_cases.py defines them).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest

import robots_async as ra
from tests.conformance.test_google_cases import IMPROVEMENTS, improvement_class
from tests.core.test_matcher import CORPUS_FILES, corpus_urls

if TYPE_CHECKING:
    from pathlib import Path

AGENTS = (
    "Googlebot",
    "bingbot",
    "360Spider",
    "MJ12bot",
    "archive.org_bot",
    "008",
    "Mail.RU_Bot",
    "200PleaseBot",
    "*",
    "",
)
_NAMED = re.compile(r"^[ \t]*user-agent[ \t]*:[ \t]*([^\s#]+)", re.IGNORECASE | re.MULTILINE)


def _differences(path: Path) -> list[tuple[str, str, str | None]]:
    body = path.read_bytes()
    text = body.decode("utf-8", "replace")
    agents = dict.fromkeys((*AGENTS, *_NAMED.findall(text)[:20]))
    google = ra.parse(body, policy="google", max_bytes=None)
    reference = ra.parse(body, policy="google-reference", max_bytes=None)
    found = []
    for agent in agents:
        for url in corpus_urls(text, path.name):
            ours = google.explain(url, robots_token=agent)
            theirs = reference.explain(url, robots_token=agent)
            if (ours.allowed, ours.line) != (theirs.allowed, theirs.line):
                found.append((agent, url, improvement_class(body, agent, url)))
    return found


@pytest.mark.parametrize("path", CORPUS_FILES, ids=[p.name for p in CORPUS_FILES])
def test_corpus_differences_are_documented(path: Path) -> None:
    """On real files, google differs from the reference only in documented classes."""
    unexplained = [d for d in _differences(path) if d[2] not in IMPROVEMENTS]
    assert unexplained == []


def test_real_crawler_names_get_their_own_group() -> None:
    """ballotpedia.org names 360Spider, 200PleaseBot and Mail.RU_Bot: each gets its group.

    The reference cuts "360Spider" and "200PleaseBot" to "" (so no crawler can be
    named by them) and "Mail.Ru"/"Mail.RU_Bot" both to "Mail" (merged).
    """
    path = next(p for p in CORPUS_FILES if p.name == "ballotpedia.org")
    robots = ra.parse(path.read_bytes())
    for agent in ("360Spider", "200PleaseBot", "Mail.RU_Bot", "archive.org_bot"):
        groups = robots.groups_for(robots_token=agent)
        assert [g.agents for g in groups] == [(agent,)], agent
        assert not robots.allowed("https://ballotpedia.org/Main_Page", robots_token=agent)
    star = robots.groups_for(robots_token="*")
    assert robots.groups_for(robots_token="") == star
    assert robots.groups_for(user_agent="*") == star
    assert robots.allowed("https://ballotpedia.org/Main_Page", user_agent="*")


def test_corpus_has_classified_differences() -> None:
    """The exact-name class really occurs on the vendored corpus (the test can fail)."""
    kinds = {d[2] for path in CORPUS_FILES for d in _differences(path)}
    assert {"exact-name", "robots-txt"} <= kinds
