"""The sans-I/O core imports no event loop and no HTTP client."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import robots_async

PACKAGE = Path(robots_async.__file__).parent
CORE_MODULES = [
    "_url.py",
    "_agent.py",
    "_parser.py",
    "_rules.py",
    "_matcher.py",
    "_prefixes.py",
    "_wildcards.py",
    "_scores.py",
    "_compiled.py",
    "_usage.py",
    "_policy.py",
    "_robots.py",
    "_errors.py",
    "_packed_warnings.py",
]
FORBIDDEN = ("asyncio", "aiohttp")
DYNAMIC_IMPORTERS = {"__import__", "import_module"}


def imported_modules(tree: ast.AST) -> set[str]:
    """Every module name imported anywhere in ``tree``, in any import form."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in DYNAMIC_IMPORTERS and node.args:
                first = node.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    names.add(first.value)
    return names


def is_forbidden(module: str) -> bool:
    """True for asyncio, aiohttp and their submodules."""
    return any(module == name or module.startswith(name + ".") for name in FORBIDDEN)


def test_import_finder_sees_every_form() -> None:
    """The import finder catches plain, from, nested and dynamic imports."""
    source = (
        "import os\nimport asyncio.tasks as t\nfrom aiohttp import web\n"
        "def f():\n    import aiohttp\n    return __import__('asyncio')\n"
        "importlib.import_module('aiohttp.client')\n"
    )
    found = imported_modules(ast.parse(source))
    assert {m for m in found if is_forbidden(m)} == {
        "aiohttp",
        "aiohttp.client",
        "asyncio",
        "asyncio.tasks",
    }
    assert not is_forbidden("os")
    assert not is_forbidden("asyncio_extra")


@pytest.mark.parametrize("module", CORE_MODULES)
def test_core_module_imports_no_io(module: str) -> None:
    """A core module imports neither asyncio nor aiohttp, not even inside a function."""
    path = PACKAGE / module
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    assert sorted(m for m in imported_modules(tree) if is_forbidden(m)) == []


def test_importing_the_package_loads_no_http_stack() -> None:
    """import robots_async loads neither aiohttp nor scrapy."""
    code = (
        "import robots_async, sys; "
        "assert 'aiohttp' not in sys.modules and 'scrapy' not in sys.modules, "
        "sorted(m for m in sys.modules if m.split('.')[0] in ('aiohttp', 'scrapy'))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
