"""What every HTTP-client adapter refuses with, whatever the client.

Each adapter (``contrib.aiohttp``, ``contrib.httpx``) raises a subclass that is also
its client's own request error, so ``except aiohttp.ClientError`` or
``except httpx.RequestError`` keeps working; ``except robots_async.DisallowedError``
catches the refusal of any client.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from ..core.errors import ConfigurationError, ConfigurationTypeError, RobotsError
from ..core.usage import CATEGORIES
from ..core.validate import boolean

if TYPE_CHECKING:
    from ..core.results import Verdict
    from ..core.usage import UsageCategory, UsagePreferences
    from ..core.usage_answer import UsageAnswer
    from .checker import Decision, RobotsChecker

__all__ = [
    "DisallowedError",
    "LocalLimitError",
    "UsageRefusedError",
    "held_back",
    "refused_categories",
    "refusing",
    "require_checker",
    "usage_signals_wanted",
]

#: Statuses whose Location the clients follow: their body is no content to use.
REDIRECTS = frozenset({301, 302, 303, 307, 308})


class DisallowedError(RobotsError):
    """Raised instead of sending a request that robots.txt disallows.

    ``verdict`` says which rule of which group decided, ``decision`` where the
    robots.txt came from.
    """

    def __init__(
        self, url: str, user_agent: str, verdict: Verdict, decision: Decision | None = None
    ) -> None:
        super().__init__(f"robots.txt disallows {url} for {user_agent}: {_why(verdict, decision)}")
        self.url = url
        self.user_agent = user_agent
        self.verdict = verdict
        #: The checker's :class:`robots_async.Decision` (source, status, cache times).
        self.decision = decision

    @property
    def reason(self) -> str:
        """Why, in a few words: the deciding rule, or what happened to robots.txt."""
        return _why(self.verdict, self.decision)


class LocalLimitError(RobotsError):
    """Raised instead of sending a request whose robots.txt our own process could not
    fetch (no file descriptor or socket buffer left) within the fetch's total_timeout.

    Not the site's answer: retry the request after ``retry_after`` seconds (the short
    fail-closed answer's life), never drop it as disallowed. ``decision.outcome.error``
    is ``"local-limit"``.
    """

    def __init__(self, url: str, user_agent: str, decision: Decision) -> None:
        self.retry_after = max(0.0, decision.expires_at - decision.fetched_at)
        super().__init__(
            f"robots.txt for {url} could not be fetched: our own limit (out of descriptors"
            f" or socket buffers), not the site's answer; retry in {self.retry_after:g} s"
        )
        self.url = url
        self.user_agent = user_agent
        #: The checker's :class:`robots_async.Decision` (source "unreachable").
        self.decision = decision


def held_back(decision: Decision) -> bool:
    """True if ``decision`` refuses only because our own limits kept robots.txt from
    being fetched (no last good copy answered): the request is to be retried."""
    return decision.outcome.error == "local-limit" and decision.source == "unreachable"


class UsageRefusedError(RobotsError):
    """Raised for a response whose AI usage preference is ``n`` for a refused category.

    The request was sent (robots.txt allows crawling it) and the response closed
    unread; ``usage`` is the combined robots.txt and ``Content-Usage`` header
    preference, ``category`` the one refused.
    """

    def __init__(
        self,
        url: str,
        category: UsageCategory,
        usage: UsagePreferences,
        status: int,
        answer: UsageAnswer | None = None,
    ) -> None:
        why = _usage_source(usage) if answer is None else _answer_source(answer, usage, category)
        super().__init__(f"{url}: content usage {category}=n ({why})")
        self.url = url
        self.category = category
        self.usage = usage
        #: HTTP status of the refused response.
        self.status = status
        #: Every signal's statement when the adapter read them all (usage_signals).
        self.answer = answer


def _why(verdict: Verdict, decision: Decision | None) -> str:
    if verdict.rule is not None:
        return f"{verdict.rule} (line {verdict.line})"
    if decision is not None and decision.source in ("unreachable", "stale"):
        cause = decision.outcome.error or f"HTTP {decision.status}"
        return f"robots.txt unreachable ({cause}): {verdict.reason}"
    return verdict.reason


#: Sources whose statements UsagePreferences holds (with their lines): said from there.
_CONTENT_USAGE = frozenset({"robots-content-usage", "content-usage-header"})


def _answer_source(answer: UsageAnswer, usage: UsagePreferences, category: UsageCategory) -> str:
    """Every refusing statement: Content-Usage's as _usage_source() says them (with
    their lines), the other signals' as ``source: detail``."""
    said = [_usage_source(usage)] if usage.disallows(category) else []
    said += [
        f"{s.source}: {s.detail}"
        for s in answer.refusing([category])
        if s.source not in _CONTENT_USAGE
    ]
    return "; ".join(said)


