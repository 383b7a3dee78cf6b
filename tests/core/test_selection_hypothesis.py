"""Agent selection against a fresh parse: every name in a mixed sequence selects
the groups it selects alone (the one-search shortcut for names no agent line
contains included), for agent lines and names outside ASCII, through allowed()
(RobotsTxt._bucket) and crawl_delay() (AgentSelection._indices)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import robots_async as ra
from robots_async.core import robots as robots_module
from robots_async.core import selection

POLICIES = ("google", "google-reference", "rfc9309", "first-match")
# Pieces that lower-case oddly (Kelvin sign, dotted I, sigma), bytes that are not
# UTF-8, separators that end a name or a line, and the ASCII they resemble.
_LINE_PIECES = [
    b"k",
    b"K",
    b"i",
    b"I",
    b"bot",
    b"-",
    b"_",
    b"*",
    b" ",
    b"/",
    b"\t",
    b"\r",
    "\u212a".encode(),
    "\u0130".encode(),
    "\u03a3".encode(),
    "\u03c2".encode(),
    b"\xff",
    b"\xe2\x84",
    b"\xc4",
    "\ufffd".encode(),
    "\u00df".encode(),
    # Whitespace to str.strip() and the name's regex but not to bytes.strip().
    b"\x0b",
    b"\x1c",
    "\u0085".encode(),
    "\u00a0".encode(),
    "\u2028".encode(),
]
_NAME_PIECES = [
    "k",
    "K",
    "i",
    "I",
    "bot",
    "-",
    "_",
    "*",
    " ",
    "/",
    "\n",
    "\r",
    "\u212a",
    "\u0130",
    "i\u0307",
    "\u03a3",
    "\u03c3",
    "\u03c2",
    "\ufffd",
    "\u00df",
    "ss",
]
agent_lines = st.lists(st.sampled_from(_LINE_PIECES), min_size=1, max_size=5).map(b"".join)
groups = st.lists(st.lists(agent_lines, min_size=1, max_size=2), min_size=1, max_size=6)
names = st.lists(st.sampled_from(_NAME_PIECES), max_size=4).map("".join)


def _body(file_groups: list[list[bytes]], star: bool = True) -> bytes:
    lines = []
    for i, agents in enumerate(file_groups):
        lines += [b"User-agent: " + agent for agent in agents]
        lines += [b"Disallow: /g%d" % i, b"Crawl-delay: %d" % (i + 1), b""]
    return b"\n".join(lines) + (b"\nUser-agent: *\nDisallow: /star\n" if star else b"")


def _verdicts(robots: ra.RobotsTxt, name: str, count: int) -> tuple[object, ...]:
    paths = [f"/g{i}" for i in range(count)] + ["/star"]
    allowed = [robots.allowed(f"https://example.com{p}", robots_token=name) for p in paths]
    return (*allowed, robots.crawl_delay(robots_token=name))


@pytest.mark.parametrize("path", ["scan", "index", "reset"])
@pytest.mark.parametrize("policy", POLICIES)
@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(file_groups=groups, star=st.booleans(), asked=st.lists(names, min_size=2, max_size=6))
def test_each_name_selects_as_alone(
    monkeypatch: pytest.MonkeyPatch,
    path: str,
    policy: str,
    *,
    file_groups: list[list[bytes]],
    star: bool,
    asked: list[str],
) -> None:
    """Path "reset": the token cache holds two names, so the shared ``*`` bucket is
    dropped and made again; without a ``*`` group an unnamed name selects nothing."""
    indexed = path == "index"
    monkeypatch.setattr(selection, "_SCAN_GROUPS", 0 if indexed else 16)
    monkeypatch.setattr(selection, "_NAMES_BEFORE_INDEX", 0 if indexed else 8)
    monkeypatch.setattr(robots_module, "_MAX_CACHED_TOKENS", 2 if path == "reset" else 64)
    body = _body(file_groups, star)
    count = len(file_groups)
    mixed = ra.parse(body, policy=policy)
    for _ in range(2):
        for name in asked:
            alone = ra.parse(body, policy=policy)
            assert _verdicts(mixed, name, count) == _verdicts(alone, name, count), (body, name)
