"""The fix for a URL the commands cannot use: a missing scheme, or a path without a site."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..core.errors import InvalidURLError

__all__ = ["scheme_hint", "url_error", "url_hint"]

# A first segment that names a host: localhost, an IPv4 or bracketed IPv6 address, or a
# dotted name ending in letters (a top-level domain), each with an optional port.
_HOST = re.compile(
    r"""(?:localhost
        |\d{1,3}(?:\.\d{1,3}){3}
        |\[[0-9a-f:.]+\]
        |(?:[^\W_](?:[\w-]*[^\W_])?\.)+(?:[^\W\d_]{2,}|xn--[\w-]+)\.?
    )(?::\d{1,5})?""",
    re.IGNORECASE | re.VERBOSE,
)

# Names that end like a file, not a top-level domain: "robots.txt" is a file to pass
# with --robots, never https://robots.txt.
_FILE_SUFFIXES = frozenset({"txt", "text", "html", "htm", "xml", "json", "jsonl", "csv", "log"})


def _looks_like_host(segment: str) -> bool:
    if not _HOST.fullmatch(segment):
        return False
    if segment.startswith("["):
        return True
    name = segment.partition(":")[0].rstrip(".")
    return name.rpartition(".")[2].lower() not in _FILE_SUFFIXES


def scheme_hint(text: str) -> str | None:
    """The hint "did you mean 'https://TEXT'?" when ``text`` starts with a host, else None."""
    text = text.strip()
    segment = re.split(r"[/?#]", text, maxsplit=1)[0]
    if "://" in text or not segment or not _looks_like_host(segment):
        return None
    return f"did you mean 'https://{text}'?"


def url_hint(text: str, *, paths_ok: bool, robots_option: bool) -> str | None:
    """How to fix ``text``, a URL without an http(s) scheme, or None when it has one.

    :param paths_ok: a bare ``/path`` is accepted (``--robots`` was given).
    :param robots_option: the command takes ``--robots FILE`` (check, explain).
    """
    if "://" in text:
        return None  # a scheme was written: the error itself says which one is wrong
    hint = scheme_hint(text)
    if hint is not None:
        return hint
    path = "/" + text.strip().lstrip("/")
    if any(char.isspace() for char in path):
        path = "/PATH"  # not a path either: show the shape, not the text
    if paths_ok:
        return f"give a full URL (https://HOST{path}) or the path {path!r}"
    fix = f"give a full URL (https://HOST{path})"
    if robots_option:
        fix += ", or a robots.txt file to check it against with --robots FILE"
    return fix


def url_error(exc: InvalidURLError, *, paths_ok: bool, robots_option: bool) -> str:
    """The error message of ``exc``, followed by the fix when there is one."""
    hint = None
    # Only a missing scheme has an obvious fix ("localhost:8080/x" reads as scheme
    # "localhost"); a bad host or port is for the user to correct.
    if isinstance(exc.url, str) and exc.reason.startswith(("relative URL", "unsupported scheme")):
        hint = url_hint(exc.url, paths_ok=paths_ok, robots_option=robots_option)
    return str(exc) if hint is None else f"{exc}; {hint}"
