"""The incremental tokenizer: chunking, line breaks, BOM, NUL, line and byte limits."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import robots_async as ra
from tests.helpers import parse_chunks, split_at, summary

MAX_LINE = ra.MAX_LINE_BYTES

URLS = [
    "/",
    "/a",
    "/a/b",
    "/x",
    "/xy",
    "/c/d",
    "/bom",
    "/robots.txt",
    "/%C3%A4",
    "/ä",
    "/img/d.gif",
    "/p?q=1",
    "/" + "y" * 40,
]
TOKENS = ["FooBot", "barbot", "otherbot", ""]

DIRECTIVES = [
    b"User-agent: *",
    b"User-agent: FooBot",
    b"user-agent: barbot/1.0",
    b"Useragent: foobot",
    b"user-agent barbot",
    b"Disallow: /",
    b"Disallow: /a",
    b"Allow: /a/b",
    b"Disallow: /*.gif$",
    b"disallow /x",
    b"Allow:",
    b"Disallow:",
    b"Disallow: /c # trailing comment",
    b"Dissallow: /xy",
    b"Disallow: /\xc3\xa4",
    b"Disallow: /x\x00y",
    b"Allow: /d/index.html",
    b"Sitemap: https://example.com/s.xml",
    b"Sitemap: /relative.xml",
    b"Crawl-delay: 5",
    b"Crawl-delay: soon",
    b"Request-rate: 1/5m",
    b"Visit-time: 0600-0845",
    b"Host: example.com",
    b"Clean-param: a&b /p",
    b"# a comment",
    b"junk line here",
    b"noindex: /x",
    b"\xef\xbb\xbfDisallow: /bom",
    b"",
    b"   ",
]
LINE_ENDS = [b"\n", b"\r", b"\r\n", b"\n\r", b"\r\r\n", b""]
BOM_PREFIXES = [
    b"",
    b"\xef",
    b"\xef\xbb",
    b"\xef\xbb\xbf",
    b"\xef\xbb\xbf\xef\xbb\xbf",
    b"\xef\x11",
]

line_text = st.one_of(
    st.sampled_from(DIRECTIVES),
    st.sampled_from(DIRECTIVES).map(lambda d: d.upper()),
    st.binary(max_size=12),
    st.text(alphabet="aä/*$#: \t\x00ツ", max_size=12).map(lambda t: t.encode("utf-8")),
    st.sampled_from([b"Disallow: /", b"# ", b"x"]).map(lambda d: d + b"y" * (MAX_LINE + 2)),
)


@st.composite
def bodies(draw: st.DrawFn) -> bytes:
    """A robots.txt-like body mixing directives, junk, all line ends, BOMs and long lines."""
    prefix = draw(st.sampled_from(BOM_PREFIXES))
    lines = draw(st.lists(st.tuples(line_text, st.sampled_from(LINE_ENDS)), max_size=25))
    return prefix + b"".join(text + end for text, end in lines)


@st.composite
def chunked(draw: st.DrawFn) -> tuple[bytes, list[int], int | None]:
    """A body, cut offsets into it, and a max_bytes (small values exercise truncation)."""
    body = draw(bodies())
    cuts = draw(st.lists(st.integers(0, len(body)), max_size=12))
    max_bytes = draw(st.one_of(st.none(), st.integers(0, 300), st.just(ra.DEFAULT_MAX_BYTES)))
    return body, cuts, max_bytes


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chunked())
def test_any_chunking_gives_the_same_result(case: tuple[bytes, list[int], int | None]) -> None:
    """Feeding a body in arbitrary chunks gives exactly what parse(body) gives."""
    body, cuts, max_bytes = case
    whole = ra.parse(body, max_bytes=max_bytes)
    expected = summary(whole, URLS, TOKENS)
    pieces = parse_chunks(split_at(body, cuts), max_bytes=max_bytes)
    assert summary(pieces, URLS, TOKENS) == expected
    if len(body) <= 600:
        bytewise = parse_chunks([body[i : i + 1] for i in range(len(body))], max_bytes=max_bytes)
        assert summary(bytewise, URLS, TOKENS) == expected


@settings(max_examples=60, deadline=None)
@given(chunked(), st.sampled_from(["google-reference", "rfc9309", "first-match"]))
def test_chunking_is_invisible_under_every_policy(
    case: tuple[bytes, list[int], int | None], policy: str
) -> None:
    """Chunk-invariance holds under the other policies too."""
    body, cuts, max_bytes = case
    whole = ra.parse(body, policy=policy, max_bytes=max_bytes)
    pieces = parse_chunks(split_at(body, cuts), policy=policy, max_bytes=max_bytes)
    assert summary(pieces, URLS, TOKENS) == summary(whole, URLS, TOKENS)


@settings(max_examples=100, deadline=None)
@given(chunked())
def test_parser_counts_bytes_and_truncation(case: tuple[bytes, list[int], int | None]) -> None:
    """bytes_seen is the body length capped at max_bytes; truncated means input was cut."""
    body, cuts, max_bytes = case
    parser = ra.RobotsParser(max_bytes=max_bytes)
    for chunk in split_at(body, cuts):
        parser.feed(chunk)
    limit = len(body) if max_bytes is None else max_bytes
    assert parser.bytes_seen == min(len(body), limit)
    assert parser.truncated is (len(body) > limit)
    assert parser.close().truncated is (len(body) > limit)


@pytest.mark.parametrize(
    "kind", [bytes, bytearray, memoryview], ids=["bytes", "bytearray", "memoryview"]
)
def test_feed_accepts_bytes_like(kind: type) -> None:
    """feed() takes bytes, bytearray and memoryview alike."""
    robots = parse_chunks([kind(b"User-agent: a\nDis"), kind(b"allow: /x\n")])
    assert not robots.allowed("/x", robots_token="a")
    assert robots.groups[0].rules == (ra.Rule(False, "/x", 2),)


# --- UTF-8 byte order mark -------------------------------------------------------------


@pytest.mark.parametrize(
    "prefix",
    [b"\xef\xbb\xbf", b"\xef\xbb", b"\xef"],
    ids=["full", "EF-BB", "EF"],
)
def test_bom_at_start_is_skipped(prefix: bytes) -> None:
    """A full or partial UTF-8 BOM at the very start is skipped; line numbers are kept."""
    robots = ra.parse(prefix + b"User-agent: a\nDisallow: /x\n")
    verdict = robots.explain("/x", robots_token="a")
    assert (verdict.allowed, verdict.line) == (False, 2)
    assert robots.warnings == ()


@pytest.mark.parametrize(
    "chunks",
    [
        [b"\xef", b"\xbb", b"\xbfUser-agent: a\nDisallow: /x\n"],
        [b"\xef\xbb", b"\xbfUser-agent: a\nDisallow: /x\n"],
        [b"\xef", b"\xbbUser-agent: a\nDisallow: /x\n"],
        [b"\xef", b"", b"User-agent: a\nDisallow: /x\n"],
        [b"\xef\xbb\xbf", b"User-agent: a\nDisallow: /x\n"],
    ],
    ids=["byte-by-byte", "EF-BB|BF", "EF|BB", "EF|empty|rest", "BOM|rest"],
)
def test_bom_split_across_chunks_is_skipped(chunks: list[bytes]) -> None:
    """A BOM (or part of one) is skipped even when split across feed() calls."""
    robots = parse_chunks(chunks)
    assert not robots.allowed("/x", robots_token="a")
    assert robots.groups[0].agents == ("a",)


def test_broken_bom_keeps_the_byte_that_breaks_it() -> None:
    """EF 11 BF: EF is skipped, and "\\x11\\xbf" stays in front of the first key."""
    robots = ra.parse(b"\xef\x11\xbfUser-agent: a\nDisallow: /x\n")
    assert robots.groups == ()
    assert robots.allowed("/x", robots_token="a")
    assert [w.code for w in robots.warnings] == ["unknown-key", "rule-outside-group"]


@pytest.mark.parametrize(
    "body",
    [
        b"\xef\xbb\xbf\xef\xbb\xbfUser-agent: a\nDisallow: /x\n",
        b"User-agent: a\n\xef\xbb\xbfDisallow: /x\n",
    ],
    ids=["second-bom", "bom-on-line-2"],
)
def test_bom_elsewhere_is_ordinary_text(body: bytes) -> None:
    """A BOM that is not at the very start becomes part of the key, which is then unknown."""
    robots = ra.parse(body)
    assert robots.allowed("/x", robots_token="a")
    assert "unknown-key" in {w.code for w in robots.warnings}


# --- Line breaks -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "line"),
    [
        (b"User-agent: a\nDisallow: /x", 2),
        (b"User-agent: a\rDisallow: /x", 2),
        (b"User-agent: a\r\nDisallow: /x", 2),
        (b"User-agent: a\n\rDisallow: /x", 3),
        (b"User-agent: a\r\r\nDisallow: /x", 3),
        (b"User-agent: a\n\n\r\n\rDisallow: /x\n", 5),
        (b"\r\n\r\nUser-agent: a\r\n\r\nDisallow: /x\r\n", 5),
    ],
    ids=["LF", "CR", "CRLF", "LF-CR", "CR-CR-LF", "mixed-blank-lines", "leading-blanks"],
)
def test_line_breaks_and_numbers(body: bytes, line: int) -> None:
    """CR, LF and CRLF each end a line; LF-CR and CR-CR-LF are two breaks."""
    for robots in (ra.parse(body), parse_chunks([body[i : i + 1] for i in range(len(body))])):
        verdict = robots.explain("/x", robots_token="a")
        assert (verdict.allowed, verdict.line) == (False, line)


@pytest.mark.parametrize(
    ("chunks", "line"),
    [
        ([b"User-agent: a\r", b"\nDisallow: /x\n"], 2),
        ([b"User-agent: a\r", b"\n", b"Disallow: /x\n"], 2),
        ([b"User-agent: a\r", b"", b"\nDisallow: /x\n"], 2),
        ([b"User-agent: a\r", b"\r\nDisallow: /x\n"], 3),
        ([b"User-agent: a\r", b"Disallow: /x\n"], 2),
        ([b"User-agent: a\n\r", b"\nDisallow: /x\n"], 3),
    ],
    ids=["CR|LF", "CR|LF|rest", "CR|empty|LF", "CR|CRLF", "CR|text", "LF-CR|LF"],
)
def test_cr_at_chunk_end(chunks: list[bytes], line: int) -> None:
    """A CR ending a chunk and an LF starting the next one are a single break."""
    verdict = parse_chunks(chunks).explain("/x", robots_token="a")
    assert (verdict.allowed, verdict.line) == (False, line)


def test_last_line_without_break_is_parsed() -> None:
    """A final line with no line ending is still parsed, also when it arrives in pieces."""
    assert not ra.parse(b"User-agent: a\nDisallow: /x").allowed("/x", robots_token="a")
    robots = parse_chunks([b"User-agent: a\nDis", b"allow: ", b"/x"])
    assert not robots.allowed("/x", robots_token="a")


@pytest.mark.parametrize(
    ("body", "agents", "rules"),
    [
        (b"# c\nUser-agent: a # bot\nDisallow: /a#b\n", ("a",), [ra.Rule(False, "/a", 3)]),
        (b"User-agent: a\nDisallow: #/x\n", ("a",), [ra.Rule(False, "", 2)]),
        (b"User-agent: a\n  Allow  :  /p q  \n", ("a",), [ra.Rule(True, "/p q", 2)]),
        (b"User-agent: a\nDisallow: /x:y\n", ("a",), [ra.Rule(False, "/x:y", 2)]),
        (b"User-agent:\ta\t\nDisallow:\t/t\t\n", ("a",), [ra.Rule(False, "/t", 2)]),
    ],
    ids=["comments", "comment-only-value", "inner-space-kept", "second-colon", "tabs"],
)
def test_comments_and_whitespace(
    body: bytes, agents: tuple[str, ...], rules: list[ra.Rule]
) -> None:
    """``#`` starts a comment anywhere; values are trimmed, inner whitespace is kept."""
    (group,) = ra.parse(body).groups
    assert group.agents == agents
    assert list(group.rules) == rules


