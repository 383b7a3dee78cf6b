"""AI usage preferences: the Content-Usage rule (draft-ietf-aipref-attach) and header.

The drafts' own worked example, the vocabulary's combination rule, malformed
Dictionaries (never an exception), chunked parsing, and the guarantee that the new
rule never changes an Allow/Disallow verdict.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robots_async as ra
from robots_async.core.usage import parse_preference
from tests.helpers import CORPUS, parse_chunks, split_at

# draft-ietf-aipref-attach's example robots.txt and its table of paths.
DRAFT_EXAMPLE = b"""User-Agent: *
Allow: /
Disallow: /never/
Content-Usage: train-ai=n
Content-Usage: /ai-ok/ train-ai=y

User-Agent: ExampleBot
Allow: /
Content-Usage: train-ai=y
"""


@pytest.mark.parametrize(
    ("agent", "path", "crawl", "train_ai", "line"),
    [
        ("OtherBot", "/test", True, "disallowed", 4),
        ("OtherBot", "/never/test", False, None, None),
        ("OtherBot", "/ai-ok/test", True, "allowed", 5),
        ("ExampleBot", "/test", True, "allowed", 9),
        ("ExampleBot", "/never/test", True, "allowed", 9),
        ("ExampleBot", "/ai-ok/test", True, "allowed", 9),
    ],
)
@pytest.mark.parametrize("policy", ["google", "google-reference", "rfc9309"])
def test_draft_example_table(  # noqa: PLR0917 (one parameter per table column)
    agent: str, path: str, crawl: bool, train_ai: str | None, line: int | None, policy: str
) -> None:
    """Every row of the attach draft's table: crawl yes/no and the usage preference."""
    robots = ra.parse(DRAFT_EXAMPLE, policy=policy)  # type: ignore[arg-type]
    url = "https://example.com" + path
    assert robots.allowed(url, user_agent=agent) is crawl
    usage = robots.usage(url, user_agent=agent)
    if train_ai is None:
        assert usage is None  # a URL that may not be crawled has no usage preference
        return
    assert usage is not None
    assert (usage.train_ai, usage.search, usage.lines) == (train_ai, "unknown", (line,))
    assert usage.disallows("train-ai") is (train_ai == "disallowed")


def test_group_exposes_its_usage_rules() -> None:
    """Group.usage lists the rules with normalised paths; warnings stay empty."""
    robots = ra.parse(DRAFT_EXAMPLE)
    assert robots.groups[0].usage == (
        ra.UsageRule("", "train-ai=n", 4),
        ra.UsageRule("/ai-ok/", "train-ai=y", 5),
    )
    assert robots.warnings == ()


def test_same_path_rules_combine_most_restrictively() -> None:
    """Rules with the same path are not a tie to break permissively: n wins (vocab §7.1)."""
    body = b"User-agent: *\nContent-Usage: /a train-ai=y, search=y\nContent-Usage: /a train-ai=n\n"
    usage = ra.parse(body).usage("http://e.com/a/b", user_agent="Bot")
    assert usage is not None
    assert (usage.train_ai, usage.search) == ("disallowed", "allowed")
    assert usage.lines == (2, 3)


def test_longest_path_wins_over_shorter() -> None:
    """The longest matching path decides, as for Allow/Disallow; others do not combine."""
    body = b"User-agent: *\nContent-Usage: /a/ train-ai=n\nContent-Usage: /a/b/ train-ai=y\n"
    robots = ra.parse(body)
    deep = robots.usage("http://e.com/a/b/c", user_agent="Bot")
    shallow = robots.usage("http://e.com/a/x", user_agent="Bot")
    none = robots.usage("http://e.com/z", user_agent="Bot")
    assert deep is not None
    assert shallow is not None
    assert none is not None
    assert (deep.train_ai, shallow.train_ai, none.train_ai) == ("allowed", "disallowed", "unknown")
    assert none.rules == ()


