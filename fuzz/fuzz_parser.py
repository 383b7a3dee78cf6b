"""Coverage-guided fuzzing of the robots.txt parser and matcher with atheris.

Each input is split into a policy, a byte limit, chunk sizes, a URL, an agent and
a body. The body is parsed twice (one ``parse()``, and ``feed()`` in the chunks);
any exception, any difference between the two results, or any inconsistent answer
(``explain(url).allowed != allowed(url)``) is a crash. See fuzz/README.md.

    python fuzz/fuzz_parser.py --seeds /tmp/corpus     # write seed inputs once
    python fuzz/fuzz_parser.py /tmp/corpus -max_total_time=60 -dict=fuzz/robots.dict
    python fuzz/fuzz_parser.py crash-<sha1>            # replay one input
"""

from __future__ import annotations

import math
import sys
from typing import Any

import atheris

with atheris.instrument_imports(include=["robots_async"]):
    import robots_async as ra

POLICIES = ("google", "google-reference", "rfc9309", "first-match")
LIMITS = (None, ra.DEFAULT_MAX_BYTES, 0, 1, 64, 1024, ra.MAX_LINE_BYTES + 1)
PROBES = ("/", "/a", "/%2A", "/robots.txt", "http://h/x?y#z", "", "//h", "/\udcff", "/ä")
TOKENS = ("*", "", "bot")
MAX_WARNINGS = 100  # robots_async.core.rules.MAX_WARNINGS, the default
#: Facts about the whole file, recorded beyond the warning cap.
FILE_LEVEL = frozenset({"truncated", "truncated-line", "too-many-rules"})


def split_input(data: bytes) -> tuple[str, int | None, list[int], str, str, bytes]:
    """Policy, max_bytes, chunk sizes, URL, agent token and body from the fuzz input.

    Layout (see :func:`make_input`): policy byte, limit byte, chunk count byte, one
    byte per chunk size (x 4), URL length byte, URL, token length byte, token, body.
    URL and token are UTF-8 decoded with ``surrogateescape``: invalid bytes become
    lone surrogates, which a str URL may hold.
    """
    view = memoryview(data)
    header = bytes(view[:3]).ljust(3, b"\0")
    policy = POLICIES[header[0] % len(POLICIES)]
    limit = LIMITS[header[1] % len(LIMITS)]
    count = header[2] % 25
    sizes = [4 * b for b in bytes(view[3 : 3 + count])]
    rest = view[3 + count :]
    url_size = rest[0] if rest else 0
    url = bytes(rest[1 : 1 + url_size]).decode("utf-8", "surrogateescape")
    rest = rest[1 + url_size :]
    token_size = (rest[0] % 16) if rest else 0
    token = bytes(rest[1 : 1 + token_size]).decode("utf-8", "surrogateescape")
    body = bytes(rest[1 + token_size :])
    return policy, limit, sizes, url, token, body


def make_input(
    body: bytes,
    *,
    policy: int = 0,
    limit: int = 0,
    sizes: tuple[int, ...] = (),
    url: bytes = b"/",
    token: bytes = b"bot",
) -> bytes:
    """The fuzz input that :func:`split_input` splits into these parts (for seeds)."""
    head = bytes([policy, limit, len(sizes), *(min(s // 4, 255) for s in sizes)])
    return head + bytes([len(url)]) + url + bytes([len(token)]) + token + body


SEEDS = {
    "google": b"User-agent: *\nDisallow: /a*b$\nAllow: /a/index.html\nCrawl-delay: 5\n",
    "groups": b"User-agent: a\nUser-agent: b\nDisallow: /x\n\nUser-agent: *\nAllow: /\n",
    "extensions": b"User-agent: *\nRequest-rate: 1/5m\nVisit-time: 0600-0845\nHost: h\n"
    b"Clean-param: a&b /p\nSitemap: https://h/s.xml\n",
    "odd-lines": b"\xef\xbb\xbfuser-agent foo\r\ndisalow: /%e3%83%84\rAllow:\x00x\n# c\n",
}


def write_seeds(directory: str) -> None:
    """Write a few seed inputs (typical files, several chunkings) into ``directory``."""
    from pathlib import Path

    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    for name, body in SEEDS.items():
        for policy in range(len(POLICIES)):
            case = make_input(body, policy=policy, sizes=(1, 4, 8), url=b"/a/b$")
            (target / f"{name}-{policy}").write_bytes(case)


def feed_in_chunks(body: bytes, sizes: list[int], policy: str, limit: int | None) -> ra.RobotsTxt:
    """Feed ``body`` in pieces of the given sizes (the rest in one piece) and close."""
    parser = ra.RobotsParser(policy, max_bytes=limit)
    offset = 0
    for size in sizes:
        parser.feed(body[offset : offset + size])
        offset += size
    parser.feed(body[offset:])
    return parser.close()


def answers(robots: ra.RobotsTxt, urls: list[str], tokens: list[str]) -> list[Any]:
    """Every observable answer, checking allowed() against explain() on the way."""
    seen: list[Any] = []
    for token in tokens:
        delay = robots.crawl_delay(robots_token=token)
        if delay is not None and not (math.isfinite(delay) and 0 <= delay <= 86_400):
            raise AssertionError(f"crawl delay {delay!r}")
        rate = robots.request_rate(robots_token=token)
        if rate is not None and not math.isfinite(rate.delay):
            raise AssertionError(f"request rate {rate!r}")
        seen += [delay, rate, robots.visit_time(robots_token=token)]
        for url in urls:
            verdict = robots.explain(url, robots_token=token)
            if robots.allowed(url, robots_token=token) is not verdict.allowed:
                raise AssertionError(f"allowed() != explain() for {url!r}, {token!r}")
            if verdict.rule is not None and verdict.rule.line != verdict.line:
                raise AssertionError(f"verdict line mismatch {verdict!r}")
            seen.append(verdict)
    return seen


def structure(robots: ra.RobotsTxt) -> tuple[Any, ...]:
    """The parsed file as comparable values, checking the warning bound."""
    warnings = robots.warnings
    line_warnings = [w for w in warnings if w.code not in FILE_LEVEL]
    if len(line_warnings) > MAX_WARNINGS + 1:
        raise AssertionError(f"{len(line_warnings)} line warnings")
    codes = [w.code for w in line_warnings]
    if "too-many-warnings" in codes and codes[-1] != "too-many-warnings":
        raise AssertionError("the too-many-warnings marker is not after every line warning")
    return (
        robots.groups,
        robots.sitemaps,
        robots.host,
        robots.clean_params,
        robots.truncated,
        warnings,
    )


def TestOneInput(data: bytes) -> None:  # noqa: N802 (atheris's required name)
    """One fuzz case: parse two ways, compare, ask questions; raise on any defect."""
    policy, limit, sizes, url, token, body = split_input(data)
    whole = ra.parse(body, policy=policy, max_bytes=limit)
    pieces = feed_in_chunks(body, sizes, policy, limit)
    if structure(whole) != structure(pieces):
        raise AssertionError(f"chunking changed the result: sizes={sizes}")
    urls, tokens = [url, *PROBES], [token, *TOKENS]
    if answers(whole, urls, tokens) != answers(pieces, urls, tokens):
        raise AssertionError(f"chunking changed an answer: sizes={sizes}")
    ra.product_token(url)
    ra.request_target(url)


def main() -> None:
    """Run libFuzzer (its usual arguments), or ``--seeds DIR`` to write seed inputs."""
    if len(sys.argv) == 3 and sys.argv[1] == "--seeds":
        write_seeds(sys.argv[2])
        return
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
