"""The cache's hot index (``RobotsCache.fresh_robots``, the checker's cached path):
second-chance eviction with exact bounds, expiry against one watermark with no
slack, exact counters, and the per-call User-Agent memo."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from aiohttp import web

import robots_async as ra
from robots_async.core.hot_rules import Unused

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from .conftest import FakeClock, Server

RULES = "User-agent: *\nDisallow: /private\n"


def marked(cache: ra.RobotsCache) -> list[bool]:
    """For each entry of the hot index: hit since the eviction scan last passed it."""
    return [not isinstance(value, Unused) for value in cache._hot._rules.values()]


def cached(cache: ra.RobotsCache, server: Server, count: int) -> list[int]:
    """Indices of the server's first ``count`` origins that the cache holds."""
    return [i for i in range(count) if cache.peek(server.origin(i)) is not None]


# --- eviction: second chance, exact bounds ------------------------------------------


async def test_hot_entry_survives_eviction_pressure(
    make_server: Callable[[int], Awaitable[Server]],
    make_checker: Callable[..., ra.RobotsChecker],
) -> None:
    """max_entries=3 while 9 origins come in one after another: origin 0, asked on the
    hot path between arrivals, is never evicted; the others go oldest first, and the
    bound holds after every arrival."""
    server = await make_server(9)
    server.text("/robots.txt", RULES)
    checker = make_checker(max_entries=3)
    cache = checker.cache
    assert await checker.allowed(server.url("/a", 0))
    for i in range(1, 9):
        hits = cache.stats.hits
        assert not await checker.allowed(server.url("/private", 0))  # a hot hit
        assert cache.stats.hits == hits + 1
        assert await checker.allowed(server.url("/a", i))
        assert cache.stats.entries == len(cached(cache, server, 9)) <= 3
        assert 0 in cached(cache, server, 9)
    assert cached(cache, server, 9) == [0, 7, 8]
    assert cache.stats.evictions == 6
    assert server.count(index=0) == 1
    assert len(cache._hot) == len(cache._entries) == 3


async def test_eviction_scan_is_second_chance_not_exact_lru(
    make_server: Callable[[int], Awaitable[Server]],
    make_checker: Callable[..., ra.RobotsChecker],
) -> None:
    """The documented approximation: origin 0, marked by a hot hit, outlives origin 1
    although 1 was used after it (exact LRU would evict 0); the mark is spent by that
    pass, so 0 goes at the next eviction."""
    server = await make_server(4)
    server.text("/robots.txt", RULES)
    checker = make_checker(max_entries=2)
    cache = checker.cache
    assert await checker.allowed(server.url("/a", 0))
    assert await checker.allowed(server.url("/a", 1))
    assert await checker.allowed(server.url("/b", 0))  # hot: marks 0
    assert (await cache.get(server.origin(1)))[1]  # a cache hit on 1, after 0's
    assert await checker.allowed(server.url("/a", 2))
    assert cached(cache, server, 4) == [0, 2]
    assert await checker.allowed(server.url("/a", 3))
    assert cached(cache, server, 4) == [2, 3]
    assert cache.stats.evictions == 2


async def test_a_pass_over_marked_entries_evicts_the_oldest(
    make_server: Callable[[int], Awaitable[Server]],
    make_checker: Callable[..., ra.RobotsChecker],
) -> None:
    """Every cached entry marked: the scan clears the marks and evicts the oldest,
    never the entry being added (it joins after the scan)."""
    server = await make_server(4)
    server.text("/robots.txt", RULES)
    checker = make_checker(max_entries=3)
    cache = checker.cache
    for i in range(3):
        assert await checker.allowed(server.url("/a", i))
    for i in (2, 0, 1):
        assert await checker.allowed(server.url("/b", i))  # hot: all marked
    assert all(marked(cache))
    assert await checker.allowed(server.url("/a", 3))
    assert cached(cache, server, 4) == [1, 2, 3]
    assert not any(marked(cache))
    hits = cache.stats.hits
    assert not await checker.allowed(server.url("/private", 3))  # cached, on the hot path
    assert cache.stats.hits == hits + 1
    assert server.count(index=3) == 1


async def test_memory_bound_exact_under_second_chance(
    make_server: Callable[[int], Awaitable[Server]],
    make_checker: Callable[..., ra.RobotsChecker],
) -> None:
    """max_memory for two entries, 6 origins arriving while origin 0 is asked on the
    hot path: the estimate never exceeds the bound and 0 stays."""
    server = await make_server(6)
    body = "User-agent: *\n" + "".join(f"Disallow: /p{i}\n" for i in range(300))
    server.text("/robots.txt", body)
    checker = make_checker()
    assert await checker.allowed(server.url("/a", 0))
    size = checker.cache.stats.memory
    bound = 2 * size + size // 2
    checker = make_checker(max_memory=bound)
    cache = checker.cache
    assert await checker.allowed(server.url("/a", 0))
    for i in range(1, 6):
        assert not await checker.allowed(server.url("/p7", 0))  # hot
        assert await checker.allowed(server.url("/a", i))
        assert cache.stats.memory <= bound
        assert cache.stats.entries == 2
        assert 0 in cached(cache, server, 6)
    assert cache.stats.evictions == 4


# --- expiry: the watermark, no slack ---------------------------------------------------


