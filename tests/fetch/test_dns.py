"""Slow DNS never delays other names (issue 9 item 3): the fetcher resolves with c-ares
(aiohttp's AsyncResolver) and cuts each lookup at connect_timeout and at the fetch's
own deadline.

A real DNS server on 127.0.0.1 (``dnsserver.py``) answers the healthy names and never
answers the slow ones; a scripted resolver stands in where a lookup must really take
25 s (c-ares gives up on a silent server by itself sooner).
"""

from __future__ import annotations

import asyncio
import socket
import time
from typing import TYPE_CHECKING

import aiohttp
import pytest
from aiohttp.abc import AbstractResolver, ResolveResult

import robots_async as ra

from .conftest import USER_AGENT
from .dnsserver import DNSServer

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

    from .conftest import Server

RULES = "User-agent: *\nDisallow: /private\n"
HEALTHY, SLOW = 10, 20
#: The promise: healthy origins are answered within this, whatever DNS does elsewhere.
HEALTHY_BOUND = 2.0


class SleepyResolver(AbstractResolver):
    """Every lookup takes ``seconds`` (then answers 127.0.0.1)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.lookups = 0

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        self.lookups += 1
        await asyncio.sleep(self.seconds)
        flags = socket.AI_NUMERICHOST | socket.AI_NUMERICSERV
        return [
            ResolveResult(
                hostname=host, host="127.0.0.1", port=port, family=2, proto=0, flags=flags
            )
        ]

    async def close(self) -> None:
        """Nothing to release."""


@pytest.fixture
async def dns() -> AsyncIterator[DNSServer]:
    """healthy-<i>.test -> 127.0.0.1; slow-<i>.test never answered."""
    server = DNSServer(
        answers={f"healthy-{i}.test": "127.0.0.1" for i in range(HEALTHY)},
        silent={f"slow-{i}.test" for i in range(SLOW)},
    )
    await server.start()
    yield server
    server.close()


def resolver_for(dns: DNSServer) -> aiohttp.AsyncResolver:
    """c-ares pointed at the test server only (no /etc/hosts, no system servers)."""
    return aiohttp.AsyncResolver(
        nameservers=["127.0.0.1"], udp_port=dns.port, tcp_port=dns.port, lookups="b"
    )


@pytest.fixture
async def make_dns_fetcher() -> AsyncIterator[Callable[..., ra.AiohttpFetcher]]:
    """Factory: a fetcher with the given inner resolver (closed at teardown)."""
    fetchers: list[ra.AiohttpFetcher] = []

    def build(resolver: AbstractResolver, **changes: object) -> ra.AiohttpFetcher:
        policy = ra.FetchPolicy.rfc9309(**changes)
        fetcher = ra.AiohttpFetcher(user_agent=USER_AGENT, policy=policy, resolver=resolver)
        fetchers.append(fetcher)
        return fetcher

    yield build
    for fetcher in fetchers:
        await fetcher.aclose()


async def test_slow_names_do_not_delay_healthy_origins(
    dns: DNSServer,
    make_server: Callable[[int], Awaitable[Server]],
    make_dns_fetcher: Callable[..., ra.AiohttpFetcher],
) -> None:
    """20 names whose lookups go unanswered, then 10 healthy origins by name (default
    settings): each healthy one is answered right within 2 s while the 20 are still
    waiting on DNS."""
    healthy = await make_server(HEALTHY)
    healthy.text("/robots.txt", RULES)
    checker = ra.RobotsChecker(USER_AGENT, fetcher=make_dns_fetcher(resolver_for(dns)))
    try:
        slow = [
            asyncio.create_task(checker.allowed(f"http://slow-{i}.test:{healthy.ports[0]}/"))
            for i in range(SLOW)
        ]
        await asyncio.sleep(0.3)
        assert sum(dns.queries[f"slow-{i}.test"] > 0 for i in range(SLOW)) == SLOW

        async def timed(index: int) -> tuple[bool, bool, float]:
            base = f"http://healthy-{index}.test:{healthy.ports[index]}"
            started = time.monotonic()
            private = await checker.allowed(base + "/private/x")
            public = await checker.allowed(base + "/public")
            return private, public, time.monotonic() - started

        results = await asyncio.gather(*map(timed, range(HEALTHY)))
        assert [(private, public) for private, public, _ in results] == [(False, True)] * HEALTHY
        assert max(seconds for *_, seconds in results) < HEALTHY_BOUND, results
        assert healthy.count() == HEALTHY
        assert not any(task.done() for task in slow)  # still on DNS: truly concurrent
        for task in slow:
            task.cancel()
    finally:
        await checker.aclose()


async def test_a_silent_name_fails_as_dns_within_connect_timeout(
    dns: DNSServer, make_dns_fetcher: Callable[..., ra.AiohttpFetcher]
) -> None:
    """An unanswered lookup through real c-ares: error "dns" by connect_timeout."""
    fetcher = make_dns_fetcher(resolver_for(dns), connect_timeout=1.5, total_timeout=10.0)
    outcome = await fetcher.fetch("http://slow-0.test/robots.txt")
    assert outcome.error == "dns"
    assert outcome.category == "unreachable"
    assert outcome.elapsed < 1.5 + 1.0
    assert dns.queries["slow-0.test"] >= 1


@pytest.mark.parametrize(("connect", "total", "bound"), [(1.0, 10.0, 1.0), (10.0, 1.0, 1.0)])
async def test_a_25_s_lookup_is_cut_at_the_earlier_limit(
    make_dns_fetcher: Callable[..., ra.AiohttpFetcher], connect: float, total: float, bound: float
) -> None:
    """A lookup that would take 25 s ends at connect_timeout or at the fetch's own
    deadline, whichever comes first, as a "dns" error naming the wait."""
    resolver = SleepyResolver(25.0)
    fetcher = make_dns_fetcher(resolver, connect_timeout=connect, total_timeout=total)
    outcome = await fetcher.fetch("http://slow.test/robots.txt")
    assert outcome.error == "dns"
    assert "took more than" in outcome.error_detail
    assert bound - 0.2 <= outcome.elapsed < bound + 1.0
    assert resolver.lookups == 1
