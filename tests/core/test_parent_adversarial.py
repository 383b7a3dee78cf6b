"""Adversarial checks of LiteralPrefixes.parent (bisect, jumps through known parents,
link_all past _MAX_STEPS) against brute force, on hostile literal sets, and the time
one question may take on a large hostile file."""

from __future__ import annotations

import random
import time

import pytest

import robots_async as ra
from robots_async.core import prefixes as _prefixes
from robots_async.core.prefixes import LiteralPrefixes
from tests.core.test_fast_paths import _brute_parent, _longest_literal
from tests.helpers import all_linked


def _brute_parents(literals: list[str]) -> list[int]:
    """Every literal's longest proper literal prefix, by trying each of its prefixes
    (brute force, but linear in the total length: fit for 10,000 literals)."""
    where = {literal: j for j, literal in enumerate(literals)}
    found = []
    for literal in literals:
        up = -1
        for cut in range(len(literal) - 1, -1, -1):
            if literal[:cut] in where:
                up = where[literal[:cut]]
                break
        found.append(up)
    return found


def _chain(steps: int) -> list[str]:
    """``/``, ``/a0`` ... ``/`` + ``a`` * (steps - 1) + ``0``, and ``/`` + ``a`` * (steps +
    1): the parent search of the last checks each ``/a..a0`` in turn, then ``/``, so it
    takes exactly ``steps`` steps."""
    return sorted(["/", *(f"/{'a' * m}0" for m in range(1, steps)), "/" + "a" * (steps + 1)])


def _hostile_sets() -> dict[str, list[str]]:
    rng = random.Random(7)
    long = "/" + "x" * 3000
    sets = {
        "deep": ["/" + "a" * k for k in range(400)],
        "deep-with-siblings": [
            *("/" + "a" * k for k in range(1, 200)),
            *(f"/{'a' * k}{c}" for k in range(0, 200, 3) for c in "0bz"),
        ],
        "long-shared": [long, *(long + format(i, "b") for i in range(300))],
        "non-ascii": [
            "/",
            "/é",
            "/éé",
            "/é\u00ff",
            "/\u00ff",
            "/\U0001f600",
            "/\U0001f600/",
            "/\U0001f600/\u4e2d",
            "/\u4e2d\u6587",
            "/\u4e2d",
            "/\x7f",
            "/\x00",
            "/a\x00b",
            "/a",
        ],
        "slash-and-star": [
            "/",
            *(f"/{i}" for i in range(500)),
            *(f"/{i}/x" for i in range(0, 500, 7)),
        ],
        "empty-literal": ["", "/", "//", "///", "/a", "//a"],
        "random-nested": sorted(
            {"/" + "".join(rng.choices("a0/", k=rng.randrange(0, 30))) for _ in range(800)}
        ),
    }
    for steps in (15, 16, 17, 18, 40):
        sets[f"chain-{steps}"] = _chain(steps)
    return {name: sorted(set(literals)) for name, literals in sets.items()}


_SETS = _hostile_sets()


@pytest.mark.parametrize("name", sorted(_SETS))
@pytest.mark.parametrize("seed", range(3))
def test_parents_in_any_order_equal_brute_force(name: str, seed: int) -> None:
    """Every literal's parent, asked in a random order (so searches jump through
    parents found before, or give up and link all), is the brute-force answer."""
    literals = _SETS[name]
    expected = _brute_parents(literals)
    if len(literals) <= 400:
        assert expected == [_brute_parent(literals, i) for i in range(len(literals))]
    index = LiteralPrefixes(list(literals))
    order = list(range(len(literals)))
    random.Random(seed).shuffle(order)
    if seed == 2:
        order.reverse()
    assert [index.parent(i) for i in order] == [expected[i] for i in order]
    assert [index.parent(i) for i in range(len(literals))] == expected  # asked again
    assert list(index.link_all()) == expected


@pytest.mark.parametrize("name", sorted(_SETS))
def test_longest_literal_equals_brute_force(name: str) -> None:
    """``longest(target)`` for targets just beside every literal."""
    literals = _SETS[name]
    index = LiteralPrefixes(list(literals))
    rng = random.Random(name)
    targets = [lit + tail for lit in literals for tail in ("", "0", "a", "\uffff", "/")]
    targets += [lit[: rng.randrange(0, len(lit) + 1)] for lit in literals]
    rng.shuffle(targets)
    for target in targets[:3000]:
        found = index.longest(target)
        matching = [j for j, lit in enumerate(literals) if target.startswith(lit)]
        best = max(matching, key=lambda j: len(literals[j]), default=-1)
        assert found == best, repr(target)