async def test_hot_path_never_serves_at_or_after_expiry(
    make_server: Callable[[int], Awaitable[Server]],
    make_checker: Callable[..., ra.RobotsChecker],
    clock: FakeClock,
) -> None:
    """Origins with max-age 60 s, 600 s and 6,000 s (one watermark for all): each is
    answered from the hot index until just before its expiry and refetched at it;
    an entry expiring later is not dropped early."""
    server = await make_server(3)
    ttls = {server.ports[0]: 60, server.ports[1]: 600, server.ports[2]: 6000}

    async def robots(request: web.Request) -> web.StreamResponse:
        port = request.transport.get_extra_info("sockname")[1] if request.transport else 0
        headers = {"Cache-Control": f"max-age={ttls[port]}"}
        return web.Response(text=RULES, headers=headers)

    server.route("/robots.txt", robots)
    checker = make_checker(clock=clock)
    cache = checker.cache
    for i in range(3):
        assert await checker.allowed(server.url("/a", i))
    for index in range(3):
        entry = cache.peek(server.origin(index))
        assert entry is not None
        assert entry.expires_at - entry.fetched_at == (60, 600, 6000)[index]
        clock.advance(entry.expires_at - 0.001 - clock())
        fetches, hits = server.count(), cache.stats.hits
        for i in range(index, 3):
            assert cache.fresh_robots(str(server.origin(i))) is not None
            assert not await checker.allowed(server.url("/private", i))
        assert server.count() == fetches  # all answered from the cache
        assert cache.stats.hits == hits + 2 * (3 - index)
        clock.advance(entry.expires_at - clock())
        assert clock() == entry.expires_at
        assert cache.fresh_robots(str(server.origin(index))) is None
        assert await checker.allowed(server.url("/a", index))
        assert server.count(index=index) == 2  # refetched at its expiry, not after
    assert cache.fresh_robots(str(server.origin(2))) is not None  # the refetched copy


async def test_expiry_heap_stays_bounded(
    server: Server, make_checker: Callable[..., ra.RobotsChecker], clock: FakeClock
) -> None:
    """400 refetches of one origin within its max-age (invalidated each time) leave at
    most 2 x 1 + 64 items in the expiry heap; expiry still works after."""
    server.text("/robots.txt", RULES, headers={"Cache-Control": "max-age=60"})
    checker = make_checker(clock=clock)
    cache = checker.cache
    for i in range(400):
        assert await checker.allowed(server.url("/a"))
        assert len(cache._hot._expiries) <= 2 * len(cache._hot) + 64, i
        assert checker.invalidate(server.url("/"))
    assert server.count() == 400
    assert await checker.allowed(server.url("/a"))
    assert len(cache._hot) == 1
    assert cache.fresh_robots(str(server.origin())) is not None
    clock.advance(60)
    assert cache.fresh_robots(str(server.origin())) is None
    assert cache._hot._expiries == []


async def test_stale_copy_leaves_the_hot_index_and_comes_back(
    server: Server, make_checker: Callable[..., ra.RobotsChecker], clock: FakeClock
) -> None:
    """A stale copy is never in the hot index (fresh_text counts it: stale_served
    exact); once robots.txt answers again the fetched entry is hot again."""
    server.text("/robots.txt", RULES, headers={"Cache-Control": "max-age=600"})
    checker = make_checker(clock=clock)
    cache = checker.cache
    text = str(server.origin())
    assert not await checker.allowed(server.url("/private"))
    assert cache.fresh_robots(text) is not None
    server.text("/robots.txt", status=503)
    clock.advance(601)
    assert not await checker.allowed(server.url("/private"))
    entry = cache.peek(server.origin())
    assert entry is not None
    assert entry.source == "stale"
    assert cache.fresh_robots(text) is None
    stale, hits = cache.stats.stale_served, cache.stats.hits
    for _ in range(5):
        assert await checker.allowed(server.url("/public"))
    assert (cache.stats.stale_served, cache.stats.hits) == (stale + 5, hits + 5)
    server.text("/robots.txt", "User-agent: *\nDisallow: /public\n")
    clock.advance(entry.expires_at - clock() + 1)
    assert not await checker.allowed(server.url("/public"))
    assert cache.fresh_robots(text) is not None
    assert cache.stats.stale_served == stale + 5


async def test_closed_cache_has_no_hot_entries(
    server: Server,
    make_checker: Callable[..., ra.RobotsChecker],
    make_cache: Callable[..., ra.RobotsCache],
) -> None:
    """After the cache's aclose() the hot path finds nothing: a checker sharing that
    cache raises ClosedError for a cached origin instead of answering."""
    server.text("/robots.txt", RULES)
    cache = make_cache()
    checker = make_checker(cache=cache)
    assert await checker.allowed(server.url("/public"))
    assert cache.fresh_robots(str(server.origin())) is not None
    await cache.aclose()
    assert cache.fresh_robots(str(server.origin())) is None
    with pytest.raises(ra.ClosedError):
        await checker.allowed(server.url("/public"))


# --- per-call User-Agent memo --------------------------------------------------------------


async def test_alternating_user_agents_get_their_own_groups(
    server: Server, make_checker: Callable[..., ra.RobotsChecker]
) -> None:
    """Three User-Agents (one passed as a new equal string each time) alternating on
    the hot path: each call is judged by its own group, whatever the last one was."""
    server.text(
        "/robots.txt",
        "User-agent: AlphaBot\nDisallow: /a\n\nUser-agent: BetaBot\nDisallow: /b\n\n"
        "User-agent: *\nDisallow: /c\n",
    )
    checker = make_checker()
    assert await checker.allowed(server.url("/x"))
    verdicts = {"AlphaBot/2.0": (False, True, True), "BetaBot/1.1": (True, False, True)}
    for round_ in range(20):
        for agent, expected in verdicts.items():
            fresh = "".join(list(agent))  # an equal str, not the same object
            for path, allowed in zip(("/a", "/b", "/c"), expected, strict=True):
                assert await checker.allowed(server.url(path), user_agent=fresh) is allowed
                assert await checker.allowed(server.url(path)) is (path != "/c"), round_
    assert checker.stats.checks == 1 + 20 * 2 * 3 * 2
    assert server.count() == 1
