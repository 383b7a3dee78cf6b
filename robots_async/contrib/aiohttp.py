"""aiohttp client middleware: robots.txt checked before every request and redirect hop.

    checker = robots_async.RobotsChecker("MyBot/1.0 (+https://example.org/bot)")
    async with aiohttp.ClientSession(middlewares=(RobotsMiddleware(checker),)) as s:
        await s.get(url)          # raises DisallowedError if robots.txt forbids it

Requires aiohttp >= 3.12 (client middlewares run once per redirect hop).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import aiohttp

from .._errors import RobotsError

if TYPE_CHECKING:
    from aiohttp import ClientRequest, ClientResponse
    from aiohttp.client_middlewares import ClientHandlerType

    from .._checker import Decision, RobotsChecker
    from .._rules import Verdict

__all__ = ["DisallowedError", "RobotsMiddleware"]

_SCHEMES = frozenset({"http", "https"})


class DisallowedError(RobotsError, aiohttp.ClientError):
    """Raised instead of sending a request that robots.txt disallows.

    A :class:`aiohttp.ClientError`, so existing ``except ClientError`` handlers
    catch it; ``verdict`` says which rule of which group decided.
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


def _why(verdict: Verdict, decision: Decision | None) -> str:
    if verdict.rule is not None:
        return f"{verdict.rule} (line {verdict.line})"
    if decision is not None and decision.source in ("unreachable", "stale"):
        cause = decision.outcome.error or f"HTTP {decision.status}"
        return f"robots.txt unreachable ({cause}): {verdict.reason}"
    return verdict.reason


class RobotsMiddleware:
    """Client middleware that refuses requests robots.txt disallows.

    :param checker: the :class:`robots_async.RobotsChecker` that answers (its cache
        is shared by every session using this middleware).
    :param respect_crawl_delay: wait out Crawl-delay / Request-rate per origin
        before each request (capped by the checker's ``max_delay``).

    ``/robots.txt`` itself and non-http(s) URLs pass unchecked. The checker fetches
    robots.txt with ``middlewares=()``, so this middleware never recurses.
    """

    def __init__(self, checker: RobotsChecker, *, respect_crawl_delay: bool = False) -> None:
        self.checker = checker
        self.respect_crawl_delay = respect_crawl_delay

    async def __call__(self, request: ClientRequest, handler: ClientHandlerType) -> ClientResponse:
        """Check ``request.url`` (every hop passes here), then send it."""
        url = request.url
        if url.scheme in _SCHEMES and url.path != "/robots.txt":
            text = str(url)
            if not await self.checker.allowed(text):
                decision = await self.checker.explain(text)
                raise DisallowedError(text, self.checker.user_agent, decision.verdict, decision)
            if self.respect_crawl_delay:
                await self.checker.wait(text)
        return await handler(request)