# --- NUL -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "blocked", "open_"),
    [
        (b"User-agent: a\nDisallow: /x\x00yz\n", "/xab", "/y"),
        (b"User-agent: a\x00zzz\nDisallow: /x\n", "/x", "/y"),
        (b"User-agent: a\nDis\x00allow: /y\nDisallow: /x\n", "/x", "/y"),
    ],
    ids=["in-value", "in-agent", "in-key"],
)
def test_nul_ends_line_content(body: bytes, blocked: str, open_: str) -> None:
    """A NUL byte ends the content of its line; the next line is unaffected."""
    for robots in (ra.parse(body), parse_chunks([body[i : i + 3] for i in range(0, len(body), 3)])):
        assert not robots.allowed(blocked, robots_token="a")
        assert robots.allowed(open_, robots_token="a")


# --- Long lines ------------------------------------------------------------------------


def _long_body(extra: int) -> tuple[bytes, str]:
    head = b"Disallow: /"
    long_line = head + b"x" * (MAX_LINE - len(head) + extra)
    body = b"User-agent: a\n" + long_line + b"\nDisallow: /y\n"
    kept = "/" + "x" * (MAX_LINE - len(head))
    return body, kept


@pytest.mark.parametrize("chunk_size", [None, 1000, 7, MAX_LINE, MAX_LINE + 1])
def test_long_line_is_cut_and_warned(chunk_size: int | None) -> None:
    """A line over 16663 bytes is cut to 16663 bytes and warned; the next line is fine."""
    body, kept = _long_body(extra=5000)
    if chunk_size is None:
        robots = ra.parse(body, max_bytes=None)
    else:
        chunks = [body[i : i + chunk_size] for i in range(0, len(body), chunk_size)]
        robots = parse_chunks(chunks, max_bytes=None)
    (group,) = robots.groups
    assert group.rules == (ra.Rule(False, kept, 2), ra.Rule(False, "/y", 3))
    assert [(w.line, w.code) for w in robots.warnings] == [(2, "line-too-long")]
    assert not robots.allowed(kept + "zzz", robots_token="a")
    assert robots.allowed("/xx", robots_token="a")
    verdict = robots.explain("/y", robots_token="a")
    assert (verdict.allowed, verdict.line) == (False, 3)


