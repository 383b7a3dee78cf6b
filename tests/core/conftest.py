"""Fixtures for the core tests."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from robots_async.core.prefixes import LiteralPrefixes

if TYPE_CHECKING:
    from array import array


@pytest.fixture
def linked_indexes(monkeypatch: pytest.MonkeyPatch) -> list[LiteralPrefixes]:
    """Every index whose literals are all linked at once (``link_all``) in the test."""
    linked: list[LiteralPrefixes] = []
    real_link_all = LiteralPrefixes.link_all

    def link_all(self: LiteralPrefixes) -> array[int]:
        linked.append(self)
        return real_link_all(self)

    monkeypatch.setattr(LiteralPrefixes, "link_all", link_all)
    return linked
