"""Settings checked when they are given, so bad configuration fails loudly and early.

A setting that is wrong must stop the program at construction, never turn into a
silent verdict later (an unknown policy name once made every origin "unreachable",
so everything was disallowed without a word). Each validator returns the value
(narrowed to its type) or raises :class:`ConfigurationError` naming the setting,
the value and what is accepted; a value of the wrong type raises
:class:`ConfigurationTypeError` (also a ``TypeError``). Adapters pass their own
setting names (``ROBOTSASYNC_TIMEOUT``, ``--timeout``) so the message speaks the
user's language. Sans-I/O: imports no event loop.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, TypeVar

from .agent import product_token
from .errors import ConfigurationError, ConfigurationTypeError, InvalidUserAgentError

if TYPE_CHECKING:
    from collections.abc import Iterable


__all__ = [
    "agent",
    "boolean",
    "choice",
    "control_character",
    "header_value",
    "integer",
    "number",
    "optional_integer",
    "optional_number",
    "ordered",
    "text",
    "token",
]

Name = TypeVar("Name", bound=str)


def choice(setting: str, value: object, accepted: Iterable[Name]) -> Name:
    """``value`` if it is one of the ``accepted`` names (exact, case-sensitive)."""
    options = tuple(accepted)
    for option in options:
        if isinstance(value, str) and value == option:
            return option
    error = ConfigurationError if isinstance(value, str) else ConfigurationTypeError
    raise error(setting, value, "one of " + ", ".join(repr(o) for o in options))


def boolean(setting: str, value: object) -> bool:
    """``value`` if it is True or False (not a truthy stand-in such as ``"no"``)."""
    if not isinstance(value, bool):
        raise ConfigurationTypeError(setting, value, "True or False")
    return value


def text(setting: str, value: object) -> str:
    """``value`` if it is a non-empty string."""
    if not isinstance(value, str):
        raise ConfigurationTypeError(setting, value, "a non-empty string")
    if not value:
        raise ConfigurationError(setting, value, "a non-empty string")
    return value


def integer(setting: str, value: object, *, minimum: int) -> int:
    """``value`` if it is an int (not a bool) of at least ``minimum``."""
    accepted = f"an int >= {minimum}"
    if not isinstance(value, int) or isinstance(value, bool):
        raise ConfigurationTypeError(setting, value, accepted)
    if value < minimum:
        raise ConfigurationError(setting, value, accepted)
    return value


def optional_integer(setting: str, value: object, *, minimum: int) -> int | None:
    """Like :func:`integer`, or None (which means "no limit" where it is accepted)."""
    if value is None:
        return None
    try:
        return integer(setting, value, minimum=minimum)
    except ConfigurationError as exc:
        raise type(exc)(setting, value, f"None or {exc.accepted}") from None


def number(setting: str, value: object, *, positive: bool = False) -> float:
    """``value`` as a float if it is a finite number, ``> 0`` or (by default) ``>= 0``.

    Infinity and NaN are refused: an infinite timeout once surfaced as an
    ``OverflowError`` from the event loop at the first check.
    """
    accepted = "a finite number > 0" if positive else "a finite number >= 0"
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise ConfigurationTypeError(setting, value, accepted)
    try:
        finite = math.isfinite(value)
    except OverflowError:  # an int beyond any float (10**400)
        finite = False
    if not finite or value < 0 or (positive and value == 0):
        raise ConfigurationError(setting, value, accepted)
    return float(value)


def optional_number(setting: str, value: object, *, positive: bool = False) -> float | None:
    """Like :func:`number`, or None (which means "never" where it is accepted)."""
    if value is None:
        return None
    try:
        return number(setting, value, positive=positive)
    except ConfigurationError as exc:
        raise type(exc)(setting, value, f"None or {exc.accepted}") from None


def ordered(low_setting: str, low: float | None, high_setting: str, high: float | None) -> None:
    """Refuse ``low > high`` (either being None means unbounded: nothing to check)."""
    if low is not None and high is not None and low > high:
        raise ConfigurationError(low_setting, low, f"a value <= {high_setting} ({high!r})")


#: What no header field value may hold (RFC 9110 §5.5): controls other than HTAB.
_NOT_IN_A_HEADER = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def header_value(setting: str, value: str) -> str:
    """``value`` if an HTTP header can carry it.

    :raises ConfigurationError: for a control character other than HTAB (RFC 9110
        §5.5): aiohttp refuses every request then, each robots.txt was "unreachable"
        and everything disallowed, where the crawl should not have started.
    """
    bad = control_character(value)
    if bad is not None:
        raise ConfigurationError(setting, value, f"no control character ({bad!r} found)")
    return value


def control_character(value: str) -> str | None:
    """The first character of ``value`` no header field value may hold, or None."""
    found = _NOT_IN_A_HEADER.search(value)
    return None if found is None else found[0]


def agent(setting: str, value: object) -> str:
    """The product token of User-Agent ``value``.

    :raises InvalidUserAgentError: when it names no crawler (the error the
        checker has always raised for this; a ValueError and a RobotsError).
    :raises ConfigurationError: when no header can carry it (:func:`header_value`).
    """
    if not isinstance(value, str):
        raise ConfigurationTypeError(setting, value, "a User-Agent string")
    header_value(setting, value)
    token = product_token(value)
    if not token:
        raise InvalidUserAgentError(
            f"{setting}={value!r} is not accepted: expected a User-Agent that starts "
            "with the crawler's name, e.g. 'MyBot/1.0 (+https://example.org/bot)'"
        )
    return token


def token(setting: str, value: object) -> str:
    """``value`` if it is a product token as :func:`product_token` would derive it.

    ``MyBot``, ``360Spider`` and ``*`` are; ``My Bot`` and ``MyBot/1.0`` are not (a
    token with a space or ``/`` can never equal a robots.txt group's name).
    """
    accepted = "a product token such as 'MyBot' (no space, '/', ';', '(', ')' or ',')"
    if not isinstance(value, str):
        raise ConfigurationTypeError(setting, value, accepted)
    if not value or product_token(value) != value:
        raise ConfigurationError(setting, value, accepted)
    return value
