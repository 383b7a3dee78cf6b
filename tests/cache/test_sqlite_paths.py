"""SQLiteStore's path is configuration: one where no file can ever be (a missing or
read-only directory, a directory itself, a private database) is refused when the store
is made, as ConfigurationError naming the path. A bad *file* (corrupt, locked,
read-only) still only falls back to fetching (tests/cache/test_sqlite_store.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

import robots_async as ra

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("missing/robots.sqlite", "No such file or directory"),
        ("", "private"),
        (":memory:", "private"),
        (".", "a directory"),
    ],
)
def test_path_where_no_store_can_be_is_refused(tmp_path: Path, name: str, why: str) -> None:
    """These used to log one warning and run without a store (a fleet sharing nothing,
    every process fetching and pacing alone), or with a database no other process sees."""
    path = name if name in ("", ":memory:") else str(tmp_path / name)
    with pytest.raises(ra.ConfigurationError, match=r"^SQLiteStore\(path=\)=") as caught:
        ra.SQLiteStore(path)
    assert why in caught.value.accepted
    assert not (tmp_path / "missing").exists()


def test_read_only_directory_is_refused(read_only_dir: Path) -> None:
    with pytest.raises(ra.ConfigurationError, match="Read-only file system"):
        ra.SQLiteStore(read_only_dir / "robots.sqlite")


async def test_new_file_in_an_existing_directory_is_made(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite"
    async with ra.SQLiteStore(path):
        assert path.is_file()
