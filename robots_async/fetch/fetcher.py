"""Fetching robots.txt over HTTP: the only core module that touches the network.

:class:`AiohttpFetcher` runs its own redirect loop (so every hop is counted and
checked), streams the body into :class:`RobotsParser` and stops at ``max_bytes``
of *decoded* data (a gzip bomb ends there), all within one total deadline. Whatever
happens is returned as a :class:`FetchOutcome`; nothing is raised.

Its own session closes every connection after its response (one request per origin
per TTL: keep-alive would only hold descriptors), resolves names with c-ares
(``_resolver``) and guards redirects from public to non-public addresses on the
address each connection is given (``FetchPolicy.private_redirects``). A connection
that fails for want of descriptors or buffers is our limit, reported as
"local-limit", never as the site's verdict.
"""

from __future__ import annotations

import asyncio
import hashlib
import socket
import zlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import aiohttp
from aiohttp.abc import AbstractResolver
from yarl import URL

from ..core.errors import ClosedError, ConfigurationError, ConfigurationTypeError
from ..core.parser import RobotsParser
from ..core.policy import get_policy
from ..core.url import Origin
from ..core.validate import header_value, text
from .addresses import ip_or_none, is_public, legacy_ipv4
from .codings import ACCEPTED_CODINGS, StackDecoder, plan
from .http import RedirectChain, is_redirect
from .policy import FetchPolicy
from .resolver import GUARD, LOCAL_ERRNOS, BlockedAddressError, GuardedResolver, HopGuard

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from ..core.policy import MatchPolicy, PolicyName
    from ..core.robots import RobotsTxt
    from .addresses import PublicAddress
    from .body import BodySink
    from .outcome import ErrorKind, FetchOutcome, Validators

__all__ = ["AiohttpFetcher", "Fetcher", "classify_error"]

_CHUNK = 64 * 1024
#: Request headers sent only to the origin whose robots.txt is fetched (lower case).
_CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})
#: Bytes parsed per turn of the event loop. A read returns what is buffered without
#: yielding, so 60 fetches of 500 KB bodies parsed them in one loop iteration (a
#: 0.5 s stall); 16 KB is ~1 ms of parsing, and a usual robots.txt is one turn.
_PARSE_STEP = 16 * 1024


@runtime_checkable
class Fetcher(Protocol):
    """Fetches one robots.txt URL; never raises for network or HTTP trouble."""

    async def fetch(self, url: str, *, keep_body: bool = False) -> FetchOutcome:
        """Fetch ``url`` (following redirects) and report what happened."""
        ...

    async def aclose(self) -> None:
        """Release what the fetcher owns."""
        ...


