"""robots_async: robots.txt for crawlers, Google-exact, fast and asynchronous.

The core (parse, match, explain) is pure Python and imports no network code;
:class:`RobotsChecker` adds fetching, caching and pacing on top of aiohttp.
"""

from __future__ import annotations

import logging
from importlib.machinery import EXTENSION_SUFFIXES
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from .cache.cache import CacheEntry, CacheStats, RobotsCache
from .cache.sqlite import SQLiteStore
from .cache.store import Lease, MemoryStore, RobotsStore, StoredRobots, StoreSchemaError
from .cache.tdmrep import TdmRepStats
from .checker.audit import AuditLog
from .checker.checker import CheckerStats, Decision, RobotsChecker
from .checker.refusal import DisallowedError, LocalLimitError, UsageRefusedError
from .checker.sitemaps import SitemapStats, SitemapWalk
from .core import robots as _robots_module
from .core.agent import is_valid_token, product_token, require_token
from .core.content_signals import ContentSignals
from .core.errors import (
    ClosedError,
    ConfigurationError,
    ConfigurationTypeError,
    EventLoopError,
    InvalidRecordError,
    InvalidURLError,
    InvalidUserAgentError,
    PageInputTypeError,
    RobotsError,
    SitemapError,
    StoreError,
    URLTypeError,
)
from .core.page_directives import DirectiveSource, PageDirectives, page_directives
from .core.parser import DEFAULT_MAX_BYTES, MAX_LINE_BYTES, RobotsParser, parse
from .core.policy import FIRST_MATCH, GOOGLE, GOOGLE_REFERENCE, RFC9309, MatchPolicy, PolicyName
from .core.results import CleanParam, Group, ParseWarning, RequestRate, Rule, Verdict, VisitTime
from .core.robots import RobotsTxt
from .core.sitemaps import SitemapLimits, SitemapUrl
from .core.tdmrep import TdmAnswer, TdmRep, parse_tdmrep
from .core.url import Origin, request_target, robots_url
from .core.usage import UsagePreferences, UsageRule, combine_usage, usage_from_header
from .core.usage_answer import UsageAnswer, UsageSource
from .fetch.outcome import FetchOutcome
from .fetch.policy import FetchPolicy, FetchPolicyName, Resolution

if TYPE_CHECKING:
    from .fetch.fetcher import AiohttpFetcher, Fetcher

try:
    __version__ = version("robots-async")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0"

#: True when the sans-I/O core runs compiled with mypyc (a wheel built with
#: ROBOTS_ASYNC_COMPILE=1), False for pure Python. Verdicts are the same either way.
COMPILED = (_robots_module.__file__ or "").endswith(tuple(EXTENSION_SUFFIXES))

__all__ = [
    "AiohttpFetcher",
    "AuditLog",
    "COMPILED",
    "CacheEntry",
    "CacheStats",
    "CheckerStats",
    "CleanParam",
    "ClosedError",
    "ConfigurationError",
    "ConfigurationTypeError",
    "ContentSignals",
    "DEFAULT_MAX_BYTES",
    "Decision",
    "DirectiveSource",
    "DisallowedError",
    "EventLoopError",
    "FIRST_MATCH",
    "FetchOutcome",
    "FetchPolicy",
    "FetchPolicyName",
    "Fetcher",
    "GOOGLE",
    "GOOGLE_REFERENCE",
    "Group",
    "InvalidRecordError",
    "InvalidURLError",
    "InvalidUserAgentError",
    "Lease",
    "LocalLimitError",
    "MAX_LINE_BYTES",
    "MatchPolicy",
    "MemoryStore",
    "Origin",
    "PageDirectives",
    "PageInputTypeError",
    "ParseWarning",
    "PolicyName",
    "RFC9309",
    "RequestRate",
    "Resolution",
    "RobotsCache",
    "RobotsChecker",
    "RobotsError",
    "RobotsParser",
    "RobotsStore",
    "RobotsTxt",
    "Rule",
    "SQLiteStore",
    "SitemapError",
    "SitemapLimits",
    "SitemapStats",
    "SitemapUrl",
    "SitemapWalk",
    "StoreError",
    "StoreSchemaError",
    "StoredRobots",
    "TdmAnswer",
    "TdmRep",
    "TdmRepStats",
    "URLTypeError",
    "UsageAnswer",
    "UsagePreferences",
    "UsageRefusedError",
    "UsageRule",
    "UsageSource",
    "Verdict",
    "VisitTime",
    "__version__",
    "combine_usage",
    "is_valid_token",
    "page_directives",
    "parse",
    "parse_tdmrep",
    "product_token",
    "request_target",
    "require_token",
    "robots_url",
    "usage_from_header",
]

# A library leaves log output to the application (see the logging HOWTO).
logging.getLogger("robots_async").addHandler(logging.NullHandler())


def __getattr__(name: str) -> Any:
    # aiohttp is imported when the fetcher is first asked for, not with the package.
    if name in ("AiohttpFetcher", "Fetcher"):
        from .fetch import fetcher as _fetcher

        return getattr(_fetcher, name)
    raise AttributeError(f"module 'robots_async' has no attribute {name!r}")
