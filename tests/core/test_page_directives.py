"""page_directives(): X-Robots-Tag, meta robots and TDMRep, table-driven."""

from __future__ import annotations

import pytest
from multidict import CIMultiDict

import robots_async
from robots_async import (
    ConfigurationError,
    DirectiveSource,
    PageDirectives,
    PageInputTypeError,
    RobotsError,
    page_directives,
)
from robots_async.core.head_scan import DEFAULT_HEAD_BYTES, scan_head

FLAGS = ("noindex", "nofollow", "noarchive", "nosnippet", "noai", "noimageai")
HTML = {"Content-Type": "text/html; charset=utf-8"}


def flags(result: PageDirectives) -> set[str]:
    return {name for name in FLAGS if getattr(result, name)}


def page(head: str, body: str = "<p>text</p>") -> bytes:
    return f"<!doctype html><html><head>{head}</head><body>{body}</body></html>".encode()


# (case id, X-Robots-Tag lines, user agent, flags expected)
HEADER_CASES = [
    ("single", ["noindex"], "*", {"noindex"}),
    ("list", ["noindex, nofollow"], "*", {"noindex", "nofollow"}),
    ("case and spaces", ["  NoIndex ,NOFOLLOW  "], "*", {"noindex", "nofollow"}),
    ("none", ["none"], "*", {"noindex", "nofollow"}),
    ("all is a no-op", ["all"], "*", set()),
    ("index follow no-ops", ["index, follow"], "*", set()),
    ("every flag", [", ".join(FLAGS)], "*", set(FLAGS)),
    ("noai", ["noai"], "*", {"noai"}),
    ("noimageai", ["noimageai"], "*", {"noimageai"}),
    ("unknown ignored", ["noodp, notranslate, nocache"], "*", set()),
    ("max-snippet 0", ["max-snippet: 0"], "*", {"nosnippet"}),
    ("max-snippet 20", ["max-snippet:20, max-image-preview:large"], "*", set()),
    (
        "repeated lines",
        ["noindex", "nofollow", "noarchive"],
        "*",
        {"noindex", "nofollow", "noarchive"},
    ),
    ("scoped to us", ["mybot: noindex"], "MyBot/1.0 (+https://x)", {"noindex"}),
    ("scoped token any case", ["MYBOT: noai"], "mybot", {"noai"}),
    ("scoped to another", ["otherbot: noindex"], "MyBot/1.0", set()),
    ("scoped, asked as *", ["mybot: noindex"], "*", set()),
    ("star scope is everyone", ["*: noindex"], "MyBot", {"noindex"}),
    ("star scope, asked as *", ["*: nofollow"], "*", {"nofollow"}),
    ("scoped prefix is not us", ["mybot-news: noindex"], "MyBot", set()),
    (
        "compatible UA",
        ["googlebot: nofollow"],
        "Mozilla/5.0 (compatible; Googlebot/2.1)",
        {"nofollow"},
    ),
    (
        "two scopes in a line, ours second",
        ["otherbot: noindex, mybot: nofollow"],
        "MyBot",
        {"nofollow"},
    ),
    (
        "two scopes in a line, ours first",
        ["mybot: noarchive, otherbot: noindex"],
        "MyBot",
        {"noarchive"},
    ),
    ("scoped and unscoped lines", ["otherbot: noindex", "nofollow"], "MyBot", {"nofollow"}),
    ("most restrictive wins", ["all", "mybot: none"], "MyBot", {"noindex", "nofollow"}),
    (
        "unavailable_after date",
        ["unavailable_after: Wed, 25 Jun 2010 15:00:00 PST, noarchive"],
        "*",
        {"noarchive"},
    ),
    (
        "scoped unavailable_after",
        ["mybot: unavailable_after: Wed, 25 Jun 2010 15:00:00 PST, nosnippet"],
        "MyBot",
        {"nosnippet"},
    ),
    ("empty", [""], "*", set()),
    ("only commas", [", ,,"], "*", set()),
]


@pytest.mark.parametrize(
    ("lines", "agent", "expected"), [c[1:] for c in HEADER_CASES], ids=[c[0] for c in HEADER_CASES]
)
def test_x_robots_tag(lines: list[str], agent: str, expected: set[str]) -> None:
    result = page_directives([("X-Robots-Tag", line) for line in lines], user_agent=agent)
    assert flags(result) == expected
    assert result.tdm_reservation is None
    assert not result.body_scanned


