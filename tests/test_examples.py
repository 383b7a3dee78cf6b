"""Every example runs offline, as its first lines say (local servers only)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .servers import start_http_server

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def _run(*args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.py")), ids=lambda p: p.name)
def test_examples_say_how_to_run_offline(path: Path) -> None:
    """The docstring of each example says how to run it offline."""
    head = path.read_text(encoding="utf-8")[:800]
    assert "offline" in head.lower()
    assert f"python examples/{path.name}" in head


def test_demo_prints_a_human_summary() -> None:
    """The demo crawls its four local sites and ends with a summary, not a repr."""
    result = _run("examples/demo.py")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "summary:" in out
    assert "CheckerStats(" not in out
    summary = out[out.index("summary:") :]
    # The shop's /cart is blocked by its rule; the 503 site is blocked as unreachable.
    assert "Disallow: /cart" in summary
    assert "unreachable" in summary
    # One robots.txt request per origin (the redirecting one: one per hop).
    tail = out[out.index("robots.txt requests per origin") :].splitlines()[1:]
    counts = {" ".join(line.split()[:-1]): line.split()[-1] for line in tail if line.strip()}
    assert counts
    assert set(counts.values()) == {"1"}


def test_async_crawler_runs_offline() -> None:
    """async_crawler.py against examples/ served on 127.0.0.1, as its docstring says."""
    server, port = start_http_server(
        [sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1"], EXAMPLES
    )
    with server:  # (closes its output pipe and waits for it)
        try:
            result = _run(
                "examples/async_crawler.py", f"http://127.0.0.1:{port}/", "--max-pages", "3"
            )
        finally:
            server.terminate()
    assert result.returncode == 0, result.stderr
    assert f"200      http://127.0.0.1:{port}/" in result.stdout
    assert "fetched 3" in result.stdout
