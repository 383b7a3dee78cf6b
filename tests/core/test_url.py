"""URL identity: origins and robots.txt URLs (RFC 9309 §2.3), and request targets."""

from __future__ import annotations

import pytest

import robots_async as ra

# --- Origin and robots_url ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "origin", "text"),
    [
        ("http://example.com", ("http", "example.com", 80), "http://example.com"),
        ("https://example.com/a/b?q=1#f", ("https", "example.com", 443), "https://example.com"),
        ("http://example.com:8080/", ("http", "example.com", 8080), "http://example.com:8080"),
        ("https://example.com:443/", ("https", "example.com", 443), "https://example.com"),
        ("http://example.com:443/", ("http", "example.com", 443), "http://example.com:443"),
        ("HTTPS://EXAMPLE.Com/X", ("https", "example.com", 443), "https://example.com"),
        ("http://user:pw@Example.com/x", ("http", "example.com", 80), "http://example.com"),
        ("http://user@example.com:81", ("http", "example.com", 81), "http://example.com:81"),
        ("http://example.com./x", ("http", "example.com", 80), "http://example.com"),
        ("http://127.0.0.1:8080/", ("http", "127.0.0.1", 8080), "http://127.0.0.1:8080"),
        ("http://[2001:DB8::1]/", ("http", "2001:db8::1", 80), "http://[2001:db8::1]"),
        ("https://[::1]:8443/x", ("https", "::1", 8443), "https://[::1]:8443"),
        ("http://müller.eu/", ("http", "xn--mller-kva.eu", 80), "http://xn--mller-kva.eu"),
        ("http://MÜLLER.eu/", ("http", "xn--mller-kva.eu", 80), "http://xn--mller-kva.eu"),
        ("http://straße.de/", ("http", "xn--strae-oqa.de", 80), "http://xn--strae-oqa.de"),
        ("http://例え.jp/", ("http", "xn--r8jz45g.jp", 80), "http://xn--r8jz45g.jp"),
        (" http://example.com/ ", ("http", "example.com", 80), "http://example.com"),
    ],
    ids=[
        "http",
        "https-path-query-fragment",
        "explicit-port",
        "default-port-given",
        "https-port-on-http",
        "case",
        "userinfo",
        "user-and-port",
        "trailing-dot",
        "ipv4",
        "ipv6",
        "ipv6-port",
        "idn",
        "idn-upper",
        "idna2008-sharp-s",
        "idn-cjk",
        "surrounding-space",
    ],
)
def test_origin_from_url(url: str, origin: tuple[str, str, int], text: str) -> None:
    """Origin: lower-case scheme and IDNA host, explicit port, no userinfo."""
    result = ra.Origin.from_url(url)
    assert result == ra.Origin(*origin)
    assert (result.scheme, result.host, result.port) == origin
    assert str(result) == text
    assert result.robots_url == text + "/robots.txt"
    assert ra.robots_url(url) == text + "/robots.txt"


def test_scheme_and_port_make_distinct_origins() -> None:
    """http, https and :8080 of one host are three origins with three robots.txt URLs."""
    urls = ["http://example.com/a", "https://example.com/a", "http://example.com:8080/a"]
    assert len({ra.Origin.from_url(u) for u in urls}) == 3
    assert len({ra.robots_url(u) for u in urls}) == 3


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("http://müller.eu/x", "http://xn--mller-kva.eu/y"),
        ("http://Example.COM/", "http://example.com:80/"),
        ("https://user:secret@example.com/", "https://example.com"),
        ("http://example.com./", "http://example.com/"),
    ],
    ids=["idn-punycode", "case-default-port", "userinfo", "trailing-dot"],
)
def test_equal_origins(a: str, b: str) -> None:
    """Spellings of the same origin compare and hash equal."""
    assert ra.Origin.from_url(a) == ra.Origin.from_url(b)
    assert hash(ra.Origin.from_url(a)) == hash(ra.Origin.from_url(b))
    assert ra.robots_url(a) == ra.robots_url(b)


def test_origin_is_a_named_tuple() -> None:
    """Origin unpacks as (scheme, host, port)."""
    scheme, host, port = ra.Origin.from_url("https://example.com:8443/")
    assert (scheme, host, port) == ("https", "example.com", 8443)
    assert ra.Origin("http", "example.com", 80).robots_url == "http://example.com/robots.txt"


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/",
        "mailto:someone@example.com",
        "javascript:alert(1)",
        "file:///etc/passwd",
        "/relative/path",
        "example.com/path",
        "//example.com/path",
        "",
        "http://",
        "http:///path",
        "http://example.com:99999/",
        "http://example.com:abc/",
        "http://example.com:-1/",
        "http://[::1/",
        "http://exa mple.com/",
        "http://☃.com/",
    ],
    ids=[
        "ftp",
        "mailto",
        "javascript",
        "file",
        "relative",
        "no-scheme",
        "scheme-relative",
        "empty",
        "no-host",
        "empty-host",
        "port-too-big",
        "port-not-number",
        "port-negative",
        "broken-ipv6",
        "space-in-host",
        "idna-disallowed",
    ],
)
def test_invalid_urls(url: str) -> None:
    """Only absolute http(s) URLs with a valid host and port have an origin."""
    with pytest.raises(ra.InvalidURLError) as info:
        ra.Origin.from_url(url)
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, ra.RobotsError)
    with pytest.raises(ra.InvalidURLError):
        ra.robots_url(url)


@pytest.mark.parametrize("value", [None, b"http://example.com/", 42])
def test_url_functions_reject_non_str(value: object) -> None:
    """robots_url, Origin.from_url and request_target raise TypeError for non-str."""
    with pytest.raises(TypeError):
        ra.robots_url(value)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        ra.Origin.from_url(value)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        ra.request_target(value)  # type: ignore[arg-type]


# --- request_target (Google's GetPathParamsQuery) ----------------------------------------


@pytest.mark.parametrize(
    ("url", "target"),
    [
        ("http://h#f/x", "/"),
        ("https://h?a", "/?a"),
        ("http://h;x", "/;x"),
        ("//a/b/c", "/b/c"),
        ("a/b", "/b"),
        ("", "/"),
        ("?a", "/?a"),
        ("example.com?a", "/?a"),
        ("HTTP://H/A", "/A"),
        ("a", "/"),
        ("example.com/a", "/a"),
        ("http://h", "/"),
        ("https://h/", "/"),
        ("http://u:p@h:8080/p;x?y#z", "/p;x?y"),
        ("http://h/a://b", "/a://b"),
        ("ftp://h/x", "/x"),
        ("/path?q=1#frag", "/path?q=1"),
        ("/a#b?c", "/a"),
        ("#x", "/"),
        ("http://h/%7e", "/%7e"),
        ("http://h/a b", "/a b"),
        ("http://h/ä?ö", "/ä?ö"),
        ("http://h/./a/../b", "/./a/../b"),
        ("https://example.com/robots.txt", "/robots.txt"),
    ],
)
def test_request_target(url: str, target: str) -> None:
    """The URL is reduced to path + params + query (no fragment), always starting with /."""
    assert ra.request_target(url) == target
