"""Streaming a response body (a sitemap) into a sink, and fetchers that can."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from .outcome import FetchOutcome

__all__ = ["BodySink", "StreamingFetcher"]


class BodySink(Protocol):
    """Takes a decoded body piece by piece; ``feed`` returns True to stop reading."""

    def feed(self, data: bytes) -> bool:
        """Take the next piece; True once nothing more is wanted."""
        ...


@runtime_checkable
class StreamingFetcher(Protocol):
    """A fetcher that can stream a document into a sink (``AiohttpFetcher`` can)."""

    async def fetch_into(
        self, url: str, sink: BodySink, *, public_only: bool = False
    ) -> FetchOutcome:
        """Fetch ``url`` with the robots.txt limits, feeding its body to ``sink``."""
        ...
