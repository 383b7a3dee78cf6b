"""The checker's hot path: a usual URL finds its cache entry by the origin text it
spells (``PLAIN_URL``), in an index kept in step with the cache, with every guarantee
of the general path (expiry, LRU, stats, one event loop, closing, the URL sent)."""

from __future__ import annotations

import asyncio
import random
from typing import TYPE_CHECKING

import pytest
import yarl

import robots_async as ra
from robots_async.core.url import request_target
from robots_async.fetch.wire import PLAIN_URL, wire_url

from ..helpers import OwnGrowth

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from .conftest import FakeClock, Server

RULES = "User-agent: *\nDisallow: /private\n"


def assert_in_step(cache: ra.RobotsCache) -> None:
    """One text key per cached origin, each naming the entry of that origin."""
    texts, entries = cache._texts, cache._entries
    assert len(texts) == len(entries) == cache.stats.entries
    assert set(texts.values()) == set(entries)
    for origin, text in texts.items():
        assert text == str(origin)
        assert entries[text].origin == origin


# --- what the one regex proves ------------------------------------------------------

_PIECES = ["a", "Z", "0", ".", "-", "_", "%", "%41", "/", "?", "#", ":", "@", "~", "!", " ", "é"]
_HOSTS = ["h.example", "H.example", "h.example.", "h..example", "127.0.0.1", "xn--bcher-kva.ch"]
_PORTS = ["", ":80", ":443", ":8080", ":080", ":0", ":65535", ":65536", ":", ":1:2"]


def _random_url(rng: random.Random) -> str:
    scheme = rng.choice(["http", "https"])
    userinfo = rng.choice(["", "", "", "u@", "u:p@"])
    path = "".join(rng.choice(_PIECES) for _ in range(rng.randrange(8)))
    if path and path[0] not in "/?#":
        path = "/" + path
    return f"{scheme}://{userinfo}{rng.choice(_HOSTS)}{rng.choice(_PORTS)}{path}"


def test_plain_url_is_sent_as_written_and_spells_its_origin() -> None:
    """5,000 random URLs: each one PLAIN_URL takes (without "/.") is what yarl sends,
    and its group 1 is the text of its Origin, or of none (a default port spelled out,
    a port past 65535)."""
    rng = random.Random(13)
    taken = default_ports = 0
    for _ in range(5000):
        url = _random_url(rng)
        plain = PLAIN_URL(url)
        if plain is None or "/." in url:
            continue
        taken += 1
        try:
            sent = yarl.URL(url)
        except ValueError:  # a port past 65535: the text of no Origin, refused
            assert int(plain[1].rpartition(":")[2]) > 65535
            with pytest.raises(ra.InvalidURLError):
                ra.Origin.from_url(url)
            continue
        # What aiohttp sends: this authority and this request target ("/" added).
        authority = f"{sent.scheme}://{sent.raw_authority}"
        assert url.startswith(authority)
        assert url[len(authority) :][:1] in ("", "/", "?", "#")
        assert request_target(url) == sent.raw_path_qs
        assert wire_url(url) == url
        origin = ra.Origin.from_url(url)
        if plain[1] != str(origin):
            default_ports += 1
            assert plain[1] == f"{origin.scheme}://{origin.host}:{origin.port}"
            assert origin.port == {"http": 80, "https": 443}[origin.scheme]
    assert taken > 500
    assert default_ports > 10


@pytest.mark.parametrize(
    "url",
    [
        "https://H.example/",  # upper case: Origin lower-cases it
        "https://h.example./",  # a trailing dot names h.example
        "https://h..example./",
        "https://h.example:080/",  # leading zero
        "https://h.example:0/",
        "https://u@h.example/",  # userinfo
        "https://[::1]/",
        "https://h_x.example/",  # not proven unchanged by yarl
        "https://h.example/a%41",
        "https://h.example/a b",
        "https://h.example/x?",  # an empty query is dropped by yarl
        "https://h.example/x?#f",
        "HTTPS://h.example/",
    ],
)
def test_plain_url_refuses_other_spellings(url: str) -> None:
    """Spellings whose origin text or wire form differ from what is written are left
    to the general path (wire_url() and Origin.from_url())."""
    assert PLAIN_URL(url) is None


# --- the index kept in step ------------------------------------------------------------


async def test_index_in_step_through_eviction_invalidate_and_refresh(
    make_server: Callable[[int], Awaitable[Server]],
    make_checker: Callable[..., ra.RobotsChecker],
    clock: FakeClock,
) -> None:
    """max_entries=2 over 4 origins, an invalidate and an expiry: the text index holds
    exactly the cached origins after each step, and hot hits keep LRU order."""
    server = await make_server(4)
    server.text("/robots.txt", RULES, headers={"Cache-Control": "max-age=60"})
    checker = make_checker(clock=clock, max_entries=2)
    cache = checker.cache
    assert not await checker.allowed(server.url("/private", 0))
    assert await checker.allowed(server.url("/a", 1))
    assert_in_step(cache)
    assert await checker.allowed(server.url("/b", 0))  # a hot hit: origin 0 most recent
    assert await checker.allowed(server.url("/c", 2))  # evicts origin 1, not 0
    assert_in_step(cache)
    assert cache.peek(server.origin(1)) is None
    assert cache.peek(server.origin(0)) is not None
    assert cache.stats.evictions == 1
    assert checker.invalidate(server.url("/", 0))
    assert_in_step(cache)
    assert cache.stats.entries == 1
    assert await checker.allowed(server.url("/d", 0))  # fetched again
    assert server.count(index=0) == 2
    assert_in_step(cache)
    clock.advance(61)  # both expired: the hot path refuses, the general path refetches
    assert not await checker.allowed(server.url("/private", 2))
    assert server.count(index=2) == 2
    entry = cache.peek(server.origin(2))
    assert entry is not None
    assert entry.generation == 2
    assert cache.fresh_text(str(server.origin(2))) is entry
    assert_in_step(cache)
    hits = cache.stats.hits
    assert not await checker.allowed(server.url("/private/x", 2))
    assert cache.stats.hits == hits + 1
    assert server.count() == 5


