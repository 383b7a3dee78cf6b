"""Core benchmark: robots_async against protego, urllib.robotparser and Google's C++
matcher (jwm.robotstxt) on a directory of real robots.txt files, in one run.

    python bench/bench_core.py ../shared/corpus [--repeat 5] [--queries 20]

Prints parse MB/s, match queries/s on parsed objects, one-shot files/s (parse + N
queries), retained bytes per parsed file (tracemalloc) and verdict agreement with
jwm, with ratios against each anchor. Timings are the best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
import tracemalloc
import urllib.robotparser
from pathlib import Path
from typing import TYPE_CHECKING, Any

import robots_async

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

AGENT = "Googlebot"
TARGETS = {
    "parse MB/s": 3.0,
    "match q/s": 3.0,
    "one-shot files/s": 2.0,
    "bytes/file": 0.5,
}


def load_corpus(directory: Path) -> list[tuple[str, bytes]]:
    """(host, body) for every file in ``directory``, sorted by name."""
    return [(p.name, p.read_bytes()) for p in sorted(directory.iterdir()) if p.is_file()]


def sample_urls(host: str, body: bytes, count: int, rng: random.Random) -> list[str]:
    """URLs that exercise the file: paths taken from its own rules plus common ones."""
    paths = ["/", "/index.html", "/search?q=robots", "/wp-admin/admin-ajax.php", "/a/b/c.html"]
    for line in body.decode("utf-8", "replace").splitlines():
        key, _, value = line.partition(":")
        value = value.split("#", 1)[0].strip()
        if key.strip().lower() in ("allow", "disallow") and value.startswith("/"):
            path = value.replace("*", "x").rstrip("$")
            paths.extend((path, path + "extra/page?id=1"))
    picked = [rng.choice(paths) for _ in range(count)]
    return [f"https://{host}{p}" for p in picked]


class Anchor:
    """One implementation under test: how to parse a body and ask a question."""

    def __init__(
        self,
        name: str,
        parse: Callable[[bytes], Any],
        allowed: Callable[[Any, str], bool],
    ) -> None:
        self.name = name
        self.parse = parse
        self.allowed = allowed


def _urllib_parse(body: bytes) -> urllib.robotparser.RobotFileParser:
    parser = urllib.robotparser.RobotFileParser()
    parser.parse(body.decode("utf-8", "replace").splitlines())
    return parser


def anchors() -> list[Anchor]:
    """robots_async first, then every anchor that is installed."""
    found = [
        Anchor(
            "robots_async",
            robots_async.parse,
            lambda r, u: r.allowed(u, user_agent=AGENT),
        ),
        Anchor(
            "urllib",
            _urllib_parse,
            lambda r, u: r.can_fetch(AGENT, u),
        ),
    ]
    try:
        from protego import Protego

        found.insert(
            1,
            Anchor(
                "protego",
                lambda b: Protego.parse(b.decode("utf-8", "replace")),
                lambda r, u: r.can_fetch(u, AGENT),
            ),
        )
    except ImportError:
        print("protego not installed: skipped", file=sys.stderr)
    try:
        from jwm.robotstxt import googlebot

        def jwm_parse(body: bytes) -> tuple[googlebot.RobotsMatcher, str]:
            # The C++ matcher parses the body on every query; "parse" only decodes.
            return googlebot.RobotsMatcher(), body.decode("utf-8", "replace")

        found.append(
            Anchor(
                "jwm (C++)",
                jwm_parse,
                lambda r, u: r[0].OneAgentAllowedByRobots(r[1], AGENT, u),
            )
        )
    except ImportError:
        print("jwm.robotstxt not installed: skipped", file=sys.stderr)
    return found


def best_of(repeat: int, run: Callable[[], object]) -> float:
    """The fastest of ``repeat`` runs, in seconds (GC off while timing)."""
    times = []
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
        gc.enable()
    return min(times)


def retained_bytes(anchor: Anchor, bodies: Sequence[bytes]) -> float:
    """Mean bytes still allocated per parsed file once parsing is done."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kept = [anchor.parse(b) for b in bodies]
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del kept
    return (after - before) / len(bodies)


