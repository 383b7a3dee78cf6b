"""Reliability battery: hostile servers, hostile robots.txt files, load with failures.

    python bench/reliability.py [--verbose] [--no-load]

Runs every case itself (not under pytest) and prints one row per category: cases
tried, passed, max time (s) and max memory (MiB, tracemalloc peak). A case passes when
the documented outcome happened within its time and memory bound (README.md
"Semantics"): a hostile server is answered within total_timeout + 2 s in < 20 MiB and
never fails open; a hostile robots.txt never raises and reports the expected warnings;
the load cases answer every check, fetch each origin once and lose no answer when
half of the waiters are cancelled. Failed cases are listed with the reason. Exit
status 1 if any case failed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.hostile.conftest
sys.path.insert(0, str(Path(__file__).parent))  # soak.py, loopback.py

import aiohttp
from soak import SoakOptions, phase_one, phase_two

import robots_async as ra
from robots_async.fetch.addresses import is_public
from tests.hostile.conftest import (
    DRIBBLE,
    LIMIT,
    USER_AGENT,
    HostileServer,
    bomb,
    measured,
    policy,
    response_head,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

SERVERS = "hostile servers"
FILES = "hostile robots.txt"
LOAD = "load with failures"
RULES = b"User-agent: *\nDisallow: /private\n"
AGENT = "Bot"
#: Slack on top of a configured timeout, and memory allowed, for a hostile server.
SLACK = 2.0
SERVER_MIB = 20.0


@dataclass(frozen=True)
class Case:
    """One scenario with its bounds."""

    category: str
    name: str
    run: Callable[[], Awaitable[str | None]]
    seconds: float
    memory_mib: float


@dataclass(frozen=True)
class Result:
    """How a case went."""

    case: Case
    passed: bool
    seconds: float
    peak_mib: float
    detail: str


def expect(condition: bool, why: str) -> str | None:
    """``why`` unless ``condition`` holds."""
    return None if condition else why


def first_problem(*problems: str | None) -> str | None:
    """The first non-None problem."""
    return next((p for p in problems if p is not None), None)


# --- hostile servers --------------------------------------------------------------------


@contextlib.asynccontextmanager
async def hostile(
    configure: Callable[[HostileServer], Any] | None = None,
) -> AsyncIterator[HostileServer]:
    """A :class:`HostileServer`, configured, closed afterwards."""
    server = await HostileServer().start()
    try:
        if configure is not None:
            configure(server)
        yield server
    finally:
        await server.close()


@contextlib.asynccontextmanager
async def checker_for(
    session: aiohttp.ClientSession | None = None, total: float = 3.0, **changes: Any
) -> AsyncIterator[ra.RobotsChecker]:
    """A RobotsChecker with short timeouts, closed afterwards."""
    checker = ra.RobotsChecker(
        USER_AGENT, session=session, fetch_policy=policy(total, 1.0, **changes)
    )
    try:
        yield checker
    finally:
        await checker.aclose()


async def fails_closed(
    checker: ra.RobotsChecker,
    server: HostileServer | None,
    decision: ra.Decision,
    kinds: set[str],
) -> str | None:
    """Unreachable with one of ``kinds``, disallowed, and cached for the next check."""
    outcome = decision.outcome
    if outcome.error not in kinds or outcome.category != "unreachable":
        return f"got {outcome.category}/{outcome.error} ({outcome.error_detail[:80]})"
    if decision.allowed:
        return "allowed: failed open"
    connections = server.connections if server is not None else 0
    again = await checker.explain(decision.url.replace("/page", "/other"))
    return first_problem(
        expect(not again.allowed, "second check allowed"),
        expect(again.from_cache, "second check not from the cache"),
        expect(checker.stats.cache.fetches == 1, "second check fetched again"),
        expect(
            server is None or server.connections == connections,
            "second check opened a connection",
        ),
    )


def unreachable_case(
    name: str,
    configure: Callable[[HostileServer], Any],
    kinds: set[str],
    *,
    total: float = 3.0,
    scheme: str = "http",
    one_request: bool = False,
) -> Case:
    """A server case whose documented outcome is unreachable (disallow all)."""

    async def run() -> str | None:
        async with hostile(configure) as server, checker_for(total=total) as checker:
            decision = await checker.explain(f"{scheme}://127.0.0.1:{server.port}/page")
            problem = await fails_closed(checker, server, decision, kinds)
            if problem is None and one_request:
                count = server.requests["/robots.txt"]
                problem = expect(count == 1, f"robots.txt requested {count} times")
            return problem

    return Case(SERVERS, name, run, total + SLACK, SERVER_MIB)


def truncated_case(
    name: str, configure: Callable[[HostileServer], Any], *, total: float = 10.0
) -> Case:
    """A server case whose documented outcome is ok + truncated at 512,000 bytes."""

    async def run() -> str | None:
        async with hostile(configure) as server, checker_for(total=total) as checker:
            decision = await checker.explain(server.url("/private/x"))
            outcome = decision.outcome
            problem = first_problem(
                expect(outcome.error is None, f"error {outcome.error}: {outcome.error_detail}"),
                expect(outcome.truncated, "not truncated"),
                expect(outcome.bytes_read == LIMIT, f"{outcome.bytes_read} bytes parsed"),
            )
            if problem is not None:
                return problem
            public = await checker.allowed(server.url("/public"))
            if "/robots.txt" in server.routes and server.sent["/robots.txt"] > LIMIT:
                # A streamed body: the client must have dropped the connection.
                try:
                    await asyncio.wait_for(server.ended("/robots.txt").wait(), 5.0)
                except asyncio.TimeoutError:
                    return "the connection was not dropped"
            robots = outcome.robots
            assert robots is not None
            if not robots.groups:  # a body without rules allows all
                return expect(decision.allowed and public, "no rules, yet disallowed")
            return expect(not decision.allowed and public, "the rules before the cut lost")

    return Case(SERVERS, name, run, total + SLACK, SERVER_MIB)


def redirect_case(name: str, location: str, error: str) -> Case:
    """A redirect whose documented outcome is unavailable (allow all) with ``error``."""

    async def run() -> str | None:
        def configure(server: HostileServer) -> None:
            server.redirect("/robots.txt", location.replace("SELF", server.url("/robots.txt")))
            server.respond("/x", b"User-agent: *\nDisallow: /\n")

        async with hostile(configure) as server, checker_for() as checker:
            decision = await checker.explain(server.url("/page"))
            outcome = decision.outcome
            return first_problem(
                expect(
                    (outcome.error, outcome.category) == (error, "unavailable"),
                    f"got {outcome.category}/{outcome.error} status {outcome.status} "
                    f"final {outcome.final_url} {outcome.error_detail[:60]}",
                ),
                expect(decision.allowed, "disallowed"),
                expect(dict(server.requests) == {"/robots.txt": 1}, f"{dict(server.requests)}"),
            )

    return Case(SERVERS, name, run, 3.0 + SLACK, SERVER_MIB)


LOOPBACK = ipaddress.ip_address("127.0.0.1")


def ssrf_case(target: str) -> Case:
    """The default SSRF guard refuses ``target`` before any request is made (the entry
    on 127.0.0.1 is declared public here, so the loopback targets are left to
    tests/fetch/test_ssrf.py, which serves a "public" twin on 127.0.0.2)."""

    async def run() -> str | None:
        started: list[str] = []

        async def on_request_start(_: Any, __: Any, params: Any) -> None:
            started.append(str(params.url))

        trace = aiohttp.TraceConfig()
        trace.on_request_start.append(on_request_start)
        async with (
            hostile() as entry,
            aiohttp.ClientSession(trace_configs=[trace]) as session,
            ra.RobotsChecker(
                USER_AGENT,
                fetcher=ra.AiohttpFetcher(  # leaves the session open; holds nothing else
                    session,
                    user_agent=USER_AGENT,
                    policy=policy(10.0, 1.0),
                    public_address=lambda a: a == LOOPBACK or is_public(a),
                ),
            ) as checker,
        ):
            entry.redirect("/robots.txt", target)
            begun = time.perf_counter()
            decision = await checker.explain(entry.url("/page"))
            seconds = time.perf_counter() - begun
            return first_problem(
                await fails_closed(checker, entry, decision, {"blocked-redirect"}),
                expect(seconds < 2.0, f"took {seconds:.2f} s: a connection was attempted"),
                expect(started == [entry.url("/robots.txt")], f"requests started: {started}"),
            )

    return Case(SERVERS, f"SSRF guard: redirect to {target}", run, 10.0, SERVER_MIB)


async def guard_off() -> str | None:
    """A loopback origin may redirect to a loopback address (private to private)."""
    async with (
        hostile() as entry,
        hostile(lambda s: s.respond("/robots.txt", RULES)) as target,
        checker_for() as checker,
    ):
        entry.redirect("/robots.txt", target.url("/robots.txt"))
        decision = await checker.explain(entry.url("/private/x"))
        return first_problem(
            expect(decision.outcome.error is None, f"error {decision.outcome.error}"),
            expect(not decision.allowed, "the target's rules were not applied"),
            expect(target.requests["/robots.txt"] == 1, "the target was not fetched once"),
        )


async def content_length_shorter() -> str | None:
    """Content-Length 10, 1000 bytes: ok with <= 10 bytes parsed, or fail closed."""

    def configure(server: HostileServer) -> None:
        server.raw("/robots.txt", response_head(length=10) + b"Disallow: /x\n" * 77)

    async with hostile(configure) as server, checker_for() as checker:
        decision = await checker.explain(server.url("/page"))
        outcome = decision.outcome
        if outcome.error is None:
            return expect(outcome.bytes_read <= 10, f"{outcome.bytes_read} bytes parsed")
        return await fails_closed(checker, server, decision, {"protocol", "reset"})


async def dns_failure() -> str | None:
    """A name under .invalid: dns, disallow all, cached."""
    async with checker_for(total=5.0) as checker:
        decision = await checker.explain("http://no-such-host.invalid/page")
        return await fails_closed(checker, None, decision, {"dns"})


def serve_bomb(bombs: dict[str, bytes], encoding: str) -> Callable[[HostileServer], None]:
    """Configure a server to answer robots.txt with the ``encoding`` bomb."""

    def configure(server: HostileServer) -> None:
        server.respond("/robots.txt", bombs[encoding], headers={"Content-Encoding": encoding})

    return configure


def server_cases(bombs: dict[str, bytes]) -> list[Case]:
    """Every hostile-server scenario."""
    partial = response_head(length=1000) + b"User-agent: *\nAllow: /\n"
    chunked = response_head(headers={"Transfer-Encoding": "chunked"})
    endless = RULES + b"# filler line to make the body endless\n" * 1000
    return [
        unreachable_case(
            "slowloris: head, a byte every 0.3 s",
            lambda s: s.dribble("/robots.txt", DRIBBLE, 0.3),
            {"timeout"},
            total=2.0,
        ),
        unreachable_case(
            "slowloris: body, a byte every 0.3 s",
            lambda s: s.dribble("/robots.txt", RULES * 100, 0.3, head=response_head(length=3300)),
            {"timeout"},
            total=2.0,
        ),
        unreachable_case(
            "accepts, never answers", lambda s: s.hang("/robots.txt"), {"timeout"}, total=1.5
        ),
        truncated_case("endless body", lambda s: s.stream("/robots.txt", endless)),
        *(
            truncated_case(f"{encoding} bomb (64 MiB decoded)", serve_bomb(bombs, encoding))
            for encoding in ("gzip", "deflate", "br")
        ),
        truncated_case(
            "100 MB robots.txt without a newline",
            lambda s: s.stream("/robots.txt", b"A" * 65_536, total=100_000_000),
            total=20.0,
        ),
        unreachable_case(
            "Content-Length 1000, 10 bytes sent",
            lambda s: s.raw("/robots.txt", response_head(length=1000) + b"User-agen\n"),
            {"reset"},
        ),
        Case(
            SERVERS,
            "Content-Length 10, 1000 bytes sent",
            content_length_shorter,
            3.0 + SLACK,
            SERVER_MIB,
        ),
        unreachable_case(
            "connection reset (RST) mid-body",
            lambda s: s.raw("/robots.txt", partial, "reset"),
            {"reset"},
        ),
        unreachable_case(
            "half-close (shutdown write) mid-body",
            lambda s: s.raw("/robots.txt", partial, "half-close"),
            {"reset"},
        ),
        unreachable_case(
            "reset before the response: one request",
            lambda s: s.raw("/robots.txt", b"", "reset"),
            {"reset"},
            one_request=True,
        ),
        unreachable_case(
            "closed before the response: one request",
            lambda s: s.raw("/robots.txt", b"", "close"),
            {"reset"},
            one_request=True,
        ),
        unreachable_case(
            "broken chunked encoding (invalid size)",
            lambda s: s.raw("/robots.txt", chunked + b"e\r\nUser-agent: *\n\r\nzz\r\n"),
            {"protocol", "reset"},
        ),
        *(
            redirect_case(f"redirect to {location}", location, "bad-redirect")
            for location in (
                "file:///etc/passwd",
                "ftp://127.0.0.1/robots.txt",
                "data:text/plain,User-agent: *%0ADisallow: /",
                "javascript:alert(1)",
                "http:///x",
                "http://[::1",
            )
        ),
        redirect_case("301 to itself", "SELF", "redirect-loop"),
        unreachable_case(
            "100 KB Location header",
            lambda s: s.redirect("/robots.txt", "/" + "a" * 100_000),
            {"protocol"},
        ),
        unreachable_case(
            "https:// to a plain-HTTP port",
            lambda s: None,
            {"tls", "reset", "protocol"},
            scheme="https",
        ),
        Case(SERVERS, "DNS failure (.invalid)", dns_failure, 5.0 + SLACK, SERVER_MIB),
        *(
            ssrf_case(target)
            for target in (
                "http://[::1]/robots.txt",
                "http://10.0.0.1/robots.txt",
                "http://169.254.169.254/latest/meta-data/",
                "http://192.168.1.1/robots.txt",
                "http://100.100.100.200/latest/meta-data/",
            )
        ),
        Case(SERVERS, "SSRF: loopback to loopback followed", guard_off, 3.0 + SLACK, SERVER_MIB),
    ]


# --- hostile robots.txt -----------------------------------------------------------------


def codes(robots: ra.RobotsTxt) -> set[str]:
    """The warning codes of a parsed file."""
    return {w.code for w in robots.warnings}


def million_rules() -> str | None:
    """1,000,000 rules in one group: the first 100,000 kept, "too-many-rules"."""
    body = b"User-agent: *\n" + b"".join(b"Disallow: /r%d/\n" % i for i in range(1_000_000))
    robots = ra.parse(body, max_bytes=None)
    return first_problem(
        expect("too-many-rules" in codes(robots), f"warnings {codes(robots)}"),
        expect(len(robots.groups[0].rules) == 100_000, f"{len(robots.groups[0].rules)} rules"),
        expect(not robots.allowed("/r5/", user_agent=AGENT), "a kept rule did not apply"),
        expect(robots.allowed("/r999999/", user_agent=AGENT), "a dropped rule applied"),
    )


def agent_name(index: int) -> bytes:
    """A distinct product token per index (letters only: digits end a token)."""
    letters = bytearray()
    for _ in range(4):
        index, digit = divmod(index, 26)
        letters.append(97 + digit)
    return b"bot" + bytes(letters)


def many_groups() -> str | None:
    """100,000 user-agent groups: each agent gets its own rules, others none."""
    body = b"".join(
        b"User-agent: %s\nDisallow: /x%d\n" % (agent_name(i), i) for i in range(100_000)
    )
    robots = ra.parse(body, max_bytes=None)
    last = agent_name(99_999).decode()
    return first_problem(
        expect(len(robots.groups) == 100_000, f"{len(robots.groups)} groups"),
        expect(not robots.allowed("/x99999", user_agent=last), "the last group lost"),
        expect(robots.allowed("/x5", user_agent=last), "groups mixed up"),
        expect(robots.allowed("/x5", user_agent="other"), "an unknown agent was matched"),
    )


def wildcards() -> str | None:
    """ "/" + "*a" * 500 + "b" against a 10,000-character path: no blow-up."""
    robots = ra.parse(b"User-agent: *\nDisallow: /" + b"*a" * 500 + b"b\n")
    path = "/" + "a" * 10_000
    return first_problem(
        expect(robots.allowed(path, user_agent=AGENT), "matched without the b"),
        expect(not robots.allowed(path + "b", user_agent=AGENT), "did not match with the b"),
    )


def long_pattern() -> str | None:
    """A 16 KB pattern matches exactly its own prefix."""
    robots = ra.parse(b"User-agent: *\nDisallow: /" + b"a" * 16_000 + b"\n")
    return first_problem(
        expect(not robots.allowed("/" + "a" * 16_001, user_agent=AGENT), "no match"),
        expect(robots.allowed("/" + "a" * 15_999, user_agent=AGENT), "matched too short"),
        expect(not codes(robots), f"warnings {codes(robots)}"),
    )


def percent_escapes() -> str | None:
    """ "%25" * 100,000 in a rule and a URL: the line is cut at 16,663 bytes."""
    robots = ra.parse(b"User-agent: *\nDisallow: /" + b"%25" * 100_000 + b"\n", max_bytes=None)
    return first_problem(
        expect("line-too-long" in codes(robots), f"warnings {codes(robots)}"),
        expect(not robots.allowed("/" + "%25" * 100_000, user_agent=AGENT), "no match"),
        expect(robots.allowed("/x", user_agent=AGENT), "matched an unrelated path"),
    )


def control_bytes() -> str | None:
    """NUL ends a line's content; control bytes are junk, not errors."""
    body = b"User-agent: *\nDisallow: /a\x00/ignored\n\x01\x02\x1f: x\nDisallow: /b\x7f\x1b[31m\n"
    robots = ra.parse(body)
    return first_problem(
        expect(not robots.allowed("/a", user_agent=AGENT), "the rule before NUL lost"),
        expect(robots.allowed("/ignored", user_agent=AGENT), "bytes after NUL used"),
        expect("unknown-key" in codes(robots), f"warnings {codes(robots)}"),
    )


