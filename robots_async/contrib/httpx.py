"""httpx transport: robots.txt checked before every request and redirect hop.

    checker = robots_async.RobotsChecker("MyBot/1.0 (+https://example.org/bot)")
    async with httpx.AsyncClient(transport=RobotsTransport(checker)) as client:
        response = await client.get(url)     # DisallowedError if robots.txt forbids it
        content_usage(response)              # AI usage preferences (robots.txt + header)

httpx sends every redirect hop it follows through the client's transport, so each
hop is checked before it leaves; a refusal is an :class:`httpx.RequestError`.

One identity, as in :mod:`robots_async.contrib.aiohttp`: a request without a
User-Agent of its own (httpx's default ``python-httpx/x`` counts as none) is sent
with the checker's; a request with another User-Agent is judged with that header's
product token. Each hop is one lookup in the checker (one count in its stats).

Asynchronous only: the checker fetches robots.txt with asyncio, so an
``httpx.Client`` (sync) given this transport raises a ConfigurationTypeError naming
``httpx.AsyncClient`` at its first request.
"""

from __future__ import annotations

import time
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NoReturn

try:
    import httpx
except ImportError as exc:  # pragma: no cover - exercised without httpx installed
    raise ImportError(
        "robots_async.contrib.httpx needs httpx: pip install 'robots-async[httpx]'"
    ) from exc

from ..checker import refusal as _refusal
from ..checker.checker import Decision
from ..checker.pacing import LATE_AFTER
from ..core.agent import require_token
from ..core.errors import ConfigurationTypeError
from ..core.usage import UsagePreferences, combine_usage, usage_from_header
from ..core.validate import boolean
from ..fetch.wire import wire_url

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..checker.checker import RobotsChecker
    from ..core.results import Verdict
    from ..core.robots import RobotsTxt
    from ..core.usage import UsageCategory
    from ..core.usage_answer import UsageAnswer

__all__ = [
    "DisallowedError",
    "LocalLimitError",
    "RobotsTransport",
    "UsageRefusedError",
    "content_usage",
]

_SCHEMES = frozenset({"http", "https"})
#: The User-Agent httpx adds when the caller sets none (httpx._client.USER_AGENT).
_HTTPX_AGENT = f"python-httpx/{httpx.__version__}"
#: The response extension holding its usage preferences (see content_usage); an
#: extension rather than a WeakKeyDictionary: a dict item, 0.1 vs 0.7 us a response.
_EXTENSION = "robots_async.usage"
_token_of = lru_cache(maxsize=256)(require_token)


class DisallowedError(_refusal.DisallowedError, httpx.RequestError):
    """Raised instead of sending a request that robots.txt disallows.

    An :class:`httpx.RequestError`, so existing ``except httpx.RequestError``
    handlers catch it; ``verdict`` says which rule of which group decided.
    """

    def __init__(
        self,
        url: str,
        user_agent: str,
        verdict: Verdict,
        decision: Decision | None = None,
        *,
        request: httpx.Request | None = None,
    ) -> None:
        super().__init__(url, user_agent, verdict, decision)
        self._request = request


class LocalLimitError(_refusal.LocalLimitError, httpx.TransportError):
    """Raised instead of sending a request whose robots.txt our own limits kept from
    being fetched: an :class:`httpx.TransportError`, so retry logic for transport
    failures retries it; it is not a verdict of the site."""

    def __init__(
        self, url: str, user_agent: str, decision: Decision, *, request: httpx.Request | None = None
    ) -> None:
        super().__init__(url, user_agent, decision)
        self._request = request


class UsageRefusedError(_refusal.UsageRefusedError, httpx.RequestError):
    """Raised for a response whose AI usage preference is ``n`` for a refused category.

    Only with ``RobotsTransport(refuse_usage=...)``. The request was sent (robots.txt
    allows crawling it) and the response closed unread; ``usage`` is the combined
    robots.txt and ``Content-Usage`` header preference, ``category`` the one refused.
    """

    def __init__(
        self,
        url: str,
        category: UsageCategory,
        usage: UsagePreferences,
        status: int,
        answer: UsageAnswer | None = None,
        *,
        request: httpx.Request | None = None,
    ) -> None:
        super().__init__(url, category, usage, status, answer)
        self._request = request


