"""RobotsTxt.allowed() decides most questions inline (issue 13): the longest literal
alone in buckets of literals, the robots.txt URL tested only against a Disallow, a
yarl URL taken without a type test. Each shortcut must give what explain() and the
brute-force reference matcher give, whatever the input's form."""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor

import pytest
import yarl

import robots_async as ra
from robots_async.core import selection as _robots
from tests.core.test_matcher import reference_verdict
from tests.helpers import OwnGrowth

_VALUES = ["", "/", "/a", "/ab", "/a/", "/robots.txt", "/robots", "/a$", "/*b", "/a*", "/*.txt$"]


def _file(rng: random.Random, kinds: list[str], padding: int) -> list[tuple[str, str]]:
    lines = [("user-agent", rng.choice(["*", "bot"]))]
    lines += [
        (rng.choice(["allow", "disallow"]), rng.choice(kinds)) for _ in range(rng.randrange(1, 8))
    ]
    # Unrelated rules: past 64 a bucket keeps no Disallow heads to test a target with.
    lines += [("disallow", f"/zz{i}") for i in range(padding)]
    return lines


@pytest.mark.parametrize(("kinds", "padding"), [("literals", 0), ("literals", 70), ("all", 0)])
def test_allowed_equals_explain_and_the_reference(kinds: str, padding: int) -> None:
    """3,000 random files of literals, empty patterns (which never disallow: item 36),
    and with ``$``/``*`` rules: allowed() as a URL, a yarl URL and a path, by token and
    by User-Agent, equals explain() and the reference; /robots.txt is always allowed."""
    rng = random.Random(f"{kinds}{padding}")
    values = (
        [v for v in _VALUES if "*" not in v and "$" not in v] if kinds == "literals" else _VALUES
    )
    paths = ["/", "/a", "/ab", "/a/b", "/b", "/robots.txt", "/robots.txt?x", "/x.txt", "/abc"]
    for _ in range(3_000):
        lines = _file(rng, values, padding)
        robots = ra.parse("".join(f"{kind}: {value}\n" for kind, value in lines))
        path = rng.choice(paths)
        url = "https://x.test" + path
        expected = path == "/robots.txt" or reference_verdict(lines, "bot", path)[0]
        answers = {
            robots.allowed(url, robots_token="bot"),
            robots.allowed(yarl.URL(url), robots_token="bot"),
            robots.allowed(path, robots_token="bot"),
            robots.allowed(url, user_agent="bot/2.0 (+https://x.test)"),
            robots.explain(url, robots_token="bot").allowed,
        }
        assert answers == {expected}, (lines, path)


def test_disallow_all_keeps_only_the_robots_url() -> None:
    """No bucket at all (a synthetic file): the target still decides for disallow_all."""
    robots = ra.RobotsTxt.disallow_all()
    assert robots.allowed("https://x.test/robots.txt", robots_token="bot")
    assert robots.allowed(yarl.URL("https://x.test/robots.txt"), robots_token="bot")
    assert not robots.allowed("https://x.test/", robots_token="bot")
    assert ra.RobotsTxt.allow_all().allowed("https://x.test/a", robots_token="bot")


def test_bad_url_types_still_raise_without_rules() -> None:
    """The no-rule shortcut is taken for str only: other types keep their error."""
    with pytest.raises(TypeError):
        ra.parse(b"").allowed(b"https://x.test/", robots_token="bot")  # type: ignore[arg-type]


def test_user_agent_memo_is_bounded() -> None:
    """Tokens derived from User-Agents are remembered, but never more than the bound:
    5,000 distinct User-Agents leave at most _MAX_TOKENS, each question right."""
    robots = ra.parse(b"User-agent: bot7\nDisallow: /\n")
    for i in range(5_000):
        assert robots.allowed("https://x.test/", user_agent=f"bot{i}/1.0") == (i != 7)
        assert len(_robots._TOKENS) <= _robots._MAX_TOKENS
    assert not robots.allowed("https://x.test/", user_agent="bot7/1.0")


_URL_PIECES = [
    "http://", "https://", "HTTPS://", "h", "h2", ".x", ":80", "@", "u:p@", "/", "/a", "/ab",
    "/private", "?", "?q=1", "#", "#f/private", ";", ";p", "%2F", "/é", "//", "/..", "",
]  # fmt: skip


def test_origin_seen_before_gives_what_the_regex_gives() -> None:
    """Questions about URLs of several origins (and near misses: h vs h2, userinfo,
    ports, fragments, ``?`` before the path, upper-case schemes) in random order on one
    file: each answer equals explain()'s, which reduces every URL from scratch."""
    rng = random.Random(9309)
    body = (
        "User-agent: *\nDisallow: /private\nAllow: /private/ok\nDisallow: /*?q=\nDisallow: /ab$\n"
    )
    robots = ra.parse(body)
    for _ in range(20_000):
        url = "".join(rng.choice(_URL_PIECES) for _ in range(rng.randrange(1, 7)))
        if rng.random() < 0.8:
            url = rng.choice(["https://h", "http://h", "https://h2", "https://u@h"]) + url
        expected = robots.explain(url, robots_token="bot").allowed
        assert robots.allowed(url, robots_token="bot") == expected, url


def test_a_long_host_is_not_kept() -> None:
    """The origin of the URL asked before is kept for the next question, but not a
    hostile 1 MB one: the file retains no more after it than after a usual URL."""
    robots = ra.parse(b"User-agent: *\nDisallow: /private\n")
    robots.allowed("https://h.test/a", robots_token="bot")
    long_url = "https://" + "h" * 1_000_000 + "/private"
    with OwnGrowth() as growth:
        assert not robots.allowed(long_url, robots_token="bot")
        kept, top = growth.grown()
    assert kept < 10_000, top
    assert not robots.allowed("https://h.test/private", robots_token="bot")


def test_threads_asking_about_two_origins() -> None:
    """Threads alternating between origins on one file: the origin kept is replaced
    under their feet, and every answer stays right."""
    robots = ra.parse(b"User-agent: *\nDisallow: /private\n")
    urls = [("https://a.test/private/x", False), ("http://b.test:8080/public#/private", True)]
    urls += [("https://a.test/public", True), ("http://b.test:8080/private", False)]

    def ask(seed: int) -> bool:
        rng = random.Random(seed)
        for _ in range(20_000):
            url, allowed = rng.choice(urls)
            if robots.allowed(url, robots_token="bot") != allowed:
                return False
        return True

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(ask, range(4)))
