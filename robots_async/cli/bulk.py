"""Bulk ``robots-async check``: many URLs over many origins, none waiting on another.

Design (issue 12). URLs are read lazily and each is answered as soon as its origin's
robots.txt is known:

- a URL whose origin has a fresh cache entry is answered at once;
- the first URL of any other origin starts one task for that origin; later URLs of
  that origin wait in the task's queue (no task and no slot of their own) until its
  robots.txt is in, then are answered from the cache;
- robots.txt fetches are bounded by the checker (``--concurrency``), not by URLs.

No pacing (Crawl-delay, 429 back-off): a bulk check requests no page, only each
origin's robots.txt once, so there is nothing to space out; a crawler that then
fetches the pages paces them with ``RobotsChecker.wait``/``observe`` (or
``ROBOTSASYNC_PACE``).

A window bounds memory: at most ``window`` URLs are read but not yet printed. By
default results print as they complete, so a slow origin delays only its own URLs.
``ordered=True`` prints in input order through a reorder buffer: a slow origin holds
back the *printing* of later lines, not their checking, until ``window`` results
are waiting behind it (then reading pauses until the slow line is answered).
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import sys
from collections import deque
from collections.abc import AsyncIterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..core.errors import InvalidURLError
from ..core.url import Origin
from .hints import url_error

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Iterable, Iterator

    from ..checker.checker import Decision, RobotsChecker

__all__ = ["Bulk", "Line", "Progress", "count_lines", "read_lines", "read_lines_async"]

logger = logging.getLogger("robots_async.cli")

#: Seconds between redraws of the progress bar while nothing completes.
_TICK = 0.25


@dataclass(frozen=True, slots=True)
class Line:
    """One URL to check: its position among all inputs and where it was read."""

    index: int
    #: ``urls.txt:3`` (file and line) or ``argument 2``.
    where: str
    text: str


def _wanted(text: str) -> bool:
    return bool(text) and not text.startswith("#")


def _text(raw: str | bytes, number: int) -> str:
    """Line ``number`` of an input, decoded (bytes that are not UTF-8: U+FFFD) and
    stripped; on line 1, without the byte order mark Notepad and Excel write first
    (it was read as part of the first URL: 'relative URL', exit 2)."""
    text = raw if isinstance(raw, str) else raw.decode("utf-8", "replace")
    return (text.removeprefix("\ufeff") if number == 1 else text).strip()


def read_lines(arguments: Iterable[str], path: str | None) -> Iterator[Line]:
    """Positional URLs, then the lines of ``path`` ('-': stdin), read lazily.

    Blank lines and ``#`` comments are skipped; line numbers count every line.

    :raises OSError: when ``path`` cannot be opened (before anything is yielded).
    """
    index = 0
    for number, text in enumerate(arguments, 1):
        yield Line(index, f"argument {number}", text)
        index += 1
    if path is None:
        return
    if path == "-":
        # stdin's bytes, decoded as a file's are (sys.stdin is strict under a UTF-8
        # locale: a byte that is not UTF-8 was a UnicodeDecodeError traceback).
        yield from _numbered(getattr(sys.stdin, "buffer", sys.stdin), "<stdin>", index)
        return
    with open(path, encoding="utf-8", errors="replace") as handle:
        yield from _numbered(handle, path, index)


def _numbered(lines: Iterable[str | bytes], name: str, index: int) -> Iterator[Line]:
    """The wanted ``lines`` as Lines from ``index`` on, numbered as ``name:N``."""
    for number, raw in enumerate(lines, 1):
        text = _text(raw, number)
        if _wanted(text):
            yield Line(index, f"{name}:{number}", text)
            index += 1


async def read_lines_async(arguments: Iterable[str], path: str | None) -> AsyncIterator[Line]:
    """:func:`read_lines`, but a pipe on stdin is read without blocking the event loop.

    ``producer | robots-async check --input -`` may trickle lines; reading them with a
    blocking call would stall every robots.txt fetch in flight meanwhile. Regular
    files (and stdin without a pipe) are read directly: they never wait.
    """
    if path != "-" or not _is_pipe(sys.stdin):
        for line in read_lines(arguments, path):
            yield line
        return
    index = 0
    for line in read_lines(arguments, None):
        yield line
        index += 1
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), sys.stdin
    )
    try:
        # ``pieces``: the unended line's reads, joined once at its end (``rest +
        # chunk`` copied the line so far on every read: 37 s for an 80 MB line).
        number, pieces = 0, list[bytes]()
        while chunk := await reader.read(1 << 16):
            *complete, rest = chunk.split(b"\n")
            if complete:
                complete[0] = b"".join([*pieces, complete[0]])
                pieces.clear()
            pieces.append(rest)
            for raw in complete:
                number += 1
                text = _text(raw, number)
                if _wanted(text):
                    yield Line(index, f"<stdin>:{number}", text)
                    index += 1
        text = _text(b"".join(pieces), number + 1)
        if _wanted(text):
            yield Line(index, f"<stdin>:{number + 1}", text)
    finally:
        transport.close()


def _is_pipe(stream: object) -> bool:
    """True for a stream on a pipe, socket or terminal (what a read can wait on).

    Of the character devices only a terminal: /dev/null (``< /dev/null`` in cron or
    CI) never waits, and the event loop cannot poll it (EPERM): the check hung.
    """
    try:
        fd = stream.fileno()  # type: ignore[attr-defined]
        mode = os.fstat(fd).st_mode
    except (AttributeError, OSError, ValueError):  # no descriptor (a test's StringIO)
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or (stat.S_ISCHR(mode) and os.isatty(fd))


def count_lines(path: str | None) -> int | None:
    """URLs in a regular file (for the progress bar's total); None for a pipe or stdin."""
    if path is None or path == "-":
        return 0 if path is None else None
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with open(path, encoding="utf-8", errors="replace") as handle:
            return sum(1 for number, raw in enumerate(handle, 1) if _wanted(_text(raw, number)))
    except OSError:
        return None


class _Bar(Protocol):
    n: int

    def update(self, n: int = 1) -> object: ...

    def refresh(self) -> object: ...

    def close(self) -> None: ...


class Progress:
    """A tqdm bar on stderr that advances with every answer, or nothing.

    ``miniters=1`` turns off tqdm's dynamic ``miniters`` (which froze the bar at
    1/4760 while thousands of answers came in); a ticker redraws it every 0.25 s
    so an answer is shown even when the next one is long in coming.
    """

    def __init__(self, bar: _Bar | None) -> None:
        self._bar = bar
        self._shown = 0
        # A reader at the other end of a pipe sees each answer as it completes, not
        # 8 KiB later (a flush per line costs about 3 us: 6% of a cached check).
        self._flush = _is_pipe(sys.stdout)

    @classmethod
    def start(cls, total: int | None, enabled: bool) -> Progress:
        """A bar with ``total`` steps when ``enabled``; say so when tqdm is missing."""
        if not enabled:
            return cls(None)
        try:
            from tqdm import tqdm
        except ImportError:
            print(
                "robots-async: no progress bar: tqdm is not installed "
                "(pip install 'robots-async[cli]')",
                file=sys.stderr,
            )
            return cls(None)
        bar: Any = tqdm(
            total=total,
            unit="url",
            file=sys.stderr,
            dynamic_ncols=True,
            miniters=1,
            mininterval=0.1,
        )
        return cls(bar)

    @property
    def active(self) -> bool:
        """True when a bar is drawn."""
        return self._bar is not None

    def advance(self) -> None:
        """One more URL answered."""
        if self._bar is not None:
            self._bar.update(1)

    async def tick(self) -> None:
        """Redraw the bar while answers arrive between tqdm's own redraws (run as a task)."""
        bar = self._bar
        if bar is None:
            return
        while True:
            await asyncio.sleep(_TICK)
            if bar.n != self._shown:
                self._shown = bar.n
                bar.refresh()

    def write(self, text: str, *, err: bool = False) -> None:
        """Print a line without garbling the bar (cleared, printed, redrawn)."""
        stream = sys.stderr if err else sys.stdout
        if self._bar is not None and (err or stream.isatty()):
            from tqdm import tqdm

            tqdm.write(text, file=stream)
        else:
            print(text, file=stream, flush=self._flush)

    def close(self) -> None:
        """Draw the final state and release the terminal line."""
        if self._bar is not None:
            self._bar.close()


class _Printer:
    """Releases answers as they come or in input order, and counts what is held."""

    def __init__(self, ordered: bool, emit: Callable[[Line, Decision | None, str | None], None]):
        self._ordered = ordered
        self._emit = emit
        self._held: dict[int, tuple[Line, Decision | None, str | None]] = {}
        self._next = 0
        self.outstanding = 0
        self.room = asyncio.Event()

    def put(self, line: Line, decision: Decision | None, error: str | None) -> None:
        if not self._ordered:
            self._release(line, decision, error)
            return
        self._held[line.index] = (line, decision, error)
        while self._next in self._held:
            self._release(*self._held.pop(self._next))
            self._next += 1

    def _release(self, line: Line, decision: Decision | None, error: str | None) -> None:
        self.outstanding -= 1
        self.room.set()
        self._emit(line, decision, error)


class Bulk:
    """Checks a stream of URLs with one task per origin awaiting its robots.txt.

    :param emit: called once per input line, with its decision or its error message.
    :param ordered: emit in input order (a reorder buffer) rather than as answered.
    :param window: lines read but not yet emitted, at most.
    """

    def __init__(
        self,
        checker: RobotsChecker,
        emit: Callable[[Line, Decision | None, str | None], None],
        *,
        ordered: bool,
        window: int,
    ) -> None:
        self._checker = checker
        self._printer = _Printer(ordered, emit)
        self._window = window
        self._queues: dict[Origin, deque[Line]] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    async def run(self, lines: AsyncIterable[Line] | Iterable[Line]) -> None:
        """Check every line; return when all are emitted."""
        printer = self._printer
        try:
            async for line in _aiter(lines):
                while printer.outstanding >= self._window:
                    printer.room.clear()
                    await printer.room.wait()
                printer.outstanding += 1
                await self._start(line)
            while self._tasks:
                await asyncio.gather(*self._tasks)
        finally:
            for task in self._tasks:
                task.cancel()

    async def _start(self, line: Line) -> None:
        try:
            origin = Origin.from_url(line.text)
        except InvalidURLError as exc:
            self._printer.put(line, None, _error(exc))
            return
        queue = self._queues.get(origin)
        if queue is not None:
            queue.append(line)
        elif self._checker.cache.fresh(origin) is not None:
            await self._check(line)
        else:
            self._queues[origin] = deque([line])
            task = asyncio.create_task(self._drain(origin))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _drain(self, origin: Origin) -> None:
        """Answer the queued URLs of ``origin``: the first waits for robots.txt."""
        queue = self._queues[origin]
        try:
            while queue:
                # The line stays queued while it is checked, so later ones join the queue.
                decision = await self._check(queue[0])
                queue.popleft()
                if decision is not None and not decision.from_cache:
                    _log_fetch(decision)
        finally:
            del self._queues[origin]

    async def _check(self, line: Line) -> Decision | None:
        try:
            decision = await self._checker.explain(line.text)
        except InvalidURLError as exc:
            self._printer.put(line, None, _error(exc))
            return None
        self._printer.put(line, decision, None)
        return decision


def _error(exc: InvalidURLError) -> str:
    """A bad line's message, with the fix (a URL needs a scheme; or use --robots FILE)."""
    return url_error(exc, paths_ok=False, robots_option=True)


async def _aiter(lines: AsyncIterable[Line] | Iterable[Line]) -> AsyncIterator[Line]:
    if isinstance(lines, AsyncIterable):
        async for line in lines:
            yield line
    else:
        for line in lines:
            yield line


def _log_fetch(decision: Decision) -> None:
    outcome = decision.outcome
    what = f"HTTP {outcome.status}" if outcome.error is None else outcome.error
    logger.info(
        "%s: %s, %d bytes, %.3f s: %s",
        decision.origin.robots_url,
        what,
        outcome.bytes_read,
        outcome.elapsed,
        decision.source,
    )