class _Usage:
    """A response's usage preferences, combined when first asked (most responses
    never are: the combination costs ~6 us, more than the hop's check)."""

    __slots__ = ("_headers", "_robots", "_token", "_url", "_value")

    def __init__(self, robots: RobotsTxt, url: str, token: str, headers: httpx.Headers) -> None:
        self._robots = robots
        self._url = url
        self._token = token
        self._headers = headers
        self._value: UsagePreferences | None = None

    def value(self) -> UsagePreferences:
        """robots.txt's preferences for the URL combined with the response header's."""
        if self._value is None:
            rules = self._robots.usage(wire_url(self._url), robots_token=self._token)
            self._value = combine_usage(
                rules or UsagePreferences(),
                usage_from_header(self._headers.get_list("Content-Usage")),
            )
        return self._value


def content_usage(response: httpx.Response) -> UsagePreferences | None:
    """The AI usage preferences of a response fetched through :class:`RobotsTransport`.

    robots.txt's ``Content-Usage`` rules for the response's URL combined with the
    response's own ``Content-Usage`` header (most restrictive wins, vocab §7.1).
    None for a response the transport did not check (``/robots.txt``, other
    schemes, or a client without the transport).
    """
    usage = response.extensions.get(_EXTENSION)
    return usage.value() if isinstance(usage, _Usage) else None


def _sync_refused() -> ConfigurationTypeError:
    return ConfigurationTypeError(
        "httpx.Client(transport=RobotsTransport(...))",
        "a sync client",
        "an httpx.AsyncClient: RobotsTransport is asynchronous (robots.txt is fetched "
        "with asyncio); use httpx.AsyncClient(transport=RobotsTransport(checker))",
    )