def test_scoped_sources_name_their_scope_and_unknown_values_are_kept() -> None:
    result = page_directives(
        [("x-robots-tag", "mybot: noindex, otherbot: nofollow"), ("X-Robots-Tag", "notranslate")],
        user_agent="MyBot",
    )
    assert result.sources == (
        DirectiveSource("header", "X-Robots-Tag", "noindex", ("noindex",), "mybot"),
        DirectiveSource("header", "X-Robots-Tag", "notranslate", ()),
    )


def test_an_unavailable_after_date_keeps_its_commas() -> None:
    # Split at its comma, "15:00 25 Jun 2010" would read as a scope for crawler "15"
    # and take the noarchive after it away from everyone else.
    value = "unavailable_after: Friday, 15:00 25 Jun 2010, noarchive"
    (source,) = page_directives({"X-Robots-Tag": value}).sources
    assert source.value == value
    assert source.directives == ("noarchive",)
    assert source.scope == ""


def test_none_is_recorded_as_what_it_set() -> None:
    (source,) = page_directives({"X-Robots-Tag": "none"}).sources
    assert source.directives == ("noindex", "nofollow")
    assert source.value == "none"


# (case id, head markup, user agent, flags expected)
META_CASES = [
    ("robots", '<meta name="robots" content="noindex">', "*", {"noindex"}),
    ("upper case", "<META NAME=ROBOTS CONTENT=NOFOLLOW>", "*", {"nofollow"}),
    ("single quotes", "<meta name='robots' content='noai, noimageai'>", "*", {"noai", "noimageai"}),
    ("unquoted, self-closed", "<meta name=robots content=noarchive />", "*", {"noarchive"}),
    ("content before name", '<meta content="nosnippet" name="robots">', "*", {"nosnippet"}),
    (
        "entities",
        '<meta name="robots" content="&#110;oindex,&amp;x, n&#x6F;follow">',
        "*",
        {"noindex", "nofollow"},
    ),
    ("crawler meta, ours", '<meta name="MyBot" content="noindex">', "MyBot/2", {"noindex"}),
    ("crawler meta, another", '<meta name="GPTBot" content="noindex">', "MyBot/2", set()),
    ("crawler meta, asked as *", '<meta name="GPTBot" content="noindex">', "*", set()),
    ("none", '<meta name="robots" content="none">', "*", {"noindex", "nofollow"}),
    (
        "meta and crawler meta",
        '<meta name="robots" content="noai"><meta name="mybot" content="nofollow">',
        "MyBot",
        {"noai", "nofollow"},
    ),
    ("comment skipped", '<!-- <meta name="robots" content="noindex"> -->', "*", set()),
    # Comments end where browsers end them (HTML tokenizer): "<!-->" and "<!--->" are
    # empty comments, "--!>" closes one; read to the next "-->", they hid the meta.
    ("empty comment <!-->", "<!--><meta name=robots content=noindex><!-- x -->", "*", {"noindex"}),
    ("empty comment <!--->", "<!---><meta name=robots content=noai><!-- x -->", "*", {"noai"}),
    ("comment closed by --!>", "<!-- x --!><meta name=robots content=noai><!-- -->", "*", {"noai"}),
    ("comment <!---->", "<!----><meta name=robots content=noai>", "*", {"noai"}),
    (
        "conditional comment skipped",
        (
            "<!--[if IE]><meta name=robots content=noindex><![endif]--><!--[if !IE]><!-->"
            "<meta name=robots content=noai><!--<![endif]-->"
        ),
        "*",
        {"noai"},
    ),
    (
        "script skipped",
        '<script>var s = "<meta name=robots content=noindex>";</script>',
        "*",
        set(),
    ),
    ("style skipped", "<style>/* <meta name=robots content=noindex> */</style>", "*", set()),
    ("title skipped", "<title><meta name=robots content=noindex></title>", "*", set()),
    (
        "after script",
        '<script type="x">if (a<b) {}</script><meta name=robots content=noai>',
        "*",
        {"noai"},
    ),
    ("missing content", '<meta name="robots">', "*", set()),
    (
        "first of repeated attribute",
        '<meta name="robots" content="noindex" content="all">',
        "*",
        {"noindex"},
    ),
    (
        "quoted > inside value",
        '<meta name="robots" content="noai > x, nofollow">',
        "*",
        {"nofollow"},
    ),
    (
        "garbage attributes",
        '<meta ="x" \'y\' name=robots foo=bar" content=noindex>',
        "*",
        {"noindex"},
    ),
    ("unterminated meta", '<meta name="robots" content="noindex', "*", set()),
    (
        "header element is not the head's end",
        "<header></header><meta name=robots content=noindex>",
        "*",
        {"noindex"},
    ),
]