def test_path_with_tab_and_wildcards() -> None:
    """A tab ends the path; paths use Allow/Disallow's wildcards and %-encoding."""
    body = "User-agent: *\nContent-Usage: /*.pdf$\ttrain-ai=n\nContent-Usage: /ä search=n\n"
    robots = ra.parse(body)
    pdf = robots.usage("http://e.com/doc/x.pdf", user_agent="Bot")
    html = robots.usage("http://e.com/doc/x.html", user_agent="Bot")
    encoded = robots.usage("http://e.com/%C3%A4/x", user_agent="Bot")
    assert pdf is not None
    assert html is not None
    assert encoded is not None
    assert (pdf.train_ai, html.train_ai, encoded.search) == ("disallowed", "unknown", "disallowed")
    assert robots.groups[0].usage[1].path == "/%C3%A4"


@pytest.mark.parametrize(
    ("preference", "train_ai", "search", "problem"),
    [
        ("train-ai=y, search=n", "allowed", "disallowed", None),
        ("train-ai=y, train-ai=n", "disallowed", "unknown", "duplicate key"),
        ("train-ai=y, train-ai", "unknown", "unknown", "bare key"),  # last wins: boolean
        ("Train-AI=y", "unknown", "unknown", "invalid preference"),  # upper-case key
        ("train-ai=y;why=1, search=n;x", "allowed", "disallowed", None),  # params ignored
        ('train-ai="n"', "unknown", "unknown", "not y or n"),  # a String, not a Token
        ("train-ai=1", "unknown", "unknown", "not y or n"),
        ("train-ai=maybe", "unknown", "unknown", "not y or n"),
        ("train-ai=y, foo=n", "allowed", "unknown", "unknown label 'foo'"),
        ("train-ai=y,, search=n", "unknown", "unknown", "invalid preference"),
        ("", "unknown", "unknown", None),
        ("train-ai=y search=n", "unknown", "unknown", "invalid preference"),
    ],
)
def test_malformed_dictionaries(
    preference: str, train_ai: str, search: str, problem: str | None
) -> None:
    """Malformed preferences give unknown and a lint warning, never an exception."""
    robots = ra.parse(f"User-agent: *\nContent-Usage: {preference}\n")
    usage = robots.usage("http://e.com/x", user_agent="Bot")
    assert usage is not None
    assert (usage.train_ai, usage.search) == (train_ai, search)
    messages = [w.message for w in robots.warnings if w.code == "content-usage"]
    if problem is None:
        assert messages == []
    else:
        assert any(problem in m for m in messages), messages


def test_unknown_labels_are_kept() -> None:
    """Labels outside the vocabulary are kept for the curious, not used."""
    usage = ra.parse(b"User-agent: *\nContent-Usage: genai=n, train-ai=y\n").usage(
        "http://e.com/", user_agent="Bot"
    )
    assert usage is not None
    assert usage.unknown_labels == (("genai", "n"),)
    assert usage.train_ai == "allowed"


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"Content-Usage: train-ai=n\nUser-agent: *\nAllow: /\n", "rule-outside-group"),
        (b"User-agent: *\nContent-Usage: ai-ok/ train-ai=y\n", "usage-path"),
        (b"User-agent: *\nContent-Usage: train-ai=y, genai=n\n", "content-usage"),
    ],
)
def test_lint_warnings(body: bytes, code: str) -> None:
    """Rules outside groups, paths without "/" and unknown labels are reported."""
    assert code in {w.code for w in ra.parse(body).warnings}


def test_header_and_robots_combine() -> None:
    """The header and the robots.txt rule combine: most restrictive wins, unknown stays."""
    header = ra.usage_from_header("search=n")
    robots = ra.parse(DRAFT_EXAMPLE).usage("https://e.com/ai-ok/x", user_agent="Bot")
    assert robots is not None
    both = ra.combine_usage(robots, header)
    assert (both.train_ai, both.search) == ("allowed", "disallowed")
    assert both.header == ("search=n",)
    assert both.lines == (5,)
    assert both.as_header() == "train-ai=y, search=n"
    assert ra.combine_usage(ra.usage_from_header("train-ai=n"), robots).train_ai == "disallowed"
    assert ra.combine_usage().train_ai == "unknown"


