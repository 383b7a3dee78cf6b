"""Settings of RobotsCache and RobotsChecker, checked at construction."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.errors import ConfigurationTypeError
from ..core.policy import get_policy
from ..core.validate import agent, choice, integer, number, ordered, token
from ..fetch.policy import FetchPolicy
from .store import RobotsStore

if TYPE_CHECKING:
    from ..core.policy import MatchPolicy

__all__ = ["check_cache", "check_checker"]


#: What ``store=`` takes (a URL or a path in its place failed on the first check with
#: an AttributeError).
_STORE = (
    "None or a RobotsStore: MemoryStore(), SQLiteStore(path) or "
    "robots_async.contrib.redis.RedisStore(url), not the URL or path itself"
)
_FETCHER = "a Fetcher: AiohttpFetcher(...), or an object with async fetch(url) and aclose()"


def check_cache(
    owner: str,
    *,
    fetcher: object,
    store: object,
    clock: object,
    policy: object,
    match_policy: object,
    max_entries: object,
    max_memory: object,
    max_concurrent_fetches: object,
    robots_token: object,
) -> MatchPolicy:
    """Check RobotsCache's settings; return the matching policy they name."""
    if not callable(getattr(fetcher, "fetch", None)):
        raise ConfigurationTypeError(f"{owner}.fetcher", fetcher, _FETCHER)
    _check_parts(owner, store=store, clock=clock)
    if policy is not None and not isinstance(policy, FetchPolicy):
        raise ConfigurationTypeError(f"{owner}.policy", policy, "None or a FetchPolicy")
    _check_limits(owner, max_entries, max_memory, max_concurrent_fetches)
    token(f"{owner}.robots_token", robots_token)
    return get_policy(match_policy, setting=f"{owner}.match_policy")


def check_checker(
    *,
    user_agent: object,
    robots_token: object,
    parts: dict[str, object],
    policy: object,
    fetch_policy: object,
    max_delay: object,
    max_concurrent_fetches: object,
    max_entries: object,
    max_memory: object,
) -> str:
    """Check RobotsChecker's settings and ``parts`` (session, fetcher, store, clock,
    sleep: each of its kind); return the product token to match with."""
    owner = "RobotsChecker"
    derived = agent(f"{owner}.user_agent", user_agent)
    session, fetcher = parts["session"], parts["fetcher"]
    if session is not None:
        import aiohttp  # given a session, aiohttp is loaded already

        if not isinstance(session, aiohttp.ClientSession):
            accepted = "None or an aiohttp.ClientSession"
            raise ConfigurationTypeError(f"{owner}.session", session, accepted)
    if fetcher is not None and not callable(getattr(fetcher, "fetch", None)):
        raise ConfigurationTypeError(f"{owner}.fetcher", fetcher, f"None or {_FETCHER}")
    _check_parts(owner, store=parts["store"], clock=parts["clock"], sleep=parts["sleep"])
    if robots_token is not None:
        derived = token(f"{owner}.robots_token", robots_token)
    get_policy(policy, setting=f"{owner}.policy")
    if fetch_policy is not None and not isinstance(fetch_policy, FetchPolicy):
        raise ConfigurationTypeError(f"{owner}.fetch_policy", fetch_policy, "None or a FetchPolicy")
    number(f"{owner}.max_delay", max_delay)
    _check_limits(owner, max_entries, max_memory, max_concurrent_fetches)
    return derived


def check_pacing(
    owner: str,
    *,
    min_delay: object,
    max_delay: object,
    pace_by: object,
    max_retry_after: object,
    max_backoff: object,
) -> None:
    """Check the pacing settings of ``owner`` (a checker or an adapter's settings)."""
    low = number(f"{owner}.min_delay", min_delay)
    high = number(f"{owner}.max_delay", max_delay)
    ordered(f"{owner}.min_delay", low, f"{owner}.max_delay", high)
    choice(f"{owner}.pace_by", pace_by, ("origin", "host"))
    number(f"{owner}.max_retry_after", max_retry_after)
    number(f"{owner}.max_backoff", max_backoff, positive=True)


def _check_parts(owner: str, *, store: object, **functions: object) -> None:
    """Refuse a store that is not a RobotsStore, and functions that cannot be called."""
    if store is not None and not isinstance(store, RobotsStore):
        raise ConfigurationTypeError(f"{owner}.store", store, _STORE)
    for name, function in functions.items():
        if not callable(function):
            raise ConfigurationTypeError(f"{owner}.{name}", function, "a function (a callable)")


def _check_limits(owner: str, entries: object, memory: object, fetches: object) -> None:
    integer(f"{owner}.max_entries", entries, minimum=1)
    integer(f"{owner}.max_memory", memory, minimum=1)
    integer(f"{owner}.max_concurrent_fetches", fetches, minimum=1)
