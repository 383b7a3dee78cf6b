"""The README and the documentation site say only what is true of the code."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import itertools
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import robots_async
from robots_async import cli

if TYPE_CHECKING:
    from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
_PAGES = sorted(DOCS.rglob("*.md"))


def _generator() -> ModuleType:
    path = DOCS / "gen_configuration.py"
    spec = importlib.util.spec_from_file_location("gen_configuration", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_configuration", module)
    spec.loader.exec_module(module)
    return module


def _texts() -> dict[str, str]:
    texts = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in _PAGES}
    texts["README.md"] = README.read_text(encoding="utf-8")
    return texts


def test_configuration_reference_is_current() -> None:
    """docs/configuration.md is what gen_configuration.py renders from the code now."""
    expected = _generator().render()
    assert (DOCS / "configuration.md").read_text(encoding="utf-8") == expected, (
        "docs/configuration.md is stale: run python docs/gen_configuration.py"
    )


def test_configuration_reference_covers_every_option() -> None:
    """Every FetchPolicy field, RobotsChecker argument and Scrapy setting has a row."""
    import dataclasses
    import inspect

    from robots_async.contrib import scrapy as adapter

    page = (DOCS / "configuration.md").read_text(encoding="utf-8")
    names = [f.name for f in dataclasses.fields(robots_async.FetchPolicy)]
    names += [
        name
        for name in inspect.signature(robots_async.RobotsChecker.__init__).parameters
        if name != "self"
    ]
    names += [setting.name for setting in adapter.SETTINGS]
    missing = [name for name in names if f"><code>{name}</code></a> |" not in page]
    assert not missing, f"not in docs/configuration.md: {missing}"
    generator = _generator()
    rows = generator.checker_rows() + generator.fetch_policy_rows() + generator.scrapy_rows()
    undocumented = [row[0] for row in rows if not row[3]]
    assert not undocumented, f"options without a meaning: {undocumented}"


def test_api_reference_lists_every_public_name() -> None:
    """docs/api.md renders (or names) everything in robots_async.__all__."""
    page = (DOCS / "api.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"robots_async\.(\w+)", page)) | set(re.findall(r"`(\w+)`", page))
    public = {name for name in robots_async.__all__ if not name.startswith("_")}
    assert public - documented == set()


def test_contrib_classes_in_api_reference() -> None:
    """The adapters' public classes are in the API reference too."""
    page = (DOCS / "api.md").read_text(encoding="utf-8")
    for module in ("aiohttp", "scrapy", "redis"):
        adapter = importlib.import_module(f"robots_async.contrib.{module}")
        for name in adapter.__all__:
            assert f"robots_async.contrib.{module}.{name}" in page


def _commands() -> dict[str, argparse.ArgumentParser]:
    """The subcommands of the command line, by name."""
    for action in cli.build_parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("the command line has no subcommands")


def _cli_options() -> set[str]:
    """Every --option of the command line and of its subcommands."""
    parsers = [cli.build_parser(), *_commands().values()]
    return {o for parser in parsers for action in parser._actions for o in action.option_strings}


@pytest.mark.parametrize("name", ["README.md", *[str(p.relative_to(ROOT)) for p in _PAGES]])
def test_cli_flags_named_in_docs_exist(name: str) -> None:
    """Every `robots-async ... --flag` in the README and the docs is a real option."""
    text = _texts()[name]
    options = _cli_options()
    commands = _commands()
    for line in re.findall(r"^robots-async .*$", text, flags=re.MULTILINE):
        line = line.split("#", 1)[0]
        words = line.split()
        assert len(words) < 2 or words[1].startswith("-") or words[1] in commands, line
        for flag in re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", line):
            assert flag in options, f"{name}: {flag} in {line!r} is not a CLI option"


@pytest.mark.parametrize("name", ["README.md", *[str(p.relative_to(ROOT)) for p in _PAGES]])
def test_scrapy_settings_named_in_docs_exist(name: str) -> None:
    """Every ROBOTSASYNC_* setting the README or the docs name is one the middleware reads."""
    from robots_async.contrib import scrapy as adapter

    known = {setting.name for setting in adapter.SETTINGS}
    named = set(re.findall(r"ROBOTSASYNC_[A-Z_]+[A-Z]", _texts()[name]))
    assert named <= known, f"{name}: unknown settings {sorted(named - known)}"


@pytest.mark.parametrize("name", ["README.md", *[str(p.relative_to(ROOT)) for p in _PAGES]])
def test_public_names_in_docs_exist(name: str) -> None:
    """`robots_async.X` and `robots_async.contrib.m.X` named in prose exist."""
    text = _texts()[name]
    for dotted in set(re.findall(r"(?<![/\w])robots_async(?:\.\w+)+", text)):
        parts = dotted.split(".")
        target: object = robots_async
        module = "robots_async"
        for part in parts[1:]:
            if part == "contrib" or (module == "robots_async.contrib"):
                module = f"{module}.{part}"
                target = importlib.import_module(module)
                continue
            assert hasattr(target, part), f"{name}: {dotted} does not exist"
            target = getattr(target, part)