@pytest.mark.parametrize(("extra", "warned"), [(0, False), (1, True)], ids=["16663", "16664"])
def test_line_limit_boundary(extra: int, warned: bool) -> None:
    """A line of exactly 16663 bytes is kept whole; one byte more is cut and warned."""
    body, kept = _long_body(extra=extra)
    robots = ra.parse(body, max_bytes=None)
    assert robots.groups[0].rules[0].pattern == kept
    assert ("line-too-long" in {w.code for w in robots.warnings}) is warned


def test_long_last_line_without_break() -> None:
    """A long final line without a line ending is cut and warned too."""
    body = b"User-agent: a\nDisallow: /" + b"z" * (2 * MAX_LINE)
    robots = parse_chunks([body[i : i + 4096] for i in range(0, len(body), 4096)], max_bytes=None)
    assert len(robots.groups[0].rules[0].pattern) == MAX_LINE - len("Disallow: ")
    assert [(w.line, w.code) for w in robots.warnings] == [(2, "line-too-long")]


# --- max_bytes ---------------------------------------------------------------------------

TRUNCATION_BODY = b"User-agent: *\nDisallow: /a\nDisallow: /b\n"


def test_limit_drops_the_cut_line() -> None:
    """The line cut by max_bytes is dropped, not parsed as a shorter rule."""
    limit = len(b"User-agent: *\nDisallow: /a\nDisallow: /")
    robots = ra.parse(TRUNCATION_BODY, max_bytes=limit)
    assert robots.truncated
    assert robots.allowed("/c", robots_token="bot")  # "Disallow: /" would block it
    assert robots.allowed("/b", robots_token="bot")
    assert not robots.allowed("/a", robots_token="bot")
    assert robots.groups[0].rules == (ra.Rule(False, "/a", 2),)
    codes = [(w.line, w.code) for w in robots.warnings]
    assert codes == [(2, "truncated"), (3, "truncated-line")]


