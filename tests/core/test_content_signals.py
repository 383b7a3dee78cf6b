"""Content-Signal lines in robots.txt: parsing, scoping to groups, the file default."""

from __future__ import annotations

import gc
import tracemalloc

import pytest

from robots_async import ContentSignals, parse
from robots_async.core.content_signals import cached_signals

URL = "https://site.test/page"

CLOUDFLARE = b"""\
# As a condition of accessing this website, you agree to abide by the content signals.
User-Agent: *
Content-Signal: search=yes,ai-train=no
Allow: /
"""

SCOPED = b"""\
User-agent: *
Content-Signal: search=yes, ai-train=no, ai-input=no
Disallow: /private/

User-agent: MyBot
User-agent: HelperBot
Content-Signal: ai-train=yes
Allow: /

User-agent: QuietBot
Disallow: /nothing
"""


def signals(body: bytes, agent: str, url: str = URL) -> dict[str, bool] | None:
    result = parse(body).content_signals(url, agent)
    return None if result is None else dict(result.signals)


def test_cloudflare_managed_file() -> None:
    result = parse(CLOUDFLARE).content_signals(URL, "AnyBot/1.0")
    assert result == ContentSignals((("search", True), ("ai-train", False)), 3, (3,))
    assert result.disallows("ai-train")
    assert not result.disallows("search")
    assert result.get("ai-input") is None


# (case id, agent, url, signals expected)
SCOPE_CASES = [
    ("star group", "OtherBot", URL, {"search": True, "ai-train": False, "ai-input": False}),
    ("own group", "MyBot/2.0", URL, {"ai-train": True}),
    ("second agent of the group", "helperbot", URL, {"ai-train": True}),
    ("own group without a line", "QuietBot", URL, None),
    ("disallowed url", "OtherBot", "https://site.test/private/x", None),
    ("asked as *", "*", URL, {"search": True, "ai-train": False, "ai-input": False}),
]


@pytest.mark.parametrize(
    ("agent", "url", "expected"), [c[1:] for c in SCOPE_CASES], ids=[c[0] for c in SCOPE_CASES]
)
def test_scoped_to_the_group(agent: str, url: str, expected: dict[str, bool] | None) -> None:
    assert signals(SCOPED, agent, url) == expected


def test_merged_groups_combine_and_no_wins() -> None:
    body = b"""\
User-agent: MyBot
Content-Signal: ai-train=yes, search=yes
Disallow: /a

User-agent: MyBot
Content-Signal: ai-train=no
Content-Signal: ai-input=yes
Disallow: /b
"""
    result = parse(body).content_signals(URL, "MyBot")
    assert result is not None
    assert dict(result.signals) == {"ai-train": False, "search": True, "ai-input": True}
    assert (result.line, result.lines) == (2, (2, 6, 7))


def test_lines_before_any_group_are_the_default() -> None:
    body = b"""\
Content-Signal: ai-train=no, search=yes

User-agent: *
Disallow: /x

User-agent: MyBot
Content-Signal: ai-train=yes
Disallow: /y
"""
    robots = parse(body)
    default = robots.content_signals(URL, "OtherBot")
    assert default is not None
    assert dict(default.signals) == {"ai-train": False, "search": True}
    assert default.line == 1
    # A group with its own line replaces the default (it is not merged).
    assert signals(body, "MyBot") == {"ai-train": True}
    assert not [w for w in robots.warnings if w.code == "rule-outside-group"]


def test_a_crawler_with_own_lines_in_one_of_its_groups_ignores_the_default() -> None:
    body = b"""\
Content-Signal: ai-train=no, search=no

User-agent: MyBot
Disallow: /x

User-agent: MyBot
Content-Signal: ai-train=yes
Disallow: /y
"""
    result = parse(body).content_signals(URL, "MyBot")
    assert result is not None
    assert dict(result.signals) == {"ai-train": True}
    assert result.lines == (7,)


@pytest.mark.parametrize(
    "body",
    [
        b"Content-Signal: ai-train=no\n",  # a file of nothing else
        b"Content-Signal: ai-train=no\nSitemap: https://example.com/s.xml\n",
        b"Content-Signal: ai-train=no\n\nUser-agent: Googlebot\nDisallow: /x\n",
    ],
)
def test_the_default_reaches_a_crawler_that_no_group_selects(body: bytes) -> None:
    """The file's default is not lost when the crawler has no group at all (it was
    attached only to groups, so these files signalled nothing to GPTBot)."""
    result = parse(body).content_signals(URL, "GPTBot")
    assert result is not None
    assert dict(result.signals) == {"ai-train": False}
    assert result.line == 1


