"""The public surface: __all__, docstrings and version."""

from __future__ import annotations

import ast
import importlib.metadata
import inspect
from pathlib import Path

import pytest

import robots_async as ra

INIT = Path(ra.__file__)


def names_bound_in_init() -> set[str]:
    """Public names that robots_async/__init__.py imports from the package or assigns."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level >= 1:
            names.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return {n for n in names if not n.startswith("_") or n == "__version__"} - {"__all__"}


def test_all_is_sorted() -> None:
    """__all__ is in sorted() order."""
    assert ra.__all__ == sorted(ra.__all__)
    assert len(ra.__all__) == len(set(ra.__all__))


def test_all_matches_exported_names() -> None:
    """__all__ lists exactly the names the package exports, and each exists."""
    assert set(ra.__all__) == names_bound_in_init()
    for name in ra.__all__:
        assert hasattr(ra, name), name


def test_no_public_object_is_left_out_of_all() -> None:
    """Every public class or function defined by the package is in __all__."""
    missing = []
    for name, value in vars(ra).items():
        if name.startswith("_") or inspect.ismodule(value):
            continue
        module = getattr(value, "__module__", None) if callable(value) else None
        is_package_object = module is not None and module.startswith("robots_async")
        if is_package_object and name not in ra.__all__:
            missing.append(name)
    assert missing == []


#: mypyc keeps no docstring on the classes and functions it compiles: the docstring
#: checks run on the pure build (the same source; CI runs both).
needs_docstrings = pytest.mark.skipif(
    ra.COMPILED, reason="a compiled build keeps no docstrings (checked on the pure build)"
)


def _documented(name: str) -> bool:
    obj = getattr(ra, name)
    doc = obj.__doc__ or ""
    # A dataclass without a docstring gets a generated one: "Name(field: type, ...)".
    return bool(doc.strip()) and not doc.startswith(f"{obj.__name__}(")


PUBLIC_CALLABLES = [
    n for n in ra.__all__ if inspect.isclass(getattr(ra, n)) or inspect.isfunction(getattr(ra, n))
]


@needs_docstrings
@pytest.mark.parametrize("name", PUBLIC_CALLABLES)
def test_public_classes_and_functions_have_docstrings(name: str) -> None:
    """Every public class and function in __all__ has a real docstring."""
    assert _documented(name)


@needs_docstrings
def test_public_methods_have_docstrings() -> None:
    """Public methods and properties of RobotsTxt, RobotsParser and Origin are documented."""
    undocumented = []
    for cls in (ra.RobotsTxt, ra.RobotsParser, ra.Origin):
        for attr, value in vars(cls).items():
            if attr.startswith("_") or attr in {"count", "index"}:
                continue
            target = value.__func__ if isinstance(value, classmethod | staticmethod) else value
            is_api = callable(target) or isinstance(target, property)
            if is_api and not (getattr(target, "__doc__", None) or "").strip():
                undocumented.append(f"{cls.__name__}.{attr}")
    assert undocumented == []


@needs_docstrings
def test_callables_list_is_not_empty() -> None:
    """The docstring check covers the main entry points."""
    assert {"parse", "RobotsParser", "RobotsTxt", "robots_url", "Verdict"} <= set(PUBLIC_CALLABLES)


def test_version_matches_metadata() -> None:
    """__version__ is the installed distribution's version."""
    assert ra.__version__ == importlib.metadata.version("robots-async")


#: The public modules and their __all__, written out: a name added, removed or renamed
#: is a change users see and must show up here (and in CHANGELOG.md). Private modules
#: (the layer packages core/, fetch/, cache/, checker/) may move freely.
PINNED_ALL = {
    "robots_async": [
        "AiohttpFetcher", "AuditLog", "COMPILED", "CacheEntry", "CacheStats", "CheckerStats",
        "CleanParam",
        "ClosedError", "ConfigurationError", "ConfigurationTypeError", "ContentSignals",
        "DEFAULT_MAX_BYTES", "Decision", "DirectiveSource", "DisallowedError", "EventLoopError",
        "FIRST_MATCH", "FetchOutcome", "FetchPolicy", "FetchPolicyName", "Fetcher", "GOOGLE",
        "GOOGLE_REFERENCE", "Group", "InvalidRecordError", "InvalidURLError",
        "InvalidUserAgentError", "Lease", "LocalLimitError", "MAX_LINE_BYTES", "MatchPolicy",
        "MemoryStore", "Origin", "PageDirectives", "PageInputTypeError", "ParseWarning",
        "PolicyName", "RFC9309", "RequestRate", "Resolution", "RobotsCache", "RobotsChecker",
        "RobotsError", "RobotsParser", "RobotsStore", "RobotsTxt", "Rule", "SQLiteStore",
        "SitemapError", "SitemapLimits", "SitemapStats", "SitemapUrl", "SitemapWalk",
        "StoreError", "StoreSchemaError", "StoredRobots", "TdmAnswer", "TdmRep", "TdmRepStats",
        "URLTypeError",
        "UsageAnswer", "UsagePreferences", "UsageRefusedError", "UsageRule", "UsageSource",
        "Verdict", "VisitTime", "__version__", "combine_usage", "is_valid_token",
        "page_directives", "parse", "parse_tdmrep", "product_token",
        "request_target", "require_token", "robots_url", "usage_from_header",
    ],
    "robots_async.contrib.aiohttp": [
        "DisallowedError", "LocalLimitError", "RobotsMiddleware", "UsageRefusedError",
        "content_usage", "usage_answer",
    ],
    "robots_async.contrib.httpx": [
        "DisallowedError", "LocalLimitError", "RobotsTransport", "UsageRefusedError",
        "content_usage",
    ],
    "robots_async.contrib.scrapy": [
        "SETTINGS", "ConfigurationError", "ConfigurationTypeError", "NofollowMiddleware",
        "RobotParser", "RobotsTxtMiddleware", "ScrapyConfig", "ScrapyFetcher", "Setting",
        "UnknownSettingError", "classify_scrapy_error", "fetch_policy_from", "read_settings",
    ],
    "robots_async.contrib.redis": ["RedisStore"],
    "robots_async.cli": ["build_parser", "main"],
}  # fmt: skip


#: What each adapter module needs installed.
FRAMEWORKS = {
    "robots_async.contrib.aiohttp": "aiohttp",
    "robots_async.contrib.scrapy": "scrapy",
    "robots_async.contrib.redis": "redis",
    "robots_async.contrib.httpx": "httpx",
}


@pytest.mark.parametrize("module", sorted(PINNED_ALL))
def test_public_module_all_is_pinned(module: str) -> None:
    """Each public module exports exactly the pinned names, and each one resolves
    (an adapter's module where its framework is installed: .ci/lowest's core job has
    no Scrapy or redis-py)."""
    framework = FRAMEWORKS.get(module)
    if framework is not None:
        pytest.importorskip(framework)
    imported = importlib.import_module(module)
    assert sorted(imported.__all__) == sorted(PINNED_ALL[module])
    for name in imported.__all__:
        assert hasattr(imported, name), f"{module}.{name}"
