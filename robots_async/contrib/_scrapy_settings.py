"""The ``ROBOTSASYNC_*`` Scrapy settings: one table, each entry checked at startup.

:data:`SETTINGS` is the only place a setting name appears; :func:`read_settings`
reads every entry and nothing else, so the documented list (docs/configuration.md
is generated from the table) cannot drift from what the middleware reads. A bad
value raises :class:`ConfigurationError` naming the setting, the value and what is
accepted: Scrapy stops the crawl (it only ever swallows ``NotConfigured``).

No Scrapy import here: values arrive as Python objects from a settings module or
as strings from ``-s NAME=VALUE``, and both spellings are accepted.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, get_args

from ..core.pacing import PaceBy
from ..core.parser import DEFAULT_MAX_BYTES
from ..core.policy import PolicyName
from ..core.url import without_password
from ..core.usage import CATEGORIES, UsageCategory

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = [
    "SETTINGS",
    "ConfigurationError",
    "ConfigurationTypeError",
    "ScrapyConfig",
    "Setting",
    "UnknownSettingError",
    "read_settings",
]

from ..core.errors import ConfigurationError, ConfigurationTypeError, RobotsError

FetchPresetName = Literal["rfc9309", "googlebot", "yandex", "legacy-allow-on-error"]
PrivateRedirects = Literal["block", "allow"]
Forbidden = Literal["allow", "disallow"]

_TRUE = (True, 1, "1", "True", "true")
_FALSE = (False, 0, "0", "False", "false")


def _literal(options: tuple[str, ...]) -> str:
    return "Literal[" + ", ".join(f'"{option}"' for option in options) + "]"


def _accepted(options: tuple[object, ...]) -> str:
    return "one of " + ", ".join(repr(option) for option in options)


def _choice(options: tuple[str, ...]) -> Callable[[object], object]:
    def convert(value: object) -> object:
        if isinstance(value, str) and value in options:
            return value
        raise (ValueError if isinstance(value, str) else TypeError)(_accepted(options))

    return convert


def _number(minimum: float, *, integer: bool = False) -> Callable[[object], object]:
    """An int (or float) >= ``minimum``, finite, from a number or its decimal spelling."""
    accepted = f"{'an integer' if integer else 'a number'} >= {minimum:g}"

    def convert(value: object) -> object:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise TypeError(accepted)
        text = value.strip() if isinstance(value, str) else value
        try:
            number = int(text) if integer else float(text)
        except (ValueError, OverflowError):
            raise ValueError(accepted) from None
        if integer and isinstance(value, float) and value != number:
            raise ValueError(accepted)
        # An int is finite (and math.isfinite(10**400) raises OverflowError).
        if not (integer or math.isfinite(number)) or number < minimum:
            raise ValueError(accepted)
        return number

    return convert


def _bool(value: object) -> object:
    if value in _TRUE and not isinstance(value, float):
        return True
    if value in _FALSE and not isinstance(value, float):
        return False
    raise ValueError("True, False, 1, 0 or their spellings '1', '0', 'true', 'false'")


def _optional_bool(value: object) -> object:
    return None if value is None else _bool(value)


def _audit_path(value: object) -> object:
    if value is None:
        return None
    if isinstance(value, str) and value:
        return value
    raise ValueError("a file path (str) or None")


def _redis_url(value: object) -> object:
    if value in (None, ""):
        return None
    schemes = ("redis://", "rediss://", "unix://", "redis+cluster://")
    if isinstance(value, str) and value.startswith(schemes):
        return value
    accepted = f"None or a URL starting with {', '.join(schemes)}"
    raise (ValueError if isinstance(value, str) else TypeError)(accepted)


def _store_path(value: object) -> object:
    if value is None or isinstance(value, str):
        return value
    raise TypeError("None, '' (off) or the path of a SQLite file")


def _prefix(value: object) -> object:
    # No braces: they would change the keys' hash slot (RedisStore refuses them too).
    if isinstance(value, str) and value.strip() and not {"{", "}"} & set(value):
        return value
    accepted = "a non-empty string without '{' or '}'"
    raise (ValueError if isinstance(value, str) else TypeError)(accepted)


def _categories(value: object) -> object:
    """A list of usage categories, or their comma-separated spelling (``-s``)."""
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    accepted = f"a list of {_accepted(CATEGORIES)} (or a comma-separated string)"
    if not isinstance(value, (list, tuple, set, frozenset)):
        raise TypeError(accepted)
    if any(item not in CATEGORIES for item in value):
        raise ValueError(accepted)
    return tuple(category for category in CATEGORIES if category in value)


@dataclass(frozen=True, slots=True)
class Setting:
    """One ``ROBOTSASYNC_*`` setting: name, type and default as documented, meaning."""

    name: str
    type: str
    default: object
    meaning: str
    #: Turns a raw value into the checked one; raises TypeError or ValueError whose
    #: message says what is accepted.
    convert: Callable[[object], object] = field(repr=False, compare=False)

    @property
    def key(self) -> str:
        """The :class:`ScrapyConfig` field this setting fills."""
        return self.name.removeprefix("ROBOTSASYNC_").lower()

    def read(self, settings: Mapping[str, object] | None) -> object:
        """The checked value in ``settings`` (the default when absent or None)."""
        raw = self.default if settings is None else settings.get(self.name, self.default)
        try:
            return self.convert(raw)
        except TypeError as exc:
            raise ConfigurationTypeError(self.name, raw, str(exc)) from None
        except ValueError as exc:
            # A Redis URL's password stays out of the crawl's log.
            shown = without_password(raw) if isinstance(raw, str) else raw
            raise ConfigurationError(self.name, shown, str(exc)) from None


_MATCH_POLICIES: tuple[str, ...] = get_args(PolicyName)
_FETCH_PRESETS: tuple[str, ...] = get_args(FetchPresetName)

#: Every setting the Scrapy middleware and backend read, with its type, default and
#: meaning (docs/gen_configuration.py renders this table).
SETTINGS: tuple[Setting, ...] = (
    Setting(
        "ROBOTSASYNC_POLICY",
        _literal(_MATCH_POLICIES),
        "google",
        "How rules match: Google's matcher with its documented improvements, Google's "
        "reference bit for bit, strict RFC 9309, or first match in file order "
        "(backend and middleware).",
        _choice(_MATCH_POLICIES),
    ),
    Setting(
        "ROBOTSASYNC_FETCH_POLICY",
        _literal(_FETCH_PRESETS),
        "rfc9309",
        "What robots.txt statuses and errors mean (FetchPolicy preset): RFC 9309 "
        "disallows on 429/5xx/network errors; legacy-allow-on-error is Scrapy's reading.",
        _choice(_FETCH_PRESETS),
    ),
    Setting(
        "ROBOTSASYNC_FORBIDDEN",
        _literal(get_args(Forbidden)),
        "allow",
        "What a 401/403 robots.txt means: allow all (RFC 9309, Google) or disallow all.",
        _choice(get_args(Forbidden)),
    ),
    Setting(
        "ROBOTSASYNC_MAX_BYTES",
        "int",
        DEFAULT_MAX_BYTES,
        "Bytes of a robots.txt parsed at most; the rest is ignored (RFC 9309 §2.5: at "
        "least 500 KiB). Backend and middleware.",
        _number(1, integer=True),
    ),
    Setting(
        "ROBOTSASYNC_TIMEOUT",
        "float",
        30.0,
        "Seconds one robots.txt fetch may take, redirects and body included.",
        _number(0.001),
    ),
    Setting(
        "ROBOTSASYNC_MAX_ENTRIES",
        "int",
        10_000,
        "Origins whose robots.txt is kept in memory at most (least recently used go,"
        " approximately).",
        _number(1, integer=True),
    ),
    Setting(
        "ROBOTSASYNC_MAX_MEMORY",
        "int",
        256 * 1024 * 1024,
        "Bytes the cached robots.txt rules may retain, measured (least recently used"
        " go, approximately).",
        _number(1, integer=True),
    ),
    Setting(
        "ROBOTSASYNC_CRAWL_DELAY",
        "bool",
        True,
        "Apply Crawl-delay / Request-rate to Scrapy's download slot of the origin.",
        _bool,
    ),
    Setting(
        "ROBOTSASYNC_MAX_CRAWL_DELAY",
        "float",
        30.0,
        "Cap, in seconds, on the Crawl-delay applied to a download slot.",
        _number(0.0),
    ),
    Setting(
        "ROBOTSASYNC_PACE",
        "bool",
        False,
        "Politeness shared by every process of the store (ROBOTSASYNC_REDIS_URL or "
        "the SQLite store): each request waits for its origin's turn (Crawl-delay, "
        "Request-rate, at least the download slot's delay: DOWNLOAD_DELAY, DOWNLOAD_SLOTS, "
        "not AutoThrottle's, which the slot applies; capped by ROBOTSASYNC_MAX_CRAWL_DELAY; "
        "the slots then send without jitter), and 429/503 responses pause the origin "
        "(Retry-After) or back it off.",
        _bool,
    ),
    Setting(
        "ROBOTSASYNC_PACE_BY",
        _literal(get_args(PaceBy)),
        "origin",
        "What ROBOTSASYNC_PACE paces: the origin (scheme, host, port) or the host "
        "(as Scrapy's download slots).",
        _choice(get_args(PaceBy)),
    ),
    Setting(
        "ROBOTSASYNC_MAX_RETRY_AFTER",
        "float",
        3600.0,
        "Longest pause, in seconds, that a 429/503 response's Retry-After imposes "
        "with ROBOTSASYNC_PACE.",
        _number(0.0),
    ),
    Setting(
        "ROBOTSASYNC_MAX_BACKOFF",
        "float",
        300.0,
        "Longest back-off, in seconds, after 429/503 responses without Retry-After "
        "(2 s, doubled each time) with ROBOTSASYNC_PACE.",
        _number(0.001),
    ),
    Setting(
        "ROBOTSASYNC_PRIVATE_REDIRECTS",
        _literal(get_args(PrivateRedirects)),
        "block",
        "A robots.txt redirect from a public address to a loopback, private, "
        "link-local or metadata one: refused (block) or followed (allow).",
        _choice(get_args(PrivateRedirects)),
    ),
    Setting(
        "ROBOTSASYNC_REFUSE_USAGE",
        "list[Literal[" + ", ".join(f'"{c}"' for c in CATEGORIES) + "]]",
        [],
        "Usage categories whose Content-Usage preference 'n' (robots.txt rule or "
        "response header) drops the request or response with IgnoreRequest.",
        _categories,
    ),
    Setting(
        "ROBOTSASYNC_AUDIT_LOG",
        "str | None",
        None,
        "Append one JSON line per response (verdict, deciding robots.txt line, its "
        "sha256, usage sources) to this file; None: no log (docs/opt-outs.md).",
        _audit_path,
    ),
    Setting(
        "ROBOTSASYNC_USAGE_SIGNALS",
        "bool | None",
        None,
        "Also read TDMRep (tdmrep.json once per origin), Content-Signal and page "
        "directives: response.meta['usage_answer'] and ['robots_directives'], and "
        "ROBOTSASYNC_REFUSE_USAGE refuses on any of them. None: on when "
        "ROBOTSASYNC_REFUSE_USAGE names a category (a crawl refusing an AI use "
        "honours every opt-out), off otherwise.",
        _optional_bool,
    ),
    Setting(
        "ROBOTSASYNC_REDIS_URL",
        "str | None",
        None,
        "Share robots.txt between crawler processes through this Redis "
        "(redis://, rediss://, unix:// or redis+cluster:// URL); None: no Redis.",
        _redis_url,
    ),
    Setting(
        "ROBOTSASYNC_REDIS_PREFIX",
        "str",
        "robots_async",
        "Key prefix in Redis, so that several crawls can share one database.",
        _prefix,
    ),
    Setting(
        "ROBOTSASYNC_STORE",
        "str | None",
        None,
        "SQLite file keeping robots.txt records across runs and processes; None: "
        "JOBDIR/robots_async.sqlite when JOBDIR is set (a resumed crawl fetches "
        "nothing again), else none; '' turns it off. ROBOTSASYNC_REDIS_URL wins.",
        _store_path,
    ),
)


@dataclass(frozen=True, slots=True)
class ScrapyConfig:
    """Every ``ROBOTSASYNC_*`` setting, checked (field = name without prefix, lower case)."""

    policy: PolicyName
    fetch_policy: FetchPresetName
    forbidden: Forbidden
    max_bytes: int
    timeout: float
    max_entries: int
    max_memory: int
    crawl_delay: bool
    max_crawl_delay: float
    pace: bool
    pace_by: PaceBy
    max_retry_after: float
    max_backoff: float
    private_redirects: PrivateRedirects
    refuse_usage: tuple[UsageCategory, ...]
    usage_signals: bool
    audit_log: str | None
    redis_url: str | None
    redis_prefix: str
    store: str | None


#: The prefix this library owns: any name under it must be one of :data:`SETTINGS`.
PREFIX = "ROBOTSASYNC_"


class UnknownSettingError(ConfigurationError):
    """A ``ROBOTSASYNC_*`` name that no setting has (a typo would silently keep the
    default: a misspelt ``ROBOTSASYNC_REFUSE_USAGE`` turns an AI opt-out off)."""

    def __init__(self, name: str, suggestion: str | None) -> None:
        known = ", ".join(setting.name for setting in SETTINGS)
        hint = f"did you mean {suggestion}?" if suggestion else f"known settings: {known}"
        RobotsError.__init__(self, f"unknown setting {name}; {hint}")
        self.setting = name
        self.value = None
        self.accepted = known
        self.suggestion = suggestion


def _folded(name: str) -> str:
    """``name`` in capitals without separators: ``ROBOTS_ASYNC_PACE`` -> ``ROBOTSASYNCPACE``."""
    return re.sub(r"[^A-Z0-9]", "", name.upper())


#: The prefix folded: a name that folds to it is ours, however it is spelt.
_FOLDED_PREFIX = _folded(PREFIX)


def check_names(settings: Mapping[str, object]) -> None:
    """Refuse any name under :data:`PREFIX` that is not in :data:`SETTINGS`.

    Scrapy does not check setting names, so this library checks its own prefix, in
    any case and with any separators: the package is ``robots_async``, and a
    ``ROBOTS_ASYNC_REFUSE_USAGE`` ignored as another library's name turned the
    AI opt-out off without a word.
    :raises UnknownSettingError: naming the closest known setting, if any.
    """
    known = [setting.name for setting in SETTINGS]
    by_folded = {_folded(name): name for name in known}
    for name in map(str, settings):
        if name in known or not _folded(name).startswith(_FOLDED_PREFIX):
            continue
        if _folded(name) in by_folded:  # the right name, spelt otherwise
            raise UnknownSettingError(name, by_folded[_folded(name)])
        close = difflib.get_close_matches(name.upper(), known, n=1, cutoff=0.6)
        raise UnknownSettingError(name, close[0] if close else None)


def read_settings(settings: Mapping[str, object] | None) -> ScrapyConfig:
    """Check every name under ``ROBOTSASYNC_`` and read every setting of
    :data:`SETTINGS` (``None``: all defaults).

    :raises UnknownSettingError: for a ``ROBOTSASYNC_*`` name no setting has.
    :raises ConfigurationError: for the first setting with a value that is not accepted.
    """
    if settings is not None:
        check_names(settings)
    values = {setting.key: setting.read(settings) for setting in SETTINGS}
    if values["usage_signals"] is None:
        # A crawl that refuses a use must see every opt-out of it, not robots.txt's
        # Content-Usage alone: a noai page or a TDMRep reservation is one too.
        values["usage_signals"] = bool(values["refuse_usage"])
    return ScrapyConfig(**values)  # type: ignore[arg-type]
