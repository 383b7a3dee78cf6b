"""A RobotsChecker used and never closed says so: a ResourceWarning naming the class and
the line that created it (a forgotten ``async with`` otherwise shows only aiohttp's
"Unclosed client session")."""

from __future__ import annotations

import gc
import warnings

import robots_async as ra


async def test_unclosed_checker_warns_with_its_creation_site() -> None:
    checker = ra.RobotsChecker("DemoBot/1.0")
    line = test_unclosed_checker_warns_with_its_creation_site.__code__.co_firstlineno + 1
    # What its first check does (without a session to leak from this test): bind to
    # the running loop, after which it may own an open session.
    checker._bind()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del checker
        gc.collect()
    messages = [str(w.message) for w in caught if w.category is ResourceWarning]
    expected = (
        f"unclosed RobotsChecker created at {__file__}:{line}: use "
        "`async with RobotsChecker(...)` or `await checker.aclose()`"
    )
    assert messages == [expected]


async def test_closed_or_unused_checker_is_silent() -> None:
    async with ra.RobotsChecker("DemoBot/1.0") as closed:
        closed._bind()
    unused = ra.RobotsChecker("DemoBot/1.0")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del closed, unused
        gc.collect()
    assert [w for w in caught if w.category is ResourceWarning] == []
