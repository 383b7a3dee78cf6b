"""A startup error of the Scrapy middleware as one clear log line.

Scrapy >= 2.13 builds downloader middlewares inside the crawl's asyncio task
(``AsyncCrawlerRunner._crawl_and_track`` re-raises what ``from_crawler`` raised), so
an error there reaches the user as asyncio's "Task exception was never retrieved"
and a traceback through Scrapy's internals. The crawl must still stop (Scrapy
sets ``bootstrap_failed`` and ``scrapy crawl`` exits 1), so the error is still
raised; it is logged once here, and the traceback of that same exception object
is dropped from asyncio's log.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._scrapy_settings import ConfigurationError

__all__ = ["report_startup_error"]

logger = logging.getLogger("robots_async.contrib.scrapy")

#: Marks an exception already logged by :func:`report_startup_error`.
_REPORTED = "_robotsasync_reported"


class _DropReported(logging.Filter):
    """Drops a log record carrying an exception that was already reported."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not getattr(exc, _REPORTED, False)


_FILTER = _DropReported()


def report_startup_error(exc: ConfigurationError) -> None:
    """Log ``exc`` as one ERROR line (setting, value, what is accepted) and keep
    asyncio from printing it again with a traceback when the crawl task fails."""
    logger.error("robots_async: the crawl cannot start: %s", exc)
    setattr(exc, _REPORTED, True)
    asyncio_logger = logging.getLogger("asyncio")
    if _FILTER not in asyncio_logger.filters:
        asyncio_logger.addFilter(_FILTER)
