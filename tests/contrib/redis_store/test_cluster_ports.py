"""The local Redis Clusters of two pytest-xdist workers started at once get ports of
their own (the workers' process ids are next to each other, and so were the first
ports each picked)."""

from __future__ import annotations

import itertools
import os
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import pytest

from .conftest import LocalCluster, redis_binary, start_cluster

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.slow


def test_two_workers_start_their_clusters_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two threads stand for two xdist workers with process ids n and n + 1 (as
    execnet starts them), each starting a cluster of three masters at the same time.
    Each picked its ports from 20,000 + pid % 20,000 upward, free but not yet bound:
    the picks overlapped by two ports, and a node of one cluster could not bind its
    port (the cluster fixtures skip then, and fail under CI). Both now start, on
    ports apart."""
    binary = redis_binary()
    pids = itertools.count(os.getpid())
    monkeypatch.setattr(os, "getpid", lambda: next(pids))

    def start(n: int) -> LocalCluster | str:
        directory = tmp_path / f"worker{n}"
        directory.mkdir()
        try:
            return start_cluster(binary, directory)
        except BaseException as exc:  # noqa: BLE001 (pytest's Skipped and Failed too)
            return repr(exc)[:300]

    clusters: list[LocalCluster] = []
    try:
        with ThreadPoolExecutor(2) as pool:
            started = list(pool.map(start, (0, 1), timeout=120))
        clusters = [found for found in started if isinstance(found, LocalCluster)]
        assert len(clusters) == 2, started
        first, second = ({node.port for node in cluster.nodes} for cluster in clusters)
        assert not first & second, (first, second)
    finally:
        for cluster in clusters:
            cluster.stop()