def test_no_line_no_signals() -> None:
    assert parse(b"User-agent: *\nDisallow: /x\n").content_signals(URL, "Bot") is None
    assert parse(b"").content_signals(URL, "Bot") is None


# (case id, value, pairs expected, problems expected)
VALUE_CASES = [
    (
        "three labels",
        b"search=yes, ai-input=no, ai-train=no",
        (("search", True), ("ai-input", False), ("ai-train", False)),
        0,
    ),
    ("no spaces, any case", b"Search=YES,AI-Train=No", (("search", True), ("ai-train", False)), 0),
    (
        "unknown label kept",
        b"ai-retrieval=no, use=yes",
        (("ai-retrieval", False), ("use", True)),
        0,
    ),
    ("invalid value ignored", b"ai-train=maybe, search=yes", (("search", True),), 1),
    ("bare label ignored", b"ai-train, search=no", (("search", False),), 1),
    ("aipref y/n is not yes/no", b"train-ai=n", (), 1),
    (
        "repeated label: no wins",
        b"ai-train=yes, ai-train=no, ai-train=yes",
        (("ai-train", False),),
        0,
    ),
    ("empty parts", b", ,search=yes,", (("search", True),), 0),
    ("empty", b"", (), 0),
    ("bad label", b"ai train=no", (), 1),
    ("path keeps only no", b"/docs/ ai-train=no, search=yes", (("ai-train", False),), 1),
]


@pytest.mark.parametrize(
    ("value", "pairs", "problems"), [c[1:] for c in VALUE_CASES], ids=[c[0] for c in VALUE_CASES]
)
def test_values(value: bytes, pairs: tuple[tuple[str, bool], ...], problems: int) -> None:
    reading, found = cached_signals(value)
    assert reading == pairs
    assert len(found) == problems


def test_problems_become_warnings_on_their_line() -> None:
    robots = parse(b"User-agent: *\nContent-Signal: ai-train=perhaps\nDisallow:\n")
    (warning,) = robots.warnings
    assert (warning.line, warning.code) == (2, "content-signal")
    assert "ai-train=perhaps" in warning.message


@pytest.mark.parametrize(
    "key",
    [
        b"Content-Signal",
        b"content-signal",
        b"CONTENT-SIGNAL",
        b" content-Signal ",
        b"Content-Signals",
    ],
)
def test_key_spellings(key: bytes) -> None:
    body = b"User-agent: *\n" + key + b": ai-train=no\nDisallow:\n"
    robots = parse(body)
    assert signals(body, "Bot") == {"ai-train": False}
    assert not robots.warnings


def test_allow_disallow_verdicts_are_unchanged_by_signal_lines() -> None:
    # A Content-Signal line does not end a group's agent list (nor does Content-Usage).
    body = b"User-agent: a\nContent-Signal: ai-train=no\nUser-agent: b\nDisallow: /\n"
    robots = parse(body)
    assert not robots.allowed(URL, "a")
    assert not robots.allowed(URL, "b")
    assert signals(body, "b", "https://site.test/robots.txt") == {"ai-train": False}


def test_equal_values_share_one_reading() -> None:
    body = b"".join(
        b"User-agent: bot%d\nContent-Signal: ai-train=no\nDisallow:\n" % i for i in range(50)
    )
    robots = parse(body)
    readings = {id(robots._groups[i].signals.readings[0]) for i in range(50)}  # type: ignore[union-attr]
    assert len(readings) == 1


def test_long_distinct_values_are_not_kept_after_their_files() -> None:
    """The readings memo is process-wide (4,096 values): 16 KB lines of 1,600 labels,
    one per hostile file, each kept ~177 KB there after its file was gone (about
    700 MB at 4,096 files, outside any cache's max_memory). Long values are read each
    time instead."""
    gc.collect()
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        for n in range(100):
            labels = ",".join(f"f{n}l{j}=no" for j in range(1600))[:16_000]
            robots = parse(b"User-agent: *\nContent-Signal: " + labels.encode() + b"\n")
            signals = robots.content_signals(URL, "bot")
            assert signals is not None
            assert len(signals.signals) > 1000
            del robots, signals
        gc.collect()
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert after - before < 2_000_000


def test_short_values_are_still_shared() -> None:
    value = b"search=yes,ai-train=no"
    assert cached_signals(value)[0] is cached_signals(bytes(value))[0]
