"""The layout is the design: each folder of the package is a layer, a lower layer never
imports a higher one, the sans-I/O core imports no event loop or HTTP client, and no
module imports itself back through a circle (imports under TYPE_CHECKING count too)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import robots_async

PACKAGE = Path(robots_async.__file__).parent
#: Rank of each layer: a module may import its own layer and lower ones only.
#: The package's own __init__ is the public facade over core..checker; contrib and cli
#: sit on top of it, side by side (neither imports the other).
LAYERS = {
    "core": 0,
    "fetch": 1,
    "cache": 2,
    "checker": 3,
    "": 4,  # robots_async/__init__.py
    "contrib": 5,
    "cli": 5,
}
#: What no core module may import: an event loop or an HTTP client (sans-I/O).
CORE_FORBIDDEN = ("asyncio", "aiohttp", "httpx", "scrapy", "twisted", "redis", "sqlite3")
DYNAMIC_IMPORTERS = {"__import__", "import_module"}


def module_name(path: Path) -> str:
    """Dotted name of a file under the package (``robots_async.core.parser``)."""
    parts = [PACKAGE.name, *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def layer_of(module: str) -> str:
    """The layer a module belongs to: the first folder under the package, or ""."""
    parts = module.split(".")
    if parts[1:] == ["__main__"]:
        return "cli"  # python -m robots_async runs the command line
    if len(parts) > 2 or (len(parts) == 2 and parts[1] in LAYERS):
        return parts[1]
    return ""


def imported_modules(
    tree: ast.AST, package: str = "", known: frozenset[str] = frozenset()
) -> set[str]:
    """Every module name imported anywhere in ``tree``, in any import form, with
    relative imports resolved against ``package`` (the importing module's package).

    ``from . import check`` where ``check`` is a ``known`` module imports that
    submodule only: the parent package is already imported by then, as for any of
    its modules, so it is no dependency of the importer's own.
    """
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*parent, *([node.module] if node.module else [])])
            # ``from .core import parser`` imports the submodule robots_async.core.parser.
            submodules = {f"{base}.{alias.name}" for alias in node.names}
            names.update(submodules)
            if not (known and submodules <= known):
                names.add(base)
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in DYNAMIC_IMPORTERS and node.args:
                first = node.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    names.add(first.value)
    return names


def package_imports(module: str) -> set[str]:
    """The package's own modules that ``module`` imports."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    known = frozenset(MODULES)
    return {name for name in imported_modules(tree, package, known) if name in MODULES} - {module}


def is_forbidden_in_core(module: str) -> bool:
    """True for an event loop, an HTTP client, a framework or a store driver."""
    return any(module == name or module.startswith(name + ".") for name in CORE_FORBIDDEN)


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    for root, children_of_root in graph.items():
        if root in index:
            continue
        work = [(root, iter(sorted(children_of_root)))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    return circles


def test_import_finder_sees_every_form() -> None:
    """The import finder catches plain, from, nested, relative and dynamic imports."""
    source = (
        "import os\nimport asyncio.tasks as t\nfrom aiohttp import web\n"
        "from ..fetch import lanes\nfrom . import rules\n"
        "def f():\n    import aiohttp\n    return __import__('asyncio')\n"
        "importlib.import_module('aiohttp.client')\n"
    )
    found = imported_modules(ast.parse(source), "robots_async.core")
    assert {m for m in found if is_forbidden_in_core(m)} == {
        "aiohttp",
        "aiohttp.client",
        "aiohttp.web",
        "asyncio",
        "asyncio.tasks",
    }
    assert {"robots_async.fetch.lanes", "robots_async.core.rules"} <= found
    assert not is_forbidden_in_core("os")
    assert not is_forbidden_in_core("asyncio_extra")


def test_every_module_belongs_to_a_layer() -> None:
    """Each folder of the package is a layer this test knows; at least three besides
    contrib, so a module cannot land outside the layout unnoticed."""
    assert {layer_of(module) for module in MODULES} == set(LAYERS)
    assert len(set(LAYERS) - {"", "contrib", "cli"}) >= 3


@pytest.mark.parametrize("module", [m for m in MODULES if layer_of(m) == "core"])
def test_core_module_imports_no_io(module: str) -> None:
    """A core module imports no event loop, HTTP client or store, not even in a function."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    assert sorted(m for m in imported_modules(tree) if is_forbidden_in_core(m)) == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_imports_a_higher_layer(module: str) -> None:
    """A module imports its own layer and lower ones only; contrib and cli not each other."""
    own = layer_of(module)
    higher = sorted(
        imported
        for imported in package_imports(module)
        if LAYERS[layer_of(imported)] > LAYERS[own]
        or (LAYERS[layer_of(imported)] == LAYERS[own] and layer_of(imported) != own)
    )
    assert higher == []


def test_no_import_circles() -> None:
    """No module reaches itself through the package's imports (TYPE_CHECKING included)."""
    graph = {module: package_imports(module) for module in MODULES}
    assert import_circles(graph) == []


def test_circle_finder_finds_a_circle() -> None:
    """The circle finder reports a three-module loop and ignores a chain."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert import_circles(graph) == [["a", "b", "c"]]
    assert import_circles({"a": {"b"}, "b": set()}) == []


def test_module_and_class_sizes() -> None:
    """No module over 550 lines and no class over 350: the layout stays readable."""
    too_long = []
    for module, path in MODULES.items():
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > 550:
            too_long.append(f"{module}: {text.count(chr(10))} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                length = node.end_lineno - node.lineno + 1
                if length > 350:
                    too_long.append(f"{module}.{node.name}: class of {length} lines")
    assert too_long == []


def test_importing_the_package_loads_no_http_stack() -> None:
    """import robots_async loads neither aiohttp nor scrapy nor httpx."""
    code = (
        "import robots_async, sys; "
        "bad = sorted(m for m in sys.modules "
        "if m.split('.')[0] in ('aiohttp', 'scrapy', 'httpx')); "
        "assert not bad, bad"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