@pytest.mark.parametrize(
    ("lines", "train_ai", "search"),
    [
        (["train-ai=n"], "disallowed", "unknown"),
        (["train-ai=y", "search=n"], "allowed", "disallowed"),
        (["train-ai=n", "train-ai=y"], "allowed", "unknown"),  # one field: last key wins
        (["train-ai=y", "BAD=1"], "unknown", "unknown"),  # the joined field fails
        ([], "unknown", "unknown"),
    ],
)
def test_header_field_lines(lines: list[str], train_ai: str, search: str) -> None:
    """Several field lines are one RFC 9651 field: joined with commas, parsed once."""
    usage = ra.usage_from_header(lines)
    assert (usage.train_ai, usage.search) == (train_ai, search)
    assert ra.usage_from_header(None) == ra.UsagePreferences()


@pytest.mark.parametrize("text", ["train-ai=n\ud800", "\udfff", "train-ai=n, x=\udce9"])
def test_a_header_with_a_lone_surrogate_says_nothing(text: str) -> None:
    """A header text that is no Unicode (a lone surrogate: aiohttp's surrogateescape
    gives U+DC80-U+DCFF, a caller any) is an invalid field: every category unknown, as
    parse_preference() promises ("never raises"); U+D800 raised UnicodeEncodeError."""
    usage = ra.usage_from_header(text)
    assert (usage.train_ai, usage.search) == ("unknown", "unknown")
    _, problems = parse_preference(text)
    assert problems
    assert problems[0].startswith("invalid preference")


def test_get_rejects_unknown_category() -> None:
    """UsagePreferences.get names the known categories when asked for another."""
    with pytest.raises(ValueError, match="train-ai, search"):
        ra.UsagePreferences().get("genai")  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(DRAFT_EXAMPLE)), max_size=8))
def test_chunked_parsing_equals_one_shot(cuts: list[int]) -> None:
    """However the body is chunked, the usage rules and preferences are the same."""
    whole = ra.parse(DRAFT_EXAMPLE)
    chunked = parse_chunks(split_at(DRAFT_EXAMPLE, cuts))
    assert chunked.groups == whole.groups
    for path in ("/test", "/ai-ok/x", "/never/x"):
        url = "https://e.com" + path
        assert chunked.usage(url, user_agent="Bot") == whole.usage(url, user_agent="Bot")


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=60))
def test_any_preference_text_never_raises(text: str) -> None:
    """Arbitrary preference text parses to a result (and maybe warnings), never raises."""
    clean = text.replace("\n", " ").replace("\r", " ").replace("#", " ")
    robots = ra.parse(f"User-agent: *\nContent-Usage: {clean}\n")
    usage = robots.usage("http://e.com/x", user_agent="Bot")
    assert usage is None or usage.train_ai in ("allowed", "disallowed", "unknown")


CORPUS_FILES = sorted(CORPUS.iterdir())


@pytest.mark.parametrize("path", CORPUS_FILES, ids=[p.name for p in CORPUS_FILES])
def test_rule_never_changes_allow_disallow(path: object) -> None:
    """Content-Usage lines sprinkled through a real file change no Allow/Disallow verdict."""
    body = path.read_bytes()  # type: ignore[attr-defined]
    lines = body.split(b"\n")
    sprinkled = b"\n".join(
        line + (b"\nContent-Usage: /x train-ai=n" if i % 3 == 0 else b"")
        for i, line in enumerate(lines)
    )
    urls = [
        "https://h/",
        "https://h/x",
        "https://h/search?q=1",
        "https://h/admin/",
        "https://h/wp-admin/",
    ]
    for policy in ("google", "google-reference"):
        plain = ra.parse(body, policy=policy)  # type: ignore[arg-type]
        with_usage = ra.parse(sprinkled, policy=policy)  # type: ignore[arg-type]
        for agent in ("Googlebot", "*", "bingbot"):
            for url in urls:
                a = plain.explain(url, robots_token=agent)
                b = with_usage.explain(url, robots_token=agent)
                assert (a.allowed, a.reason, str(a.rule)) == (b.allowed, b.reason, str(b.rule))
