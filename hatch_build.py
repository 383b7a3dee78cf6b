"""Wheel build hook: the sans-I/O core compiled with mypyc when ROBOTS_ASYNC_COMPILE=1.

    ROBOTS_ASYNC_COMPILE=1 pip install .     # compiled core (needs a C compiler)
    pip install .  /  pip install -e .       # pure Python, as without this hook

The same .py files ship in both wheels; an extension module beside a .py file is the
one Python imports (the extension loader comes first), so ``robots_async.COMPILED``
tells which runs. A compile that fails (no compiler, no Python headers) leaves a pure
wheel and a warning: never a broken install.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

#: Set to 1 at install or build time to compile the core.
VARIABLE = "ROBOTS_ASYNC_COMPILE"
#: Core modules left in Python: errors.py's exceptions also inherit ValueError and
#: TypeError, which mypyc cannot compile (a native class has one built-in base).
PURE = frozenset({"__init__.py", "errors.py"})
#: Build requirements added only for a compiled build: mypy ships mypyc (2.4: the
#: version the compiled build is tested with), setuptools drives the C compiler, and
#: mypyc type-checks the core against the typed dependencies it imports.
COMPILE_REQUIRES = ["mypy>=2.4", "setuptools>=70", "idna>=3.7", "http-sf>=1.4", "yarl>=1.17"]


def compile_wanted() -> bool:
    """True when the environment asks for the compiled core."""
    return os.environ.get(VARIABLE, "").strip().lower() in ("1", "true", "yes")


def core_modules(root: Path) -> list[str]:
    """The core modules to compile, as paths relative to ``root``."""
    core = root / "robots_async" / "core"
    return sorted(f"robots_async/core/{p.name}" for p in core.glob("*.py") if p.name not in PURE)


def compile_core(root: Path, out: Path) -> dict[str, str]:
    """Compile the core into ``out``: {built file: its path in the wheel}."""
    from mypyc.build import mypycify
    from setuptools import Distribution

    cwd, cache = Path.cwd(), os.environ.get("MYPY_CACHE_DIR")
    os.chdir(root)  # mypyc takes module paths relative to the working directory
    os.environ["MYPY_CACHE_DIR"] = str(out / "mypy_cache")  # not in the source tree
    try:
        extensions = mypycify(
            core_modules(root), opt_level="3", group_name="robots_async", target_dir=str(out / "c")
        )
        dist = Distribution({"name": "robots-async", "ext_modules": extensions})
        build_ext = dist.get_command_obj("build_ext")
        build_ext.build_lib = str(out / "lib")
        build_ext.build_temp = str(out / "temp")
        dist.run_command("build_ext")
    finally:
        os.chdir(cwd)
        if cache is None:
            os.environ.pop("MYPY_CACHE_DIR", None)
        else:
            os.environ["MYPY_CACHE_DIR"] = cache
    lib = out / "lib"
    built = {str(p): p.relative_to(lib).as_posix() for p in lib.rglob("*") if p.is_file()}
    if not any(name.startswith("robots_async/core/") for name in built.values()):
        raise RuntimeError(f"mypyc built no core module in {lib}")
    return built


class MypycBuildHook(BuildHookInterface):
    """Adds the compiled core to a standard wheel when ROBOTS_ASYNC_COMPILE=1."""

    PLUGIN_NAME = "custom"

    def dependencies(self) -> list[str]:
        return list(COMPILE_REQUIRES) if compile_wanted() else []

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or not compile_wanted():
            return
        if version == "editable":  # an editable install runs the source tree as it is
            self.app.display_warning(f"{VARIABLE}: editable installs stay pure Python")
            return
        self._out = Path(tempfile.mkdtemp(prefix="robots-async-mypyc-"))
        try:
            built = compile_core(Path(self.root), self._out)
        # Whatever the toolchain raises (mypyc exits by SystemExit on a type error,
        # setuptools raises its own CompileError/LinkError, a missing compiler an
        # OSError): the pure wheel, said loudly, never a failed install.
        except (Exception, SystemExit):  # noqa: BLE001
            traceback.print_exc(file=sys.stderr)
            self.app.display_warning(
                f"{VARIABLE}=1 but compiling the core with mypyc failed (traceback above); "
                "building the pure-Python wheel instead. Install a C compiler and the "
                "Python headers to get the compiled core."
            )
            return
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
        build_data["force_include"].update(built)
        self.app.display_info(f"{VARIABLE}: {len(built)} compiled files added to the wheel")

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        out = getattr(self, "_out", None)
        if out is not None:
            shutil.rmtree(out, ignore_errors=True)
