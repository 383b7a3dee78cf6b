"""Connections at crawl scale (issue 9 item 2): no robots.txt connection is kept, so
3,000 origins under a soft limit of 1,024 descriptors are all answered and the
descriptor count returns to its baseline after each wave; running out of descriptors
is our limit ("local-limit"): the fetch is tried again with back-off within its
total_timeout, and only then answered fail-closed for 5 s, never the site's verdict.

The checker runs in a subprocess whose RLIMIT_NOFILE soft limit is 1,024; the origins
(one port of 127.0.0.1 each) are served from this process by servers that would keep
every connection alive.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import TYPE_CHECKING, Any

import pytest

from .dnsserver import DNSServer

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

ORIGINS = 3000
WAVE = 1000
SOFT_LIMIT = 1024


def response(status: str, body: bytes) -> bytes:
    """A keep-alive HTTP/1.1 response carrying ``body``."""
    head = f"HTTP/1.1 {status}\r\nContent-Length: {len(body)}\r\nConnection: keep-alive\r\n\r\n"
    return head.encode() + body


#: Per origin, by index: a Disallow for /private, no robots.txt (404), an Allow all.
BODIES = (
    response("200 OK", b"User-agent: *\nDisallow: /private\n"),
    response("404 Not Found", b""),
    response("200 OK", b"User-agent: *\nAllow: /\n"),
)
#: Whether /private/x is allowed, by the same index.
EXPECTED = (False, True, True)

CLIENT = r"""
import asyncio, collections, json, os, resource, sys

import aiohttp

import robots_async as ra

soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (int(sys.argv[3]), hard))
lines = [line.split() for line in open(sys.argv[1]).read().splitlines()]
bases = [base for base, _ in lines]
expected = [flag == "1" for _, flag in lines]


def fds():
    return len(os.listdir("/proc/self/fd"))


class Clock:
    now = 1_000_000.0

    def __call__(self):
        return self.now


async def settled(baseline):
    for _ in range(150):
        if fds() <= baseline:
            break
        await asyncio.sleep(0.02)
    return fds()


async def waves(wave):
    checker = ra.RobotsChecker("ConnBot/1.0")
    await checker.allowed(bases[0] + "/private/x")  # session and resolver exist now
    baseline, peak, after, wrong = fds(), 0, [], 0

    async def sample():
        nonlocal peak
        while True:
            peak = max(peak, fds())
            await asyncio.sleep(0.005)

    sampler = asyncio.create_task(sample())
    for start in range(1, len(bases), wave):
        urls = [base + "/private/x" for base in bases[start : start + wave]]
        answers = await asyncio.gather(*map(checker.allowed, urls))
        wrong += sum(a != e for a, e in zip(answers, expected[start : start + wave]))
        after.append(await settled(baseline))
    sampler.cancel()
    stats = checker.stats.cache
    await checker.aclose()
    return {"baseline": baseline, "after": after, "peak": peak, "wrong": wrong,
            "fetches": stats.fetches, "errors": stats.errors, "local_limits": stats.local_limits}


def hoard_descriptors(keep_free):
    hoard = []
    try:
        while True:
            hoard.append(os.open("/dev/null", os.O_RDONLY))
    except OSError:
        pass
    for _ in range(keep_free):
        os.close(hoard.pop())
    return hoard


async def give_back(hoard, after):
    await asyncio.sleep(after)
    while hoard:
        os.close(hoard.pop())


def summary(checker, urls, first):
    kinds = collections.Counter(str(d.outcome.error) for d in first)
    ttls = sorted({
        round(e.expires_at - e.fetched_at, 3)
        for e in (checker.cache.peek(ra.Origin.from_url(u)) for u in urls)
        if e is not None and e.outcome.error == "local-limit"
    })
    stats = checker.stats.cache
    return {"kinds": kinds, "ttls": ttls,
            "failed_open": sum(d.allowed for d in first if d.outcome.error == "local-limit"),
            "wrong_first": sum(
                d.allowed != e for d, e in zip(first, expected[1:]) if d.outcome.error is None
            ),
            "local_limits": stats.local_limits, "retries": stats.local_limit_retries}