class AiohttpFetcher:
    """:class:`Fetcher` over an :class:`aiohttp.ClientSession`.

    :param session: a session to use (left open on :meth:`aclose`); by default one
        is created on first use and closed by :meth:`aclose`.
    :param user_agent: the crawler's User-Agent header, sent with every request.
    :param policy: limits and timeouts (:class:`FetchPolicy`).
    :param match_policy: how bodies are parsed (``"google"`` by default).
    :param headers: extra request headers; ``Authorization``, ``Proxy-Authorization``
        and ``Cookie`` go only to the origin whose robots.txt is fetched, never to
        another origin a redirect names.
    :param resolver: the aiohttp resolver the fetcher's own session looks names up
        with (default: ``aiohttp.AsyncResolver``, c-ares); each lookup is still cut
        at the fetch's deadline and guarded. Not allowed with ``session``.
    :param public_address: which addresses count as public for
        ``policy.private_redirects`` (default: not loopback, private, link-local,
        CGNAT, unique-local, metadata, reserved or multicast).

    With a ``session`` of yours the redirect guard cannot see the connection's
    address: it looks the hosts up itself before each hop (best effort, not proof
    against DNS rebinding).
    """

    def __init__(
        self,
        session: aiohttp.ClientSession | None = None,
        *,
        user_agent: str,
        policy: FetchPolicy | None = None,
        match_policy: PolicyName | MatchPolicy = "google",
        headers: Mapping[str, str] | None = None,
        resolver: AbstractResolver | None = None,
        public_address: PublicAddress = is_public,
    ) -> None:
        if session is not None and resolver is not None:
            raise ConfigurationError(
                "AiohttpFetcher.resolver",
                resolver,
                "None when session= is given (configure the resolver on your session)",
            )
        _check_parts(
            session=session,
            user_agent=user_agent,
            policy=policy,
            headers=headers,
            resolver=resolver,
            public_address=public_address,
        )
        self._session = session
        self._owns_session = session is None
        self._resolver = resolver
        self._public = public_address
        self._guarded: GuardedResolver | None = None
        self._policy = policy or FetchPolicy()
        self._match_policy = get_policy(match_policy, setting="AiohttpFetcher.match_policy")
        # Only the codings decoded here (fetch/codings): a body aiohttp decoded itself
        # was read as the rules so far when its stream was cut (no error raised).
        self._headers = {"Accept-Encoding": ACCEPTED_CODINGS, **(headers or {})}
        self._headers["User-Agent"] = user_agent
        # A hop to another origin gets no credentials (as aiohttp's own redirects,
        # requests and browsers): a robots.txt redirect to a host of the site's
        # choosing must not read the crawler's Authorization or Cookie.
        self._foreign_headers = {
            name: value
            for name, value in self._headers.items()
            if name.lower() not in _CREDENTIAL_HEADERS
        }
        self._closed = False

    @property
    def policy(self) -> FetchPolicy:
        """The limits this fetcher applies."""
        return self._policy

    async def aclose(self) -> None:
        """Close the session (and its resolver) if this fetcher created it."""
        self._closed = True
        if self._owns_session and self._session is not None:
            await self._session.close()
            self._session = None
        if self._guarded is not None:
            await self._guarded.close()
            self._guarded = None

    async def fetch(
        self, url: str, *, keep_body: bool = False, validators: Validators | None = None
    ) -> FetchOutcome:
        """Fetch ``url``, following at most ``policy.max_hops`` redirects.

        ``validators`` make the request to their URL conditional; a 304 to it comes
        back as status 304 with no body (see :func:`_not_modified`).
        """
        return await self._run(url, keep_body, validators, None)

    async def fetch_into(
        self, url: str, sink: BodySink, *, public_only: bool = False
    ) -> FetchOutcome:
        """Fetch ``url`` as :meth:`fetch` does (redirects, guard, deadline) but stream
        its decoded body into ``sink`` (a sitemap, say) until ``sink.feed`` says stop.

        ``public_only``: the URL was named by a document from another host, so its
        first request is guarded like a redirect (``policy.private_redirects``).
        """
        public_only = public_only and self._policy.private_redirects == "block"
        return await self._run(url, False, None, sink, public_only=public_only)

    async def _run(
        self,
        url: str,
        keep_body: bool,
        validators: Validators | None,
        sink: BodySink | None,
        *,
        public_only: bool = False,
    ) -> FetchOutcome:
        loop = asyncio.get_running_loop()
        started = loop.time()
        # With a caller's session the connection's address is out of sight: the
        # chain looks hosts up itself before following (best effort).
        chain = RedirectChain(url, precheck=None if self._owns_session else self._public)
        try:
            return await self._follow(
                chain, started, keep_body, validators, sink=sink, public_only=public_only
            )
        except (asyncio.TimeoutError, aiohttp.ClientError, OSError, ValueError) as exc:
            kind = classify_error(exc, chain.count)
            return chain.outcome(loop.time() - started, error=kind, detail=_describe(exc))

    async def _follow(
        self,
        chain: RedirectChain,
        started: float,
        keep_body: bool,
        validators: Validators | None = None,
        *,
        sink: BodySink | None = None,
        public_only: bool = False,  # the previous hop reached a public address (guard on)
    ) -> FetchOutcome:
        loop = asyncio.get_running_loop()
        session = self._get_session()
        deadline = started + self._policy.total_timeout
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise asyncio.TimeoutError
            guard = HopGuard(deadline, public_only)
            refused = self._literal_refusal(chain.current, guard)
            if refused:
                return chain.outcome(
                    loop.time() - started, error="blocked-redirect", detail=refused
                )
            timeout = aiohttp.ClientTimeout(
                total=remaining, connect=min(self._policy.connect_timeout, remaining)
            )
            conditional = validators.request_headers(chain.current) if validators else {}
            own = Origin.from_url(chain.current) == chain.origin
            sent = self._headers if own else self._foreign_headers
            token = GUARD.set(guard)
            try:
                async with session.get(
                    chain.current,
                    allow_redirects=False,
                    headers={**sent, **conditional} if conditional else sent,
                    timeout=timeout,
                    middlewares=(),  # never our own (or anyone's) robots middleware
                    # A caller's session may raise for 4xx/5xx: a status is an outcome
                    # here (404 raised was read as a protocol error: disallow all).
                    raise_for_status=False,
                    # Decoded here, each stream checked to its end: aiohttp's decoder
                    # passes a cut gzip/br stream as a whole body (fails open).
                    auto_decompress=False,
                ) as response:
                    status, headers = response.status, response.headers
                    if status == 304:
                        elapsed = loop.time() - started
                        return _not_modified(chain, response, bool(conditional), elapsed)
                    if not is_redirect(status, headers):
                        return await self._final(chain, response, started, keep_body, sink)
            finally:
                GUARD.reset(token)
            error = await chain.follow(
                headers.get("Location"), self._policy, deadline - loop.time()
            )
            if error is not None:
                return chain.outcome(loop.time() - started, status, error=error)
            public_only = self._policy.private_redirects == "block" and guard.reached_public

    def _literal_refusal(self, url: str, guard: HopGuard) -> str:
        """Apply the guard to an IP-literal host (the connector does not resolve it)."""
        host = URL(url).raw_host or ""
        address = ip_or_none(host) or legacy_ipv4(host)
        if address is None:
            return ""
        public = self._public(address)
        if guard.public_only and not public:
            return f"redirect from a public address to non-public {address} refused"
        guard.reached_public = public
        return ""

    async def _final(
        self,
        chain: RedirectChain,
        response: aiohttp.ClientResponse,
        started: float,
        keep_body: bool,
        sink: BodySink | None = None,
    ) -> FetchOutcome:
        """The outcome of the response that ends the chain (not a redirect)."""
        elapsed = asyncio.get_running_loop().time() - started
        status, headers = response.status, response.headers
        if not 200 <= status < 300:
            return chain.outcome(elapsed, status, headers=headers)
        coding = plan(
            headers.getall("Content-Encoding", ()),
            headers.getall("Transfer-Encoding", ()),
            client_decodes=False,
        )
        if coding.action == "refuse":
            # Bytes nobody can decode are not robots.txt text: fail closed (RFC 9309
            # §2.3.1.4 treats an unreadable file as unreachable), never "allow all".
            response.close()
            return chain.outcome(elapsed, status, error="protocol", detail=coding.reason)
        decoder = StackDecoder(coding.codings) if coding.action == "decode" else None
        if sink is not None:
            seen, truncated = await _stream(response, decoder, sink)
            elapsed = asyncio.get_running_loop().time() - started
            return chain.outcome(
                elapsed, status, headers=headers, bytes_read=seen, truncated=truncated
            )
        closing = _close_delimited(response)
        robots, seen, truncated, body, sha = await self._read(response, keep_body, decoder)
        if closing is not None and not truncated and _reset(closing):
            # RFC 9309 §2.3.1.4 (Google: "reset or interrupted connections"): the part
            # read before a reset is not the file (parsed, it allowed what followed).
            raise aiohttp.ClientPayloadError("Response payload is not completed: reset")
        return chain.outcome(
            asyncio.get_running_loop().time() - started,
            status,
            headers=headers,
            robots=robots,
            bytes_read=seen,
            truncated=truncated,
            body=body,
            body_sha256=sha,
        )

    async def _read(
        self, response: aiohttp.ClientResponse, keep_body: bool, decoder: StackDecoder | None
    ) -> tuple[RobotsTxt, int, bool, bytes | None, str]:
        """Stream the decoded body into the parser; stop at max_bytes. Also its SHA-256
        (what was parsed: 0.7 ms for 500 KB measured, beside its 10 ms parse)."""
        limit: int | None = self._policy.max_bytes  # None: no limit (RobotsParser's too)
        parser = RobotsParser(self._match_policy, max_bytes=limit)
        kept = bytearray()
        digest = hashlib.sha256()
        seen = [0]  # bytes hashed so far (a cell the closure updates)

        def take(pieces: Iterable[bytes]) -> bool:
            """Feed decoded pieces; True once the limit is reached."""
            for piece in pieces:
                parser.feed(piece)
                digest.update(piece if limit is None else piece[: max(0, limit - seen[0])])
                seen[0] += len(piece)
                if keep_body and (limit is None or len(kept) < limit):
                    kept.extend(piece if limit is None else piece[: limit - len(kept)])
                if parser.truncated:
                    return True
            return False

        try:
            async for chunk in response.content.iter_chunked(_CHUNK):
                for start in range(0, len(chunk), _PARSE_STEP):
                    piece = chunk[start : start + _PARSE_STEP]
                    if take(decoder.feed(piece) if decoder is not None else (piece,)):
                        # Content after the limit is ignored (RFC 9309 §2.5): drop the
                        # connection rather than download (or decompress) the rest.
                        response.close()
                        break
                    if len(chunk) > _PARSE_STEP:
                        await asyncio.sleep(0)  # a large body is parsed in turns
                else:
                    continue
                break
            else:
                if decoder is not None:
                    take(decoder.flush())
        except zlib.error as exc:
            raise aiohttp.ClientPayloadError(f"bad content encoding: {exc}") from exc
        body = bytes(kept) if keep_body else None
        robots = parser.close()
        return robots, parser.bytes_seen, parser.truncated, body, digest.hexdigest()

    def _get_session(self) -> aiohttp.ClientSession:
        if self._closed:
            raise ClosedError("fetcher is closed")
        if self._session is not None and self._session.closed and not self._owns_session:
            # aiohttp raises a bare RuntimeError("Session is closed") here.
            raise ClosedError("the aiohttp session given to AiohttpFetcher is closed")
        if self._session is None:
            self._guarded = GuardedResolver(
                self._resolver if self._resolver is not None else aiohttp.AsyncResolver(),
                lookup_timeout=self._policy.connect_timeout,
                public=self._public,
            )
            connector = aiohttp.TCPConnector(
                limit=0,  # the cache's fetch lanes bound concurrency (and sockets)
                # One request per origin per TTL: a kept-alive connection is never
                # reused, it only holds a descriptor (3,000 origins: 3,000 sockets).
                force_close=True,
                # Every connection's addresses come from a fresh, guarded lookup: a
                # cached answer would skip the redirect guard.
                use_dns_cache=False,
                resolver=self._guarded,
            )
            session = aiohttp.ClientSession(connector=connector)
            # aiohttp re-sends an idempotent request once when the server drops the
            # connection; for robots.txt that doubles the requests to a failing
            # server, and the error TTL decides when to ask again. No public switch
            # exists (aiohttp 3.14), so the session's own flag is cleared if present.
            if hasattr(session, "_retry_connection"):
                session._retry_connection = False
            self._session = session
        return self._session


