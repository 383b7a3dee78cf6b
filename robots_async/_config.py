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
from dataclasses import fields
from functools import cache
from typing import TYPE_CHECKING, Any, Literal, TypeVar, get_args, get_origin, get_type_hints

from ._agent import product_token
from ._errors import ConfigurationError, ConfigurationTypeError, InvalidUserAgentError
from ._policy import get_policy

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ._fetch_policy import FetchPolicy
    from ._policy import MatchPolicy

__all__ = [
    "agent",
    "boolean",
    "check_cache",
    "check_checker",
    "check_fetch_policy",
    "choice",
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


def agent(setting: str, value: object) -> str:
    """The product token of User-Agent ``value``.

    :raises InvalidUserAgentError: when it names no crawler (the error the
        checker has always raised for this; a ValueError and a RobotsError).
    """
    if not isinstance(value, str):
        raise ConfigurationTypeError(setting, value, "a User-Agent string")
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


# --------------------------------------------------------------------------- FetchPolicy

#: Lower bounds of FetchPolicy's numeric fields: "positive" (> 0) or "zero" (>= 0).
#: Other fields are checked by their annotated type (Literal names, bool, str).
_FETCH_BOUNDS: dict[str, Literal["positive", "zero"]] = {
    # 0 hops: no redirect is followed (the redirect is an error, RFC 9309 §2.3.1.2).
    "max_hops": "zero",
    # 0 bytes would parse nothing, so every file would allow all: refused.
    "max_bytes": "positive",
    "connect_timeout": "positive",
    "total_timeout": "positive",
    "stale_max_age": "zero",
    "outage_hold": "zero",
    "outage_give_up": "zero",
    "ttl": "zero",
    "min_ttl": "zero",
    "max_ttl": "zero",
    "error_ttl": "zero",
    "max_error_ttl": "zero",
}
#: (low, high) pairs that must be ordered.
_FETCH_ORDER = (
    ("min_ttl", "max_ttl"),
    ("error_ttl", "max_error_ttl"),
    ("outage_hold", "outage_give_up"),
)


def check_fetch_policy(policy: FetchPolicy) -> None:
    """Check every field of ``policy`` against its type and bounds (``__post_init__``)."""
    for name, annotation in _fetch_fields():
        _check_field(f"FetchPolicy.{name}", getattr(policy, name), annotation, name)
    for low, high in _FETCH_ORDER:
        ordered(
            f"FetchPolicy.{low}", getattr(policy, low), f"FetchPolicy.{high}", getattr(policy, high)
        )


@cache
def _fetch_fields() -> tuple[tuple[str, Any], ...]:
    """(name, resolved annotation) of each FetchPolicy field, resolved once."""
    from ._fetch_policy import FetchPolicy  # that module imports this one

    hints = get_type_hints(FetchPolicy)
    return tuple((f.name, hints[f.name]) for f in fields(FetchPolicy))


def _check_field(setting: str, value: object, annotation: Any, name: str) -> None:
    args = get_args(annotation)
    optional = type(None) in args
    if get_origin(annotation) is Literal:
        choice(setting, value, args)
    elif annotation is bool:
        boolean(setting, value)
    elif annotation is str:
        text(setting, value)
    elif int in args or annotation is int:
        bound = 1 if _FETCH_BOUNDS[name] == "positive" else 0
        if optional:
            optional_integer(setting, value, minimum=bound)
        else:
            integer(setting, value, minimum=bound)
    elif float in args or annotation is float:
        positive = _FETCH_BOUNDS[name] == "positive"
        if optional:
            optional_number(setting, value, positive=positive)
        else:
            number(setting, value, positive=positive)
    else:  # a field type this module does not know yet: fail the test suite, not users
        raise TypeError(f"no validation rule for {setting}: {annotation!r}")


# --------------------------------------------------------------------------- cache, checker


def check_cache(
    owner: str,
    *,
    policy: object,
    match_policy: object,
    max_entries: object,
    max_memory: object,
    max_concurrent_fetches: object,
    robots_token: object,
) -> MatchPolicy:
    """Check RobotsCache's settings; return the matching policy they name."""
    from ._fetch_policy import FetchPolicy  # FetchPolicy's own checks import this module

    if policy is not None and not isinstance(policy, FetchPolicy):
        raise ConfigurationTypeError(f"{owner}.policy", policy, "None or a FetchPolicy")
    _check_limits(owner, max_entries, max_memory, max_concurrent_fetches)
    token(f"{owner}.robots_token", robots_token)
    return get_policy(match_policy, setting=f"{owner}.match_policy")


def check_checker(
    *,
    user_agent: object,
    robots_token: object,
    policy: object,
    fetch_policy: object,
    max_delay: object,
    max_concurrent_fetches: object,
    max_entries: object,
    max_memory: object,
) -> str:
    """Check RobotsChecker's settings; return the product token to match with."""
    from ._fetch_policy import FetchPolicy

    owner = "RobotsChecker"
    derived = agent(f"{owner}.user_agent", user_agent)
    if robots_token is not None:
        derived = token(f"{owner}.robots_token", robots_token)
    get_policy(policy, setting=f"{owner}.policy")
    if fetch_policy is not None and not isinstance(fetch_policy, FetchPolicy):
        raise ConfigurationTypeError(f"{owner}.fetch_policy", fetch_policy, "None or a FetchPolicy")
    number(f"{owner}.max_delay", max_delay)
    _check_limits(owner, max_entries, max_memory, max_concurrent_fetches)
    return derived


def _check_limits(owner: str, entries: object, memory: object, fetches: object) -> None:
    integer(f"{owner}.max_entries", entries, minimum=1)
    integer(f"{owner}.max_memory", memory, minimum=1)
    integer(f"{owner}.max_concurrent_fetches", fetches, minimum=1)