async def starved(count, keep_free, total_timeout):
    # keep_free descriptors left for the whole first round (and, with "long", no more
    # than that ever): fetches that find none must wait for others to give theirs back.
    clock = Clock()
    policy = ra.FetchPolicy(total_timeout=total_timeout)
    checker = ra.RobotsChecker("ConnBot/1.0", clock=clock, fetch_policy=policy)
    await checker.allowed(bases[0] + "/private/x")
    hoard = hoard_descriptors(keep_free)
    urls = [base + "/private/x" for base in bases[1 : count + 1]]
    loop = asyncio.get_running_loop()
    started = loop.time()
    first = await asyncio.gather(*map(checker.explain, urls))
    elapsed = loop.time() - started
    for fd in hoard:
        os.close(fd)
    result = summary(checker, urls, first)
    clock.now += 6.0  # past LOCAL_LIMIT_TTL: asked again
    second = await asyncio.gather(*map(checker.allowed, urls))
    result["wrong_second"] = sum(a != e for a, e in zip(second, expected[1:]))
    result["elapsed"] = elapsed
    await checker.aclose()
    return result


async def starved_dns(count, dns_port):
    # Names through c-ares, whose resolver has no socket open yet: with no descriptor
    # free it can only say "Could not contact DNS servers". Descriptors come back 0.5 s
    # into the round.
    clock = Clock()
    resolver = aiohttp.AsyncResolver(
        nameservers=["127.0.0.1"], udp_port=dns_port, tcp_port=dns_port, lookups="b"
    )
    fetcher = ra.AiohttpFetcher(user_agent="ConnBot/1.0", resolver=resolver)
    checker = ra.RobotsChecker("ConnBot/1.0", fetcher=fetcher, clock=clock)
    await checker.allowed(bases[0] + "/private/x")  # the session exists (a literal: no DNS)
    urls = [
        f"http://origin-{i}.test:{base.rsplit(':', 1)[1]}/private/x"
        for i, base in enumerate(bases[1 : count + 1])
    ]
    hoard = hoard_descriptors(0)
    releasing = asyncio.create_task(give_back(hoard, 0.5))
    first = await asyncio.gather(*map(checker.explain, urls))
    await releasing
    result = summary(checker, urls, first)
    await checker.aclose()
    await fetcher.aclose()
    return result


mode, size = sys.argv[2], int(sys.argv[4])
if mode == "waves":
    result = asyncio.run(waves(size))
elif mode == "starved":
    result = asyncio.run(starved(size, 8, 30.0))
elif mode == "starved-long":
    result = asyncio.run(starved(size, 0, 1.5))
else:
    result = asyncio.run(starved_dns(size, int(sys.argv[5])))
print(json.dumps(result))
"""


class KeepAliveOrigins:
    """``n`` ports of 127.0.0.1 answering robots.txt and keeping connections open."""

    def __init__(self) -> None:
        self.ports: list[int] = []
        self.open = 0
        self.peak_open = 0
        self.requests = 0
        self._servers: list[asyncio.Server] = []
        self._tasks: set[asyncio.Task[Any]] = set()

    async def start(self, n: int) -> None:
        for index in range(n):
            server = await asyncio.start_server(
                lambda r, w, i=index: self._handle(r, w, BODIES[i % 3]), "127.0.0.1", 0
            )
            self._servers.append(server)
            self.ports.append(server.sockets[0].getsockname()[1])

    def write_urls(self, path: Path) -> Path:
        lines = (
            f"http://127.0.0.1:{port} {int(EXPECTED[i % 3])}" for i, port in enumerate(self.ports)
        )
        path.write_text("\n".join(lines))
        return path

    async def close(self) -> None:
        for server in self._servers:
            server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _handle(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, body: bytes
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.open += 1
        self.peak_open = max(self.peak_open, self.open)
        try:
            while True:  # keep-alive: serve until the client closes
                await reader.readuntil(b"\r\n\r\n")
                self.requests += 1
                writer.write(body)
                await writer.drain()
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        finally:
            self.open -= 1
            self._tasks.discard(task)
            writer.close()


@pytest.fixture
async def origins() -> AsyncIterator[KeepAliveOrigins]:
    """``ORIGINS`` keep-alive origins."""
    served = KeepAliveOrigins()
    await served.start(ORIGINS)
    yield served
    await served.close()


async def run_client(urls: Path, mode: str, size: int, *extra: str) -> dict[str, Any]:
    """Run :data:`CLIENT` in a subprocess with the soft descriptor limit; its JSON."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        CLIENT,
        str(urls),
        mode,
        str(SOFT_LIMIT),
        str(size),
        *extra,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), 90)
    except asyncio.TimeoutError:
        process.kill()
        await process.wait()
        raise
    assert process.returncode == 0, err.decode()[-3000:]
    result: dict[str, Any] = json.loads(out.decode().splitlines()[-1])
    return result