@pytest.mark.parametrize("offset", [-1, 0, 1])
def test_a_search_of_max_steps_links_all_only_past_the_bound(offset: int) -> None:
    """A parent search needing exactly _MAX_STEPS - 1, _MAX_STEPS or _MAX_STEPS + 1
    steps: the right parent (``/``) each time; all literals are linked only past it."""
    steps = _prefixes._MAX_STEPS + offset
    literals = _chain(steps)
    index = LiteralPrefixes(literals)
    deepest = literals.index("/" + "a" * (steps + 1))
    assert index.parent(deepest) == literals.index("/")
    assert all_linked(index) == (offset > 0)


def _verdict_rules(literals: list[str], seed: int) -> list[tuple[bool, str]]:
    rng = random.Random(seed)
    rules = [(rng.random() < 0.5, literal) for literal in literals if literal]
    rng.shuffle(rules)
    return rules


_ASCII_SETS = [
    name for name in sorted(_SETS) if name not in ("non-ascii", "empty-literal", "long-shared")
]


@pytest.mark.parametrize("name", _ASCII_SETS)
def test_verdicts_equal_the_longest_literal(name: str) -> None:
    """parse(body).allowed/explain, questions in random order, equal the brute-force
    longest-literal verdict and line for paths beside every literal."""
    rules = _verdict_rules(_SETS[name], len(name))
    body = "User-agent: *\n" + "".join(
        f"{'Allow' if allow else 'Disallow'}: {literal}\n" for allow, literal in rules
    )
    robots = ra.parse(body, max_bytes=None)
    rng = random.Random(name)
    paths = [lit + tail for _, lit in rules for tail in ("", "0", "a", "b/")]
    paths += ["/" + "".join(rng.choices("a0b/", k=rng.randrange(0, 40))) for _ in range(300)]
    rng.shuffle(paths)
    for path in paths[:1500]:
        verdict = robots.explain("https://x.test" + path, robots_token="bot")
        assert (verdict.allowed, verdict.line) == _longest_literal(rules, path), path
        assert robots.allowed("https://x.test" + path, robots_token="bot") == verdict.allowed


def _timed(robots: ra.RobotsTxt, path: str) -> tuple[bool, float]:
    started = time.perf_counter()
    allowed = robots.allowed("https://x.test" + path, robots_token="bot")
    return allowed, time.perf_counter() - started


def test_questions_on_a_500_kb_hostile_file_stay_bounded() -> None:
    """500 KB of rules built for long searches: a chain ``/a..a0`` (each search step
    one literal shorter), a nested chain ``/b``, ``/bb``... walked up from its deepest,
    and 10,000 siblings. Every question, the first (compiling) included, well under 1 s,
    with the longest literal's verdict."""
    chain = [f"/{'a' * m}0" for m in range(1, 700)]
    nested = ["/" + "b" * m for m in range(1, 600)]
    siblings = [f"/c{i}" for i in range(10_000)]
    body = (
        "User-agent: *\nAllow: /\n"
        + "".join(f"Disallow: {lit}\n" for lit in chain)
        + "".join(f"{'Allow' if len(lit) % 2 else 'Disallow'}: {lit}\n" for lit in nested)
        + "Disallow: /c\n"
        + "".join(f"Allow: {lit}\n" for lit in siblings)
    )
    assert len(body) > 500_000
    robots = ra.parse(body, max_bytes=None)
    paths = [
        "/" + "a" * 700,  # past the whole /a..a0 chain: only "/" matches
        "/" + "a" * 350 + "0",
        "/" + "b" * 300 + "x",  # walked up the nested chain from its deepest
        "/" + "b" * 599 + "z",
        "/c10000x",
        "/c",
        "/cz",
    ]
    rules = (
        [(True, "/")]
        + [(False, lit) for lit in chain]
        + [(len(lit) % 2 == 1, lit) for lit in nested]
        + [(False, "/c")]
        + [(True, lit) for lit in siblings]
    )
    worst = 0.0
    for path in paths:
        allowed, took = _timed(robots, path)
        worst = max(worst, took)
        assert allowed == _longest_literal(rules, path)[0], path
    assert worst < 1.0
