"""Page directives: ``X-Robots-Tag``, ``<meta name="robots">`` and TDMRep, sans-I/O.

What a page says about itself once fetched. Google's rules for the robots directives
(developers.google.com, "Robots meta tag, data-nosnippet, and X-Robots-Tag"): values
are comma-separated and case-insensitive, a leading ``token:`` scopes the directives
that follow to one crawler (the meta's ``name`` does the same), ``none`` means
``noindex, nofollow``, ``max-snippet: 0`` means ``nosnippet``, unknown values are
ignored, and when several apply the most restrictive wins. ``noai``/``noimageai`` are
DeviantArt's convention (2022): no AI training (of the images, for ``noimageai``).
TDMRep (W3C CG final report, 2024): ``tdm-reservation`` and ``tdm-policy`` as headers
or metas; its "Processing priority" section lets an HTML meta supersede the header of
the same name (which supersedes the origin's file), and an absent or invalid value
resets nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Final, Literal

from .agent import product_token
from .errors import ConfigurationError, ConfigurationTypeError, PageInputTypeError
from .head_scan import DEFAULT_HEAD_BYTES, looks_like_html, scan_head, utf16_codec
from .header_pairs import selected_headers

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

__all__ = ["DirectiveSource", "PageDirectives", "page_directives"]

#: The directives a result reports as booleans.
Directive = Literal["noindex", "nofollow", "noarchive", "nosnippet", "noai", "noimageai"]
_FLAGS: Final[frozenset[str]] = frozenset(
    ("noindex", "nofollow", "noarchive", "nosnippet", "noai", "noimageai")
)
# Directives that take a value after a colon: their name is never a crawler's token.
_VALUED: Final = frozenset(
    ("max-snippet", "max-image-preview", "max-video-preview", "unavailable_after")
)
# "token: rest": a crawler scope, unless the token is a valued directive.
_SCOPED: Final = re.compile(r"([A-Za-z0-9_.-]+|\*)\s*:(.*)", re.DOTALL)
# A segment that starts a new directive; anything else after ``unavailable_after``
# continues its date ("unavailable_after: Wed, 25 Jun 2010 15:00:00 PST").
_STARTS_DIRECTIVE: Final = re.compile(r"\s*[A-Za-z][A-Za-z0-9_.-]*\s*(?::|$)")
_HTML_TYPES: Final = ("text/html", "application/xhtml+xml")
_TDM_NAMES: Final = frozenset(("tdm-reservation", "tdm-policy"))
# Longer values are read each time: the memos must not hold megabytes of them.
_MEMO_CHARS: Final = 1024
_WANTED: Final = ("x-robots-tag", *_TDM_NAMES, "content-type")


@dataclass(frozen=True, slots=True)
class DirectiveSource:
    """One header line or meta tag that applies to the crawler asking.

    ``name`` is the header (``X-Robots-Tag``, ``tdm-reservation``) or the meta's name
    as written (``robots``, ``GPTBot``); ``scope`` the crawler token a header line
    named (``""`` when unscoped); ``directives`` what it set (``("noindex",
    "nofollow")`` for ``none``; empty when every value was unknown or invalid).
    """

    kind: Literal["header", "meta"]
    name: str
    value: str
    directives: tuple[str, ...]
    scope: str = ""


@dataclass(frozen=True, slots=True)
class PageDirectives:
    """What a page's headers and HTML head say a crawler may do with it.

    Booleans are the most restrictive over every source that applies;
    ``tdm_reservation`` is None when no source says, ``tdm_policy`` the policy URL.
    ``body_scanned`` says whether the body was read as HTML; ``head_truncated`` that
    the byte cap ended the scan inside the head (a later meta was not seen).
    """

    noindex: bool = False
    nofollow: bool = False
    noarchive: bool = False
    nosnippet: bool = False
    noai: bool = False
    noimageai: bool = False
    tdm_reservation: bool | None = None
    tdm_policy: str | None = None
    sources: tuple[DirectiveSource, ...] = ()
    body_scanned: bool = False
    head_truncated: bool = False


def page_directives(
    headers: object,
    body: bytes | bytearray | memoryview = b"",
    *,
    user_agent: str = "*",
    # ``object``, checked below: compiled with mypyc, an ``int`` parameter takes True
    # as 1 before any check could refuse it (a 1-byte head scan, silently).
    max_head_bytes: object = DEFAULT_HEAD_BYTES,
) -> PageDirectives:
    """The directives of one response for the crawler named by ``user_agent``.

    ``headers``: any mapping, multi-dict (aiohttp, httpx, Scrapy; str or bytes) or
    iterable of ``(name, value)`` pairs; names are case-insensitive and every line of
    a repeated field counts. ``body`` is scanned for metas only when the
    Content-Type is HTML (``text/html``, ``application/xhtml+xml``), or when there is
    no Content-Type and the body starts like HTML; the scan reads the head only, at
    most ``max_head_bytes`` bytes. ``user_agent`` is a User-Agent or product token;
    the default ``"*"`` takes only directives addressed to every crawler.

    :raises PageInputTypeError: for headers, a body or a user_agent of a type it
        cannot read.
    :raises ConfigurationError: for a ``max_head_bytes`` that is not a positive int.
    """
    if not isinstance(user_agent, str):
        raise PageInputTypeError("user_agent must be str", user_agent)
    if not isinstance(body, (bytes, bytearray, memoryview)):
        raise PageInputTypeError("body must be bytes, bytearray or memoryview", body)
    if isinstance(max_head_bytes, bool) or not isinstance(max_head_bytes, int):
        raise ConfigurationTypeError("max_head_bytes", max_head_bytes, "an int of bytes")
    if max_head_bytes < 1:
        raise ConfigurationError("max_head_bytes", max_head_bytes, "at least 1 byte")
    token = _scope_token(user_agent)
    fields = selected_headers(headers, _WANTED)
    sources = [source for name, value in fields for source in _header_sources(name, value, token)]
    scanned = truncated = False
    types = [value for name, value in fields if name == "content-type"]
    content_type = types[-1] if types else None
    if body and _is_html(content_type, body):
        data = body if isinstance(body, bytes) else bytes(body[: max_head_bytes + 1])
        scan = scan_head(data, max_head_bytes, utf16_codec(data, content_type))
        scanned, truncated = True, scan.truncated
        metas = [_meta_source(name, name.lower(), content, token) for name, content in scan.metas]
        found = [source for source in metas if source is not None]
        # TDMRep, "Processing priority": a valid meta supersedes the header of the
        # same name (an invalid one, like an absent one, resets nothing).
        superseded = {s.name.lower() for s in found if s.directives} & _TDM_NAMES
        if superseded:
            sources = [s for s in sources if s.kind == "meta" or s.name not in superseded]
        sources += found
    return _combine(sources, scanned=scanned, truncated=truncated)


@lru_cache(maxsize=256)
def _scope_token(user_agent: str) -> str:
    """The lower-case product token that scoped directives are compared with ("" for
    ``*``); a crawler sends a few User-Agents, each read once."""
    return "" if user_agent.strip() == "*" else product_token(user_agent).lower()


def _is_html(content_type: str | None, body: bytes | bytearray | memoryview) -> bool:
    if content_type is None:
        return looks_like_html(bytes(body[:1024]))
    media = content_type.split(";", 1)[0].strip().lower()
    return media in _HTML_TYPES


def _header_sources(name: str, value: str, token: str) -> Iterator[DirectiveSource]:
    if name == "x-robots-tag":
        runs = _line_runs(value) if len(value) <= _MEMO_CHARS else tuple(_scoped_runs(value))
        for scope, directives, raw in runs:
            # Not Google's syntax, but "*: noindex" can only mean every crawler.
            if not scope or scope == "*" or scope.lower() == token:
                yield DirectiveSource("header", "X-Robots-Tag", raw, directives, scope)
    elif name in _TDM_NAMES:
        yield DirectiveSource("header", name, value, _tdm(name, value))


def _meta_source(name: str, key: str, content: str, token: str) -> DirectiveSource | None:
    if key in _TDM_NAMES:
        return DirectiveSource("meta", name, content, _tdm(key, content))
    if key == "robots" or (token and key == token):
        scope = "" if key == "robots" else name
        short = len(content) <= _MEMO_CHARS
        effects = _content_effects(content) if short else _effects(_segments(content))
        return DirectiveSource("meta", name, content, effects, scope)
    return None


def _tdm(name: str, value: str) -> tuple[str, ...]:
    text = value.strip()
    if name == "tdm-policy":
        return ("tdm-policy",) if text else ()
    return (f"tdm-reservation={text}",) if text in ("0", "1") else ()


@lru_cache(maxsize=1024)
def _line_runs(value: str) -> tuple[tuple[str, tuple[str, ...], str], ...]:
    """:func:`_scoped_runs` of a line seen before: a site sends the same value on
    every page, so each distinct line is read once (immutable results, shared)."""
    return tuple(_scoped_runs(value))


@lru_cache(maxsize=1024)
def _content_effects(content: str) -> tuple[str, ...]:
    """The flags a meta's content sets (memoised like :func:`_line_runs`)."""
    return _effects(_segments(content))


