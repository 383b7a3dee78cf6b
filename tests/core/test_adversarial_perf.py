"""Adversarial review of issue 13's shared and lazily built indexes: threads meeting
inside a lazy parent search, the memory the shared bucket table may pin, and hostile
sizes (long URLs, many globs, many star counts) against the wildcard indexes."""

from __future__ import annotations

import gc
import random
import string
import threading
import time
import tracemalloc
from typing import TYPE_CHECKING, Any

import pytest

import robots_async as ra
from robots_async.core import compiled as _compiled
from robots_async.core import prefixes as _prefixes
from robots_async.core import wildcards as _wildcards
from robots_async.core.prefixes import LiteralPrefixes, RaisedLiterals
from robots_async.core.wildcards import SCANS_BEFORE_INDEX

if TYPE_CHECKING:
    from array import array

# "/a" decides "/" + "a" * 41; the literals "/a0", "/aa0" ... "/" + "a" * 40 + "0" sort
# between them, each search step finds the next shorter one, so finding the parent of
# the literal bisect lands on takes more than _MAX_STEPS and links them all.
_CHAIN = 40
_NESTED = (
    "User-agent: *\nDisallow: /a\n"
    + "".join(f"Disallow: /{'a' * k}0\n" for k in range(1, _CHAIN + 1))
).encode()
_DEEP = "/" + "a" * (_CHAIN + 1)


