"""Content-Usage answered through the index: the same answer as a scan of every rule,
and a question on a file of 20,000 rules costs microseconds, not milliseconds."""

from __future__ import annotations

import random
import time

import pytest

import robots_async as ra
from robots_async.core.matcher import compile_rule, rule_matches
from robots_async.core.policy import get_policy, normalise_patterns
from robots_async.core.rules import MAX_WARNINGS
from robots_async.core.usage import UsagePreferences, cached_preference, combine_usage

PATHS = ["", "/", "/a", "/a/", "/ab", "/a/b", "/a*", "/*.pdf", "/a$", "/a/b$", "/*/b", "/b*$"]
VALUES = ["train-ai=n", "train-ai=y", "search=n", "train-ai=y, search=n", "bots=n", "x"]
TARGETS = ["/", "/a", "/a/", "/ab", "/a/b", "/a/b/c", "/x.pdf", "/b", "/bb", "/c/b", "/a?q"]


def scanned(robots: ra.RobotsTxt, url: str, token: str) -> UsagePreferences | None:
    """The reference: every Content-Usage rule of the agent's groups tried in turn (a
    line equal to an earlier one, same path and value, adds nothing and is skipped)."""
    if not robots.allowed(url, robots_token=token):
        return None
    target = robots._target(url)
    best, chosen = -1, []
    seen: set[tuple[str, str]] = set()
    for group in robots._indices(token):
        raw = robots._groups[group].usage
        readings = raw.readings if raw is not None else []
        for rule, reading in zip(robots._usage_of(group), readings, strict=True):
            if (rule.path, rule.preference) in seen:
                continue
            seen.add((rule.path, rule.preference))
            compiled = compile_rule(rule.path, True, rule.line, group)
            priority = compiled.priority
            if priority >= best and rule_matches(compiled, target):
                if priority > best:
                    best, chosen = priority, []
                chosen.append(
                    UsagePreferences(
                        reading.train_ai, reading.search, reading.unknown_labels, (rule,)
                    )
                )
    return combine_usage(*chosen) if chosen else UsagePreferences()


@pytest.mark.parametrize("policy", ["google", "rfc9309", "first-match"])
@pytest.mark.parametrize("seed", range(30))
def test_index_gives_the_scan_s_answer(policy: str, seed: int) -> None:
    """Random groups of Content-Usage rules (prefixes, exact paths, globs, empty
    paths, equal priorities): every answer equals the scan's, lines included."""
    rng = random.Random(seed)
    lines = []
    for agent in ("*", "BotA"):
        lines.append(f"User-agent: {agent}")
        lines.append(f"Disallow: {rng.choice(['/private', '/a/b/c', ''])}")
        for _ in range(rng.randint(0, 12)):
            path = rng.choice(PATHS)
            lines.append(f"Content-Usage: {path} {rng.choice(VALUES)}".replace(":  ", ": "))
    robots = ra.parse("\n".join(lines) + "\n", policy=policy)
    for token in ("BotA", "Other"):
        for target in TARGETS:
            url = "https://x.test" + target
            assert robots.usage(url, robots_token=token) == scanned(robots, url, token), (
                lines,
                token,
                target,
            )


def test_a_question_on_20_000_rules_is_cheap() -> None:
    """20,000 Content-Usage rules (one group): 200 questions well under the 4.6 ms each
    that the scan cost (a generous bound: 0.5 ms each)."""
    body = "User-agent: *\n" + "".join(
        f"Content-Usage: /section{i}/ train-ai=n\n" for i in range(20_000)
    )
    robots = ra.parse(body, max_bytes=None)
    assert robots.usage("https://x.test/section7/page", robots_token="Bot") is not None
    started = time.perf_counter()
    for i in range(200):
        reading = robots.usage(f"https://x.test/section{i * 97}/p", robots_token="Bot")
        assert reading is not None
        assert reading.train_ai == "disallowed"
    assert (time.perf_counter() - started) / 200 < 0.0005


def test_a_preference_value_is_parsed_once() -> None:
    """Thousands of lines with one value: one parse (the memo), same warnings per line."""
    cached_preference.cache_clear()
    body = "User-agent: *\n" + "Content-Usage: train-ai=n, bogus=1\n" * 5000
    robots = ra.parse(body)
    info = cached_preference.cache_info()
    assert info.misses == 1
    assert info.hits == 4999
    assert len([w for w in robots.warnings if w.code == "content-usage"]) == MAX_WARNINGS


def test_patterns_normalised_as_allow_and_disallow_are() -> None:
    """The index sees the policy's normalised patterns (percent-encoding included)."""
    policy = get_policy("google")
    assert normalise_patterns(policy, "/é".encode())[0] == "/%C3%A9"
    robots = ra.parse("User-agent: *\nContent-Usage: /é train-ai=n\n")
    reading = robots.usage("https://x.test/%C3%A9/x", robots_token="Bot")
    assert reading is not None
    assert reading.train_ai == "disallowed"


def test_long_preference_values_are_not_kept_in_the_memo() -> None:
    """A hostile file of one long preference value per origin must not fill the memo
    (lines are cut at 16,663 bytes; 200 such files kept 10.7 MB, 4,096 would keep ~220 MB);
    the long value is still read."""
    cached_preference.cache_clear()
    for i in range(3):
        long_value = f'train-ai=n, k{i}="{"a" * 10_000}"'
        robots = ra.parse(f"User-agent: *\nContent-Usage: /x {long_value}\n")
        reading = robots.usage("https://x.test/x", robots_token="Bot")
        assert reading is not None
        assert reading.train_ai == "disallowed"
    assert cached_preference.cache_info().currsize == 0
    ra.parse("User-agent: *\nContent-Usage: train-ai=n\n")
    assert cached_preference.cache_info().currsize == 1  # a usual value is memoised


def test_many_rules_with_one_pattern_are_cheap_to_ask() -> None:
    """18,000 equal lines (within the 500 KB limit): a question costs what a question
    on 20,000 distinct rules does, not a combination of every line (generous: 2 ms)."""
    body = "User-agent: *\n" + "Content-Usage: / train-ai=n\n" * 18_000
    robots = ra.parse(body)
    assert robots.usage("https://x.test/warm", robots_token="Bot") is not None
    started = time.perf_counter()
    for i in range(20):
        reading = robots.usage(f"https://x.test/p{i}", robots_token="Bot")
        assert reading is not None
        assert reading.train_ai == "disallowed"
        assert [rule.line for rule in reading.rules] == [2]  # the first of the equal lines
    assert (time.perf_counter() - started) / 20 < 0.002
