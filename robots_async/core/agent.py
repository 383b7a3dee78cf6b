"""Product tokens: what a crawler is called in robots.txt (RFC 9309 §2.2.1).

A crawler sends a full User-Agent header (``MyBot/1.0 (+https://example.org/bot)``)
but robots.txt groups name a product token (``MyBot``). The token is the crawler's
name up to the first space or ``/``: real crawlers are called ``360Spider``,
``MJ12bot`` and ``archive.org_bot``, so digits and dots are kept (RFC 9309 tokens are
``[A-Za-z_-]+``; :func:`is_valid_token` checks that stricter form). Tokens are
compared exactly and case-insensitively, never as substrings.
"""

from __future__ import annotations

import re

from .errors import InvalidUserAgentError

__all__ = ["crawler_name", "is_valid_token", "product_token", "require_token"]

_TOKEN = re.compile(r"[A-Za-z_-]+")
# A name ends at whitespace or "/" (the version); ";", "(", ")" and "," never belong to
# a name either (they separate User-Agent comments).
_NAME = re.compile(r"[^\s/;(),]*")
_COMPATIBLE = re.compile(r"\bcompatible;\s*([^\s/;(),]+)", re.IGNORECASE)


def is_valid_token(token: str) -> bool:
    """Return True if ``token`` is a valid RFC 9309 product token (``[A-Za-z_-]+``)."""
    return _TOKEN.fullmatch(token) is not None


def product_token(user_agent: str) -> str:
    """Derive the product token from a User-Agent header; ``""`` if there is none.

    ``MyBot/1.0 (+https://x)`` gives ``MyBot``, ``360Spider/2.0`` gives ``360Spider``;
    a browser-style string naming its crawler as ``(compatible; FooBot/2.1; ...)``
    gives ``FooBot``, as Googlebot's does. ``*`` gives ``*`` (it asks for the ``*``
    group).
    """
    if not isinstance(user_agent, str):
        raise TypeError(f"user_agent must be str, not {type(user_agent).__name__}")
    compatible = _COMPATIBLE.search(user_agent)
    if compatible is not None:
        return compatible.group(1)
    return crawler_name(user_agent)


def crawler_name(text: str) -> str:
    """The leading name of ``text``: up to the first whitespace, ``/``, ``;``, ``(``..."""
    match = _NAME.match(text.strip())
    return match.group() if match else ""


def require_token(user_agent: str) -> str:
    """Like :func:`product_token`, but raise when no token can be derived.

    :raises InvalidUserAgentError: when the header yields an empty token.
    """
    token = product_token(user_agent)
    if not token:
        raise InvalidUserAgentError(f"no product token in User-Agent {user_agent!r}")
    return token