async def test_3000_origins_under_1024_descriptors(
    origins: KeepAliveOrigins, tmp_path: Path
) -> None:
    """3,000 origins in waves of 1,000 with a soft limit of 1,024: every answer right,
    no local-limit, the descriptors back at the baseline after each wave and never
    more than the lanes' socket cap (96) above it; the servers, which would keep
    every connection, see each one closed."""
    result = await run_client(origins.write_urls(tmp_path / "urls"), "waves", WAVE)
    assert result["wrong"] == 0, result
    assert result["fetches"] == ORIGINS
    assert result["errors"] == result["local_limits"] == 0, result
    assert result["after"] == [result["baseline"]] * 3, result
    assert result["peak"] - result["baseline"] <= 96 + 4, result  # + sampler's own fd
    assert origins.requests == ORIGINS
    assert origins.peak_open <= 96 + 1
    for _ in range(100):
        if origins.open == 0:
            break
        await asyncio.sleep(0.02)
    assert origins.open == 0


async def test_out_of_descriptors_waits_for_descriptors_not_a_verdict(
    origins: KeepAliveOrigins, tmp_path: Path
) -> None:
    """With 8 descriptors left, 200 concurrent checks: connects that hit EMFILE are
    counted and tried again with back-off as other fetches give theirs back, so every
    check gets the site's own answer (before: those checks were "disallowed" for 5 s)."""
    result = await run_client(origins.write_urls(tmp_path / "urls"), "starved", 200)
    assert result["local_limits"] > 0, result  # the shortage happened
    assert result["retries"] > 0, result
    assert result["kinds"] == {"None": 200}, result  # ...and decided no verdict
    assert result["wrong_first"] == 0
    assert result["wrong_second"] == 0
    assert result["elapsed"] < 20, result


async def test_descriptors_never_back_within_total_timeout_fail_closed_for_5s(
    origins: KeepAliveOrigins, tmp_path: Path
) -> None:
    """No descriptor at all for longer than total_timeout (1.5 s): each fetch is tried
    again until then, and only then answered "local-limit" (disallow, kept 5 s,
    distinguishable from the site's verdict); once descriptors are back and 6 s have
    passed every origin is answered right."""
    result = await run_client(origins.write_urls(tmp_path / "urls"), "starved-long", 20)
    assert result["kinds"] == {"local-limit": 20}, result
    assert result["failed_open"] == 0
    assert result["ttls"] == [5.0]
    assert result["retries"] >= 20 * 2, result  # each fetch tried at least three times
    assert 1.4 <= result["elapsed"] < 5, result
    assert result["wrong_second"] == 0


async def test_a_lookup_that_fails_for_want_of_descriptors_is_retried(
    origins: KeepAliveOrigins, tmp_path: Path
) -> None:
    """No descriptor free: c-ares cannot open its socket and reports "Could not contact
    DNS servers"; the fetcher asks the OS, finds EMFILE and reports "local-limit", not
    "dns" (5 minutes of back-off); descriptors come back 0.5 s later and the retried
    fetches answer all 20 right in the first round."""
    dns = await DNSServer({f"origin-{i}.test": "127.0.0.1" for i in range(20)}).start()
    try:
        urls = origins.write_urls(tmp_path / "urls")
        result = await run_client(urls, "starved-dns", 20, str(dns.port))
    finally:
        dns.close()
    assert result["local_limits"] >= 20, result
    assert result["kinds"] == {"None": 20}, result
    assert result["wrong_first"] == 0
