"""What a fetch outcome means: which rules apply and for how long (RFC 9309 §2.3-2.4).

Pure decisions, no I/O: the fetcher reports what happened, a :class:`FetchPolicy`
decides. Presets: ``rfc9309()`` (default), ``googlebot()``, ``yandex()`` and
``legacy_allow_on_error()``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from functools import cache
from typing import TYPE_CHECKING, Any, Literal, TypedDict, get_args, get_origin, get_type_hints

from ..core.robots import RobotsTxt
from ..core.validate import (
    boolean,
    choice,
    integer,
    number,
    optional_integer,
    optional_number,
    ordered,
    text,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from .outcome import FetchOutcome

__all__ = [
    "FETCH_POLICY_NAMES",
    "LOCAL_LIMIT_TTL",
    "FetchPolicy",
    "FetchPolicyChanges",
    "FetchPolicyName",
    "Resolution",
    "Source",
]

MINUTE = 60.0
HOUR = 3600.0
DAY = 86_400.0

#: How the rules in use were obtained.
Source = Literal["fetched", "unavailable", "unreachable", "stale"]
#: The presets' names (the CLI's ``--fetch-policy``, Scrapy's ``ROBOTSASYNC_FETCH_POLICY``).
FetchPolicyName = Literal["rfc9309", "googlebot", "yandex", "legacy-allow-on-error"]
FETCH_POLICY_NAMES: tuple[FetchPolicyName, ...] = (
    "rfc9309",
    "googlebot",
    "yandex",
    "legacy-allow-on-error",
)

#: Seconds a verdict caused by our own limits (no fetch slot, no descriptor) is kept
#: before the fetch is tried again: soon, since the site did nothing wrong.
LOCAL_LIMIT_TTL = 5.0


@dataclass(frozen=True, slots=True)
class Resolution:
    """The rules to apply after a fetch, how they were obtained, and until when."""

    robots: RobotsTxt
    source: Source
    ttl: float
    #: Consecutive unreachable outcomes (drives the error back-off).
    failures: int
    #: When the current run of unreachable outcomes began (None when reachable).
    unreachable_since: float | None
    #: The last successfully fetched rules and when they were fetched.
    last_good: RobotsTxt | None
    last_good_at: float | None


@dataclass(frozen=True, slots=True)
class FetchPolicy:
    """Limits and status semantics for fetching robots.txt.

    Defaults follow RFC 9309 with Google's details: at most 5 redirect hops, 512,000
    decoded bytes, 4xx (but 429) allows all, 429/5xx/network errors disallow all
    unless a good copy younger than 30 days is at hand.

    Every field is checked at construction (also by the presets and
    ``dataclasses.replace``): a wrong type, a negative or non-finite limit or an
    unknown name raises :class:`ConfigurationError` naming field, value and accepted
    values.
    """

    #: The preset's name, shown in logs and ``explain`` output.
    name: str = "rfc9309"
    #: Redirects followed at most (RFC 9309 §2.3.1.2: at least five).
    max_hops: int = 5
    #: Decoded body bytes parsed at most (RFC 9309 §2.5: at least 500 KiB); None: no limit.
    max_bytes: int | None = 512_000
    #: Seconds to establish each connection (DNS lookup included).
    connect_timeout: float = 10.0
    #: Whole fetch, all hops and the body included.
    total_timeout: float = 30.0
    #: 401 and 403: "allow" (RFC 9309, Google) or "disallow" (CPython, reppy).
    forbidden: Literal["allow", "disallow"] = "allow"
    #: 429, 5xx, network errors: RFC 9309 §2.3.1.4 says "disallow".
    unreachable: Literal["allow", "disallow"] = "disallow"
    #: A good copy younger than this is used while unreachable (RFC 9309 §2.3.1.4).
    stale_max_age: float = 30 * DAY
    #: Google: stop crawling for this long into an outage, then use the last good copy
    #: or, without one, allow all; None: no such phase (the RFC reading).
    outage_hold: float | None = None
    #: Google: after an outage this long, treat the file as absent (allow all).
    outage_give_up: float | None = None
    #: Success TTL when the response has no Cache-Control max-age.
    ttl: float = DAY
    #: Shortest TTL of a fetched or absent file, whatever Cache-Control says.
    min_ttl: float = MINUTE
    #: RFC 9309 §2.4: a cached copy SHOULD NOT be used for more than 24 hours.
    max_ttl: float = DAY
    #: First TTL after an unreachable outcome; doubles per failure up to max_error_ttl.
    error_ttl: float = 5 * MINUTE
    #: Longest TTL after repeated unreachable outcomes (Retry-After aside).
    max_error_ttl: float = HOUR
    #: Follow redirects to other hosts (RFC 9309 §2.3.1.2 says crawlers SHOULD).
    cross_origin_redirects: bool = True
    #: SSRF guard: "block" refuses a redirect from a public address to a non-public
    #: one (loopback, private, link-local, CGNAT, unique-local, cloud metadata,
    #: reserved, multicast), checked on the address the connection uses; a refused
    #: hop is error "blocked-redirect" (unreachable: disallow all). A non-public origin
    #: may still redirect within non-public space. "allow" follows any redirect.
    private_redirects: Literal["block", "allow"] = "block"

    @classmethod
    def rfc9309(cls, **changes: Unpack[FetchPolicyChanges]) -> FetchPolicy:
        """RFC 9309 (the default): unreachable means disallow, a good copy excepted."""
        return replace(cls(), **changes)

    @classmethod
    def googlebot(cls, **changes: Unpack[FetchPolicyChanges]) -> FetchPolicy:
        """Google's documented behaviour during an outage.

        The first 12 hours disallow all; then the last good copy is used, or with
        none the site is treated as having no robots.txt; after 30 days allow all.
        """
        base = cls(name="googlebot", outage_hold=12 * HOUR, outage_give_up=30 * DAY)
        return replace(base, **changes)

    @classmethod
    def yandex(cls, **changes: Unpack[FetchPolicyChanges]) -> FetchPolicy:
        """Yandex: any response but 2xx (errors included) means "open for indexing"."""
        base = cls(name="yandex", unreachable="allow", stale_max_age=0.0)
        return replace(base, **changes)

    @classmethod
    def legacy_allow_on_error(cls, **changes: Unpack[FetchPolicyChanges]) -> FetchPolicy:
        """Scrapy's and older crawlers' reading: an error allows all (a good copy first)."""
        return replace(cls(name="legacy-allow-on-error", unreachable="allow"), **changes)

    @classmethod
    def preset(
        cls,
        name: FetchPolicyName,
        /,
        *,
        setting: str = "fetch policy",
        **changes: Unpack[FetchPolicyChanges],
    ) -> FetchPolicy:
        """The preset called ``name`` (see ``FETCH_POLICY_NAMES``) with ``changes``.

        :raises ConfigurationError: for an unknown name, naming ``setting``.
        """
        name = choice(setting, name, FETCH_POLICY_NAMES)
        base = {
            "rfc9309": cls.rfc9309,
            "googlebot": cls.googlebot,
            "yandex": cls.yandex,
            "legacy-allow-on-error": cls.legacy_allow_on_error,
        }[name]
        return base(**changes)

    def __post_init__(self) -> None:
        # Fail loudly at construction: a bad limit must not become a silent verdict
        # (or an OverflowError from the event loop) at the first check.
        check_fetch_policy(self)

    def resolve(
        self,
        outcome: FetchOutcome,
        previous: Resolution | None,
        now: float,
    ) -> Resolution:
        """Decide what ``outcome`` means, given the previous resolution for the origin."""
        last_good = previous.last_good if previous else None
        last_good_at = previous.last_good_at if previous else None
        category = outcome.category
        if category == "ok" and outcome.robots is not None:
            ttl = self._clamp(outcome.max_age if outcome.max_age is not None else self.ttl)
            return Resolution(outcome.robots, "fetched", ttl, 0, None, outcome.robots, now)
        if category == "unavailable":
            robots = RobotsTxt.allow_all()
            if outcome.status in (401, 403) and self.forbidden == "disallow":
                robots = RobotsTxt.disallow_all()
            ttl = self._clamp(outcome.max_age if outcome.max_age is not None else self.ttl)
            return Resolution(robots, "unavailable", ttl, 0, None, last_good, last_good_at)
        if outcome.error == "local-limit":
            return self._local_limit(previous, now)
        return self._unreachable(outcome, previous, now)

    def _local_limit(self, previous: Resolution | None, now: float) -> Resolution:
        """Our own limit stopped the fetch: nothing was learnt about the site.

        Never fail open: what was in force stays (a good copy within
        ``stale_max_age``, else disallow all) for ``LOCAL_LIMIT_TTL`` only, and the
        site's failure count and outage clock are left as they were.
        """
        last_good = previous.last_good if previous else None
        last_good_at = previous.last_good_at if previous else None
        failures = previous.failures if previous else 0
        since = previous.unreachable_since if previous else None
        fresh = last_good_at is not None and now - last_good_at < self.stale_max_age
        robots: RobotsTxt = RobotsTxt.disallow_all()
        source: Source = "unreachable"
        if last_good is not None and fresh:
            robots, source = last_good, "stale"
        return Resolution(robots, source, LOCAL_LIMIT_TTL, failures, since, last_good, last_good_at)

    def _unreachable(
        self, outcome: FetchOutcome, previous: Resolution | None, now: float
    ) -> Resolution:
        failures = previous.failures + 1 if previous else 1
        since = previous.unreachable_since if previous else None
        since = now if since is None else since
        last_good = previous.last_good if previous else None
        last_good_at = previous.last_good_at if previous else None
        robots, source = self._rules_while_unreachable(now - since, last_good, last_good_at, now)
        if outcome.retry_after is not None:
            ttl = self._clamp(outcome.retry_after)
        else:
            # The exponent is capped: 2.0 ** 1024 overflows a float, and a site can
            # fail that many times in a row in a long-running crawl.
            ttl = min(self.error_ttl * 2.0 ** min(failures - 1, 64), self.max_error_ttl)
        return Resolution(robots, source, ttl, failures, since, last_good, last_good_at)

    def _rules_while_unreachable(
        self,
        outage: float,
        last_good: RobotsTxt | None,
        last_good_at: float | None,
        now: float,
    ) -> tuple[RobotsTxt, Source]:
        if self.outage_give_up is not None and outage >= self.outage_give_up:
            return RobotsTxt.allow_all(), "unreachable"
        if self.outage_hold is not None:
            if outage < self.outage_hold:
                return RobotsTxt.disallow_all(), "unreachable"
            if last_good is not None:
                return last_good, "stale"
            return RobotsTxt.allow_all(), "unreachable"
        fresh_enough = last_good_at is not None and now - last_good_at < self.stale_max_age
        if last_good is not None and fresh_enough:
            return last_good, "stale"
        if self.unreachable == "allow":
            return RobotsTxt.allow_all(), "unreachable"
        return RobotsTxt.disallow_all(), "unreachable"

    def _clamp(self, ttl: float) -> float:
        return min(max(ttl, self.min_ttl), self.max_ttl)


class FetchPolicyChanges(TypedDict, total=False):
    """The keyword arguments of the presets: FetchPolicy's fields, checked by mypy."""

    name: str
    max_hops: int
    max_bytes: int | None
    connect_timeout: float
    total_timeout: float
    forbidden: Literal["allow", "disallow"]
    unreachable: Literal["allow", "disallow"]
    stale_max_age: float
    outage_hold: float | None
    outage_give_up: float | None
    ttl: float
    min_ttl: float
    max_ttl: float
    error_ttl: float
    max_error_ttl: float
    cross_origin_redirects: bool
    private_redirects: Literal["block", "allow"]


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