async def _stream(
    response: aiohttp.ClientResponse, decoder: StackDecoder | None, sink: BodySink
) -> tuple[int, bool]:
    """Feed the decoded body to ``sink``; drop the connection once it has enough."""
    seen = 0
    try:
        async for chunk in response.content.iter_chunked(_CHUNK):
            for piece in decoder.feed(chunk) if decoder is not None else (chunk,):
                seen += len(piece)
                if sink.feed(piece):
                    response.close()  # the rest is never downloaded nor expanded
                    return seen, True
        for piece in decoder.flush() if decoder is not None else ():
            seen += len(piece)
            if sink.feed(piece):
                return seen, True
    except zlib.error as exc:
        raise aiohttp.ClientPayloadError(f"bad content encoding: {exc}") from exc
    return seen, False


def _close_delimited(response: aiohttp.ClientResponse) -> Any:
    """The connection's protocol if the body ends with the connection (neither
    Content-Length nor chunked), else None. aiohttp ends such a body alike on a clean
    close (FIN) and on a reset (RST); the protocol's ``closed`` future (created here,
    before the end, to be kept) tells them apart."""
    headers = response.headers
    if "Content-Length" in headers or "chunked" in headers.get("Transfer-Encoding", "").lower():
        return None
    protocol = getattr(response.connection, "protocol", None)
    closed = getattr(protocol, "closed", None)
    if isinstance(closed, asyncio.Future):
        # Read whatever happens (an error path never asks): no "never retrieved" log.
        closed.add_done_callback(lambda done: done.cancelled() or done.exception())
    return protocol


