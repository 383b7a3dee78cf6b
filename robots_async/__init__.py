"""robots_async: robots.txt for crawlers, Google-exact, fast and asynchronous."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from ._agent import is_valid_token, product_token
from ._errors import ClosedError, InvalidURLError, InvalidUserAgentError, RobotsError
from ._parser import DEFAULT_MAX_BYTES, MAX_LINE_BYTES, RobotsParser, parse
from ._policy import FIRST_MATCH, GOOGLE, GOOGLE_REFERENCE, RFC9309, MatchPolicy
from ._robots import RobotsTxt
from ._rules import CleanParam, Group, ParseWarning, RequestRate, Rule, Verdict, VisitTime
from ._url import Origin, request_target, robots_url

try:
    __version__ = version("robots-async")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0"

__all__ = [
    "DEFAULT_MAX_BYTES",
    "FIRST_MATCH",
    "GOOGLE",
    "GOOGLE_REFERENCE",
    "MAX_LINE_BYTES",
    "RFC9309",
    "CleanParam",
    "ClosedError",
    "Group",
    "InvalidURLError",
    "InvalidUserAgentError",
    "MatchPolicy",
    "Origin",
    "ParseWarning",
    "RequestRate",
    "RobotsError",
    "RobotsParser",
    "RobotsTxt",
    "Rule",
    "Verdict",
    "VisitTime",
    "__version__",
    "is_valid_token",
    "parse",
    "product_token",
    "request_target",
    "robots_url",
]
