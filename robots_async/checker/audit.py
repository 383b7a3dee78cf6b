"""AuditLog: the audit records (core/audit.py) appended to a JSON-lines file.

Lines are buffered and written in batches by a worker thread, so the event loop
never waits on the disk; at most ``batch`` lines are held, a writer past that waits
for the batch in flight (back-pressure, never a dropped line), and :meth:`aclose`
writes what is left (call it on a clean shutdown: Scrapy's spider_closed does).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.audit import audit_line
from ..core.errors import ClosedError, ConfigurationError

if TYPE_CHECKING:
    from ..cache.entry import CacheEntry
    from ..core.results import Verdict
    from ..core.usage_answer import UsageAnswer
    from .checker import RobotsChecker
    from .usage_answer import Body

__all__ = ["AuditLog"]


class AuditLog:
    """Append one JSON line per response to ``path`` (format: core/audit.py)."""

    def __init__(self, path: str | Path, *, batch: int = 256) -> None:
        given: object = batch
        if isinstance(given, bool) or not isinstance(given, int) or given < 1:
            raise ConfigurationError("AuditLog(batch=)", batch, "an int >= 1")
        self.path = Path(path)
        if not self.path.parent.is_dir():
            raise ConfigurationError("AuditLog(path=)", path, "a file in an existing directory")
        # Opened for appending once here (made if missing, as the first batch would):
        # a directory or a read-only file system otherwise failed at the first batch,
        # an OSError in the crawl's response path with that batch's lines lost.
        try:
            self.path.open("a", encoding="utf-8").close()
        except OSError as exc:
            why = "a directory" if self.path.is_dir() else exc.strerror or str(exc)
            raise ConfigurationError(
                "AuditLog(path=)", path, f"a file that can be appended to ({why})"
            ) from None
        self._batch = batch
        self._lines: list[str] = []
        self._turn = asyncio.Lock()  # one batch written at a time, in order
        self._closed = False
        self.written = 0

    async def record(
        self,
        checker: RobotsChecker,
        url: str,
        headers: object = None,
        body: Body | None = None,
        *,
        user_agent: str | None = None,
    ) -> UsageAnswer:
        """Decide ``url`` with ``checker`` (verdict and combined usage of the response's
        ``headers``/``body``), log the record, and return the usage answer."""
        decision = await checker.explain(url, user_agent=user_agent)
        answer = await checker.usage(
            url, {} if headers is None else headers, body, user_agent=user_agent
        )
        entry = await checker.robots(url)
        await self.write(url, decision.verdict, entry, answer)
        return answer

    async def write(
        self, url: str, verdict: Verdict, entry: CacheEntry, answer: UsageAnswer | None
    ) -> None:
        """Log one record from its parts (what an adapter has at hand)."""
        if self._closed:
            raise ClosedError("audit log is closed")
        outcome = entry.outcome
        self._lines.append(
            audit_line(
                time=time.time(),
                url=url,
                verdict=verdict,
                robots_url=outcome.final_url or outcome.url,
                robots_source=entry.source,
                robots_status=outcome.status,
                robots_sha256=outcome.body_sha256,
                robots_fetched_at=entry.fetched_at,
                answer=answer,
            )
        )
        if len(self._lines) >= self._batch:
            await self.flush()

    async def flush(self) -> None:
        """Write the buffered lines now (in a worker thread)."""
        async with self._turn:
            lines, self._lines = self._lines, []
            if lines:
                await asyncio.to_thread(_append, self.path, lines)
                self.written += len(lines)

    async def aclose(self) -> None:
        """Write what is buffered and refuse further records; idempotent."""
        if self._closed:
            return
        self._closed = True
        await self.flush()


def _append(path: Path, lines: list[str]) -> None:
    with path.open("a", encoding="utf-8") as out:
        out.writelines(lines)