def test_no_path_outside_the_repository() -> None:
    """The README, docs, docstrings, examples and bench scripts never send a reader to ../."""
    sources = [README, *_PAGES]
    for folder in ("robots_async", "bench", "examples"):
        sources += sorted((ROOT / folder).rglob("*.py"))
    # A relative path that climbs ("../x"), not a URL path example ("/x/../private").
    climbing = re.compile(r"(?<![\w/%.])(?:\.\./)+[\w.-]*")
    offenders = []
    for path in sources:
        # Links between doc pages are relative to the page; anything else to the root.
        base = path.parent if path.suffix == ".md" and DOCS in path.parents else ROOT
        offenders += [
            f"{path.relative_to(ROOT)}: {line.strip()}"
            for line in path.read_text(encoding="utf-8").splitlines()
            for found in climbing.findall(line)
            if not (base / found).resolve().is_relative_to(ROOT)
        ]
    assert not offenders, "\n".join(offenders)


def test_readme_links_into_the_docs() -> None:
    """The README stays the front page and points to the full documentation."""
    text = README.read_text(encoding="utf-8")
    for page in ("configuration.md", "api.md", "operations.md"):
        assert f"docs/{page}" in text


def test_readme_has_exactly_two_setup_commands_at_the_top() -> None:
    """One command runs the demo, one runs the tests, before anything else."""
    text = README.read_text(encoding="utf-8")
    head = text.split("## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", head, flags=re.DOTALL)
    assert len(blocks) == 2
    assert "examples/demo.py" in blocks[0]
    assert "pytest" in blocks[1]


def test_install_from_the_index_only_once_published() -> None:
    """robots-async is not on PyPI yet: every ``pip install robots-async...`` line says
    "once published", and the install page says how to install from a checkout."""
    from_index = re.compile(r"pip install ['\"]?robots-async\b")
    offenders = [
        f"{name}: {line.strip()}"
        for name, text in _texts().items()
        for before, line in itertools.pairwise(["", *text.splitlines()])
        if from_index.search(line) and "once published" not in (before + line).lower()
    ]
    assert not offenders, "\n".join(offenders)
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    assert "pip install -e '.[scrapy]'" in index
    assert 'pip install "$(ls dist/robots_async-*.whl)[scrapy]"' in index


#: What the API reference must never show: Sphinx roles as written, a Markdown-escaped
#: pipe, a base class of this package without a page (a span, not a link).
_RAW_ROLE = re.compile(r":(?:py:)?(?:class|meth|func|attr|data|exc|mod|obj|const):`")
_UNDOCUMENTED_BASE = re.compile(r'Bases: (?:[^\n]*?, )?<code><span title="(robots_async\.[\w.]+)"')


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The documentation site, built with ``mkdocs build --strict``: page -> HTML."""
    pytest.importorskip("mkdocs")
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)]
    proc = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=240, check=False
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    pages = sorted(out.rglob("*.html"))
    return {str(p.relative_to(out)): p.read_text(encoding="utf-8") for p in pages}


def test_built_site_shows_no_raw_markup(site: dict[str, str]) -> None:
    """No page of the built site shows a reST role, an escaped pipe or a base class
    of the package that has no documentation."""
    offenders = [
        f"{page}: {problem} {found!r}"
        for page, text in site.items()
        for problem, pattern in (
            ("raw role", _RAW_ROLE),
            ("escaped pipe", re.compile(r"\\\|")),
            ("undocumented base", _UNDOCUMENTED_BASE),
        )
        for found in pattern.findall(text)
    ]
    assert not offenders, "\n".join(offenders[:40])


def test_roles_become_links(site: dict[str, str]) -> None:
    """A role to a documented object is a link to it (RobotsChecker's :class:`RobotsCache`)."""
    api = site["api/index.html"]
    link = r'<a [^>]*href="#robots_async\.RobotsCache"[^>]*><code>RobotsCache</code></a>'
    assert re.search(rf"a {link} to use instead of a new one", api)
    assert re.search(r'Bases: <code><a [^>]*href="[^"]*AsyncClosing"', api)


def test_every_setting_has_an_anchor(site: dict[str, str]) -> None:
    """Each Scrapy setting, FetchPolicy field and checker argument has its own anchor,
    and table names do not break mid-word."""
    from robots_async.contrib import scrapy as adapter

    page = site["configuration/index.html"]
    for setting in adapter.SETTINGS:
        assert f'id="{setting.name}" href="#{setting.name}"' in page, setting.name
    assert 'id="fetchpolicy-connect_timeout"' in page
    css = (DOCS / "stylesheets" / "extra.css").read_text(encoding="utf-8")
    assert "td:first-child code" in css
    assert "white-space: nowrap" in css
    assert "stylesheets/extra.css" in page