def _reset(protocol: Any) -> bool:
    """True if ``protocol``'s connection ended with an error (a reset), not cleanly."""
    closed = getattr(protocol, "closed", None)
    if isinstance(closed, asyncio.Future):
        return closed.done() and not closed.cancelled() and closed.exception() is not None
    # Not watched (aiohttp 3.12.0 has no such future): its stored error. A clean close
    # stores ServerDisconnectedError too; a reset is an OSError (ClientOSError 104).
    exception = getattr(protocol, "exception", None)
    return callable(exception) and isinstance(exception(), OSError)


def classify_error(exc: BaseException, hops: int = 0) -> ErrorKind:
    """Map an exception from aiohttp or the OS to an :data:`ErrorKind`."""
    causes = list(_chain(exc))
    if any(isinstance(cause, BlockedAddressError) for cause in causes):
        return "blocked-redirect"
    if any(isinstance(cause, OSError) and cause.errno in LOCAL_ERRNOS for cause in causes):
        return "local-limit"
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return "timeout"
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        return "dns"
    if isinstance(exc, (aiohttp.ClientConnectorCertificateError, aiohttp.ClientSSLError)):
        return "tls"
    if isinstance(exc, aiohttp.ClientConnectorError):
        return "dns" if isinstance(exc.os_error, socket.gaierror) else "connect"
    if isinstance(exc, aiohttp.InvalidURL):
        return "bad-redirect" if hops else "protocol"
    if isinstance(exc, aiohttp.ClientPayloadError):
        # Broken chunking or encoding is a protocol error; a cut body is a reset.
        cause = str(exc).lower()
        return "protocol" if "encoding" in cause and "not completed" not in cause else "reset"
    if isinstance(exc, (aiohttp.ServerDisconnectedError, ConnectionError)):
        return "reset"
    if isinstance(exc, aiohttp.ClientOSError):
        return "reset" if isinstance(exc.__cause__, ConnectionError) else "connect"
    return "protocol"


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc``, its causes and contexts, and aiohttp's wrapped ``os_error``s."""
    seen: set[int] = set()
    pending: list[BaseException | None] = [exc]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        pending += [current.__cause__, current.__context__, getattr(current, "os_error", None)]