def utf16() -> str | None:
    """A UTF-16 body with BOM: no rules (allow all) and warnings, not an error."""
    robots = ra.parse("User-agent: *\nDisallow: /\n".encode("utf-16"))
    return first_problem(
        expect(robots.groups == (), f"{len(robots.groups)} groups"),
        expect(bool(codes(robots)), "no warnings"),
        expect(robots.allowed("/x", user_agent=AGENT), "disallowed"),
    )


def random_megabyte() -> str | None:
    """1 MB of random bytes: truncated at 512,000 bytes, junk reported, warnings capped.

    (Line warnings past the first 100 are not recorded; "truncated" is, always.)
    """
    robots = ra.parse(random.Random(1).randbytes(1_000_000))
    return first_problem(
        expect(robots.truncated, "not truncated"),
        expect(
            bool({"truncated", "too-many-warnings"} & codes(robots)), f"warnings {codes(robots)}"
        ),
        # 100 line warnings, the marker, truncated and truncated-line.
        expect(len(robots.warnings) <= 103, f"{len(robots.warnings)} warnings kept"),
    )


def single_line_100mb() -> str | None:
    """100 MB on one line fed in 64 KiB chunks (no size limit): one cut line, no rules."""
    parser = ra.RobotsParser(max_bytes=None)
    chunk = b"A" * 65_536
    total = 100_000_000
    for start in range(0, total, len(chunk)):
        parser.feed(chunk if start + len(chunk) <= total else chunk[: total - start])
    robots = parser.close()
    return first_problem(
        expect(parser.bytes_seen == total, f"{parser.bytes_seen} bytes seen"),
        expect(robots.groups == (), "rules from a line of A"),
        expect("line-too-long" in codes(robots), f"warnings {codes(robots)}"),
    )