def _scoped_runs(value: str) -> Iterator[tuple[str, tuple[str, ...], str]]:
    """Split one X-Robots-Tag line into runs of one scope each: (scope, effects, raw).

    A ``token:`` prefix switches the scope for the rest of the line (Google reads
    ``googlebot: noindex, otherbot: nofollow`` as two scoped lists)."""
    scope = ""
    run: list[str] = []
    for segment in _segments(value):
        found = _SCOPED.fullmatch(segment)
        if found is not None and found.group(1).lower() not in _VALUED:
            if run or scope:
                yield scope, _effects(run), ", ".join(run)
            scope, run = found.group(1), []
            segment = found.group(2).strip()
        if segment:
            run.append(segment)
    if run or scope:
        yield scope, _effects(run), ", ".join(run)


def _segments(value: str) -> list[str]:
    """Comma-separated directives, stripped; an ``unavailable_after`` date keeps its
    own commas (segments that do not start like a directive are its continuation)."""
    segments: list[str] = []
    dated: list[str] | None = None  # the parts of an unavailable_after being read
    for part in value.split(","):
        if dated is not None and _STARTS_DIRECTIVE.match(part) is None:
            dated.append(part)
            continue
        if dated is not None:
            segments.append(",".join(dated).strip())
            dated = None
        text = part.strip()
        if "unavailable_after" in text.lower():
            dated = [text]
        elif text:
            segments.append(text)
    if dated is not None:
        segments.append(",".join(dated).strip())
    return segments