@pytest.mark.parametrize(
    ("head", "agent", "expected"), [c[1:] for c in META_CASES], ids=[c[0] for c in META_CASES]
)
def test_meta(head: str, agent: str, expected: set[str]) -> None:
    body = f"<html><head>{head}".encode() if "unterminated" in head else page(head)
    result = page_directives(HTML, body, user_agent=agent)
    assert flags(result) == expected
    assert result.body_scanned


@pytest.mark.parametrize(
    "markup",
    [
        page("", '<meta name="robots" content="noindex">'),  # in the body
        b"<html><head></head><meta name=robots content=noindex>",  # after </head>
        b"<html><body><meta name=robots content=noindex>",  # after <body>
    ],
)
def test_the_scan_stops_at_the_head_end(markup: bytes) -> None:
    assert not page_directives(HTML, markup).noindex


# (case id, Content-Type or None, body, scanned)
CONTENT_TYPE_CASES = [
    ("html", "text/html", True),
    ("html upper with charset", "TEXT/HTML; Charset=UTF-8", True),
    ("xhtml", "application/xhtml+xml", True),
    ("json", "application/json", False),
    ("plain text", "text/plain", False),
    ("image", "image/png", False),
    ("no content type", None, True),
]


@pytest.mark.parametrize(
    ("ctype", "scanned"),
    [c[1:] for c in CONTENT_TYPE_CASES],
    ids=[c[0] for c in CONTENT_TYPE_CASES],
)
def test_only_html_bodies_are_scanned(ctype: str | None, scanned: bool) -> None:
    headers = {} if ctype is None else {"Content-Type": ctype}
    result = page_directives(headers, page('<meta name="robots" content="noai">'))
    assert result.body_scanned is scanned
    assert result.noai is scanned


@pytest.mark.parametrize(
    "body",
    [
        b'{"html": "<meta name=robots content=noindex>"}',
        b"plain text <meta name=robots content=noindex>",
        b"\x89PNG\r\n\x1a\n<meta name=robots content=noindex>",
    ],
)
def test_a_body_without_content_type_must_look_like_html(body: bytes) -> None:
    result = page_directives({}, body)
    assert not result.body_scanned
    assert not result.noindex


def test_bom_and_whitespace_before_html_still_look_like_html() -> None:
    body = b"\xef\xbb\xbf\n  <!DOCTYPE HTML><head><meta name=robots content=noindex>"
    assert page_directives([], body).noindex


UTF16_HEAD = "<!DOCTYPE html><html><head><meta name=robots content=noai></head><body>été"


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("text/html", ("\ufeff" + UTF16_HEAD).encode("utf-16-le")),  # a BOM says it
        ("text/html", ("\ufeff" + UTF16_HEAD).encode("utf-16-be")),
        ("text/html; charset=UTF-16", UTF16_HEAD.encode("utf-16-le")),  # WHATWG: LE
        ('text/html; charset="utf-16be"', UTF16_HEAD.encode("utf-16-be")),
        ("text/html; charset=utf-8", ("\ufeff" + UTF16_HEAD).encode("utf-16-le")),  # BOM wins
        (None, ("\ufeff" + UTF16_HEAD).encode("utf-16-le")),  # no Content-Type: sniffed
    ],
    ids=["bom le", "bom be", "charset utf-16", "charset utf-16be", "bom over charset", "sniffed"],
)
def test_a_utf16_page_is_read_as_browsers_decode_it(content_type: str | None, body: bytes) -> None:
    # Browsers and search engines decode UTF-16 HTML (WHATWG encoding sniffing: the
    # BOM, else the Content-Type charset); scanned as bytes, its metas went unseen.
    headers = {} if content_type is None else {"Content-Type": content_type}
    result = page_directives(headers, body)
    assert result.body_scanned
    assert result.noai


def test_a_utf16_head_is_capped_in_its_own_bytes() -> None:
    head = "<head>" + " " * 40_000 + "<meta name=robots content=noai></head>"
    body = ("\ufeff" + head).encode("utf-16-le")  # 80 KB: the meta past the 64 KB cap
    result = page_directives(HTML, body)
    assert not result.noai
    assert result.head_truncated
    assert page_directives(HTML, body, max_head_bytes=len(body)).noai