def test_limit_at_line_boundary_ignores_later_rules() -> None:
    """A Disallow after the limit is ignored; the last complete line is kept."""
    limit = len(b"User-agent: *\nDisallow: /a\n")
    parser = ra.RobotsParser(max_bytes=limit)
    parser.feed(TRUNCATION_BODY[:10])
    parser.feed(TRUNCATION_BODY[10:])
    parser.feed(b"Disallow: /c\n")
    assert parser.truncated
    assert parser.bytes_seen == limit
    robots = parser.close()
    assert robots.truncated
    assert robots.allowed("/b", robots_token="bot")
    assert robots.allowed("/c", robots_token="bot")
    assert not robots.allowed("/a", robots_token="bot")
    assert [w.code for w in robots.warnings] == ["truncated"]


@pytest.mark.parametrize(
    "body", [TRUNCATION_BODY, TRUNCATION_BODY.rstrip(b"\n")], ids=["with-break", "no-break"]
)
def test_exactly_max_bytes_is_not_truncated(body: bytes) -> None:
    """A body of exactly max_bytes bytes is parsed whole and not flagged."""
    robots = ra.parse(body, max_bytes=len(body))
    assert not robots.truncated
    assert not robots.allowed("/b", robots_token="bot")
    assert robots.warnings == ()