def file_cases() -> list[Case]:
    """Every hostile-file scenario (parse + match in-process)."""

    def case(name: str, check: Callable[[], str | None], seconds: float, memory: float) -> Case:
        async def run() -> str | None:
            return check()

        return Case(FILES, name, run, seconds, memory)

    return [
        case("1,000,000 rules (max_bytes=None)", million_rules, 60.0, 512.0),
        case("100,000 user-agent groups", many_groups, 60.0, 512.0),
        case('wildcards "/" + "*a"*500 + "b", 10,000-char path', wildcards, 5.0, 64.0),
        case("16 KB pattern", long_pattern, 5.0, 64.0),
        case('"%25" * 100,000', percent_escapes, 5.0, 64.0),
        case("NUL and control bytes", control_bytes, 5.0, 64.0),
        case("UTF-16 body with BOM", utf16, 5.0, 64.0),
        case("1 MB of random bytes", random_megabyte, 5.0, 64.0),
        case("100 MB single line fed in chunks", single_line_100mb, 10.0, 20.0),
    ]


# --- load -------------------------------------------------------------------------------


def load_cases(opts: SoakOptions) -> list[Case]:
    """The soak, smaller: every check at once, then cancelling half of the waiters."""

    async def first() -> str | None:
        report = await phase_one(opts)
        return "; ".join(report.failures) or None

    async def second() -> str | None:
        report = await phase_two(opts)
        return "; ".join(report.failures) or None

    scale = f"{opts.checks:,} checks, {opts.origins} origins, 10% failing"
    return [
        Case(LOAD, f"{scale}: every check at once", first, 60.0, 256.0),
        Case(LOAD, f"{scale}: cancel half of the waiters", second, 60.0, 256.0),
    ]


