"""FetchOutcome: what happened when robots.txt was fetched, as data, never as an error."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..core.robots import RobotsTxt

__all__ = [
    "SHARED_HEADERS",
    "Category",
    "ErrorKind",
    "FetchOutcome",
    "Validators",
    "observed_headers",
]

#: Response headers a record keeps: what freshness, back-off and revalidation need.
SHARED_HEADERS = ("Cache-Control", "Expires", "Date", "Retry-After", "ETag", "Last-Modified")

#: Why a fetch did not produce a usable response.
ErrorKind = Literal[
    "timeout",  # connect or total timeout
    "dns",  # the host name did not resolve
    "connect",  # connection refused or unreachable
    "tls",  # TLS handshake or certificate failure
    "reset",  # connection reset or closed mid-response
    "protocol",  # malformed HTTP, bad chunking, bad content encoding
    "redirect-limit",  # more redirects than the policy follows
    "redirect-loop",  # a redirect back to a URL already visited
    "bad-redirect",  # no/invalid Location, or a scheme other than http(s)
    "blocked-redirect",  # refused by the cross-origin or private-address guard
    "local-limit",  # our own limits (fetch slots, descriptors): not the site's doing
    "ignored",  # dropped by the crawler's own middleware (Scrapy's IgnoreRequest)
]
#: RFC 9309 §2.3.1: success, unavailable (allow all) or unreachable (disallow all).
Category = Literal["ok", "unavailable", "unreachable"]

# "ignored": the crawler chose not to fetch robots.txt (an offline crawl from an HTTP
# cache, say); Scrapy reads that as no robots.txt, and so do we.
_UNAVAILABLE_ERRORS = frozenset({"redirect-limit", "redirect-loop", "bad-redirect", "ignored"})


@dataclass(frozen=True, slots=True)
class FetchOutcome:
    """The result of one robots.txt fetch, including every redirect hop."""

    url: str
    final_url: str
    status: int | None
    hops: int = 0
    bytes_read: int = 0
    truncated: bool = False
    error: ErrorKind | None = None
    error_detail: str = ""
    elapsed: float = 0.0
    #: Cache-Control max-age of the final response, in seconds.
    max_age: float | None = None
    #: Retry-After of the final response, in seconds from when it arrived.
    retry_after: float | None = None
    #: The parsed body of a 2xx response.
    robots: RobotsTxt | None = None
    #: The raw body (at most max_bytes), kept only when the fetcher was asked to.
    body: bytes | None = None
    #: The final response's headers that caching depends on, as (name, value) pairs
    #: (:data:`SHARED_HEADERS`): what a shared-store record passes on.
    headers: tuple[tuple[str, str], ...] = ()
    #: SHA-256 (hex) of the body bytes parsed (decoded, at most max_bytes) of a 2xx
    #: response: which file a verdict came from, for an audit record.
    body_sha256: str | None = None

    @property
    def category(self) -> Category:
        """RFC 9309 §2.3.1 reading of the outcome.

        2xx is ok; 4xx except 429, a 3xx that cannot be followed, too many
        redirects, a loop or a bad Location are unavailable (Google treats them as
        404); 429, 5xx, other statuses and network errors are unreachable.

        A hop our guards refuse ("blocked-redirect": cross-origin off, or a public
        address redirecting into non-public space) is unreachable, not unavailable:
        the file may exist, we chose not to fetch it, so RFC 9309 §2.3.1.4's
        "complete disallow" is the safe reading; allow-all would let a redirect we
        refused decide that everything may be crawled.

        206 Partial Content is unreachable too: no Range is ever sent, so it is an
        unasked part of the file (RFC 9110 §15.3.7), and the rules of a part are not
        the file's (the part before a ``Disallow`` line allowed all).
        """
        if self.error is not None:
            return "unavailable" if self.error in _UNAVAILABLE_ERRORS else "unreachable"
        status = self.status or 0
        if status == 206:
            return "unreachable"
        if 200 <= status < 300:
            return "ok"
        if 300 <= status < 500 and status != 429:
            return "unavailable"
        return "unreachable"


@dataclass(frozen=True, slots=True)
class Validators:
    """What makes a refetch conditional (RFC 9110 §13.1): the cached response's
    ``ETag`` and ``Last-Modified``, and the URL that answered with them."""

    url: str
    etag: str | None = None
    last_modified: str | None = None

    @classmethod
    def of(cls, outcome: FetchOutcome) -> Validators | None:
        """The validators of a 2xx outcome, or None if it has neither header."""
        if outcome.category != "ok" or outcome.robots is None:
            return None
        headers = dict(outcome.headers)
        etag, modified = headers.get("ETag"), headers.get("Last-Modified")
        if etag is None and modified is None:
            return None
        return cls(outcome.final_url, etag, modified)

    def request_headers(self, url: str) -> dict[str, str]:
        """Conditional request headers for ``url``: none unless it is :attr:`url`.

        RFC 9111 §4.3.1: send the entity tag, and Last-Modified as well.
        """
        if url != self.url:
            return {}
        headers = {}
        if self.etag is not None:
            headers["If-None-Match"] = self.etag
        if self.last_modified is not None:
            headers["If-Modified-Since"] = self.last_modified
        return headers


def observed_headers(headers: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The :data:`SHARED_HEADERS` present in ``headers``, in that order."""
    found = ((name, headers.get(name)) for name in SHARED_HEADERS)
    return tuple((name, value) for name, value in found if value is not None)