def _not_modified(
    chain: RedirectChain, response: aiohttp.ClientResponse, asked: bool, elapsed: float
) -> FetchOutcome:
    """The outcome of a 304, whose body (if a server sent one) is never read.

    RFC 9110 §15.4.5: a 304 ends with its header section. Bytes a server sends after
    it never become rules: aiohttp reads those that arrive with the head as a malformed
    next response (a protocol error, so the last good copy stays), and later ones are
    dropped with the connection here, never left for the next request.
    A 304 to a request without validators says nothing about the file: it is a
    protocol error (unreachable: the last good copy or disallow all), never "allow all".
    """
    response.close()
    if not asked:
        detail = "304 Not Modified to a request without validators"
        return chain.outcome(elapsed, 304, error="protocol", detail=detail)
    return chain.outcome(elapsed, 304, headers=response.headers)


def _describe(exc: BaseException) -> str:
    text = str(exc)[:200]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _check_parts(
    *,
    session: object,
    user_agent: object,
    policy: object,
    headers: object,
    resolver: object,
    public_address: object,
) -> None:
    """Refuse a part of the wrong kind at construction: a preset's name for ``policy``
    or a str session, resolver or public_address failed only at the first fetch."""
    owner = "AiohttpFetcher"
    kinds = {
        "session": (session, aiohttp.ClientSession, "an aiohttp.ClientSession"),
        "policy": (policy, FetchPolicy, "a FetchPolicy (e.g. FetchPolicy.googlebot())"),
        "headers": (headers, Mapping, "a mapping of header names to values"),
        "resolver": (resolver, AbstractResolver, "an aiohttp AbstractResolver"),
    }
    for name, (value, kind, accepted) in kinds.items():
        if value is not None and not isinstance(value, kind):
            raise ConfigurationTypeError(f"{owner}.{name}", value, f"None or {accepted}")
    header_value(f"{owner}.user_agent", text(f"{owner}.user_agent", user_agent))
    if not callable(public_address):
        raise ConfigurationTypeError(
            f"{owner}.public_address", public_address, "a function of an IP address"
        )
