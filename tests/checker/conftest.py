"""Fixtures for the RobotsChecker tests: real aiohttp servers on 127.0.0.1 and
the rest of tests/servers.py, whose names the tests import from here."""

from __future__ import annotations

from ..servers import *  # noqa: F403 (fixtures are found by name in a conftest)