def measure(
    anchor: Anchor, corpus: list[tuple[str, bytes]], queries: dict[str, list[str]], repeat: int
) -> dict[str, float]:
    """All figures for one implementation."""
    bodies = [b for _, b in corpus]
    megabytes = sum(map(len, bodies)) / 1e6
    parse_time = best_of(repeat, lambda: [anchor.parse(b) for b in bodies])
    parsed = [(anchor.parse(b), queries[h]) for h, b in corpus]
    for obj, urls in parsed:  # warm per-object caches: this measures steady state
        anchor.allowed(obj, urls[0])
    n_queries = sum(len(u) for _, u in parsed)

    def match_all() -> None:
        allowed = anchor.allowed
        for obj, urls in parsed:
            for url in urls:
                allowed(obj, url)

    match_time = best_of(repeat, match_all)

    def one_shot() -> None:
        allowed, parse = anchor.allowed, anchor.parse
        for host, body in corpus:
            obj = parse(body)
            for url in queries[host]:
                allowed(obj, url)

    one_shot_time = best_of(repeat, one_shot)
    return {
        "parse MB/s": megabytes / parse_time,
        "match q/s": n_queries / match_time,
        "one-shot files/s": len(corpus) / one_shot_time,
        "bytes/file": retained_bytes(anchor, bodies),
    }


def agreement(
    corpus: list[tuple[str, bytes]], queries: dict[str, list[str]], found: list[Anchor]
) -> dict[str, tuple[int, int]]:
    """(agreeing, total) verdicts of each implementation against jwm (Google's C++).

    robots_async is asked with its google-reference policy and no size limit (the
    C++ library has none; the 512,000-byte limit belongs to fetching). The others
    are asked as they come.
    """
    try:
        from jwm.robotstxt import googlebot
    except ImportError:
        return {}
    matcher = googlebot.RobotsMatcher()
    counts = {a.name: [0, 0] for a in found if not a.name.startswith("jwm")}
    for host, body in corpus:
        text = body.decode("utf-8", "replace")
        same_bytes = text.encode("utf-8")
        ours = robots_async.parse(same_bytes, policy="google-reference", max_bytes=None)
        others = {a.name: (a, a.parse(same_bytes)) for a in found if a.name in counts}
        for url in queries[host]:
            reference = matcher.OneAgentAllowedByRobots(text, AGENT, url)
            for name, (anchor, parsed) in others.items():
                if name == "robots_async":
                    verdict = ours.allowed(url, robots_token=AGENT)
                else:
                    verdict = anchor.allowed(parsed, url)
                counts[name][0] += verdict == reference
                counts[name][1] += 1
    return {name: (same, total) for name, (same, total) in counts.items()}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print the table."""
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("corpus", type=Path, help="directory of robots.txt files")
    args.add_argument("--repeat", type=int, default=5)
    args.add_argument("--queries", type=int, default=20, help="queries per file")
    args.add_argument("--seed", type=int, default=9309)
    opts = args.parse_args(argv)
    corpus = load_corpus(opts.corpus)
    rng = random.Random(opts.seed)
    queries = {h: sample_urls(h, b, opts.queries, rng) for h, b in corpus}
    size = sum(len(b) for _, b in corpus) / 1e6
    print(
        f"corpus: {len(corpus)} files, {size:.2f} MB, {opts.queries} queries/file, "
        f"best of {opts.repeat}; Python {sys.version.split()[0]}"
    )
    results = {a.name: measure(a, corpus, queries, opts.repeat) for a in anchors()}
    ours = results["robots_async"]
    metrics = list(TARGETS)
    print(f"{'':14}" + "".join(f"{m:>20}" for m in metrics))
    for name, figures in results.items():
        print(f"{name:14}" + "".join(f"{figures[m]:>20,.1f}" for m in metrics))
    for name, figures in results.items():
        if name == "robots_async":
            continue
        ratios = []
        for m in metrics:
            ratio = ours[m] / figures[m] if figures[m] else float("inf")
            ratios.append(f"{ratio:>19.2f}x")
        print(f"{'vs ' + name:14}" + "".join(ratios))
    print(
        "targets vs protego: "
        + ", ".join(f"{m} {'<=' if m == 'bytes/file' else '>='} {t}x" for m, t in TARGETS.items())
    )
    for name, (same, total) in agreement(corpus, queries, anchors()).items():
        label = f"{name} (google-reference policy)" if name == "robots_async" else name
        print(f"agreement with jwm: {label}: {same}/{total} = {100 * same / total:.3f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
