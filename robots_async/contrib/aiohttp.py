"""aiohttp client middleware: robots.txt checked before every request and redirect hop.

    checker = robots_async.RobotsChecker("MyBot/1.0 (+https://example.org/bot)")
    async with aiohttp.ClientSession(middlewares=(RobotsMiddleware(checker),)) as s:
        async with s.get(url) as response:   # DisallowedError if robots.txt forbids it
            content_usage(response)          # AI usage preferences (robots.txt + header)
            await usage_answer(response, await response.read())  # every opt-out signal

One identity: a request without a User-Agent of its own (aiohttp's default
``Python/3.x aiohttp/3.y`` counts as none) is sent with the checker's; a request with
another User-Agent is judged with that header's product token. Each hop is one
lookup in the checker (one count in its stats).

Requires aiohttp >= 3.12 (client middlewares run once per redirect hop).
"""

from __future__ import annotations

import logging
import time
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

import aiohttp
from aiohttp import hdrs
from aiohttp.http import SERVER_SOFTWARE

from ..checker import refusal as _refusal
from ..checker.pacing import LATE_AFTER
from ..core.usage import UsagePreferences, combine_usage, usage_from_header
from ..core.validate import boolean

if TYPE_CHECKING:
    from collections.abc import Iterable
    from types import SimpleNamespace

    from aiohttp import ClientRequest, ClientResponse, ClientSession, TraceRequestHeadersSentParams
    from aiohttp.client_middlewares import ClientHandlerType

    from ..checker.checker import RobotsChecker
    from ..core.usage import UsageCategory
    from ..core.usage_answer import UsageAnswer

__all__ = [
    "DisallowedError",
    "LocalLimitError",
    "RobotsMiddleware",
    "UsageRefusedError",
    "content_usage",
    "usage_answer",
]

_LOG = logging.getLogger(__name__)
_SCHEMES = frozenset({"http", "https"})
_REDIRECTS = _refusal.REDIRECTS
#: Preferences of the responses that passed through a middleware (see content_usage).
_USAGE: WeakKeyDictionary[ClientResponse, UsagePreferences] = WeakKeyDictionary()
#: The checker and User-Agent that judged each such response (see usage_answer).
_JUDGED: WeakKeyDictionary[ClientResponse, tuple[RobotsChecker, str | None]] = WeakKeyDictionary()


@dataclass(slots=True)
class _Flight:
    """A paced request being sent by ``owner``: when its turn came (``wait()``
    returned) and when its headers went out (monotonic), who judged it."""

    owner: RobotsMiddleware
    request: ClientRequest
    url: str
    turn: float
    user_agent: str | None
    sent: float | None = None


#: The paced requests the current task is sending. aiohttp awaits the trace as it
#: writes a request's headers, in the task that sends it, so the trace finds them
#: here, whatever headers object a middleware after ours gave the request.
_FLIGHTS: ContextVar[tuple[_Flight, ...]] = ContextVar("robots_async_flights", default=())


class DisallowedError(_refusal.DisallowedError, aiohttp.ClientError):
    """Raised instead of sending a request that robots.txt disallows.

    A :class:`aiohttp.ClientError`, so existing ``except ClientError`` handlers
    catch it; ``verdict`` says which rule of which group decided.
    """


class LocalLimitError(_refusal.LocalLimitError, aiohttp.ClientConnectionError):
    """Raised instead of sending a request whose robots.txt our own limits kept from
    being fetched: a :class:`aiohttp.ClientConnectionError`, so retry logic for
    connection failures retries it; it is not a verdict of the site."""


class UsageRefusedError(_refusal.UsageRefusedError, aiohttp.ClientError):
    """Raised for a response whose AI usage preference is ``n`` for a refused category.

    Only with ``RobotsMiddleware(refuse_usage=...)``. The request was sent (robots.txt
    allows crawling it) and the response closed unread; ``usage`` is the combined
    robots.txt and ``Content-Usage`` header preference, ``category`` the one refused.
    """


def content_usage(response: ClientResponse) -> UsagePreferences | None:
    """The AI usage preferences of a response fetched through :class:`RobotsMiddleware`.

    robots.txt's ``Content-Usage`` rules for the response's URL combined with the
    response's own ``Content-Usage`` header (most restrictive wins, vocab §7.1).
    None for a response the middleware did not check (``/robots.txt``, other
    schemes, or a session without the middleware).
    """
    return _USAGE.get(response)