def test_one_byte_over_drops_an_unterminated_last_line() -> None:
    """One byte over the limit: the unterminated last line is cut, so it is dropped."""
    body = TRUNCATION_BODY.rstrip(b"\n")
    robots = ra.parse(body, max_bytes=len(body) - 1)
    assert robots.truncated
    assert robots.allowed("/b", robots_token="bot")
    assert not robots.allowed("/a", robots_token="bot")


def test_zero_max_bytes_ignores_everything() -> None:
    """max_bytes=0 parses nothing: a non-empty body is truncated and allows all."""
    robots = ra.parse(TRUNCATION_BODY, max_bytes=0)
    assert robots.truncated
    assert robots.groups == ()
    assert robots.allowed("/a", robots_token="bot")
    assert not ra.parse(b"", max_bytes=0).truncated


def test_default_limit_applies() -> None:
    """Without max_bytes the default limit (DEFAULT_MAX_BYTES) is used."""
    assert ra.DEFAULT_MAX_BYTES == 512_000
    body = b"User-agent: *\n" + b"#" * ra.DEFAULT_MAX_BYTES + b"\nDisallow: /\n"
    assert ra.parse(body).truncated
    assert ra.parse(body).allowed("/x", robots_token="bot")
    assert not ra.parse(body, max_bytes=None).allowed("/x", robots_token="bot")
    assert not ra.parse(body, max_bytes=None).truncated


@pytest.mark.parametrize(
    ("value", "error"), [("10", TypeError), (1.5, TypeError), (True, TypeError), (-1, ValueError)]
)
def test_bad_max_bytes(value: object, error: type[Exception]) -> None:
    """max_bytes must be a non-negative int or None."""
    with pytest.raises(error):
        ra.RobotsParser(max_bytes=value)  # type: ignore[arg-type]
    with pytest.raises(error):
        ra.parse(b"", max_bytes=value)  # type: ignore[arg-type]


# --- Lifecycle ---------------------------------------------------------------------------


def test_feed_after_close_raises() -> None:
    """feed() after close() raises ClosedError (a RobotsError and RuntimeError)."""
    parser = ra.RobotsParser()
    parser.feed(b"User-agent: *\n")
    parser.close()
    with pytest.raises(ra.ClosedError) as info:
        parser.feed(b"Disallow: /\n")
    assert isinstance(info.value, ra.RobotsError)
    assert isinstance(info.value, RuntimeError)


def test_close_twice_raises() -> None:
    """close() twice raises ClosedError."""
    parser = ra.RobotsParser()
    parser.close()
    with pytest.raises(ra.ClosedError):
        parser.close()


@pytest.mark.parametrize(
    "chunk", ["User-agent: *", None, 42, [b"x"]], ids=["str", "None", "int", "list"]
)
def test_feed_rejects_non_bytes(chunk: object) -> None:
    """feed() raises TypeError for anything that is not bytes-like."""
    parser = ra.RobotsParser()
    with pytest.raises(TypeError):
        parser.feed(chunk)  # type: ignore[arg-type]


@pytest.mark.parametrize("body", [b"", "", b"\n\n", b"# only a comment\n", b"\xef\xbb\xbf"])
def test_empty_body_allows_all(body: bytes | str) -> None:
    """An empty body (or one without groups) allows everything."""
    robots = ra.parse(body)
    assert robots.groups == ()
    assert robots.warnings == ()
    verdict = robots.explain("/anything", robots_token="bot")
    assert (verdict.allowed, verdict.reason, verdict.line) == (True, "no-group", 0)


def test_parse_str_is_utf8() -> None:
    """parse(str) encodes the text as UTF-8 (so non-ASCII patterns are %-encoded)."""
    robots = ra.parse("User-agent: a\nDisallow: /ä\n")
    assert robots.groups[0].rules[0].pattern == "/%C3%A4"
    assert not robots.allowed("/%C3%A4", robots_token="a")


def test_close_returns_policy_of_parser() -> None:
    """The RobotsTxt built by close() carries the parser's policy."""
    assert parse_chunks([b""], policy="rfc9309").policy is ra.RFC9309
    assert ra.RobotsParser().close().policy is ra.GOOGLE


def test_warning_cap_is_independent_of_chunking() -> None:
    """At the warning cap the kept warnings do not depend on how the body was fed."""
    body = b"".join(b"junk%d\n" % i for i in range(1000)) + b"x" * (MAX_LINE + 10) + b"\n"
    whole = ra.parse(body, max_bytes=None).warnings
    chunks = [body[i : i + 7] for i in range(0, len(body), 7)]
    assert parse_chunks(chunks, max_bytes=None).warnings == whole
