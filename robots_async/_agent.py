"""Product tokens: what a crawler is called in robots.txt (RFC 9309 §2.2.1).

A crawler sends a full User-Agent header (``MyBot/1.0 (+https://example.org/bot)``)
but robots.txt groups name a product token (``MyBot``). Tokens are letters, ``-``
and ``_`` and are compared exactly and case-insensitively, never as substrings.
"""

from __future__ import annotations

import re

from ._errors import InvalidUserAgentError

__all__ = ["is_valid_token", "product_token", "require_token"]

_TOKEN = re.compile(r"[A-Za-z_-]+")
_LEADING_TOKEN = re.compile(r"[A-Za-z_-]*")
_COMPATIBLE = re.compile(r"\bcompatible;\s*([A-Za-z_-]+)", re.IGNORECASE)


def is_valid_token(token: str) -> bool:
    """Return True if ``token`` is a valid RFC 9309 product token (``[A-Za-z_-]+``)."""
    return _TOKEN.fullmatch(token) is not None


def product_token(user_agent: str) -> str:
    """Derive the product token from a User-Agent header; ``""`` if there is none.

    ``MyBot/1.0 (+https://x)`` gives ``MyBot``; a browser-style string naming its
    crawler as ``(compatible; FooBot/2.1; ...)`` gives ``FooBot``, as Googlebot's does.
    """
    if not isinstance(user_agent, str):
        raise TypeError(f"user_agent must be str, not {type(user_agent).__name__}")
    compatible = _COMPATIBLE.search(user_agent)
    if compatible is not None:
        return compatible.group(1)
    match = _LEADING_TOKEN.match(user_agent.strip())
    return match.group() if match else ""


def require_token(user_agent: str) -> str:
    """Like :func:`product_token`, but raise when no valid token can be derived.

    :raises InvalidUserAgentError: when the header yields no ``[A-Za-z_-]+`` token.
    """
    token = product_token(user_agent)
    if not token:
        raise InvalidUserAgentError(f"no product token in User-Agent {user_agent!r}")
    return token