@pytest.mark.skipif(
    ra.COMPILED,
    reason="stages the thread switch by patching prefixes.array and LiteralPrefixes.link_all, "
    "which compiled code calls directly (the pure run tests the same source)",
)
def test_a_parent_search_racing_another_thread_still_finds_the_rule(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two threads both see no parents array yet and each allocate one (CPython may
    switch threads at any call, here at ``array()``); the later store replaces the
    array the first thread is walking. Its answer must not come from its stale copy:
    a stale UNKNOWN read as "no parent" drops the Disallow (fails open)."""
    robots = ra.parse(_NESTED)
    assert not robots.allowed("http://x.test" + _DEEP, robots_token="bot")  # compiles, links
    bucket = robots._first[1]
    assert bucket is not None
    bucket.parents = _prefixes._NO_PARENTS  # as compiled: no parent looked for yet

    real_array, real_link_all = _prefixes.array, LiteralPrefixes.link_all
    second_read_empty, first_linking = threading.Event(), threading.Event()
    first_stored: list[object] = []
    second = threading.Thread(target=lambda: results.append(bucket.best(_DEEP)))
    results: list[int] = []

    def paused_array(*args: Any) -> array[int]:
        # The second thread pauses between reading "no parents" and storing its own.
        if threading.current_thread() is second and not second_read_empty.is_set():
            second_read_empty.set()
            assert first_linking.wait(10)
        return real_array(*args)

    def link_all(self: LiteralPrefixes) -> Any:
        if threading.current_thread() is not second:
            first_stored.append(self.parents)
            first_linking.set()  # the other thread stores its array now
            deadline = time.monotonic() + 10
            while self.parents is first_stored[0] and time.monotonic() < deadline:
                time.sleep(0.001)
        return real_link_all(self)

    monkeypatch.setattr(_prefixes, "array", paused_array)
    monkeypatch.setattr(LiteralPrefixes, "link_all", link_all)
    second.start()
    assert second_read_empty.wait(10)
    first = bucket.best(_DEEP)
    second.join(10)
    assert first_stored
    assert bucket.parents is not first_stored[0]  # the race happened
    assert first >= 0, "the Disallow: /a rule was lost in the race"
    assert results == [first]


def _table_bytes(bodies: list[bytes]) -> int:
    """Bytes still allocated after parsing and asking about ``bodies`` one by one
    (each file dropped after use: what remains is the shared table's)."""
    _compiled.forget_shared()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for body in bodies:
            robots = ra.parse(body)
            for q in range(6):
                robots.allowed(f"http://x.test/b{q}", robots_token="bot")
            del robots
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
        _compiled.forget_shared()


def test_the_shared_table_pins_at_most_a_few_megabytes_of_hostile_files() -> None:
    """Files of 2 KB of wildcard rules (``*a`` x 682) are under MAX_SHARED_BYTES,
    yet each bucket is ~240 KB: 256 of them pinned ~42 MB outside every cache's
    max_memory. The table weighs what it keeps instead (documented: ~2 MB)."""
    bodies = [("#\n" * i + "User-agent: *\n" + "Disallow: *a\n" * 682).encode() for i in range(300)]
    assert _table_bytes(bodies) < 4_000_000


def test_usual_small_rule_sets_are_still_shared() -> None:
    wordpress = b"User-agent: *\nDisallow: /wp-admin/\nAllow: /wp-admin/admin-ajax.php\n"
    drupal = (
        "User-agent: *\n" + "".join(f"Disallow: /core/part{i}/\n" for i in range(40))
    ).encode()
    for body in (wordpress, drupal):
        first, second = ra.parse(body), ra.parse(body)
        first.allowed("http://x.test/", robots_token="bot")
        second.allowed("http://x.test/", robots_token="bot")
        assert first._first[1] is second._first[1]


def _piece_index(robots: ra.RobotsTxt) -> _wildcards._GramIndex | None:
    """The file's piece index (None: not built yet), read from the bucket's state: a
    compiled build's classes cannot be patched to count the indexes built."""
    bucket = robots._first[1]
    assert bucket is not None
    assert bucket.wild is not None
    grams = bucket.wild.grams
    return None if grams is None or isinstance(grams, int) else grams


def _piece_index_size(robots: ra.RobotsTxt) -> int | None:
    """How many globs the file's piece index holds (None: not built yet)."""
    index = _piece_index(robots)
    return None if index is None else len(index.globs)


def test_a_file_asked_a_few_questions_never_builds_the_piece_index() -> None:
    """www.uab.edu's 319 Joomla globs (``/{section}/*/cache/``): with the piece index
    built after 4 scans, its fifth question took 1 ms, 55% of the file's 20-question
    one-shot. The index is built only once scans have cost about as much."""
    sections = [f"s{i}" for i in range(20)]
    folders = ["cache", "bin", "logs", "tmp", "cli", "media", "modules", "plugins"]
    body = "User-agent: *\n" + "".join(
        f"Disallow: {s}/*/{f}/\n" for s in ["", *(f"/{s}" for s in sections)] for f in folders
    )
    robots = ra.parse(body)
    urls = [f"https://x.test/s{i % 25}/x/{folders[i % 8]}/" for i in range(SCANS_BEFORE_INDEX)]

    def ask(count: int) -> None:
        for url in urls[:count]:
            # "/*/{folder}/" disallows each; without the last "/" no rule matches.
            assert not robots.allowed(url, robots_token="bot"), url
            assert robots.allowed(url.rstrip("/"), robots_token="bot"), url

    ask(10)
    assert _piece_index_size(robots) is None  # 20 questions, a one-shot's: scans only
    ask(len(urls))
    assert _piece_index_size(robots) == len(folders) * (len(sections) + 1)


def test_a_long_target_counts_as_many_scans_before_the_piece_index() -> None:
    """A scan searches each glob's tail through the target (~0.4 ns a glob per
    character). Counted as one scan each, 128 questions with a 100 KB URL against
    3,000 globs took 16 s (123 ms each) before their 4 ms index was built; counted by
    length, the first such question builds it."""
    robots = ra.parse("User-agent: *\n" + "".join(f"Disallow: /*q{i}z$\n" for i in range(3_000)))
    assert robots.allowed("https://x.test/short", robots_token="bot")
    assert _piece_index_size(robots) is None
    long_url = "https://x.test/" + "x" * 100_000
    assert robots.allowed(long_url, robots_token="bot")
    assert _piece_index_size(robots) == 3_000
    index = _piece_index(robots)
    assert not robots.allowed(long_url + "q2999z", robots_token="bot")
    assert _piece_index(robots) is index  # (not built again)


def test_a_long_url_against_many_globs_needs_no_memory_per_character() -> None:
    """Past 96 globs a bucket finds them through 4-character pieces of the target;
    collecting every piece of a 1 MB URL at once took 85 MB (a hostile link's URL
    is the caller's input). The question stays within a few times the URL."""
    body = ("User-agent: *\n" + "".join(f"Disallow: /*q{i}zz\n" for i in range(200))).encode()
    robots = ra.parse(body)
    for _ in range(SCANS_BEFORE_INDEX + 1):  # past the scans before the piece index
        robots.allowed("http://x.test/abc", robots_token="bot")
    rng = random.Random(1)
    url = "http://x.test/" + "".join(rng.choices(string.ascii_lowercase + string.digits, k=10**6))
    tracemalloc.start()
    try:
        allowed = robots.allowed(url, robots_token="bot")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert allowed == _scan_allows(robots, url)
    assert peak < 8 * len(url)


def _scan_allows(robots: ra.RobotsTxt, url: str) -> bool:
    """The verdict from the globs' own rule (``/*q{i}zz``: the piece anywhere)."""
    return not any(f"q{i}zz" in url for i in range(200))


def test_building_the_piece_index_of_a_hostile_file_is_bounded() -> None:
    """A default-sized file of ~12,000 distinct 36-character globs: building their
    piece index took 53 MB at once (32 pieces a glob, each glob's in a set)."""
    rng = random.Random(2)
    alphabet = string.ascii_lowercase + string.digits
    body = "User-agent: *\n" + "".join(
        "Disallow: /*" + "".join(rng.choices(alphabet, k=36)) + "\n" for _ in range(20_000)
    )
    robots = ra.parse(body.encode())
    for i in range(SCANS_BEFORE_INDEX - 1):  # every scan before the build
        robots.allowed(f"http://x.test/{i}abcdefgh", robots_token="bot")
    assert isinstance(robots._first[1].wild.grams, int)  # type: ignore[union-attr]
    tracemalloc.start()
    try:
        for i in range(2):  # the index is built on the first of these
            robots.allowed(f"http://x.test/{i}abcdefgh", robots_token="bot")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20_000_000
    piece = body.splitlines()[1000].removeprefix("Disallow: /*")  # (kept: max_bytes)
    assert not robots.allowed("http://x.test/p" + piece, robots_token="bot")
    assert robots.allowed("http://x.test/p" + piece[1:], robots_token="bot")


def _count_searches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The star counts of the raised-literal indexes searched from now on, in order."""
    searched: list[int] = []
    real_longest = RaisedLiterals.longest

    def counted(self: RaisedLiterals, target: str) -> int:
        searched.append(self.stars)
        return real_longest(self, target)

    monkeypatch.setattr(RaisedLiterals, "longest", counted)
    return searched


@pytest.mark.skipif(
    ra.COMPILED,
    reason="counts calls by patching RaisedLiterals.longest, which compiled code calls "
    "directly (the count would stay 0); the pure run tests the same source",
)
def test_raised_literals_of_many_star_counts_are_not_all_searched(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``/a5*``, ``/a6**``, ... (999 rules, each its own count of trailing stars, fit in
    a default-sized file): with one raised-literal index per count a question
    searched all 999, 150x a question before issue 13. One index answers once."""
    body = "User-agent: *\n" + "".join(f"Disallow: /a{i % 7}{'*' * i}\n" for i in range(1, 1000))
    robots = ra.parse(body.encode())
    robots.allowed("http://x.test/", robots_token="bot")
    searched = _count_searches(monkeypatch)
    for i in range(9):
        expected = i >= 7  # "/a7x", "/a8x": no rule
        assert robots.allowed(f"http://x.test/a{i}x", robots_token="bot") is expected
    assert robots.explain("http://x.test/a1x", robots_token="bot").line == 1 + 995
    assert len(searched) <= 9


def test_many_distinct_raised_literals_each_with_its_own_star_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """900 distinct literals, each its own count of stars (no quick heads test past 32
    literals): 130-170 us a question with one index per count, 1 us before issue 13."""
    body = "User-agent: *\n" + "".join(f"Disallow: /p{i}/{'*' * i}\n" for i in range(1, 900))
    robots = ra.parse(body.encode())
    robots.allowed("http://x.test/", robots_token="bot")
    searched = _count_searches(monkeypatch)
    assert robots.allowed("http://x.test/zzz", robots_token="bot")
    assert not robots.allowed("http://x.test/p5/x", robots_token="bot")
    verdict = robots.explain("http://x.test/p5/x", robots_token="bot")
    assert verdict.rule is not None
    assert (verdict.line, verdict.rule.pattern) == (6, "/p5/*****")
    assert len(searched) <= 3  # one search a question
