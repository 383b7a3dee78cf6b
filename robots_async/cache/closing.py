"""AsyncClosing: ``async with`` for the objects that own connections, files or tasks."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import TracebackType

    from typing_extensions import Self

__all__ = ["AsyncClosing"]


class AsyncClosing:
    """Base of objects released by ``await obj.aclose()``: ``async with`` calls it."""

    __slots__ = ()

    async def aclose(self) -> None:
        """Release what the object holds (idempotent)."""
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