def _usage_source(usage: UsagePreferences) -> str:
    sources = [f"{rule} (line {rule.line})" for rule in usage.rules]
    sources += [f"header Content-Usage: {value}" for value in usage.header]
    return "; ".join(sources) or "no statement"


def refused_categories(setting: str, refuse_usage: object) -> tuple[UsageCategory, ...]:
    """The ``refuse_usage=`` categories (one, or an iterable of them), in CATEGORIES
    order.

    :raises ConfigurationError: naming ``setting`` for an unknown category (a
        ConfigurationTypeError for a value that is not a category name at all).
    """
    accepted = f"a category or an iterable of them: {', '.join(CATEGORIES)}"
    if isinstance(refuse_usage, str):
        refuse_usage = (refuse_usage,)
    # bytes iterate as ints, a mapping as its keys: neither is a list of categories.
    if not isinstance(refuse_usage, Iterable) or isinstance(refuse_usage, (bytes, Mapping)):
        raise ConfigurationTypeError(setting, refuse_usage, accepted)
    chosen = tuple(refuse_usage)
    for category in chosen:
        if not isinstance(category, str):
            raise ConfigurationTypeError(setting, category, accepted)
        if category not in CATEGORIES:
            raise ConfigurationError(setting, category, accepted)
    return tuple(category for category in CATEGORIES if category in chosen)


def usage_signals_wanted(
    setting: str, usage_signals: object, refused: tuple[UsageCategory, ...]
) -> bool:
    """The adapters' ``usage_signals=``: None means "when a category is refused" (a
    client refusing an AI use honours every opt-out it can see, not Content-Usage
    alone); otherwise True or False.

    :raises ConfigurationTypeError: for anything else.
    :raises ConfigurationError: for True with nothing refused (it would read no signal
        and refuse nothing: a setting that silently does nothing).
    """
    if usage_signals is None:
        return bool(refused)
    wanted = boolean(setting, usage_signals)
    if wanted and not refused:
        accepted = (
            "False or None unless refuse_usage names a category (to read every signal "
            "of a response: RobotsChecker.usage(url, headers))"
        )
        raise ConfigurationError(setting, usage_signals, accepted)
    return wanted


def refusing(answer: UsageAnswer, refused: tuple[UsageCategory, ...]) -> UsageCategory | None:
    """The first refused category some source disallows in ``answer``, or None."""
    for category in refused:
        if answer.refusing([category]):
            return category
    return None


def require_checker(owner: str, checker: object) -> RobotsChecker:
    """``checker`` itself, or a TypeError saying how to make one (a User-Agent string
    in its place used to fail on the first request with an AttributeError)."""
    from .checker import RobotsChecker

    if isinstance(checker, RobotsChecker):
        return checker
    example = (
        repr(checker) if isinstance(checker, str) else '"MyBot/1.0 (+https://example.org/bot)"'
    )
    raise TypeError(
        f"{owner} expects a robots_async.RobotsChecker, not {type(checker).__name__}: "
        f"create one with `async with RobotsChecker({example}) as checker:` and pass "
        f"{owner}(checker)"
    )