def test_header_and_meta_combine_most_restrictive() -> None:
    result = page_directives(
        {"X-Robots-Tag": "noindex", "Content-Type": "text/html"},
        page('<meta name="robots" content="nofollow, all">'),
    )
    assert flags(result) == {"noindex", "nofollow"}
    assert [s.kind for s in result.sources] == ["header", "meta"]


# (case id, headers, head markup, reservation, policy)
TDM_CASES = [
    ("header 1", [("tdm-reservation", "1")], "", True, None),
    ("header 0", [("TDM-Reservation", " 0 ")], "", False, None),
    ("header invalid", [("tdm-reservation", "yes")], "", None, None),
    (
        "header policy",
        [("tdm-reservation", "1"), ("tdm-policy", "https://x.test/p.json")],
        "",
        True,
        "https://x.test/p.json",
    ),
    (
        "meta",
        [],
        '<meta name="tdm-reservation" content="1"><meta name="tdm-policy" content="https://x.test/m">',
        True,
        "https://x.test/m",
    ),
    # TDMRep "Processing priority": the HTML meta supersedes the header.
    (
        "meta 1 supersedes header 0",
        [("tdm-reservation", "0")],
        '<meta name="tdm-reservation" content="1">',
        True,
        None,
    ),
    (
        "meta 0 supersedes header 1",
        [("tdm-reservation", "1")],
        '<meta name="tdm-reservation" content="0">',
        False,
        None,
    ),
    (
        "invalid meta leaves header",
        [("tdm-reservation", "1")],
        '<meta name="tdm-reservation" content="2">',
        True,
        None,
    ),
    (
        "meta reservation leaves header policy",
        [("tdm-reservation", "0"), ("tdm-policy", "https://h")],
        '<meta name="tdm-reservation" content="1">',
        True,
        "https://h",
    ),
    (
        "invalid header leaves meta",
        [("tdm-reservation", "maybe")],
        '<meta name="tdm-reservation" content="1">',
        True,
        None,
    ),
    (
        "meta policy supersedes header policy",
        [("tdm-policy", "https://h")],
        '<meta name="tdm-policy" content="https://m">',
        None,
        "https://m",
    ),
    (
        "repeated headers: 1 wins",
        [("tdm-reservation", "0"), ("tdm-reservation", "1")],
        "",
        True,
        None,
    ),
    ("none", [], "", None, None),
]


@pytest.mark.parametrize(
    ("headers", "head", "reservation", "policy"),
    [c[1:] for c in TDM_CASES],
    ids=[c[0] for c in TDM_CASES],
)
def test_tdmrep(
    headers: list[tuple[str, str]], head: str, reservation: bool | None, policy: str | None
) -> None:
    result = page_directives([("Content-Type", "text/html"), *headers], page(head))
    assert result.tdm_reservation is reservation
    assert result.tdm_policy == policy


LINES = [
    ("X-Robots-Tag", "otherbot: noindex"),
    ("X-Robots-Tag", "nofollow"),
    ("x-robots-tag", "mybot: noai"),
]


def _httpx_headers() -> object:
    # The core job of .ci/lowest installs no adapter framework: skipped there.
    httpx = pytest.importorskip("httpx")
    return httpx.Headers(LINES)


def _scrapy_headers() -> object:
    headers = pytest.importorskip("scrapy.http.headers").Headers()
    for name, value in LINES:
        headers.appendlist(name, value)
    return headers


@pytest.mark.parametrize(
    "make",
    [
        lambda: LINES,
        lambda: [(n.encode(), v.encode()) for n, v in LINES],
        lambda: CIMultiDict(LINES),
        _httpx_headers,
        _scrapy_headers,
        lambda: {b"X-Robots-Tag": [v.encode() for _, v in LINES]},
    ],
    ids=[
        "pairs",
        "bytes pairs",
        "aiohttp CIMultiDict",
        "httpx Headers",
        "Scrapy Headers",
        "dict of lists",
    ],
)
def test_every_header_container_keeps_repeated_lines(make: object) -> None:
    result = page_directives(make(), user_agent="MyBot")  # type: ignore[operator]
    # Joined into one line, "nofollow" would read as scoped to otherbot.
    assert flags(result) == {"nofollow", "noai"}


def test_plain_dict_with_bytes() -> None:
    assert page_directives({b"x-robots-tag": b"noimageai"}).noimageai


