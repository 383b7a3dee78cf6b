"""Fit robots_async/_sizing.py's coefficients to tracemalloc measurements.

    python bench/calibrate_sizing.py CORPUS_DIR tests/data/corpus [--token MemoryBot]

Each file is parsed and its warnings packed as RobotsCache keeps them (retained
bytes measured), then asked 20 questions (measured again). The parsed part and the
compiled part (the difference) are fitted separately by least squares on the
features _sizing.py counts (packed warnings, which count their own buffers, taken
out), then the script prints the fitted coefficients and, for the coefficients
currently in _sizing.py, the estimate/measured ratio per file (minimum) and in total.
"""

from __future__ import annotations

import argparse
import gc
import tracemalloc
from pathlib import Path
from typing import TYPE_CHECKING

import robots_async as ra
from robots_async.core import sizing as _sizing
from robots_async.core.compiled import forget_shared
from robots_async.core.packed_warnings import PackedWarnings

if TYPE_CHECKING:
    from collections.abc import Sequence

QUESTIONS = 20


def features(robots: ra.RobotsTxt, token: str) -> tuple[list[float], list[float]]:
    """(parsed-part features, compiled-part features) as _sizing.py counts them."""
    groups = robots._groups
    parsed = [
        1.0,
        sum(len(g.lines) for g in groups),
        sum(len(g.blob) for g in groups),
        len(groups),
        sum(len(g.agents) for g in groups),
        0 if isinstance(robots._warnings, PackedWarnings) else len(robots._warnings),
        len(robots.sitemaps),
        sum(map(len, robots.sitemaps)),
    ]
    return parsed, [1.0, *_sizing.bucket_features(robots, token)]


def measure(
    paths: list[Path], token: str
) -> list[tuple[Path, float, float, list[float], list[float]]]:
    """Per file: (path, parsed bytes, compiled bytes, parsed features, compiled features)."""
    rows = []
    tracemalloc.start()
    for path in paths:
        body = path.read_bytes()
        # Twice, the smaller kept: a process-wide table that grows while one file is
        # measured (the interned strings') was charged to that file (www.tor.com:
        # 988,932 bytes once, 28,657 measured again).
        (parsed, queried), again = (_retained(body, token) for _ in range(2))
        parsed, queried = min(parsed, again[0]), min(queried, again[1])
        robots = _kept(body)
        robots.allowed("/", robots_token=token)
        packed = robots._warnings
        own = packed.retained() if isinstance(packed, PackedWarnings) else 0
        rows.append((path, parsed - own, queried - parsed, *features(robots, token)))
    tracemalloc.stop()
    return rows


def _retained(body: bytes, token: str) -> tuple[float, float]:
    """Bytes ``body`` retains parsed, then after QUESTIONS questions (tracemalloc on)."""
    forget_shared()  # each file compiles its own bucket: the estimate never shares
    gc.collect()
    start = tracemalloc.get_traced_memory()[0]
    robots = _kept(body)
    gc.collect()
    parsed = tracemalloc.get_traced_memory()[0] - start
    for i in range(QUESTIONS):
        robots.allowed(f"/section{i}/page?id={i}", robots_token=token)
    gc.collect()
    return parsed, tracemalloc.get_traced_memory()[0] - start


def _kept(body: bytes) -> ra.RobotsTxt:
    """``body`` parsed as RobotsCache keeps it: its warnings packed."""
    robots = ra.parse(body)
    robots._pack_warnings()
    return robots


def least_squares(xs: list[list[float]], ys: list[float]) -> list[float]:
    """Solve the normal equations by Gaussian elimination (a few features)."""
    n = len(xs[0])
    a = [[sum(x[i] * x[j] for x in xs) for j in range(n)] for i in range(n)]
    b = [sum(x[i] * y for x, y in zip(xs, ys, strict=True)) for i in range(n)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[pivot], b[col], b[pivot] = a[pivot], a[col], b[pivot], b[col]
        if abs(a[col][col]) < 1e-9:
            continue
        for r in range(n):
            if r != col:
                f = a[r][col] / a[col][col]
                a[r] = [v - f * w for v, w in zip(a[r], a[col], strict=True)]
                b[r] -= f * b[col]
    return [b[i] / a[i][i] if abs(a[i][i]) > 1e-9 else 0.0 for i in range(n)]


def main(argv: Sequence[str] | None = None) -> int:
    """Measure, fit, and report the current coefficients' fit."""
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("corpus", type=Path, nargs="+")
    args.add_argument("--token", default="MemoryBot")
    opts = args.parse_args(argv)
    paths = sorted(p for d in opts.corpus for p in d.iterdir() if p.is_file())
    rows = measure(paths, opts.token)
    parsed_fit = least_squares([r[3] for r in rows], [r[1] for r in rows])
    compiled_fit = least_squares([r[4] for r in rows], [r[2] for r in rows])
    print("parsed part (1, rules, pattern bytes, groups, agents, warnings, sitemaps, chars):")
    print("  " + ", ".join(f"{c:.1f}" for c in parsed_fit))
    print("compiled part (1, rules, pattern bytes, wildcards, anchors, /a* literals):")
    print("  " + ", ".join(f"{c:.1f}" for c in compiled_fit))
    ratios = []
    total_est = total_used = 0.0
    for path, parsed, compiled, *_ in rows:
        forget_shared()
        robots = _kept(path.read_bytes())
        for i in range(QUESTIONS):
            robots.allowed(f"/section{i}/page?id={i}", robots_token=opts.token)
        estimate = _sizing.retained_size(robots, opts.token)
        packed = robots._warnings
        used = parsed + compiled + (packed.retained() if isinstance(packed, PackedWarnings) else 0)
        total_est += estimate
        total_used += used
        ratios.append((estimate / used, path.name, int(used), estimate))
    ratios.sort()
    print(
        f"{len(rows)} files; current coefficients: estimate/measured min {ratios[0][0]:.3f} "
        f"({ratios[0][1]}), total {total_est / total_used:.3f}; "
        f"measured mean {total_used / len(rows):,.0f} bytes per file"
    )
    print("lowest:", ratios[:3])
    print("highest:", ratios[-3:])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
