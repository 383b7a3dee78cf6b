"""Content never raises: random bytes, broken encodings, huge inputs. Misuse does."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robots_async as ra
from tests.helpers import parse_chunks, split_at

POLICIES = ["google", "google-reference", "rfc9309", "first-match"]
PROBES = ["/", "/a", "/%FF", "/ä", "http://example.com/x?y#z", "", "//x", "?q"]


def ask_everything(robots: ra.RobotsTxt, token: str) -> None:
    """Ask every question once; results must have the documented types."""
    for url in PROBES:
        result = robots.explain(url, robots_token=token)
        assert isinstance(result, ra.Verdict)
        assert robots.allowed(url, robots_token=token) is result.allowed
    delay = robots.crawl_delay(robots_token=token)
    assert delay is None or isinstance(delay, float)
    assert isinstance(robots.groups_for(robots_token=token), tuple)
    robots.request_rate(robots_token=token)
    robots.visit_time(robots_token=token)
    assert all(isinstance(w, ra.ParseWarning) for w in robots.warnings)
    assert all(isinstance(s, str) for s in robots.sitemaps)
    assert len(robots.warnings) <= 1001


@settings(max_examples=200, deadline=None)
@given(
    body=st.binary(max_size=400),
    cuts=st.lists(st.integers(0, 400), max_size=5),
    policy=st.sampled_from(POLICIES),
    token=st.sampled_from(["bot", "", "*", "Bot/1.0"]),
)
def test_random_bytes_never_raise(body: bytes, cuts: list[int], policy: str, token: str) -> None:
    """Any bytes parse, in one piece or in chunks, and every question gets an answer."""
    ask_everything(ra.parse(body, policy=policy), token)
    ask_everything(parse_chunks(split_at(body, cuts), policy=policy), token)


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(
        st.tuples(
            st.sampled_from(
                [
                    "User-agent",
                    "Disallow",
                    "Allow",
                    "Sitemap",
                    "Crawl-delay",
                    "Request-rate",
                    "Visit-time",
                    "Host",
                    "Clean-param",
                    "useragent",
                ]
            ),
            st.text(max_size=20),
        ),
        max_size=20,
    ),
    policy=st.sampled_from(POLICIES),
)
def test_random_values_never_raise(lines: list[tuple[str, str]], policy: str) -> None:
    """Directives with arbitrary text values never raise."""
    body = "".join(f"{key}: {value}\n" for key, value in lines)
    ask_everything(ra.parse(body, policy=policy), "bot")


@settings(max_examples=100, deadline=None)
@given(url=st.text(max_size=40), policy=st.sampled_from(POLICIES))
def test_random_urls_never_raise(url: str, policy: str) -> None:
    """Any str URL gets a verdict; the request target always starts with "/"."""
    robots = ra.parse("User-agent: *\nDisallow: /a\nAllow: /a/b$\nDisallow: /*x*\n", policy=policy)
    assert (
        robots.allowed(url, robots_token="bot") is robots.explain(url, robots_token="bot").allowed
    )
    assert ra.request_target(url).startswith("/")


def test_surrogateescape_str_body_round_trips() -> None:
    """A str decoded with surrogateescape parses like the bytes it came from."""
    body = b"User-agent: a\xff\nDisallow: /\xfe\n"
    text = body.decode("utf-8", "surrogateescape")
    assert ra.parse(text).groups == ra.parse(body).groups


@pytest.mark.parametrize("code", [0xD800, 0xDFFF, 0xD83D], ids=["D800", "DFFF", "D83D"])
def test_str_body_with_lone_surrogate_never_raises(code: int) -> None:
    """A str body holding a lone surrogate (not UTF-8 encodable) still parses."""
    char = chr(code)
    robots = ra.parse(f"User-agent: *\nDisallow: /x\nAllow: /{char}\n")
    assert not robots.allowed("/x", robots_token="bot")


@pytest.mark.parametrize("code", [0xD800, 0xDCFF], ids=["D800", "DCFF"])
def test_url_with_lone_surrogate_never_raises(code: int) -> None:
    """A URL holding a lone surrogate gets a verdict under every policy."""
    char = chr(code)
    for policy in POLICIES:
        robots = ra.parse("User-agent: *\nDisallow: /x\n", policy=policy)
        assert not robots.allowed(f"/x{char}", robots_token="bot")
        assert robots.allowed(f"/{char}", robots_token="bot")


@pytest.mark.parametrize("policy", POLICIES)
def test_invalid_utf8(policy: str) -> None:
    """Invalid UTF-8 is kept as bytes: high bytes in patterns are %-encoded."""
    body = b"User-agent: b\xffot\nUser-agent: a\nDisallow: /\xff\xfe\nSitemap: http://e.com/\xff\n"
    robots = ra.parse(body, policy=policy)
    assert robots.groups[0].rules[0].pattern == "/%FF%FE"
    assert not robots.allowed("/%FF%FE", robots_token="a")
    assert robots.groups[0].agents == ("b\ufffdot", "a")
    assert robots.sitemaps == ("http://e.com/\ufffd",)


@pytest.mark.parametrize(
    "body",
    [b"\x00" * 1000, b"User-agent: *\x00\nDisallow: /\x00\x00x\n\x00\x00\x00", b"\x00\n" * 50],
    ids=["only-nul", "mixed", "nul-lines"],
)
def test_nul_bytes(body: bytes) -> None:
    """NUL bytes anywhere never raise."""
    for policy in POLICIES:
        ask_everything(ra.parse(body, policy=policy), "bot")


def test_one_megabyte_line() -> None:
    """A single 1 MB line is cut to the line limit (unlimited body) or dropped (default limit)."""
    body = b"User-agent: *\nDisallow: /" + b"a" * 1_000_000
    robots = ra.parse(body, max_bytes=None)
    assert len(robots.groups[0].rules[0].pattern) == ra.MAX_LINE_BYTES - len("Disallow: ")
    assert [w.code for w in robots.warnings] == ["line-too-long"]
    assert not robots.allowed("/" + "a" * 20_000, robots_token="bot")
    limited = ra.parse(body)
    assert limited.truncated
    assert limited.groups[0].rules == ()
    assert limited.allowed("/" + "a" * 20_000, robots_token="bot")


def test_many_rules() -> None:
    """A group keeps 100,000 rules (then warns) and is queried promptly (a hang guard)."""
    count = 200_000
    kept = 100_000  # robots_async.core.rules.MAX_RULES
    body = "User-agent: *\n" + "".join(f"Disallow: /p{i}/\n" for i in range(count))
    start = time.perf_counter()
    robots = ra.parse(body, max_bytes=None)
    (group,) = robots.groups
    assert len(group.rules) == kept
    assert [w.code for w in robots.warnings] == ["too-many-rules"]
    assert not robots.truncated
    verdict = robots.explain("/p99999/x", robots_token="bot")
    assert (verdict.allowed, verdict.line) == (False, kept + 1)
    assert robots.allowed("/p199999/x", robots_token="bot")  # beyond the cap: ignored
    assert robots.allowed("/q", robots_token="bot")
    assert not robots.allowed("/p0/", robots_token="bot")
    assert time.perf_counter() - start < 30.0


@pytest.mark.parametrize(
    "encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32"], ids=lambda e: e
)
def test_utf16_body_parses(encoding: str) -> None:
    """A UTF-16/32 body (with or without BOM) parses without error, whatever it finds."""
    text = "User-agent: *\nDisallow: /x\nSitemap: https://e.com/s.xml\n"
    body = text.encode(encoding)
    if encoding.endswith(("-le", "-be")):
        body = "\ufeff".encode(encoding) + body
    for policy in POLICIES:
        robots = ra.parse(body, policy=policy)
        ask_everything(robots, "bot")
        assert isinstance(robots.allowed("/x", robots_token="bot"), bool)


@pytest.mark.parametrize("url", [None, 42, b"/x", ["/x"]], ids=["None", "int", "bytes", "list"])
def test_allowed_rejects_non_str_url(url: object) -> None:
    """allowed() and explain() raise TypeError for a URL that is not str."""
    robots = ra.parse("User-agent: *\nDisallow: /\n")
    with pytest.raises(TypeError):
        robots.allowed(url, robots_token="bot")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        robots.explain(url, robots_token="bot")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "kwargs",
    [{"robots_token": 5}, {"robots_token": b"bot"}, {"user_agent": 5}, {"user_agent": b"Bot"}],
    ids=["token-int", "token-bytes", "ua-int", "ua-bytes"],
)
def test_allowed_rejects_non_str_agent(kwargs: dict[str, object]) -> None:
    """allowed() and explain() raise TypeError for an agent that is not str."""
    robots = ra.parse("User-agent: *\nDisallow: /\n")
    with pytest.raises(TypeError):
        robots.allowed("/x", **kwargs)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        robots.explain("/x", **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "body", [None, 42, ["User-agent: *"], 1.5], ids=["None", "int", "list", "float"]
)
def test_parse_rejects_non_text(body: object) -> None:
    """parse() raises TypeError for a body that is neither bytes-like nor str."""
    with pytest.raises(TypeError):
        ra.parse(body)  # type: ignore[arg-type]


@pytest.mark.parametrize("chunk", ["text", None, 42], ids=["str", "None", "int"])
def test_feed_rejects_non_bytes(chunk: object) -> None:
    """feed() raises TypeError for anything that is not bytes-like."""
    with pytest.raises(TypeError):
        ra.RobotsParser().feed(chunk)  # type: ignore[arg-type]


def test_parse_accepts_bytes_like() -> None:
    """parse() takes bytearray and memoryview bodies too."""
    body = b"User-agent: *\nDisallow: /x\n"
    for value in (bytearray(body), memoryview(body)):
        assert not ra.parse(value).allowed("/x", robots_token="bot")