@pytest.mark.parametrize(
    "headers", [42, "X-Robots-Tag: noindex", [("a", "b", "c")], [("X-Robots-Tag", 1)], [(1, "x")]]
)
def test_unreadable_headers_raise_a_typed_error(headers: object) -> None:
    with pytest.raises(PageInputTypeError, match="headers must be") as caught:
        page_directives(headers)
    assert isinstance(caught.value, RobotsError)
    assert isinstance(caught.value, TypeError)


def test_a_user_agent_that_is_not_text_raises_a_typed_error() -> None:
    with pytest.raises(TypeError) as caught:
        page_directives({}, user_agent=b"MyBot")  # type: ignore[arg-type]
    # The compiled build checks the declared str type itself, before our check.
    if not robots_async.COMPILED:
        assert isinstance(caught.value, PageInputTypeError)
        assert "user_agent must be str" in str(caught.value)


@pytest.mark.parametrize("cap", [0, -1])
def test_a_head_cap_below_one_byte_fails_loudly(cap: int) -> None:
    with pytest.raises(ConfigurationError, match="max_head_bytes"):
        page_directives(HTML, b"<head>", max_head_bytes=cap)


@pytest.mark.parametrize("cap", [1.5, "64k", True])
def test_a_head_cap_that_is_not_an_int_fails_loudly(cap: object) -> None:
    with pytest.raises(robots_async.ConfigurationTypeError):
        page_directives(HTML, b"<head>", max_head_bytes=cap)  # type: ignore[arg-type]


def test_a_memoryview_body_is_read_like_bytes() -> None:
    body = page('<meta name="robots" content="noai">')
    assert page_directives(HTML, memoryview(body)).noai
    assert page_directives(HTML, bytearray(body)).noai


def test_a_str_body_raises_a_typed_error() -> None:
    with pytest.raises(PageInputTypeError, match="body must be bytes"):
        page_directives({}, "<html>")  # type: ignore[arg-type]


def test_a_one_megabyte_head_is_scanned_up_to_the_cap() -> None:
    filler = "<link rel=x href=y>" * (1_048_576 // 19)
    early = page(
        f'<meta name="robots" content="noai">{filler}<meta name="robots" content="noindex">'
    )
    result = page_directives(HTML, early)
    assert result.noai
    assert not result.noindex  # past the 64 KB cap: not seen, and said so
    assert result.head_truncated
    wide = page_directives(HTML, early, max_head_bytes=2_000_000)
    assert wide.noai
    assert wide.noindex
    assert not wide.head_truncated


def test_a_huge_script_in_the_head_ends_the_scan_at_the_cap() -> None:
    body = page("<script>" + "x" * 1_000_000 + "</script><meta name=robots content=noindex>")
    result = page_directives(HTML, body)
    assert not result.noindex
    assert result.head_truncated


def test_a_short_page_without_head_end_is_not_truncated() -> None:
    result = page_directives(HTML, b"<html><head><meta name=robots content=noindex>")
    assert result.noindex
    assert not result.head_truncated


def test_a_meta_cut_by_the_cap_is_dropped() -> None:
    body = b"<head>" + b" " * (DEFAULT_HEAD_BYTES - 20) + b'<meta name="robots" content="noindex">'
    scan = scan_head(body)
    assert scan.metas == ()
    assert scan.truncated


def test_metas_are_text_in_document_order() -> None:
    scan = scan_head(page('<meta name=a content="x &lt; y"><meta name=b content=café>'))
    assert scan.metas == (("a", "x < y"), ("b", "café"))


def test_a_utf16_head_of_wide_characters_is_read_to_the_cap() -> None:
    # 30,000 CJK characters are 60 KB in UTF-16 and 90 KB once read as UTF-8: the cap
    # counts the page's own bytes, so the meta after them is still seen.
    head = "<head><title>" + "漢" * 30_000 + "</title><meta name=robots content=noai></head>"
    result = page_directives(HTML, ("\ufeff" + head).encode("utf-16-le"))
    assert result.noai
    assert not result.head_truncated


def test_a_utf8_page_served_as_utf16_is_still_read() -> None:
    # A misdeclared charset: without a BOM, bytes with no NUL in their first KB are
    # no UTF-16 markup ("<" is "<\0" there), so they are read as they are.
    headers = {"Content-Type": "text/html; charset=utf-16"}
    assert page_directives(headers, page("<meta name=robots content=noai>")).noai