# --- running ------------------------------------------------------------------------------


async def run_case(case: Case) -> Result:
    """Run ``case`` with time and memory measured; exceptions are failures."""
    try:
        result = await measured(case.run())
        detail = result.value or ""
        seconds, peak = result.seconds, result.peak_mib
    except Exception as exc:  # noqa: BLE001 (a case must never raise: report it)
        return Result(case, False, 0.0, 0.0, f"raised {type(exc).__name__}: {exc}")
    if not detail and seconds > case.seconds:
        detail = f"took {seconds:.2f} s > {case.seconds:.1f} s"
    if not detail and peak > case.memory_mib:
        detail = f"peak {peak:.1f} MiB > {case.memory_mib:.0f} MiB"
    return Result(case, not detail, seconds, peak, detail)


async def run_all(cases: list[Case], verbose: bool) -> list[Result]:
    """Run the cases one after another."""
    results = []
    for case in cases:
        result = await run_case(case)
        results.append(result)
        if verbose:
            mark = "ok  " if result.passed else "FAIL"
            print(
                f"{mark} {case.category:<19} {case.name:<52} {result.seconds:7.2f} s "
                f"{result.peak_mib:8.1f} MiB  {result.detail}",
                flush=True,
            )
    return results


def table(results: list[Result]) -> str:
    """One row per category."""
    rows = [("category", "cases tried", "passed", "max time (s)", "max memory (MiB)")]
    for category in (SERVERS, FILES, LOAD):
        mine = [r for r in results if r.case.category == category]
        if not mine:
            continue
        rows.append(
            (
                category,
                str(len(mine)),
                str(sum(r.passed for r in mine)),
                f"{max(r.seconds for r in mine):.2f}",
                f"{max(r.peak_mib for r in mine):.1f}",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in rows
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the battery, print the table (and failures); exit 1 if any case failed."""
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--verbose", "-v", action="store_true", help="one line per case")
    args.add_argument("--no-load", action="store_true", help="skip the load cases")
    args.add_argument("--origins", type=int, default=300)
    args.add_argument("--checks", type=int, default=3000)
    args.add_argument("--timeout", type=float, default=1.5)
    opts = args.parse_args(argv)
    bombs = {encoding: bomb(encoding) for encoding in ("gzip", "deflate", "br")}
    cases = server_cases(bombs) + file_cases()
    if not opts.no_load:
        cases += load_cases(
            SoakOptions(origins=opts.origins, checks=opts.checks, timeout=opts.timeout)
        )
    started = time.perf_counter()
    results = asyncio.run(run_all(cases, opts.verbose))
    print(table(results))
    failed = [r for r in results if not r.passed]
    for result in failed:
        print(f"FAILED [{result.case.category}] {result.case.name}: {result.detail}")
    print(
        f"{len(results) - len(failed)}/{len(results)} cases passed "
        f"in {time.perf_counter() - started:.1f} s"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
