"""Policy presets and the two documented improvements of "google" over the reference."""

from __future__ import annotations

import dataclasses
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robots_async as ra
from robots_async.core.policy import google_pattern

POLICIES = ["google", "google-reference", "rfc9309", "first-match"]


@pytest.mark.parametrize(
    ("name", "preset"),
    [
        ("google", ra.GOOGLE),
        ("google-reference", ra.GOOGLE_REFERENCE),
        ("rfc9309", ra.RFC9309),
        ("first-match", ra.FIRST_MATCH),
    ],
)
def test_policy_names_and_objects(name: str, preset: ra.MatchPolicy) -> None:
    """A policy can be named or passed as its MatchPolicy object, with the same result."""
    assert preset.name == name
    assert isinstance(preset, ra.MatchPolicy)
    assert ra.parse(b"", policy=name).policy is preset
    assert ra.parse(b"", policy=preset).policy is preset
    assert ra.RobotsParser(preset).close().policy is preset


def test_default_policy_is_google() -> None:
    """parse and RobotsParser default to the "google" policy."""
    assert ra.parse(b"").policy is ra.GOOGLE
    assert ra.RobotsParser().close().policy is ra.GOOGLE


def test_policies_are_frozen() -> None:
    """MatchPolicy objects are immutable."""
    with pytest.raises(dataclasses.FrozenInstanceError):
        ra.GOOGLE.name = "other"  # type: ignore[misc]


@pytest.mark.parametrize("name", ["Google", "rfc", "", "google_reference"])
def test_unknown_policy_name(name: str) -> None:
    """An unknown policy name is a ValueError."""
    with pytest.raises(ValueError, match="policy"):
        ra.parse(b"", policy=name)
    with pytest.raises(ValueError, match="policy"):
        ra.RobotsParser(name)


@pytest.mark.parametrize("value", [None, 1, b"google", ["google"]])
def test_policy_of_wrong_type(value: object) -> None:
    """A policy that is neither a name nor a MatchPolicy is a TypeError."""
    with pytest.raises(TypeError):
        ra.parse(b"", policy=value)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        ra.RobotsParser(value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("pattern", "url"),
    [
        ("/foo/bar/ツ", "http://e.com/foo/bar/ツ"),
        ("/foo/bar/%E3%83%84", "http://e.com/foo/bar/ツ"),
        ("/ä", "/ä"),
        ("/a b/é", "/a b/é?q=ö"),
    ],
    ids=["raw-pattern", "encoded-pattern", "path-only", "space-kept"],
)
def test_google_encodes_raw_non_ascii_urls(pattern: str, url: str) -> None:
    """google %-encodes raw non-ASCII in the URL (UTF-8, upper hex); the reference does not."""
    body = f"User-agent: *\nDisallow: {pattern}\n"
    assert not ra.parse(body).allowed(url, robots_token="bot")
    assert ra.parse(body, policy="google-reference").allowed(url, robots_token="bot")


def test_google_leaves_ascii_escapes_alone() -> None:
    """google does not touch existing escapes: lower-case %c3%a4 still does not match."""
    robots = ra.parse("User-agent: *\nDisallow: /ä\n")
    assert robots.allowed("/%c3%a4", robots_token="bot")
    assert not robots.allowed("/%C3%A4", robots_token="bot")


def _pattern_byte_by_byte(value: bytes) -> str:
    """Google's pattern normalisation, one byte at a time: a byte >= 0x80 becomes
    ``%XY`` and the hex of an existing ``%xy`` escape upper case."""
    out: list[str] = []
    i = 0
    while i < len(value):
        byte = value[i]
        escape = value[i + 1 : i + 3]
        if byte == 0x25 and len(escape) == 2 and all(chr(c) in string.hexdigits for c in escape):
            out.append("%" + escape.decode().upper())
            i += 3
            continue
        out.append(f"%{byte:02X}" if byte >= 0x80 else chr(byte))
        i += 1
    return "".join(out)


@given(
    st.lists(st.sampled_from([b"%", b"a", b"F", b"9", b"g", b"/", b"\x80", b"\xd7\x9e", b"\xff"]))
)
def test_google_pattern_equals_a_byte_by_byte_reading(pieces: list[bytes]) -> None:
    """One substitution for lower-case escapes only and one call per run of high
    bytes (he.wikipedia.org's first question: 0.9 ms -> 0.2 ms) change no pattern."""
    value = b"".join(pieces)
    assert google_pattern(value) == _pattern_byte_by_byte(value)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (b"/%d7%9e\xd7\x9e%D7x", "/%D7%9E%D7%9E%D7x"),
        (b"/%%aa%a", "/%%AA%a"),
        (b"/%4a%A4%4G", "/%4A%A4%4G"),
        (b"\x80\xff", "%80%FF"),
    ],
)
def test_google_pattern_by_hand(value: bytes, expected: str) -> None:
    assert google_pattern(value) == expected