def _effects(segments: Iterable[str]) -> tuple[str, ...]:
    """The flags a list of directives sets, in order, without repeats."""
    found: dict[str, None] = {}
    for segment in segments:
        name, _, argument = segment.partition(":")
        name = name.strip().lower()
        if name in _FLAGS:
            found[name] = None
        elif name == "none":
            found.update(dict.fromkeys(("noindex", "nofollow")))
        elif name == "max-snippet" and argument.strip() == "0":
            found["nosnippet"] = None  # Google: max-snippet:0 is nosnippet
    return tuple(found)


def _combine(sources: list[DirectiveSource], *, scanned: bool, truncated: bool) -> PageDirectives:
    flags: set[str] = set()
    reservation: bool | None = None
    policy: str | None = None
    for source in sources:
        for directive in source.directives:
            if directive in _FLAGS:
                flags.add(directive)
            elif directive.startswith("tdm-reservation="):
                reserved = directive.endswith("1")
                reservation = reserved or bool(reservation)  # any "1" wins
            elif directive == "tdm-policy" and policy is None:
                policy = source.value.strip()
    return PageDirectives(
        noindex="noindex" in flags,
        nofollow="nofollow" in flags,
        noarchive="noarchive" in flags,
        nosnippet="nosnippet" in flags,
        noai="noai" in flags,
        noimageai="noimageai" in flags,
        tdm_reservation=reservation,
        tdm_policy=policy,
        sources=tuple(sources),
        body_scanned=scanned,
        head_truncated=truncated,
    )
