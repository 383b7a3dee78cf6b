"""Parse and match speed of two revisions of robots_async, paired in one process.

    python bench/bench_revisions.py BASE [HEAD] [--corpus tests/data/corpus]

Each revision's ``robots_async`` package is taken from git (``HEAD`` defaults to
the working tree) and imported under its own name, so both run in the same
process; batches of files are timed A,B,B,A then B,A,A,B, one ratio per round,
and the median and interquartile range of the ratios are printed (machines here
are noisy: sequential A-then-B timing swings a ratio by 2x). A ratio above 1 means
HEAD is faster. Used to show that a change costs nothing on the hot paths, e.g.
that files without ``Content-Usage`` lines parse no slower than before the rule
existed (``python bench/bench_revisions.py f36e894 4a10ee3``). "cached check" times
``await checker.allowed(url)`` on origins already cached (an in-memory fetcher), in a
shuffled order, one event loop for both revisions.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import io
import random
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

ROOT = Path(__file__).resolve().parent.parent
AGENT = "Googlebot"


def load_revision(revision: str | None, into: Path, name: str) -> Any:
    """Import ``robots_async`` as of ``revision`` (None: the working tree) as ``name``."""
    target = into / name
    if revision is None:
        source = ROOT / "robots_async"
        for path in source.rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                dest = target / path.relative_to(source)
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(path.read_bytes())
    else:
        archive = subprocess.run(
            ["git", "archive", "--format=tar", revision, "robots_async"],
            cwd=ROOT,
            check=True,
            capture_output=True,
        ).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            for member in tar.getmembers():
                if member.isfile():
                    data = tar.extractfile(member)
                    assert data is not None
                    dest = target / Path(member.name).relative_to("robots_async")
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    dest.write_bytes(data.read())
    return importlib.import_module(name)


def corpus(directory: Path) -> list[tuple[str, bytes]]:
    """(host, body) of every file in ``directory``."""
    return [(p.name, p.read_bytes()) for p in sorted(directory.iterdir()) if p.is_file()]


def queries(files: Sequence[tuple[str, bytes]], per_file: int, seed: int = 7) -> list[list[str]]:
    """URLs per file: paths from its own rules plus common ones."""
    rng = random.Random(seed)
    result = []
    for host, body in files:
        paths = ["/", "/index.html", "/search?q=x", "/a/b/c.html"]
        for line in body.decode("utf-8", "replace").splitlines():
            key, _, value = line.partition(":")
            value = value.split("#", 1)[0].strip()
            if key.strip().lower() in ("allow", "disallow") and value.startswith("/"):
                paths.append(value.replace("*", "x").rstrip("$"))
        result.append([f"https://{host}{rng.choice(paths)}" for _ in range(per_file)])
    return result


def paired(
    task_a: Callable[[int], object], task_b: Callable[[int], object], batches: int, rounds: int
) -> list[float]:
    """Per-round ratios time(A)/time(B), each round timing A,B,B,A or B,A,A,B."""
    ratios = []
    for round_no in range(rounds):
        spent = {"a": 0.0, "b": 0.0}
        order = ("a", "b", "b", "a") if round_no % 2 == 0 else ("b", "a", "a", "b")
        batch = round_no % batches
        for which in order:
            task = task_a if which == "a" else task_b
            _forget_shared()
            start = time.perf_counter()
            task(batch)
            spent[which] += time.perf_counter() - start
        ratios.append(spent["a"] / spent["b"])
    return ratios


def _forget_shared() -> None:
    """Drop the compiled buckets any loaded revision shares between files with the same
    rules, so that a batch timed again compiles again (revisions without it: no-op)."""
    for name in ("robots_async_base", "robots_async_head"):
        # robots_async/_compiled.py before the layout change, core/compiled.py after.
        for module in (f"{name}._compiled", f"{name}.core.compiled"):
            shared = sys.modules.get(module)
            if shared is not None:
                shared.forget_shared()


def summary(name: str, ratios: list[float]) -> str:
    """Median and interquartile range of the ratios, one line."""
    q1, median, q3 = statistics.quantiles(ratios, n=4)
    return f"{name:<9} HEAD/BASE {median:5.2f}x  (IQR {q1:.2f}-{q3:.2f}, {len(ratios)} rounds)"


def main(argv: Sequence[str] | None = None) -> int:
    """Print the paired parse, match and one-shot speed ratios of HEAD against BASE."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", help="git revision to compare against")
    parser.add_argument("head", nargs="?", help="git revision (default: the working tree)")
    parser.add_argument("--corpus", type=Path, default=ROOT / "tests" / "data" / "corpus")
    parser.add_argument("--rounds", type=int, default=24)
    parser.add_argument("--batch", type=int, default=8, help="files per batch")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        sys.path.insert(0, tmp)
        base = load_revision(args.base, Path(tmp), "robots_async_base")
        head = load_revision(args.head, Path(tmp), "robots_async_head")
        files = corpus(args.corpus)
        urls = queries(files, 20)
        batches = [
            (files[i : i + args.batch], urls[i : i + args.batch])
            for i in range(0, len(files), args.batch)
        ]
        parsed = {id(m): [[m.parse(b) for _, b in fs] for fs, _ in batches] for m in (base, head)}

        def parse_with(module: Any) -> Callable[[int], object]:
            def run(batch: int) -> object:
                return [module.parse(body) for _, body in batches[batch][0]]

            return run

        def match_with(module: Any) -> Callable[[int], object]:
            def run(batch: int) -> object:
                robots = parsed[id(module)][batch]
                return [
                    r.allowed(u, user_agent=AGENT)
                    for r, us in zip(robots, batches[batch][1], strict=True)
                    for u in us
                ]

            return run

        def one_shot_with(module: Any) -> Callable[[int], object]:
            def run(batch: int) -> object:
                out = []
                for (_, body), us in zip(*batches[batch], strict=True):
                    robots = module.parse(body)
                    out += [robots.allowed(u, user_agent=AGENT) for u in us]
                return out

            return run

        loop = asyncio.new_event_loop()
        checkers = {id(m): loop.run_until_complete(_warm_checker(m, files)) for m in (base, head)}

        def cached_check_with(module: Any) -> Callable[[int], object]:
            checker, urls = checkers[id(module)]
            per_batch = len(urls) // count

            async def ask(batch: list[str]) -> None:
                for url in batch:
                    await checker.allowed(url)

            def run(batch: int) -> object:
                return loop.run_until_complete(
                    ask(urls[batch * per_batch : (batch + 1) * per_batch])
                )

            return run

        count = len(batches)
        print(f"BASE {args.base}  HEAD {args.head or 'working tree'}  {len(files)} files")
        for name, make in (
            ("parse", parse_with),
            ("match", match_with),
            ("one-shot", one_shot_with),
            ("cached check", cached_check_with),
        ):
            # Warm both (imports, first-question indexes) before timing.
            for batch in range(count):
                make(base)(batch)
                make(head)(batch)
            print(summary(name, paired(make(base), make(head), count, args.rounds)))
        for checker, _ in checkers.values():
            loop.run_until_complete(checker.aclose())
        loop.close()
    return 0


async def _warm_checker(module: Any, files: Sequence[tuple[str, bytes]]) -> tuple[Any, list[str]]:
    """A RobotsChecker of ``module`` with one cached origin per corpus file (answered at
    once by an in-memory fetcher), and 20 URLs on each of those origins."""
    bodies = [body for _, body in files]

    class Instant:
        def __init__(self) -> None:
            self.n = 0

        async def fetch(self, url: str, *, keep_body: bool = False) -> Any:
            body = bodies[self.n % len(bodies)]
            self.n += 1
            return module.FetchOutcome(url, url, 200, robots=module.parse(body))

        async def aclose(self) -> None:
            """Nothing to release."""

    checker = module.RobotsChecker(
        "BenchBot/1.0", fetcher=Instant(), max_entries=len(files) * 2, max_memory=2**40
    )
    rng = random.Random(11)
    paths = ["/", "/a/b.html", "/search?q=x", "/wp-admin/x.php", "/private/p", "/cart"]
    urls = [
        f"https://h{i}.example{rng.choice(paths)}" for i in range(len(files)) for _ in range(20)
    ]
    for url in urls:
        await checker.allowed(url)
    rng.shuffle(urls)
    return checker, urls


if __name__ == "__main__":
    raise SystemExit(main())
