"""What the commands share at run time: the agent, files, the checker, logging."""

from __future__ import annotations

import contextlib
import logging
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO

from ..core.agent import require_token
from ..core.errors import ConfigurationError, InvalidURLError, InvalidUserAgentError
from ..core.parser import DEFAULT_MAX_BYTES, parse
from ..core.validate import control_character
from .options import FETCH_POLICIES, UsageError

if TYPE_CHECKING:
    import argparse
    from collections.abc import AsyncIterator

    from ..checker.checker import RobotsChecker
    from ..core.policy import PolicyName
    from ..core.robots import RobotsTxt
    from ..fetch.outcome import FetchOutcome
    from ..fetch.policy import FetchPolicy
    from .bulk import Progress


def _agent(args: argparse.Namespace) -> str:
    """The product token of ``--agent``.

    :raises InvalidUserAgentError: when it has none, or holds a character no header
        can carry: aiohttp then refuses every request, and each robots.txt would be
        "unreachable" (everything disallowed) instead of the command stopping.
    """
    agent: str = args.agent
    bad = control_character(agent)
    if bad is not None:
        raise InvalidUserAgentError(f"control character in User-Agent {agent!r}: {bad!r}")
    return require_token(agent)


#: Bytes asked of a file or stdin at a time by :func:`_read_bytes`.
_CHUNK = 1 << 20


def _read_bytes(path: str, max_bytes: int) -> bytes:
    """The first ``max_bytes + 1`` bytes of ``path`` ('-': stdin), at most.

    One byte past the cap is enough for the parser to say "truncated" (RFC 9309
    §2.5 lets the rest be ignored); reading to the end held a 100 MB file whole in
    memory and never finished on an endless stdin (``yes | robots-async lint -``).
    """
    if path == "-":
        return _read_upto(_stdin().buffer, max_bytes + 1)
    try:
        with open(path, "rb") as handle:
            return _read_upto(handle, max_bytes + 1)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _stdin() -> TextIO:
    """``sys.stdin``; UsageError when there is none (stdin closed: ``<&-``)."""
    if sys.stdin is None:
        raise UsageError("cannot read stdin ('-'): it is closed")
    return sys.stdin


def _read_upto(handle: BinaryIO, limit: int) -> bytes:
    """Up to ``limit`` bytes of ``handle``, in chunks (a pipe returns short reads; a
    huge ``limit`` is never passed to ``read()``, which cannot take one past 2**63)."""
    parts: list[bytes] = []
    left = limit
    while left > 0 and (part := handle.read(min(left, _CHUNK))):
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


#: The first bytes of every SQLite 3 database file (its header, sqlite.org/fileformat).
_SQLITE_HEADER = b"SQLite format 3\x00"


def _require_database(path: str) -> None:
    """UsageError for a ``--store`` file that holds something other than a database
    (``--store robots.txt``, easily typed for ``--robots``): the library only logs such
    a file and fetches without it, and one command ran with no store and exit 0."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(len(_SQLITE_HEADER))
    except OSError:
        return  # missing (made there) or unreadable: SQLiteStore says which
    if head and head != _SQLITE_HEADER:
        raise UsageError(f"--store {path}: not a SQLite database (a store file is made there)")


#: The site a bare ``/path`` is put on to find the path a client sends for it.
_PLACEHOLDER = "http://robots-async.invalid"


def _judged(text: str) -> str:
    """The URL (or ``/path``) a client sends for ``text``: what a local check judges.

    RobotsChecker judges the URL its HTTP client puts on the wire (``wire_url``):
    ``/x/../private`` is ``/private`` and ``/a b`` is ``/a%20b``. Matched as written, a
    ``--robots FILE`` check allowed what the checker, on the same rules, disallows.
    A relative or non-http(s) URL comes back as it is, for ``Origin`` to reject.

    :raises InvalidURLError: when no client could send ``text`` (a bad port, say).
    """
    from ..fetch.wire import wire_url

    if not text.startswith("/"):
        return wire_url(text)
    try:
        return wire_url(_PLACEHOLDER + text).removeprefix(_PLACEHOLDER) or "/"
    except InvalidURLError as exc:
        raise InvalidURLError(text, exc.reason) from None


def _load_robots(path: str, policy: PolicyName, max_bytes: int = DEFAULT_MAX_BYTES) -> RobotsTxt:
    return parse(_read_bytes(path, max_bytes), policy=policy, max_bytes=max_bytes)


def _fetch_policy(args: argparse.Namespace, **changes: Any) -> FetchPolicy:
    preset = FETCH_POLICIES[getattr(args, "fetch_policy", "rfc9309")]()
    timeout: float = args.timeout
    policy = replace(
        preset,
        total_timeout=timeout,
        connect_timeout=min(preset.connect_timeout, timeout),
        **changes,
    )
    if args.private_redirects is not None:
        policy = replace(policy, private_redirects=args.private_redirects)
    return policy


@contextlib.asynccontextmanager
async def _checker(args: argparse.Namespace, **options: Any) -> AsyncIterator[RobotsChecker]:
    """The checker for ``args``, on the ``--store`` file when one is given (closed after)."""
    from ..checker.checker import RobotsChecker  # aiohttp is imported only when the network is used

    path = getattr(args, "store", None)
    async with contextlib.AsyncExitStack() as stack:
        if path is not None:
            from ..cache.sqlite import SQLiteStore
            from ..cache.store import StoreSchemaError

            _require_database(path)
            try:
                store = SQLiteStore(path)
            except ConfigurationError as exc:  # a missing directory: exit 2, not 1
                raise UsageError(str(ConfigurationError("--store", path, exc.accepted))) from None
            except StoreSchemaError as exc:  # another program's file
                raise UsageError(f"--store: {exc}") from None
            options["store"] = await stack.enter_async_context(store)
        checker = RobotsChecker(
            args.agent, fetch_policy=_fetch_policy(args), policy=args.policy, **options
        )
        yield await stack.enter_async_context(checker)


def _setup_logging(verbose: int, progress: Progress | None = None) -> None:
    """-v: the library's INFO messages on stderr; -vv: DEBUG (through the bar if any).

    0 removes what an earlier call added (``main`` may run again in one process).
    """
    logger = logging.getLogger("robots_async")
    for old in list(logger.handlers):
        if isinstance(old, _StderrHandler):
            logger.removeHandler(old)
            logger.setLevel(logging.NOTSET)
    if not verbose:
        return
    handler = _StderrHandler(progress)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG if verbose > 1 else logging.INFO)


class _StderrHandler(logging.Handler):
    """Writes log records to the current stderr, clearing the progress bar first."""

    def __init__(self, progress: Progress | None) -> None:
        super().__init__()
        self._progress = progress

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = self.format(record)
            if self._progress is not None:
                self._progress.write(text, err=True)
            else:
                print(text, file=sys.stderr)
        except (OSError, ValueError):  # a closed or broken stderr: the stdlib's way
            self.handleError(record)


async def _fetch(
    args: argparse.Namespace, url: str, policy: FetchPolicy, *, keep_body: bool
) -> FetchOutcome:
    from ..fetch.fetcher import AiohttpFetcher

    fetcher = AiohttpFetcher(user_agent=args.agent, policy=policy, match_policy=args.policy)
    try:
        return await fetcher.fetch(url, keep_body=keep_body)
    finally:
        await fetcher.aclose()
