"""The types catch bad configuration before it runs: mypy --strict rejects a misspelled
policy name, preset name or preset keyword (issue 10 §1)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import robots_async as ra

pytest.importorskip("mypy")

ROOT = Path(ra.__file__).resolve().parents[1]

# Each line ending in "# E: <code>" must be reported with that error code, on that
# line; every other line must pass.
SNIPPET = """\
import robots_async as ra

ra.parse(b"", policy="googel")  # E: arg-type
ra.RobotsParser("Google")  # E: arg-type
ra.RobotsChecker("Bot/1.0", policy="rfc-9309")  # E: arg-type
ra.FetchPolicy.rfc9309(totl_timeout=5.0)  # E: call-arg
ra.FetchPolicy.googlebot(forbidden="deny")  # E: arg-type
ra.FetchPolicy.yandex(total_timeout="5")  # E: arg-type
ra.FetchPolicy.legacy_allow_on_error(max_hop=3)  # E: call-arg
ra.FetchPolicy(forbidden="deny")  # E: arg-type
ra.FetchPolicy.preset("googelbot")  # E: arg-type
ra.parse(b"", max_warnings="100")  # E: arg-type

name: ra.PolicyName = "first-match"
ra.parse(b"", policy=name)
ra.parse(b"", policy=ra.GOOGLE_REFERENCE)
ra.RobotsParser("rfc9309")
ra.FetchPolicy.yandex(max_bytes=None, total_timeout=5)
ra.FetchPolicy.googlebot(forbidden="disallow", outage_hold=None)
preset: ra.FetchPolicyName = "legacy-allow-on-error"
ra.FetchPolicy.preset(preset, ttl=60.0)
"""


def test_mypy_rejects_misspelled_policy_names_and_keywords(tmp_path: Path) -> None:
    """mypy --strict (the project's settings) flags exactly the bad lines."""
    if not (ROOT / "pyproject.toml").is_file():
        pytest.skip("needs the source tree (mypy reads the package from it)")
    snippet = tmp_path / "config_snippet.py"
    snippet.write_text(SNIPPET, encoding="utf-8")
    # Run from the source tree: mypy checks the package under test, with its cache
    # (warm after `mypy robots_async`: ~0.3 s; cold: ~5 s).
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "pyproject.toml", str(snippet)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=100,
        check=False,
    )
    reported = {
        (int(m["line"]), m["code"])
        for m in re.finditer(
            r"config_snippet\.py:(?P<line>\d+): error: .*\[(?P<code>[a-z-]+)\]$",
            result.stdout,
            re.MULTILINE,
        )
    }
    expected = {
        (number, line.rsplit("# E: ", 1)[1])
        for number, line in enumerate(SNIPPET.splitlines(), start=1)
        if "# E: " in line
    }
    assert len(expected) == 10
    assert reported == expected, result.stdout + result.stderr
