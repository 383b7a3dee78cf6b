"""Fixtures for the RobotsChecker tests (tests/servers.py)."""

from __future__ import annotations

from ..servers import (
    TOKEN,
    USER_AGENT,
    FakeClock,
    Hit,
    Server,
    clock,
    free_port,
    gzip_bomb,
    make_cache,
    make_checker,
    make_fetcher,
    make_server,
    raw_server,
    server,
)

__all__ = [
    "FakeClock",
    "Hit",
    "Server",
    "TOKEN",
    "USER_AGENT",
    "clock",
    "free_port",
    "gzip_bomb",
    "make_cache",
    "make_checker",
    "make_fetcher",
    "make_server",
    "raw_server",
    "server",
]
