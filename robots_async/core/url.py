"""URL identity for robots.txt: the origin a file governs and the part of a URL matched.

RFC 9309 §2.3: rules apply to one scheme, host and port. The matched part of a URL is
what Google's reference reduces it to (GetPathParamsQuery): path, params and query.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final, NamedTuple
from urllib.parse import SplitResult, quote, urlsplit

from .errors import InvalidURLError, URLTypeError

if TYPE_CHECKING:
    from yarl import URL

__all__ = [
    "Origin",
    "client_url",
    "encode_non_ascii",
    "request_target",
    "robots_url",
    "url_text",
    "without_password",
]

DEFAULT_PORTS = {"http": 80, "https": 443}
_NON_ASCII = re.compile("[^\x00-\x7f]+")
_PATH_START = re.compile("[/?;]")
# scheme://authority then everything up to the fragment; the authority ends at the
# first "/", "?" or ";" (or "#", which leaves an empty path: "/").
_HTTP_TARGET = re.compile("https?://[^/?;#]*([^#]*)")
# The usual URL: lower-case scheme, an ASCII host name (no userinfo, no brackets), an
# optional port, then the path, query, fragment or nothing. For these the result is
# the one urlsplit() and the checks below give, without them (5.4 -> ~0.5 us a URL:
# a checker's origin memo misses on every new origin).
_PLAIN_ORIGIN = re.compile(r"(https?)://([A-Za-z0-9.-]+)(?::([0-9]{1,5}))?(?=[/?#]|\Z)").match
_MAX_PORT = 65_535
_new_tuple = tuple.__new__
# A registered name or IP literal after urlsplit (RFC 3986 §3.2.2, brackets removed).
# What str() of another client's URL object must start with to be taken as a URL.
_ABSOLUTE_HTTP = re.compile("https?://", re.IGNORECASE).match
_VALID_HOST = re.compile(r"[A-Za-z0-9._~!$&'()*+,;=:%-]+")


class Origin(NamedTuple):
    """Scheme, lower-case IDNA host and explicit port: the scope of one robots.txt.

    A NamedTuple so that it hashes as a plain tuple when used as a cache key.
    """

    scheme: str
    host: str
    port: int

    @classmethod
    def from_url(cls, url: object) -> Origin:
        """Return the origin of an absolute http(s) URL (any type :func:`client_url` takes).

        :raises InvalidURLError: relative URL, other scheme, bad host or port.
        :raises URLTypeError: ``url`` is no URL (see :func:`client_url`).
        """
        text = url_text(url)
        common = _PLAIN_ORIGIN(text)
        if common is not None:
            scheme, host, port = common.groups()
            host = host.lower().removesuffix(".")
            number = DEFAULT_PORTS[scheme] if port is None else int(port)
            if host and number <= _MAX_PORT:  # else: the checks below raise
                # tuple.__new__ skips NamedTuple's Python-level __new__ (~200 ns).
                return _new_tuple(cls, (scheme, host, number))
        return _origin_of(_split_absolute(text), text)

    @property
    def robots_url(self) -> str:
        """The robots.txt URL of this origin (RFC 9309 §2.3: ``/robots.txt``)."""
        return f"{self}/robots.txt"

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        if DEFAULT_PORTS.get(self.scheme) == self.port:
            return f"{self.scheme}://{host}"
        return f"{self.scheme}://{host}:{self.port}"


def robots_url(url: object) -> str:
    """Return the robots.txt URL governing ``url`` (userinfo, path and query dropped).

    :raises InvalidURLError: when ``url`` is not an absolute http(s) URL.
    """
    return Origin.from_url(url).robots_url


def client_url(url: object) -> str | URL:
    """``url`` as a str or a ``yarl.URL``: the URL of any HTTP client, by duck typing.

    A str or a ``yarl.URL`` is returned as it is; any other object (an ``httpx.URL``,
    say) as its ``str()`` when that is an absolute http(s) URL. Neither yarl nor
    httpx is imported here: a yarl URL is recognised by its type's module.

    :raises URLTypeError: for anything else (bytes, None, a relative URL object).
    """
    if isinstance(url, str):
        return url
    if type(url).__module__.partition(".")[0] == "yarl":
        return url  # type: ignore[return-value]  # a yarl.URL, recognised by module
    if url is None or isinstance(url, (bytes, bytearray, memoryview)):
        raise URLTypeError(url)
    text = str(url)
    if _ABSOLUTE_HTTP(text) is None:
        raise URLTypeError(url)
    return text


def url_text(url: object) -> str:
    """``url`` as text: a str as it is, a ``yarl.URL`` as the encoded URL it sends,
    another client's URL object as its ``str()`` (see :func:`client_url`).

    ``str()`` of a yarl URL is its normalised, encoded form: what aiohttp sends.
    """
    if isinstance(url, str):
        return url
    return str(client_url(url))


def _split_absolute(url: str) -> SplitResult:
    try:
        parts = urlsplit(url.strip())
    except ValueError as exc:
        raise InvalidURLError(url, f"unparsable URL ({exc})") from exc
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        reason = "relative URL" if not scheme else f"unsupported scheme {scheme!r}"
        raise InvalidURLError(url, reason)
    if not parts.hostname:
        raise InvalidURLError(url, "URL has no host")
    return parts


def _origin_of(parts: SplitResult, url: str) -> Origin:
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError as exc:
        raise InvalidURLError(url, "invalid port") from exc
    host = _normalise_host(parts.hostname or "", url)
    return Origin(scheme, host, port if port is not None else DEFAULT_PORTS[scheme])


def _normalise_host(host: str, url: str) -> str:
    host = host.removesuffix(".")  # "example.com." names the same host as "example.com"
    if host.isascii():
        if not _VALID_HOST.fullmatch(host):
            raise InvalidURLError(url, "invalid host")
        return host.lower()
    import idna  # only for internationalised names; ASCII hosts never pay for it

    try:
        return idna.encode(host, uts46=True).decode("ascii")
    except idna.IDNAError as exc:
        raise InvalidURLError(url, f"invalid international host name ({exc})") from exc


def request_target(url: object) -> str:
    """Reduce a URL to path + params + query, as Google's matcher does.

    Scheme, userinfo, host, port and fragment are dropped without validation; the
    result always starts with ``/``. Relative input is accepted (``a/b`` gives ``/b``).
    """
    if not isinstance(url, str):
        url = url_text(url)
    common = _HTTP_TARGET.match(url)
    if common is not None:  # the usual absolute http(s) URL: one regex, same result
        path = common.group(1)
        return path if path[:1] == "/" else "/" + path
    start = 2 if url.startswith("//") else 0
    # A "://" counts only before the first "/", "?" or ";" (google_semantics.md 19).
    first = _PATH_START.search(url, start)
    scheme_end = url.find("://", start)
    if scheme_end != -1 and (first is None or scheme_end < first.start()):
        first = _PATH_START.search(url, scheme_end + 3)
    if first is None:
        return "/"
    path_start = first.start()
    fragment = url.find("#", start)
    if fragment == -1:
        path = url[path_start:]
    elif fragment < path_start:
        return "/"
    else:
        path = url[path_start:fragment]
    return path if path[0] == "/" else "/" + path


def encode_non_ascii(target: str) -> str:
    """%-encode raw non-ASCII (as UTF-8, upper-case hex), leaving valid URL text alone.

    Deviation (improvement over the reference): Googlebot only ever sees encoded URLs,
    so a raw ``/ツ`` is matched as ``/%E3%83%84``; the reference would never match it.
    """
    if target.isascii():
        return target
    return _NON_ASCII.sub(_quote_run, target)


def _quote_run(run: re.Match[str]) -> str:
    return quote(run.group(), safe="", errors="surrogatepass")


_PASSWORD: Final = re.compile(r"(^|://)([^:/@]*):[^@/]*@")


def without_password(url: str) -> str:
    """``url`` with the password of its userinfo shown as ``***`` (``redis://u:pw@h``,
    or ``u:pw@h`` without a scheme): for messages and logs."""
    return _PASSWORD.sub(r"\1\2:***@", url)