async def usage_answer(response: ClientResponse, body: bytes | None = None) -> UsageAnswer | None:
    """Every opt-out signal for a response fetched through :class:`RobotsMiddleware`,
    combined (robots.txt Content-Usage and Content-Signal, TDMRep, page directives,
    the Content-Usage header: :meth:`RobotsChecker.usage`). Pass ``body`` (``await
    response.read()``) to read ``<meta>`` directives too. None as for content_usage.
    """
    judged = _JUDGED.get(response)
    if judged is None:
        return None
    checker, user_agent = judged
    return await checker.usage(str(response.url), response.headers, body, user_agent=user_agent)


class RobotsMiddleware:
    """Client middleware that refuses requests robots.txt disallows.

    :param checker: the :class:`robots_async.RobotsChecker` that answers (its cache
        is shared by every session using this middleware).
    :param pace: politeness shared by every worker of the checker's store: wait for
        the origin's next visit before each hop (:meth:`RobotsChecker.wait`:
        Crawl-delay, Request-rate, ``min_delay``, pauses) and record each response
        (:meth:`RobotsChecker.observe`: 429/503 pause or back off the origin).
        Add :attr:`trace_config` to the session's ``trace_configs`` too, and a 429 is
        judged by when its request was sent, not by when it came back.
    :param respect_crawl_delay: wait before each hop only (no observation): the
        older, narrower form of ``pace``.
    :param refuse_usage: AI usage categories (``"train-ai"``, ``"search"``) whose
        preference ``n`` refuses a response with :class:`UsageRefusedError`
        (default: none; :func:`content_usage` tells the preferences either way).
    :param usage_signals: refuse on every signal the response's headers allow
        (robots.txt Content-Usage and Content-Signal, tdmrep.json and the TDMRep
        headers, ``X-Robots-Tag: noai``, the Content-Usage header:
        :meth:`RobotsChecker.usage`) rather than Content-Usage alone. Default None:
        on when ``refuse_usage`` names a category. A ``<meta>`` in the body is read
        only by :func:`usage_answer` (the middleware never reads a body).

    ``/robots.txt`` itself and non-http(s) URLs pass unchecked. The checker fetches
    robots.txt with ``middlewares=()``, so this middleware never recurses.

    With ``pace``::

        middleware = RobotsMiddleware(checker, pace=True)
        session = aiohttp.ClientSession(
            middlewares=(middleware,), trace_configs=[middleware.trace_config]
        )
    """

    def __init__(
        self,
        checker: RobotsChecker,
        *,
        pace: bool = False,
        respect_crawl_delay: bool = False,
        refuse_usage: Iterable[UsageCategory] = (),
        usage_signals: bool | None = None,
    ) -> None:
        self.checker = _refusal.require_checker("RobotsMiddleware", checker)
        self.pace = boolean("RobotsMiddleware.pace", pace)
        self.respect_crawl_delay = boolean(
            "RobotsMiddleware.respect_crawl_delay", respect_crawl_delay
        )
        self.refuse_usage = _refusal.refused_categories(
            "RobotsMiddleware.refuse_usage", refuse_usage
        )
        self.usage_signals = _refusal.usage_signals_wanted(
            "RobotsMiddleware.usage_signals", usage_signals, self.refuse_usage
        )
        self._untraced_logged = False
        #: Tells the middleware when each request leaves aiohttp's connection pool
        #: (``on_request_headers_sent``): give it to the session (see ``pace``).
        self.trace_config = aiohttp.TraceConfig()
        self.trace_config.on_request_headers_sent.append(self._headers_sent)

    async def __call__(self, request: ClientRequest, handler: ClientHandlerType) -> ClientResponse:
        """Check ``request.url`` (every hop passes here), then send it."""
        user_agent = self._identity(request)
        url = request.url
        if url.scheme not in _SCHEMES or url.path == "/robots.txt":
            return await handler(request)
        text = str(url)
        checker = self.checker
        # One lookup per hop: explain() answers, counts, and carries the usage rules.
        decision = await checker.explain(text, user_agent=user_agent)
        if not decision.allowed:
            who = checker.user_agent if user_agent is None else user_agent
            if _refusal.held_back(decision):
                raise LocalLimitError(text, who, decision)
            raise DisallowedError(text, who, decision.verdict, decision)
        if self.pace or self.respect_crawl_delay:
            await checker.wait(text, user_agent=user_agent)
        if self.pace:
            flight = _Flight(self, request, text, time.monotonic(), user_agent)
            response, elapsed = await self._send_timed(flight, handler)
            await checker.observe(
                text, response.status, response.headers, user_agent=user_agent, elapsed=elapsed
            )
        else:
            response = await handler(request)
        usage = combine_usage(
            decision.usage or UsagePreferences(),
            usage_from_header(response.headers.getall("Content-Usage", ())),
        )
        _USAGE[response] = usage
        _JUDGED[response] = (checker, user_agent)
        if self.refuse_usage and response.status not in _REDIRECTS:
            # Every signal's answer holds the Content-Usage rule and header too.
            if self.usage_signals:
                answer = await checker.usage(text, response.headers, user_agent=user_agent)
                refused = _refusal.refusing(answer, self.refuse_usage)
                if refused is not None:
                    response.close()
                    raise UsageRefusedError(text, refused, usage, response.status, answer)
                return response
            for category in self.refuse_usage:
                if usage.disallows(category):
                    response.close()
                    raise UsageRefusedError(text, category, usage, response.status)
        return response

    async def _send_timed(
        self, flight: _Flight, handler: ClientHandlerType
    ) -> tuple[ClientResponse, float | None]:
        """The response, and the seconds since its request's headers were sent (None
        when :attr:`trace_config` was not told: the session lacks it).

        Timed here, before aiohttp's connection pool, a request that waited there
        past a back-off would be judged sent before it, and its 429 would no longer
        double the back-off; without a send time a 429 is judged by its arrival,
        which errs the polite way (a slow one doubles the back-off).
        """
        token = _FLIGHTS.set((*_FLIGHTS.get(), flight))
        try:
            response = await handler(flight.request)
        finally:
            _FLIGHTS.reset(token)
        sent = flight.sent
        if sent is None:
            self._log_untraced()
            return response, None
        return response, time.monotonic() - sent

    async def _headers_sent(
        self,
        session: ClientSession,
        context: SimpleNamespace,
        params: TraceRequestHeadersSentParams,
    ) -> None:
        """``on_request_headers_sent``: the send time of a request paced here (the last
        one when a middleware after ours sends it again).

        Matched by its headers object, the one aiohttp hands the trace: a session
        may send other requests meanwhile in this task (a middleware after ours
        fetching a token), and a retry on a dropped keep-alive connection is a new
        request, through this middleware again.

        A request sent :data:`~robots_async.checker.pacing.LATE_AFTER` or more after
        its turn (held in aiohttp's connection pool, or by a middleware after ours)
        is reported to the checker (``sent()``), which keeps every worker's next turn
        of its origin an interval after it."""
        for flight in _FLIGHTS.get():
            if flight.owner is self and params.headers is flight.request.headers:
                flight.sent = time.monotonic()
                late = flight.sent - flight.turn
                if late >= LATE_AFTER:
                    await self.checker.sent(flight.url, late=late, user_agent=flight.user_agent)

    def _log_untraced(self) -> None:
        """Say once how to have 429s judged by send time."""
        if not self._untraced_logged:
            self._untraced_logged = True
            _LOG.warning(
                "RobotsMiddleware(pace=True) cannot see when requests are sent: pass "
                "trace_configs=[middleware.trace_config] to the ClientSession, or a 429 "
                "slower than a back-off doubles it (judged by its arrival)"
            )

    def _identity(self, request: ClientRequest) -> str | None:
        """Give a request without its own User-Agent the checker's; return the one to
        judge with (None: the checker's own token)."""
        sent = request.headers.get(hdrs.USER_AGENT, "").strip()
        if not sent or sent == SERVER_SOFTWARE:
            request.headers[hdrs.USER_AGENT] = self.checker.user_agent
            return None
        return None if sent == self.checker.user_agent else sent