class RobotsTransport(httpx.AsyncBaseTransport):
    """An ``httpx.AsyncBaseTransport`` that refuses requests robots.txt disallows.

    :param checker: the :class:`robots_async.RobotsChecker` that answers (its cache
        is shared by every client using it).
    :param transport: the transport that sends allowed requests (default: a new
        ``httpx.AsyncHTTPTransport()``, closed with this one).
    :param pace: politeness shared by every worker of the checker's store: wait for
        the origin's next visit before each hop (:meth:`RobotsChecker.wait`:
        Crawl-delay, Request-rate, ``min_delay``, pauses) and record each response
        (:meth:`RobotsChecker.observe`: 429/503 pause or back off the origin).
    :param refuse_usage: AI usage categories (``"train-ai"``, ``"search"``) whose
        preference ``n`` refuses a response with :class:`UsageRefusedError`
        (default: none; :func:`content_usage` tells the preferences either way).
    :param usage_signals: refuse on every signal the response's headers allow
        (robots.txt Content-Usage and Content-Signal, tdmrep.json and the TDMRep
        headers, ``X-Robots-Tag: noai``, the Content-Usage header:
        :meth:`RobotsChecker.usage`) rather than Content-Usage alone. Default None:
        on when ``refuse_usage`` names a category. A ``<meta>`` in the body is read
        only by ``checker.usage(url, response.headers, body)`` (a transport never
        reads a body).

    ``/robots.txt`` itself and non-http(s) URLs pass unchecked. The checker fetches
    robots.txt with its own client, never through this transport.
    """

    def __init__(
        self,
        checker: RobotsChecker,
        transport: httpx.AsyncBaseTransport | None = None,
        *,
        pace: bool = False,
        refuse_usage: Iterable[UsageCategory] = (),
        usage_signals: bool | None = None,
    ) -> None:
        if transport is not None and not isinstance(transport, httpx.AsyncBaseTransport):
            raise ConfigurationTypeError(
                "transport", transport, "an httpx.AsyncBaseTransport (or None)"
            )
        self.checker = _refusal.require_checker("RobotsTransport", checker)
        self.pace = boolean("RobotsTransport.pace", pace)
        self.refuse_usage = _refusal.refused_categories(
            "RobotsTransport.refuse_usage", refuse_usage
        )
        self.usage_signals = _refusal.usage_signals_wanted(
            "RobotsTransport.usage_signals", usage_signals, self.refuse_usage
        )
        self._owns = transport is None
        self._transport = httpx.AsyncHTTPTransport() if transport is None else transport

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Check ``request.url`` (every hop passes here), then send it."""
        user_agent = self._identity(request)
        url = request.url
        if url.scheme not in _SCHEMES or url.path == "/robots.txt":
            return await self._transport.handle_async_request(request)
        text = str(url)
        checker = self.checker
        # allowed() is the one counted lookup of the hop: its cached path costs ~2 us
        # where explain() costs ~12 (a Decision, the usage rules): 5% of a local
        # request's time (bench/bench_httpx.py). The rule is looked up after a refusal.
        if not await checker.allowed(text, user_agent=user_agent):
            raise await self._refusal(text, user_agent, request)
        turn = 0.0
        if self.pace:
            await checker.wait(text, user_agent=user_agent)
            turn = time.monotonic()
        entry = await checker.robots(text)
        if self.pace:
            response, elapsed = await self._send_timed(request, text, user_agent, turn)
            await checker.observe(
                text, response.status_code, response.headers, user_agent=user_agent, elapsed=elapsed
            )
        else:
            response = await self._transport.handle_async_request(request)
        usage = _Usage(entry.robots, text, self._token(user_agent), response.headers)
        response.extensions[_EXTENSION] = usage
        if self.refuse_usage and response.status_code not in _refusal.REDIRECTS:
            await self._refuse(text, user_agent, usage, request, response)
        return response

    async def _send_timed(
        self, request: httpx.Request, text: str, user_agent: str | None, turn: float
    ) -> tuple[httpx.Response, float | None]:
        """The response, and the seconds since its request's headers were sent (None
        if the transport did not say: not httpcore's).

        The time comes from httpcore's ``trace`` extension, as the request leaves the
        connection pool: timed from here, a request that waited there past a back-off
        was judged sent before it, and its 429 no longer doubled the back-off. A
        request sent ``LATE_AFTER`` or more after its turn (``turn``, monotonic) is
        reported to the checker (``sent()``: every worker's next turn keeps an
        interval after it). A trace callback of the caller's own still gets every
        event.
        """
        own = request.extensions.get("trace")
        sent: list[float] = []

        async def trace(event: str, info: dict[str, Any]) -> None:
            if event.endswith(".send_request_headers.started"):
                sent.append(time.monotonic())
                if sent[-1] - turn >= LATE_AFTER:
                    await self.checker.sent(text, late=sent[-1] - turn, user_agent=user_agent)
            if own is not None:
                await own(event, info)

        request.extensions["trace"] = trace
        try:
            response = await self._transport.handle_async_request(request)
        finally:
            if own is None:
                del request.extensions["trace"]
            else:
                request.extensions["trace"] = own
        return response, (time.monotonic() - sent[-1]) if sent else None

    async def _refuse(
        self,
        text: str,
        user_agent: str | None,
        usage: _Usage,
        request: httpx.Request,
        response: httpx.Response,
    ) -> None:
        """Close ``response`` and raise UsageRefusedError if a refused category is
        disallowed: by any signal (usage_signals) or by Content-Usage alone."""
        combined = usage.value()
        status = response.status_code
        if self.usage_signals:
            answer = await self.checker.usage(text, response.headers, user_agent=user_agent)
            refused = _refusal.refusing(answer, self.refuse_usage)
            if refused is not None:
                await response.aclose()
                raise UsageRefusedError(text, refused, combined, status, answer, request=request)
            return  # (the answer holds the Content-Usage rule and header too)
        for category in self.refuse_usage:
            if combined.disallows(category):
                await response.aclose()
                raise UsageRefusedError(text, category, combined, status, request=request)

    async def _refusal(
        self, text: str, user_agent: str | None, request: httpx.Request
    ) -> DisallowedError | LocalLimitError:
        """The error for a refused hop, with the deciding rule (not counted again)."""
        entry = await self.checker.robots(text)
        judged = wire_url(text)
        verdict = entry.robots.explain(judged, robots_token=self._token(user_agent))
        decision = Decision(
            judged,
            verdict,
            entry.origin,
            entry.source,
            True,
            entry.fetched_at,
            entry.expires_at,
            entry.outcome,
        )
        who = self.checker.user_agent if user_agent is None else user_agent
        if _refusal.held_back(decision):
            return LocalLimitError(text, who, decision, request=request)
        return DisallowedError(text, who, verdict, decision, request=request)

    def _token(self, user_agent: str | None) -> str:
        return self.checker.robots_token if user_agent is None else _token_of(user_agent)

    def handle_request(self, request: httpx.Request) -> NoReturn:
        """Refuse a sync ``httpx.Client``: the checker is asynchronous."""
        raise _sync_refused()

    def __enter__(self) -> NoReturn:
        """Refuse ``with httpx.Client(transport=...)``: the checker is asynchronous."""
        raise _sync_refused()

    async def aclose(self) -> None:
        """Close the wrapped transport if this one created it."""
        if self._owns:
            await self._transport.aclose()

    def _identity(self, request: httpx.Request) -> str | None:
        """Give a request without its own User-Agent the checker's; return the one to
        judge with (None: the checker's own token)."""
        sent = request.headers.get("User-Agent", "").strip()
        if not sent or sent == _HTTPX_AGENT:
            request.headers["User-Agent"] = self.checker.user_agent
            return None
        return None if sent == self.checker.user_agent else sent