@pytest.mark.parametrize(
    ("url", "google"),
    [
        ("/robots.txt", True),
        ("https://example.com/robots.txt", True),
        ("https://example.com/robots.txt#x", True),
        ("https://example.com/robots.txt?x=1", False),
        ("/Robots.txt", False),
        ("/robots.txt/", False),
    ],
)
def test_google_always_allows_robots_txt(url: str, google: bool) -> None:
    """google allows exactly the path /robots.txt; the reference blocks it under Disallow: /."""
    body = "User-agent: *\nDisallow: /\n"
    assert ra.parse(body).allowed(url, robots_token="bot") is google
    assert not ra.parse(body, policy="google-reference").allowed(url, robots_token="bot")


def test_rfc9309_normalises_patterns_in_groups() -> None:
    """Group rules show the pattern as the policy matches it."""
    body = "User-agent: *\nDisallow: /%62%61%7a/%2f/ä\n"
    google = ra.parse(body).groups[0].rules[0].pattern
    strict = ra.parse(body, policy="rfc9309").groups[0].rules[0].pattern
    assert google == "/%62%61%7A/%2F/%C3%A4"
    assert strict == "/baz/%2F/%C3%A4"


# --- Properties across policies ---------------------------------------------------------

rule_lines = st.lists(
    st.tuples(
        st.sampled_from(["Allow", "Disallow"]),
        st.text(alphabet="/ab~-*$", max_size=6).map(lambda tail: "/" + tail),
    ),
    max_size=6,
)
ascii_paths = st.text(alphabet="/ab~-$*", max_size=8).map(lambda tail: "/" + tail)


def _body(rules: list[tuple[str, str]]) -> str:
    return "User-agent: a\n" + "".join(f"{key}: {value}\n" for key, value in rules)


@settings(max_examples=300, deadline=None)
@given(rules=rule_lines, path=ascii_paths, policy=st.sampled_from(POLICIES))
def test_allowed_agrees_with_explain(rules: list[tuple[str, str]], path: str, policy: str) -> None:
    """allowed() (the fast path) always gives explain()'s answer."""
    robots = ra.parse(_body(rules), policy=policy)
    for token in ("a", "b"):
        assert (
            robots.allowed(path, robots_token=token)
            is robots.explain(path, robots_token=token).allowed
        )


@settings(max_examples=300, deadline=None)
@given(rules=rule_lines, path=ascii_paths)
def test_google_equals_reference_on_ascii_urls(rules: list[tuple[str, str]], path: str) -> None:
    """For ASCII URLs other than /robots.txt, google and google-reference agree exactly."""
    google = ra.parse(_body(rules)).explain(path, robots_token="a")
    reference = ra.parse(_body(rules), policy="google-reference").explain(path, robots_token="a")
    assert google == reference


def _encode_some(text: str, choices: list[bool], upper: bool) -> str:
    """%-encode the unreserved characters of ``text`` picked by ``choices``."""
    out = []
    for char, pick in zip(text, choices + [False] * len(text), strict=False):
        if pick and (char.isalnum() or char in "-._~"):
            escape = f"%{ord(char):02X}"
            out.append(escape if upper else escape.lower())
        else:
            out.append(char)
    return "".join(out)


@settings(max_examples=300, deadline=None)
@given(
    rules=rule_lines,
    path=ascii_paths,
    choices=st.lists(st.booleans(), max_size=12),
    upper=st.booleans(),
)
def test_rfc9309_ignores_escapes_of_unreserved_characters(
    rules: list[tuple[str, str]], path: str, choices: list[bool], upper: bool
) -> None:
    """rfc9309: escaping unreserved characters on either side never changes the verdict."""
    plain = ra.parse(_body(rules), policy="rfc9309").explain(path, robots_token="a")
    escaped_url = ra.parse(_body(rules), policy="rfc9309").explain(
        _encode_some(path, choices, upper), robots_token="a"
    )
    assert (escaped_url.allowed, escaped_url.line) == (plain.allowed, plain.line)
    escaped_rules = [(key, _encode_some(value, choices, upper)) for key, value in rules]
    escaped_file = ra.parse(_body(escaped_rules), policy="rfc9309").explain(path, robots_token="a")
    assert (escaped_file.allowed, escaped_file.line) == (plain.allowed, plain.line)
