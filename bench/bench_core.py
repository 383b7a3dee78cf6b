"""Core benchmark: robots_async against protego, urllib.robotparser and Google's C++
matcher (jwm.robotstxt) on a directory of real robots.txt files, in one run.

    python bench/bench_core.py CORPUS_DIR [--rounds 24] [--anchors protego,jwm,urllib]
        [--agents one|many] [--compiled-python VENV/bin/python]

Sequential A-then-B timing on a shared machine swings a ratio by 2x between runs, so
every ratio here is paired: each round takes a batch of files and times it A,B,B,A
(alternating with B,A,A,B), giving one ratio per round; the table shows the median
and the interquartile range over the rounds, for wall time and for CPU time.
Metrics: parse (bodies to objects), match (20 queries per file on parsed, already
queried objects), one-shot (parse + 20 queries). ``--agents many`` asks each file's
queries for five crawler names in turn (an AI-crawler survey, a fleet of differently
named crawlers) instead of one, and then also times ours with five names against
ours with one (the same URLs): issue 32 asks the first to cost at most 1.1x the
second. Memory is measured in a fresh
process per backend with tracemalloc: bytes retained per file after parsing, and
after its 20 queries. Then: scaling of compile (rules), the agent index (groups)
and match (unrelated ``/*`` rules); the cached ``await checker.allowed()`` against a
bare ``RobotsTxt.allowed()`` at 10,000 origins; agreement with jwm.

Both builds: with ``--compiled-python`` (or ROBOTS_ASYNC_COMPILED_PYTHON), the
interpreter of a venv where a compiled wheel is installed (``ROBOTS_ASYNC_COMPILE=1
pip wheel .``), the timing and memory tables are measured again in that interpreter
(a child process, the same batches and queries, paired against protego there), and
its verdicts on every query are compared with this process's. Pure against compiled
is the quotient of their medians against protego (two processes: not paired).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import hashlib
import json
import os
import random
import statistics
import subprocess
import sys
import time
import tracemalloc
import urllib.robotparser
from pathlib import Path
from typing import TYPE_CHECKING, Any

import robots_async
from robots_async.core.compiled import forget_shared
from robots_async.fetch.wire import PLAIN_URL

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

AGENT = "Googlebot"
#: The names of ``--agents many``, asked in turn: query i of a file by name i % 5.
AGENTS = {"one": (AGENT,), "many": ("GPTBot", "ClaudeBot", "CCBot", AGENT, "Bingbot")}
#: The pure build's targets against protego, by --agents: issue 13's for one name,
#: issue 32's for five (memory: at most MEMORY_TARGET of protego's).
TARGETS = {"parse": 4.0, "match": 4.0, "one-shot": 3.0}
PURE_TARGETS = {"one": TARGETS, "many": {"parse": 4.0, "match": 4.0, "one-shot": 2.7}}
#: Issue 32's targets for the compiled build, by --agents.
COMPILED_TARGETS = {
    "one": {"parse": 5.0, "match": 5.5, "one-shot": 3.5},
    "many": {"parse": 5.0, "match": 5.5, "one-shot": 3.2},
}
MEMORY_TARGET = 0.5
#: Issue 32: ``--agents many`` costs at most this multiple of one name (one-shot).
NAMES_TARGET = 1.1
#: Runs per timed slot (A,B,B,A): the fastest counts.
INNER = 3


def load_corpus(directory: Path) -> list[tuple[str, bytes]]:
    """(host, body) for every file in ``directory``, sorted by name."""
    return [(p.name, p.read_bytes()) for p in sorted(directory.iterdir()) if p.is_file()]


def sample_urls(
    host: str, body: bytes, count: int, rng: random.Random, agents: Sequence[str] = (AGENT,)
) -> list[tuple[str, str]]:
    """(URL, crawler name) pairs that exercise the file: paths taken from its own
    rules plus common ones, the names of ``agents`` in turn."""
    paths = ["/", "/index.html", "/search?q=robots", "/wp-admin/admin-ajax.php", "/a/b/c.html"]
    for line in body.decode("utf-8", "replace").splitlines():
        key, _, value = line.partition(":")
        value = value.split("#", 1)[0].strip()
        if key.strip().lower() in ("allow", "disallow") and value.startswith("/"):
            path = value.replace("*", "x").rstrip("$")
            paths.extend((path, path + "extra/page?id=1"))
    picked = [rng.choice(paths) for _ in range(count)]
    return [(f"https://{host}{p}", agents[i % len(agents)]) for i, p in enumerate(picked)]


class Anchor:
    """One implementation under test: how to parse a body and ask a question."""

    def __init__(
        self,
        name: str,
        parse: Callable[[bytes], Any],
        allowed: Callable[[Any, str, str], bool],
    ) -> None:
        self.name = name
        self.parse = parse
        self.allowed = allowed


def _urllib_parse(body: bytes) -> urllib.robotparser.RobotFileParser:
    parser = urllib.robotparser.RobotFileParser()
    parser.parse(body.decode("utf-8", "replace").splitlines())
    return parser


def _ours() -> Anchor:
    return Anchor("robots_async", robots_async.parse, lambda r, u, a: r.allowed(u, a))


def _ours_one_name() -> Anchor:
    """Ours asking every query by AGENT: against _ours() on ``--agents many`` queries,
    the same URLs and files, so the quotient is the cost of asking five names."""
    return Anchor("robots_async, one name", robots_async.parse, lambda r, u, a: r.allowed(u, AGENT))


def _protego() -> Anchor:
    from protego import Protego

    return Anchor(
        "protego",
        lambda b: Protego.parse(b.decode("utf-8", "replace")),
        lambda r, u, a: r.can_fetch(u, a),
    )


def _jwm() -> Anchor:
    from jwm.robotstxt import googlebot

    def jwm_parse(body: bytes) -> tuple[Any, str]:
        # The C++ matcher parses the body on every query; "parse" only decodes.
        return googlebot.RobotsMatcher(), body.decode("utf-8", "replace")

    return Anchor("jwm", jwm_parse, lambda r, u, a: r[0].OneAgentAllowedByRobots(r[1], a, u))


def _urllib() -> Anchor:
    return Anchor("urllib", _urllib_parse, lambda r, u, a: r.can_fetch(a, u))


BACKENDS: dict[str, Callable[[], Anchor]] = {
    "robots_async": _ours,
    "protego": _protego,
    "jwm": _jwm,
    "urllib": _urllib,
}

# --- paired timing ---------------------------------------------------------------

Query = tuple[str, str]
Batch = list[tuple[bytes, list[Query]]]


def _runners(anchor: Anchor, batch: Batch) -> dict[str, Callable[[], object]]:
    """The three timed jobs of one backend on one batch (objects pre-parsed, warm)."""
    parse, allowed = anchor.parse, anchor.allowed
    bodies = [body for body, _ in batch]
    parsed = [(parse(body), urls) for body, urls in batch]
    for obj, urls in parsed:  # warm per-object state: "match" is the steady state
        for url, agent in urls:
            allowed(obj, url, agent)

    def run_parse() -> None:
        for body in bodies:
            parse(body)

    def run_match() -> None:
        for obj, urls in parsed:
            for url, agent in urls:
                allowed(obj, url, agent)

    def run_one_shot() -> None:
        for body, urls in batch:
            obj = parse(body)
            for url, agent in urls:
                allowed(obj, url, agent)

    return {"parse": run_parse, "match": run_match, "one-shot": run_one_shot}


def _timed(run: Callable[[], object], inner: int = 1) -> tuple[float, float]:
    """(wall, CPU) seconds of the fastest of ``inner`` runs, the collector off as for
    every backend (the minimum drops the spikes of a shared machine)."""
    best = (float("inf"), float("inf"))
    for _ in range(inner):
        # Each run compiles its files afresh: buckets shared between files with the
        # same rules are dropped, so a repeated batch is not answered from them.
        forget_shared()
        gc.collect()
        gc.disable()
        wall, cpu = time.perf_counter(), time.process_time()
        run()
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        gc.enable()
        best = (min(best[0], wall), min(best[1], cpu))
    return best


def paired_ratios(
    ours: Anchor,
    other: Anchor,
    batches: list[Batch],
    rounds: int,
    metrics: Sequence[str] = tuple(TARGETS),
) -> dict[str, tuple[list[float], list[float]]]:
    """Per metric: (wall ratios, CPU ratios), one per round; > 1 means ours is faster."""
    ratios: dict[str, tuple[list[float], list[float]]] = {m: ([], []) for m in metrics}
    for r in range(rounds):
        batch = batches[r % len(batches)]
        jobs_a, jobs_b = _runners(ours, batch), _runners(other, batch)
        for metric in metrics:
            a, b = jobs_a[metric], jobs_b[metric]
            order = (a, b, b, a) if r % 2 == 0 else (b, a, a, b)
            times = [_timed(job, INNER) for job in order]
            mine = [t for job, t in zip(order, times, strict=True) if job is a]
            theirs = [t for job, t in zip(order, times, strict=True) if job is b]
            for i in (0, 1):
                ours_s = mine[0][i] + mine[1][i]
                theirs_s = theirs[0][i] + theirs[1][i]
                ratios[metric][i].append(theirs_s / ours_s if ours_s else float("inf"))
    return ratios


def _batches(
    files: list[tuple[str, bytes]], queries: dict[str, list[Query]], size: int
) -> list[Batch]:
    """``files`` in batches of ``size``, each file with its queries."""
    return [
        [(body, queries[host]) for host, body in files[start : start + size]]
        for start in range(0, len(files), size)
    ]


def print_by_size(
    corpus: list[tuple[str, bytes]], queries: dict[str, list[Query]], opts: argparse.Namespace
) -> None:
    """One-shot against protego per quarter of the corpus by file size: where the
    per-round ratio comes from (a fixed cost per file weighs most on small files),
    with each side's one-shot split into its phases."""
    by_size = sorted(corpus, key=lambda item: len(item[1]))
    quarter = len(by_size) // 4
    print("\none-shot vs protego by file size (CPU, median (IQR) of per-round ratios)")
    splits = []
    for part in range(4):
        files = by_size[part * quarter : (part + 1) * quarter if part < 3 else None]
        sizes = f"{len(files[0][1]):,}-{len(files[-1][1]):,} B"
        random.Random(opts.seed).shuffle(files)
        batches = _batches(files, queries, opts.batch)
        rounds = max(4, opts.rounds // 2)
        cpu = paired_ratios(_ours(), _protego(), batches, rounds, ("one-shot",))["one-shot"][1]
        print(f"  {sizes:>18}  {_summary(cpu)}")
        splits.append((sizes, _phases([item for b in batches for item in b], rounds)))
    print("one-shot split into phases (CPU us per file, fastest of interleaved runs)")
    for sizes, (ours, theirs) in splits:
        parse, first, rest = ours
        print(
            f"  {sizes:>18}  robots_async {parse + first + rest:6.1f}: parse {parse:5.1f}, "
            f"first question {first:5.1f}, the other {opts.queries - 1} {rest:5.1f}"
            f" | protego {theirs[0] + theirs[1]:6.1f}: parse {theirs[0]:5.1f},"
            f" {opts.queries} questions {theirs[1]:5.1f}"
        )


def _phases(batch: Batch, rounds: int) -> tuple[tuple[float, float, float], tuple[float, float]]:
    """CPU microseconds per file: ours (parse, first question: agent selection and
    compile included, the other questions) and protego's (parse, questions). Loops
    that stop after each phase are timed in turn, fastest of ``rounds`` each; a
    phase is the difference of two loops (no timer call per file to distort it)."""
    ours = _ours()
    mine, theirs = _runners(ours, batch), _runners(_protego(), batch)

    def up_to_first_question() -> None:
        for body, urls in batch:
            obj = ours.parse(body)
            for url, agent in urls[:1]:
                ours.allowed(obj, url, agent)

    loops = [mine["parse"], up_to_first_question, mine["one-shot"]]
    loops += [theirs["parse"], theirs["one-shot"]]
    best = [float("inf")] * len(loops)
    for _ in range(rounds):
        for i, run in enumerate(loops):
            best[i] = min(best[i], _timed(run)[1])
    parsed, first, all_of_them, their_parse, their_all = (t / len(batch) * 1e6 for t in best)
    return (parsed, first - parsed, all_of_them - first), (their_parse, their_all - their_parse)


def _summary(values: list[float]) -> str:
    q1, median, q3 = statistics.quantiles(values, n=4) if len(values) > 1 else values * 3
    return f"{median:5.2f}x ({q1:.2f}-{q3:.2f})"


def print_names(batches: list[Batch], rounds: int) -> None:
    """Issue 32: five names per file cost what one does, within NAMES_TARGET."""
    ratios = paired_ratios(_ours(), _ours_one_name(), batches, rounds, ("match", "one-shot"))
    print("\nfive names / one name, ours (same URLs; time ratio, < 1.10 = within 10%)")
    for metric, (_, cpu) in ratios.items():
        print(f"{metric:10} {_summary([1 / r for r in cpu]):>22}  target <= {NAMES_TARGET:g}x")


def print_paired(
    name: str,
    ratios: dict[str, tuple[list[float], list[float]]],
    targets: dict[str, float] | None = None,
    build: str = "",
) -> None:
    """One table row per metric: median (IQR) of wall and CPU ratios."""
    targets = targets if targets is not None else (TARGETS if name == "protego" else {})
    print(f"\nrobots_async{build} vs {name}: median (IQR) of per-round ratios, > 1 = faster")
    print(f"{'metric':10} {'wall':>22} {'CPU':>22}  target")
    for metric, (wall, cpu) in ratios.items():
        target = f">= {targets[metric]:g}x" if metric in targets else ""
        print(f"{metric:10} {_summary(wall):>22} {_summary(cpu):>22}  {target}")


# --- the compiled build, in its own interpreter -----------------------------------


def _child_env() -> dict[str, str]:
    """The compiled build's environment: no PYTHONPATH, so that its interpreter imports
    the package installed in its venv, not this source tree."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    return env


def verdict_digest(corpus: list[tuple[str, bytes]], queries: dict[str, list[Query]]) -> str:
    """A digest of every verdict on the corpus's queries (builds agree iff equal)."""
    digest = hashlib.sha256()
    for host, body in corpus:
        robots = robots_async.parse(body)
        digest.update(bytes(robots.allowed(url, agent) for url, agent in queries[host]))
    return digest.hexdigest()


def timing_child(batches: list[Batch], rounds: int, digest: str) -> None:
    """Print JSON: this build's paired ratios against protego and its verdict digest."""
    if not robots_async.COMPILED:
        raise SystemExit(f"{sys.executable}: robots_async here is not the compiled build")
    ratios = paired_ratios(_ours(), _protego(), batches, rounds)
    print(json.dumps({"ratios": ratios, "verdicts": digest}))


def compiled_timing(
    python: str, opts: argparse.Namespace
) -> tuple[dict[str, tuple[list[float], list[float]]], str]:
    """Run :func:`timing_child` in ``python`` (a venv with the compiled wheel)."""
    args = [python, __file__, str(opts.corpus), "--timing-child", "--rounds", str(opts.rounds)]
    args += ["--batch", str(opts.batch), "--queries", str(opts.queries)]
    args += ["--seed", str(opts.seed), "--agents", opts.agents]
    out = subprocess.run(args, check=True, capture_output=True, text=True, env=_child_env())
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return result["ratios"], result["verdicts"]


def print_builds(
    pure: dict[str, tuple[list[float], list[float]]],
    compiled: dict[str, tuple[list[float], list[float]]],
) -> None:
    """The compiled build's speed as a multiple of the pure one's (CPU, medians)."""
    print("compiled / pure speed (quotient of the CPU medians against protego)")
    for metric, (_, cpu) in compiled.items():
        quotient = statistics.median(cpu) / statistics.median(pure[metric][1])
        print(f"  {metric:10} {quotient:.2f}x")


# --- memory, in a fresh process per backend --------------------------------------


def memory_child(
    backend: str, corpus: list[tuple[str, bytes]], count: int, seed: int, agents: str = "one"
) -> None:
    """Print JSON: mean bytes retained per file after parse, and after its queries."""
    anchor = BACKENDS[backend]()
    rng = random.Random(seed)
    queries = [sample_urls(h, b, count, rng, AGENTS[agents]) for h, b in corpus]
    bodies = [b for _, b in corpus]
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kept = [anchor.parse(b) for b in bodies]
    gc.collect()
    parsed = tracemalloc.get_traced_memory()[0]
    for obj, urls in zip(kept, queries, strict=True):
        for url, agent in urls:
            anchor.allowed(obj, url, agent)
    gc.collect()
    queried = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    n = len(bodies)
    print(json.dumps({"parse": (parsed - before) / n, "queries": (queried - before) / n}))


def memory(
    corpus_dir: Path,
    backend: str,
    count: int,
    seed: int,
    agents: str = "one",
    *,
    python: str = sys.executable,
) -> dict[str, float]:
    """Run :func:`memory_child` in a new interpreter (no earlier allocations around)."""
    args = [python, __file__, str(corpus_dir), "--memory-of", backend]
    args += ["--queries", str(count), "--seed", str(seed), "--agents", agents]
    env = _child_env() if python != sys.executable else None
    out = subprocess.run(args, check=True, capture_output=True, text=True, env=env).stdout
    result: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return result


def print_memory(
    corpus_dir: Path,
    names: list[str],
    count: int,
    seed: int,
    agents: str = "one",
    *,
    compiled: str | None = None,
) -> None:
    """Retained bytes per file for each backend, and ours as a fraction of theirs."""
    figures = {name: memory(corpus_dir, name, count, seed, agents) for name in names}
    if compiled:
        figures["compiled"] = memory(
            corpus_dir, "robots_async", count, seed, agents, python=compiled
        )
    ours = figures["robots_async"]
    print(f"\nretained bytes per file (tracemalloc, fresh process per backend; {count} queries)")
    print(f"{'backend':14} {'after parse':>12} {'after queries':>14}")
    for name, fig in figures.items():
        line = f"{name:14} {fig['parse']:12,.0f} {fig['queries']:14,.0f}"
        if name not in ("robots_async", "compiled"):
            line += f"   ours/theirs: {ours['parse'] / fig['parse']:.2f}x, "
            line += f"{ours['queries'] / fig['queries']:.2f}x"
            if name == "protego":
                line += f" (target after queries <= {MEMORY_TARGET}x)"
        print(line)
    if "compiled" in figures and "protego" in figures:
        kept = figures["compiled"]["queries"] / figures["protego"]["queries"]
        print(f"compiled/protego after queries: {kept:.2f}x")


# --- scaling --------------------------------------------------------------------


def _rules_file(n: int) -> bytes:
    """``n`` rules in one group: mostly prefixes, 1 in 8 wildcard, 1 in 16 anchored."""
    lines = ["User-agent: *"]
    for i in range(n):
        if i % 8 == 0:
            lines.append(f"Disallow: /w{i}/*/x{i}.html")
        elif i % 16 == 1:
            lines.append(f"Allow: /e{i}/page$")
        else:
            lines.append(f"Disallow: /p{i % 997}/d{i}/")
    return "\n".join(lines).encode()


def _groups_file(n: int) -> bytes:
    lines = []
    for i in range(n):
        lines += [f"User-agent: bot{i}", f"Disallow: /g{i}/"]
    lines += ["User-agent: *", "Disallow: /all/"]
    return "\n".join(lines).encode()


def _globs_file(n: int) -> bytes:
    """``n`` wildcard rules under ``/`` that never match the queried paths."""
    lines = ["User-agent: *"] + [f"Disallow: /*q{i}z" for i in range(n)]
    return "\n".join(lines).encode()


def _first_question(body: bytes) -> Callable[[], float]:
    """CPU seconds of the first question on a fresh parse (index and compile)."""

    def run() -> float:
        forget_shared()
        robots = robots_async.parse(body, max_bytes=None)
        start = time.process_time()
        robots.allowed("https://x.test/zzz", user_agent=AGENT)
        return time.process_time() - start

    return run


def _reference_pass(body: bytes) -> Callable[[], float]:
    """CPU seconds of a plainly linear pass over the same file (decode, split, a dict,
    a sort): what the machine's caches make of "linear" at each size."""

    def run() -> float:
        start = time.process_time()
        sorted(dict.fromkeys(body.decode().split("\n")))
        return time.process_time() - start

    return run


def _scaling_row(title: str, sizes: list[int], make: Callable[[int], Callable[[], float]]) -> None:
    previous = None
    cells = []
    for n in sizes:
        run = make(n)
        gc.collect()
        # The fastest of enough runs to fill ~0.3 s (3 to 50): a 0.2 ms run timed
        # 3 times made the 1,000 -> 10,000 groups step read 1.43 in one run, 0.86-1.04
        # in others.
        seconds = run()
        for _ in range(max(2, min(49, int(0.3 / max(seconds, 1e-6))))):
            seconds = min(seconds, run())
        step = "" if previous is None else f", step {seconds / previous / 10:.2f}"
        cells.append(f"{n:>7,}: {seconds * 1e3:8.2f} ms{step}")
        previous = seconds
    print(f"{title}\n  " + "\n  ".join(cells))


def print_scaling() -> None:
    """Time of the first question as the input grows tenfold (1.0 = linear)."""
    print("\nscaling (CPU time; step = t(10n) / (10 t(n)), 1.0 = linear)")
    _scaling_row(
        "first question (agent index + compile), rules in one group",
        [10, 100, 1_000, 10_000, 100_000],
        lambda n: _first_question(_rules_file(n)),
    )
    _scaling_row(
        "reference: decode, split, dict and sort of the same files (no robots_async)",
        [10, 100, 1_000, 10_000, 100_000],
        lambda n: _reference_pass(_rules_file(n)),
    )
    _scaling_row(
        "first question, groups with one rule each",
        [1, 10, 100, 1_000, 10_000],
        lambda n: _first_question(_groups_file(n)),
    )
    previous = None
    cells = []
    urls = [f"https://x.test/page/{i}.html" for i in range(500)]
    for n in [10, 100, 1_000, 10_000]:
        robots = robots_async.parse(_globs_file(n), max_bytes=None)
        robots.allowed(urls[0], user_agent=AGENT)
        seconds = min(
            _timed(lambda r=robots: [r.allowed(u, user_agent=AGENT) for u in urls])[1]
            for _ in range(5)
        ) / len(urls)
        ratio = "" if previous is None else f" ({seconds / previous:.2f}x the previous)"
        cells.append(f"{n:>7,}: {seconds * 1e6:6.2f} us/query{ratio}")
        previous = seconds
    print("match per query vs unrelated '/*' rules (flat = independent)\n  " + "\n  ".join(cells))


# --- the checker's cached path --------------------------------------------------


class _Instant:
    """A fetcher answering at once with one corpus file per origin (no network)."""

    def __init__(self, bodies: list[bytes]) -> None:
        self._bodies = bodies
        self._n = 0

    async def fetch(self, url: str, *, keep_body: bool = False) -> Any:
        body = self._bodies[self._n % len(self._bodies)]
        self._n += 1
        return robots_async.FetchOutcome(url, url, 200, robots=robots_async.parse(body))

    async def aclose(self) -> None:
        """Nothing to release."""


async def _checker_ratios(corpus: list[tuple[str, bytes]], origins: int, rounds: int) -> None:
    bodies = [b for _, b in corpus]
    rng = random.Random(7)
    checker = robots_async.RobotsChecker(
        "BenchBot/1.0", fetcher=_Instant(bodies), max_entries=origins * 2, max_memory=2**40
    )
    paths = ["/", "/a/b.html", "/search?q=x", "/wp-admin/x.php", "/private/p"]
    urls = [f"https://h{i}.example{rng.choice(paths)}" for i in range(origins)]
    for url in urls:
        await checker.allowed(url)
    pairs = [((await checker.robots(u)).robots, u) for u in urls]
    # Also in a random order (bare matches too): a crawl does not ask its origins in
    # the order they were cached, and memory locality differs.
    shuffled = pairs[:]
    rng.shuffle(shuffled)
    ua = "BenchBot/1.0 (+https://example.org/bot)"

    async def via_checker(batch: list[str], agent: str | None) -> None:
        if agent is None:
            for url in batch:
                await checker.allowed(url)
        else:
            for url in batch:
                await checker.allowed(url, user_agent=agent)

    def bare(batch: list[tuple[Any, str]]) -> None:
        for robots, url in batch:
            robots.allowed(url, robots_token="BenchBot")

    verdict = checker.cache.hot_rules.verdict

    async def via_index(batch: list[str], agent: str | None) -> None:
        # The cache's index alone (as-sent test, lookup, match): what the check
        # costs without the coroutine and the checker's loop test.
        for url in batch:
            verdict(url, "BenchBot")

    async def wire_test(batch: list[str], agent: str | None) -> None:
        # The test that the URL is sent as written, alone (one regex: PLAIN_URL);
        # the floor of what judging the URL on the wire adds to a bare match.
        for url in batch:
            PLAIN_URL(url)

    jobs = {
        "checker": (pairs, urls, None),
        "checker, user_agent=": (pairs, urls, ua),
        "checker, random order": (shuffled, [url for _, url in shuffled], None),
        "(the index alone)": (pairs, urls, None),
        "(the wire-URL test alone)": (pairs, urls, None),
    }
    results: dict[str, list[float]] = {name: [] for name in jobs}
    for r in range(rounds):
        for name, (batch, batch_urls, agent) in jobs.items():
            seq = ("a", "b", "b", "a") if r % 2 == 0 else ("b", "a", "a", "b")
            spent = {"a": 0.0, "b": 0.0}
            for which in seq:
                gc.collect()
                start = time.process_time()
                if which == "a" and name == "(the index alone)":
                    await via_index(batch_urls, agent)
                elif which == "a" and name == "(the wire-URL test alone)":
                    await wire_test(batch_urls, agent)
                elif which == "a":
                    await via_checker(batch_urls, agent)
                else:
                    bare(batch)
                spent[which] += time.process_time() - start
            results[name].append(spent["a"] / spent["b"])
    print(f"\ncached checker vs bare RobotsTxt.allowed, {origins:,} origins (CPU; target <= 1.4x)")
    for name, values in results.items():
        prefix = "" if name.startswith("(") else "await "
        print(f"  {prefix + name:32} {_summary(values)} a bare match")
    await checker.aclose()


# --- agreement ------------------------------------------------------------------


def agreement(corpus: list[tuple[str, bytes]], queries: dict[str, list[Query]]) -> None:
    """Verdicts of robots_async (google-reference policy) against jwm (Google's C++)."""
    try:
        from jwm.robotstxt import googlebot
    except ImportError:
        print("jwm.robotstxt not installed: agreement not measured")
        return
    matcher = googlebot.RobotsMatcher()
    same = total = 0
    for host, body in corpus:
        text = body.decode("utf-8", "replace")
        ours = robots_async.parse(text.encode(), policy="google-reference", max_bytes=None)
        for url, agent in queries[host]:
            reference = matcher.OneAgentAllowedByRobots(text, agent, url)
            same += ours.allowed(url, robots_token=agent) == reference
            total += 1
    print(
        f"\nagreement with jwm (google-reference policy): {same}/{total} "
        f"= {100 * same / total:.3f}%"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print every table."""
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("corpus", type=Path, help="directory of robots.txt files")
    args.add_argument("--rounds", type=int, default=24)
    args.add_argument("--batch", type=int, default=100, help="files per round")
    args.add_argument("--queries", type=int, default=20, help="queries per file")
    args.add_argument("--anchors", default="protego", help="comma-separated: protego,jwm,urllib")
    args.add_argument("--seed", type=int, default=9309)
    args.add_argument(
        "--agents", choices=tuple(AGENTS), default="one", help="crawler names per file: 1 or 5"
    )
    args.add_argument(
        "--skip",
        default="",
        help="comma-separated: timing,by-size,names,memory,scaling,checker,agreement",
    )
    args.add_argument(
        "--compiled-python",
        default=os.environ.get("ROBOTS_ASYNC_COMPILED_PYTHON", ""),
        help="the interpreter of a venv with the compiled build: measure it too",
    )
    args.add_argument("--memory-of", help=argparse.SUPPRESS)
    args.add_argument("--timing-child", action="store_true", help=argparse.SUPPRESS)
    opts = args.parse_args(argv)
    corpus = load_corpus(opts.corpus)
    if opts.memory_of:
        memory_child(opts.memory_of, corpus, opts.queries, opts.seed, opts.agents)
        return 0
    skip = set(opts.skip.split(",")) - {""}
    names = [n for n in opts.anchors.split(",") if n]
    rng = random.Random(opts.seed)
    queries = {h: sample_urls(h, b, opts.queries, rng, AGENTS[opts.agents]) for h, b in corpus}
    size = sum(len(b) for _, b in corpus) / 1e6
    print(
        f"corpus: {len(corpus)} files, {size:.2f} MB, {opts.queries} queries/file "
        f"by {len(AGENTS[opts.agents])} crawler name(s); "
        f"{opts.rounds} rounds of {opts.batch} files; Python {sys.version.split()[0]}"
    )
    files = corpus[:]
    random.Random(opts.seed).shuffle(files)
    batches = _batches(files, queries, opts.batch)
    if opts.timing_child:
        timing_child(batches, opts.rounds, verdict_digest(corpus, queries))
        return 0
    build = " (pure)" if opts.compiled_python else ""
    if "timing" not in skip:
        for name in names:
            ratios = paired_ratios(_ours(), BACKENDS[name](), batches, opts.rounds)
            targets = PURE_TARGETS[opts.agents] if name == "protego" else {}
            print_paired(name, ratios, targets, build=build)
            if name == "protego" and opts.compiled_python:
                compiled, digest = compiled_timing(opts.compiled_python, opts)
                print_paired(name, compiled, COMPILED_TARGETS[opts.agents], build=" (compiled)")
                print_builds(ratios, compiled)
                same = digest == verdict_digest(corpus, queries)
                print(
                    f"verdicts, pure and compiled, on every query: {'same' if same else 'DIFFER'}"
                )
        if "protego" in names and "by-size" not in skip:
            print_by_size(corpus, queries, opts)
        if opts.agents == "many" and "names" not in skip:
            print_names(batches, opts.rounds)
    if "memory" not in skip:
        print_memory(
            opts.corpus,
            ["robots_async", *names],
            opts.queries,
            opts.seed,
            opts.agents,
            compiled=opts.compiled_python or None,
        )
    if "scaling" not in skip:
        print_scaling()
    if "checker" not in skip:
        asyncio.run(_checker_ratios(corpus, 10_000, 12))
    if "agreement" not in skip:
        agreement(corpus, queries)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
