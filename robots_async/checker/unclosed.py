"""Where an object was created, and the ResourceWarning for one never closed.

A forgotten ``async with`` otherwise shows only aiohttp's "Unclosed client session",
which names neither the checker nor the line that made it.
"""

from __future__ import annotations

import os
import sys
import warnings

__all__ = ["creation_site", "warn_unclosed"]

#: This package's directory: frames inside it are not the user's creation site.
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

#: Frames walked at most to get out of the package (a subclass's __init__, the CLI).
_MAX_FRAMES = 8


def creation_site() -> tuple[str, int]:
    """The file and line of the first caller outside robots_async (the frames
    themselves are not kept: only a string and an int, so nothing is retained)."""
    frame = sys._getframe(2)  # skip this function and the __init__ calling it
    for _ in range(_MAX_FRAMES):
        back = frame.f_back
        if not frame.f_code.co_filename.startswith(_PACKAGE) or back is None:
            break
        frame = back
    return frame.f_code.co_filename, frame.f_lineno


def warn_unclosed(owner: object, site: tuple[str, int]) -> None:
    """Emit the ResourceWarning for ``owner``, never closed, created at ``site``."""
    name = type(owner).__name__
    warnings.warn(
        f"unclosed {name} created at {site[0]}:{site[1]}: use `async with {name}(...)` "
        "or `await checker.aclose()`",
        ResourceWarning,
        source=owner,
        stacklevel=2,
    )