async def test_other_spellings_get_the_same_verdicts(
    server: Server, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """Spellings of one URL that the hot path leaves to the general path are judged by
    the same rules, from the same entry: robots.txt fetched once."""
    server.text("/robots.txt", RULES)
    checker = make_checker()
    port = server.ports[0]
    assert not await checker.allowed(f"http://127.0.0.1:{port}/private/x")
    assert await checker.allowed(f"http://127.0.0.1:{port}/public")
    private = [
        f"HTTP://127.0.0.1:{port}/private/x",
        f"http://127.0.0.1:0{port}/private/x",
        f"http://u:p@127.0.0.1:{port}/private/x",
        f"http://127.0.0.1:{port}/a/../private/x",
        f"http://127.0.0.1:{port}/%70rivate/x",
        f"http://127.0.0.1.:{port}/private/x",
    ]
    public = [url.replace("private", "public") for url in private[:-2]]
    public += [f"http://127.0.0.1:{port}/%70ublic/x", f"http://127.0.0.1.:{port}/public/x"]
    assert [await checker.allowed(url) for url in private] == [False] * len(private)
    assert [await checker.allowed(url) for url in public] == [True] * len(public)
    assert not await checker.allowed(yarl.URL(f"http://127.0.0.1:{port}/private/y"))
    assert server.count() == 1
    stats = checker.stats
    assert stats.checks == 3 + 2 * len(private)
    assert stats.disallowed == 2 + len(private)
    assert stats.cache.hits == stats.checks - 1
    assert_in_step(checker.cache)


async def test_nothing_kept_per_spelling(
    server: Server, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """4,500 cached checks of distinct URLs and spellings of one origin (hot path and
    general path) leave nothing allocated by robots_async behind."""
    server.text("/robots.txt", RULES)
    checker = make_checker()
    port = server.ports[0]
    assert await checker.allowed(f"http://127.0.0.1:{port}/")

    async def ask(numbers: range) -> None:
        for i in numbers:
            assert await checker.allowed(f"http://127.0.0.1:{port}/page/{i}?q={i}")
            assert await checker.allowed(f"http://user{i}@127.0.0.1:{port}/page/{i}")
            assert not await checker.allowed(f"HTTP://127.0.0.1:{port}/private/{i}")

    with OwnGrowth() as growth:
        # Traced from the start, so that the bounded caches of yarl (<= 512 URLs each,
        # used by the general path) hold traced items before and after alike.
        await ask(range(1000, 2500))
        growth.mark()
        await ask(range(2500, 4000))
        grown, top = growth.grown()
    assert grown < 16 * 1024, top
    assert checker.stats.cache.entries == 1
    assert len(checker.cache._texts) == 1


# --- guarantees kept on the hot path ----------------------------------------------------


async def test_hot_path_refuses_a_loop_in_another_thread(
    server: Server, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """A cached origin asked from an event loop running in another thread while the
    bound one runs: EventLoopError, as from a loop run after it."""
    server.text("/robots.txt", RULES)
    checker = make_checker()
    url = server.url("/public")
    assert await checker.allowed(url)  # bound, cached
    with pytest.raises(ra.EventLoopError, match="another event loop"):
        await asyncio.to_thread(asyncio.run, checker.allowed(url))
    assert await checker.allowed(url)  # still answers in its own loop


async def test_closed_checker_refuses_with_a_shared_cache(
    server: Server,
    make_checker: Callable[..., ra.RobotsChecker],
    make_cache: Callable[..., ra.RobotsCache],
) -> None:
    """A checker over a cache it does not own: after aclose() even a cached origin
    raises ClosedError, while the cache itself still answers."""
    server.text("/robots.txt", RULES)
    cache = make_cache()
    checker = make_checker(cache=cache)
    assert await checker.allowed(server.url("/public"))
    await checker.aclose()
    with pytest.raises(ra.ClosedError):
        await checker.allowed(server.url("/public"))
    assert cache.fresh(server.origin()) is not None


async def test_hot_hits_count_stale_copies(
    server: Server, make_checker: Callable[..., ra.RobotsChecker], clock: FakeClock
) -> None:
    """A last good copy served through the hot path counts in stale_served and hits."""
    server.text("/robots.txt", RULES, headers={"Cache-Control": "max-age=600"})
    checker = make_checker(clock=clock)
    assert not await checker.allowed(server.url("/private"))
    server.text("/robots.txt", status=503)
    clock.advance(601)
    assert not await checker.allowed(server.url("/private"))  # refetched: stale
    stale, hits = checker.stats.cache.stale_served, checker.stats.cache.hits
    for _ in range(3):
        assert not await checker.allowed(server.url("/private/p"))
    assert checker.stats.cache.stale_served == stale + 3
    assert checker.stats.cache.hits == hits + 3
    assert server.count() == 2
