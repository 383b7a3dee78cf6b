"""``within(seconds)``: a timeout that never loses a cancellation.

``asyncio.wait_for`` on Python 3.10 and 3.11 swallows a cancellation that arrives as
the awaited call completes (CPython gh-86296, fixed by 3.12's rewrite on top of
``asyncio.timeout``): the canceller waits on, and the work it cancelled goes ahead. The
asynchronous layers use this context manager instead: ``asyncio.timeout`` on 3.11+,
aio-libs' ``async-timeout`` (its origin and backport) on 3.10. On expiry it raises
``TimeoutError`` (``asyncio.TimeoutError`` on 3.10: catch that name).
"""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    from asyncio import timeout as within
else:  # pragma: no cover - exercised by the 3.10 job
    from async_timeout import timeout as within

__all__ = ["within"]
