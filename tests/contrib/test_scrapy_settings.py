"""The ROBOTSASYNC_* settings: one documented table, every entry read and checked at
startup, and a bad value stops a real crawl before any page is requested."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import scrapy
from scrapy.exceptions import NotConfigured
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

import robots_async.contrib
from robots_async import FetchPolicy
from robots_async.contrib.scrapy import (
    SETTINGS,
    ConfigurationError,
    RobotParser,
    RobotsTxtMiddleware,
    UnknownSettingError,
    read_settings,
)

from .conftest import BASE_SETTINGS
from .scrapy_cli import runspider

if TYPE_CHECKING:
    from .conftest import Site

ROOT = Path(__file__).resolve().parents[2]
#: Scrapy < 2.15 stops a crawler that fails at startup but still exits 0.
STARTUP_FAILURE_EXIT = 1 if scrapy.version_info >= (2, 15) else 0
STARTUP_SCRIPT = Path(__file__).with_name("scrapy_startup.py")
NAMES = {setting.name for setting in SETTINGS}
#: One bad value per setting, spelt as ``-s NAME=VALUE`` would give it (a string),
#: or as a settings module would (a Python object).
BAD_VALUES: dict[str, Any] = {
    "ROBOTSASYNC_POLICY": "googel",
    "ROBOTSASYNC_FETCH_POLICY": "rfc-9309",
    "ROBOTSASYNC_FORBIDDEN": "deny",
    "ROBOTSASYNC_MAX_BYTES": "-1",
    "ROBOTSASYNC_TIMEOUT": "inf",
    "ROBOTSASYNC_MAX_ENTRIES": 0,
    "ROBOTSASYNC_MAX_MEMORY": "lots",
    "ROBOTSASYNC_CRAWL_DELAY": "yes",
    "ROBOTSASYNC_MAX_CRAWL_DELAY": -5,
    "ROBOTSASYNC_PACE": "sometimes",
    "ROBOTSASYNC_PACE_BY": "domain",
    "ROBOTSASYNC_MAX_RETRY_AFTER": "forever",
    "ROBOTSASYNC_MAX_BACKOFF": 0,
    "ROBOTSASYNC_PRIVATE_REDIRECTS": "permit",
    "ROBOTSASYNC_REFUSE_USAGE": "train",
    "ROBOTSASYNC_USAGE_SIGNALS": "maybe",
    "ROBOTSASYNC_AUDIT_LOG": 7,
    "ROBOTSASYNC_REDIS_URL": "localhost:6379",
    "ROBOTSASYNC_REDIS_PREFIX": " ",
    "ROBOTSASYNC_STORE": 42,
}


class RecordingSettings(Settings):
    """Scrapy settings that remember every name read (get, getint ... go through here)."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.read: set[str] = set()
        super().__init__(values)

    def __getitem__(self, name: Any) -> Any:
        self.read.add(name)
        return super().__getitem__(name)


def test_bad_values_cover_every_setting() -> None:
    """The crawl tests below try a bad value for each setting of the table."""
    assert set(BAD_VALUES) == NAMES


def test_settings_read_are_the_table() -> None:
    """Middleware and backend read exactly the ROBOTSASYNC_* names of SETTINGS."""
    crawler = get_crawler(settings_dict={"ROBOTSTXT_OBEY": True})
    recording = RecordingSettings({"ROBOTSTXT_OBEY": True})
    crawler.settings = recording
    RobotsTxtMiddleware.from_crawler(crawler)
    RobotParser.from_crawler(crawler, b"User-agent: *\nDisallow: /x\n")
    assert {name for name in recording.read if name.startswith("ROBOTSASYNC_")} == NAMES


def test_no_setting_name_outside_the_table() -> None:
    """Every ROBOTSASYNC_* name in the package or the example project is in SETTINGS."""
    sources = [
        *Path(robots_async.contrib.__file__).parent.parent.rglob("*.py"),
        *(ROOT / "examples" / "scrapy_project").rglob("*.py"),
    ]
    found = {
        name
        for path in sources
        for name in re.findall(r"ROBOTSASYNC_[A-Z_]+[A-Z]", path.read_text(encoding="utf-8"))
    }
    assert found <= NAMES, found - NAMES


def test_readme_and_docs_mention_every_setting() -> None:
    """README names each setting; the generated configuration reference documents each
    with its type, default and meaning."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert {name for name in NAMES if name not in readme} == set()
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        import gen_configuration
    finally:
        sys.path.remove(str(ROOT / "docs"))
    rows = {row[0]: row for row in gen_configuration.scrapy_rows()}
    assert set(rows) == NAMES
    rendered = gen_configuration.render()
    for setting in SETTINGS:
        assert f'id="{setting.name}" href="#{setting.name}"><code>{setting.name}</code>' in rendered
        assert setting.type, setting.name
        assert setting.meaning, setting.name


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: s.name)
def test_default_is_accepted(setting: Any) -> None:
    """Each documented default passes its own check."""
    assert setting.read({}) == setting.convert(setting.default)


def test_defaults_without_settings() -> None:
    """read_settings(None) gives every default (the backend built without a crawler)."""
    config = read_settings(None)
    assert config.policy == "google"
    assert config.fetch_policy == "rfc9309"
    assert config.max_memory == 256 * 1024 * 1024
    assert config.private_redirects == "block"
    assert config.refuse_usage == ()


@pytest.mark.parametrize(
    ("name", "raw", "expected"),
    [
        ("ROBOTSASYNC_MAX_BYTES", "1000", 1000),
        ("ROBOTSASYNC_MAX_MEMORY", 1 << 20, 1 << 20),
        ("ROBOTSASYNC_TIMEOUT", "2.5", 2.5),
        ("ROBOTSASYNC_MAX_CRAWL_DELAY", 0, 0.0),
        ("ROBOTSASYNC_CRAWL_DELAY", "false", False),
        ("ROBOTSASYNC_CRAWL_DELAY", "0", False),
        ("ROBOTSASYNC_CRAWL_DELAY", True, True),
        ("ROBOTSASYNC_REFUSE_USAGE", "search, train-ai", ("train-ai", "search")),
        ("ROBOTSASYNC_REFUSE_USAGE", ["train-ai"], ("train-ai",)),
        (
            "ROBOTSASYNC_REDIS_URL",
            "rediss://cache.internal:6380/1",
            "rediss://cache.internal:6380/1",
        ),
        ("ROBOTSASYNC_PRIVATE_REDIRECTS", "allow", "allow"),
    ],
)
def test_command_line_and_python_spellings(name: str, raw: Any, expected: Any) -> None:
    """Strings from ``-s NAME=VALUE`` and Python values from a settings module both work."""
    setting = next(s for s in SETTINGS if s.name == name)
    assert setting.read({name: raw}) == expected


@pytest.mark.parametrize(("name", "bad"), sorted(BAD_VALUES.items()))
def test_bad_value_message(name: str, bad: Any) -> None:
    """A bad value raises ConfigurationError (a ValueError, never NotConfigured) naming the
    setting, the value and what is accepted."""
    crawler = get_crawler(settings_dict={"ROBOTSTXT_OBEY": True, name: bad})
    with pytest.raises(ConfigurationError) as info:
        RobotsTxtMiddleware.from_crawler(crawler)
    message = str(info.value)
    assert not isinstance(info.value, NotConfigured)
    assert isinstance(info.value, ValueError)
    prefix = f"{name}={bad!r} is not accepted: expected "
    assert message.startswith(prefix)
    assert len(message) > len(prefix) + 8  # says what is accepted
    assert (info.value.setting, info.value.value) == (name, bad)


@pytest.mark.parametrize(
    ("name", "bad"),
    [
        ("ROBOTSASYNC_MAX_BYTES", 2.5),
        ("ROBOTSASYNC_MAX_BYTES", True),
        ("ROBOTSASYNC_TIMEOUT", float("nan")),
        ("ROBOTSASYNC_TIMEOUT", 0),
        ("ROBOTSASYNC_TIMEOUT", "1e400"),
        ("ROBOTSASYNC_MAX_CRAWL_DELAY", "soon"),
        ("ROBOTSASYNC_CRAWL_DELAY", 2),
        ("ROBOTSASYNC_POLICY", "Google"),
        ("ROBOTSASYNC_REFUSE_USAGE", {"train-ai": "n"}),
        ("ROBOTSASYNC_REFUSE_USAGE", ["train-ai", "ai-train"]),
        ("ROBOTSASYNC_REDIS_URL", 6379),
        ("ROBOTSASYNC_REDIS_PREFIX", 42),
    ],
)
def test_more_bad_values(name: str, bad: Any) -> None:
    """Wrong types, non-finite numbers, case and unknown categories are refused too."""
    setting = next(s for s in SETTINGS if s.name == name)
    with pytest.raises(ConfigurationError, match=re.escape(f"{name}={bad!r}")):
        setting.read({name: bad})


def test_backend_checks_settings_too() -> None:
    """ROBOTSTXT_PARSER alone (Scrapy's middleware) also refuses a bad policy."""
    crawler = get_crawler(settings_dict={"ROBOTSASYNC_POLICY": "googel"})
    with pytest.raises(ConfigurationError, match="ROBOTSASYNC_POLICY='googel'"):
        RobotParser.from_crawler(crawler, b"")


def test_obey_false_is_the_off_switch() -> None:
    """With ROBOTSTXT_OBEY False the middleware is off (NotConfigured), bad settings or not."""
    crawler = get_crawler(settings_dict={"ROBOTSTXT_OBEY": False, **BAD_VALUES})
    with pytest.raises(NotConfigured):
        RobotsTxtMiddleware.from_crawler(crawler)


# --- real crawls ----------------------------------------------------------------------


def start_crawlers(
    tmp_path: Path, url: str, variants: list[dict[str, Any]], **settings: Any
) -> tuple[int, list[str | None], str]:
    """Start one crawler per settings variant in one process: (exit code, errors, stderr)."""
    out = tmp_path / "startup.json"
    args = {
        "url": url,
        "settings": {**BASE_SETTINGS, "LOG_LEVEL": "ERROR", **settings},
        "variants": variants,
        "out": str(out),
    }
    proc = subprocess.run(
        [sys.executable, str(STARTUP_SCRIPT), json.dumps(args)],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    errors = [entry["error"] for entry in json.loads(out.read_text(encoding="utf-8"))]
    return proc.returncode, errors, proc.stderr


@pytest.mark.slow
def test_each_bad_setting_stops_its_crawl(site: Site, tmp_path: Path) -> None:
    """One crawler per bad setting (and one good control) in a real CrawlerProcess: every
    bad one fails at startup with ConfigurationError naming the setting; the process exits 1;
    no page is requested but the control's."""
    host = site.host()
    host.serve("/robots.txt", "User-agent: *\nDisallow: /private\n")
    variants = [{name: bad} for name, bad in sorted(BAD_VALUES.items())]
    code, errors, stderr = start_crawlers(tmp_path, host.url("/page"), [*variants, {}])
    assert code == STARTUP_FAILURE_EXIT, stderr[-3000:]
    for (name, bad), error in zip(sorted(BAD_VALUES.items()), errors, strict=False):
        assert error is not None, name
        assert re.match(
            rf"Configuration(Type)?Error: {re.escape(name)}={re.escape(repr(bad))} is not "
            "accepted: expected .{8,}",
            error,
        ), error
    assert errors[-1] is None  # the control crawler ran
    assert host.paths() == ["/robots.txt", "/page"]


@pytest.mark.slow
def test_typo_in_fetch_policy_stops_scrapy_runspider(site: Site, tmp_path: Path) -> None:
    """The issue's case: ``-s ROBOTSASYNC_FETCH_POLICY=rfc-9309`` once disabled the
    middleware with a WARNING and the forbidden page was fetched; now the command
    exits 1 with the setting, value and choices in the log, and nothing is requested."""
    host = site.host()
    host.serve("/robots.txt", "User-agent: *\nDisallow: /private\n")
    proc = runspider(tmp_path, host.url("/private/page"), "ROBOTSASYNC_FETCH_POLICY=rfc-9309")
    assert proc.returncode == STARTUP_FAILURE_EXIT, proc.stderr[-3000:]
    assert "ROBOTSASYNC_FETCH_POLICY='rfc-9309' is not accepted: expected one of" in proc.stderr
    assert "'legacy-allow-on-error'" in proc.stderr
    assert host.paths() == []


@pytest.mark.slow
def test_non_asyncio_reactor_is_refused_at_startup(site: Site, tmp_path: Path) -> None:
    """Under the epoll reactor the middleware cannot run its asyncio cache: the crawl
    stops at startup with one error naming TWISTED_REACTOR, and nothing is requested
    (it used to fail every request with "no running event loop")."""
    host = site.host()
    proc = runspider(
        tmp_path,
        host.url("/page"),
        "TWISTED_REACTOR=twisted.internet.epollreactor.EPollReactor",
    )
    assert proc.returncode == STARTUP_FAILURE_EXIT, proc.stderr[-3000:]
    assert "TWISTED_REACTOR='twisted.internet.epollreactor.EPollReactor'" in proc.stderr
    assert "AsyncioSelectorReactor" in proc.stderr
    # Twisted prints the startup failure twice (stderr and log): one distinct error.
    errors = {line for line in proc.stderr.splitlines() if "Error: " in line}
    assert len(errors) == 1, errors
    assert "needs asyncio" in errors.pop()
    assert host.paths() == []


def test_settings_reach_the_objects_they_configure() -> None:
    """Each setting ends up in the FetchPolicy, the cache or the middleware."""
    crawler = get_crawler(
        settings_dict={
            "ROBOTSTXT_OBEY": True,
            "ROBOTSASYNC_FETCH_POLICY": "googlebot",
            "ROBOTSASYNC_FORBIDDEN": "disallow",
            "ROBOTSASYNC_MAX_BYTES": "600000",
            "ROBOTSASYNC_TIMEOUT": "7.5",
            "ROBOTSASYNC_MAX_ENTRIES": "12",
            "ROBOTSASYNC_MAX_MEMORY": "1048576",
            "ROBOTSASYNC_CRAWL_DELAY": "False",
            "ROBOTSASYNC_MAX_CRAWL_DELAY": "3",
            "ROBOTSASYNC_REFUSE_USAGE": "train-ai",
        }
    )
    middleware = RobotsTxtMiddleware.from_crawler(crawler)
    policy = middleware.cache.policy
    assert (policy.name, policy.forbidden) == ("googlebot", "disallow")
    assert (policy.max_bytes, policy.total_timeout) == (600_000, 7.5)
    assert middleware.cache._max_entries == 12
    assert middleware.cache._max_memory == 1_048_576
    config = middleware.config
    assert (config.crawl_delay, config.max_crawl_delay) == (False, 3.0)
    assert config.refuse_usage == ("train-ai",)


@pytest.mark.parametrize("value", ["block", "allow"])
def test_private_redirects_reaches_fetch_policy(value: str) -> None:
    """ROBOTSASYNC_PRIVATE_REDIRECTS sets FetchPolicy.private_redirects."""
    if "private_redirects" not in {f.name for f in dataclasses.fields(FetchPolicy)}:
        pytest.skip("FetchPolicy.private_redirects is not in this tree yet")
    crawler = get_crawler(
        settings_dict={"ROBOTSTXT_OBEY": True, "ROBOTSASYNC_PRIVATE_REDIRECTS": value}
    )
    policy = RobotsTxtMiddleware.from_crawler(crawler).cache.policy
    assert policy.private_redirects == value  # type: ignore[attr-defined,unused-ignore]


def test_policy_refusal_names_the_scrapy_setting() -> None:
    """A FetchPolicy field the core refuses is reported under the Scrapy setting."""
    from robots_async.contrib._scrapy_config import _as_setting_error

    core = ConfigurationError("FetchPolicy.total_timeout", -1.0, "a finite number > 0")
    error = _as_setting_error(core)
    assert str(error) == "ROBOTSASYNC_TIMEOUT=-1.0 is not accepted: expected a finite number > 0"
    unknown = _as_setting_error(ConfigurationError("FetchPolicy.ttl", 0.0, "a number > 0"))
    assert unknown.setting == "ROBOTSASYNC_* (ttl)"


def test_unknown_name_under_the_prefix_is_refused() -> None:
    """A misspelt ROBOTSASYNC_* name is an error naming the closest setting; a name far
    from every setting lists them; other prefixes are Scrapy's business."""
    with pytest.raises(
        UnknownSettingError,
        match=r"^unknown setting ROBOTSASYNC_TIMOUT; did"
        r" you mean ROBOTSASYNC_TIMEOUT\?$",
    ):
        read_settings({"ROBOTSASYNC_TIMOUT": "5"})
    with pytest.raises(UnknownSettingError, match="known settings: ROBOTSASYNC_POLICY, "):
        read_settings({"ROBOTSASYNC_ZZZZZZZZZZZZZZZZ": "1"})
    assert read_settings({"ROBOTSTXT_OBEY": True, "MYBOT_TIMOUT": 1}).timeout == 30.0


def test_every_setting_in_the_table_is_a_known_name() -> None:
    """The known names are the table's: each setting's name passes the name check."""
    read_settings({setting.name: setting.default for setting in SETTINGS})


@pytest.mark.slow
def test_misspelt_setting_stops_scrapy_runspider(site: Site, tmp_path: Path) -> None:
    """The issue's case: ``-s ROBOTSASYNC_TIMOUT=5`` used to run with the default timeout;
    now nothing is requested, the command exits non-zero and names the right setting."""
    host = site.host()
    host.serve("/robots.txt", "User-agent: *\nDisallow: /private\n")
    proc = runspider(tmp_path, host.url("/page"), "ROBOTSASYNC_TIMOUT=5")
    assert proc.returncode == STARTUP_FAILURE_EXIT, proc.stderr[-3000:]
    assert "unknown setting ROBOTSASYNC_TIMOUT; did you mean ROBOTSASYNC_TIMEOUT?" in proc.stderr
    assert host.paths() == []


@pytest.mark.slow
def test_bad_value_is_one_log_line(site: Site, tmp_path: Path) -> None:
    """A bad value stops the crawl with one ERROR line (setting, value, what is accepted),
    not asyncio's "Task exception was never retrieved" and a traceback printed twice."""
    host = site.host()
    proc = runspider(tmp_path, host.url("/page"), "ROBOTSASYNC_TIMEOUT=abc")
    assert proc.returncode == STARTUP_FAILURE_EXIT, proc.stderr[-3000:]
    lines = [line for line in proc.stderr.splitlines() if "ROBOTSASYNC_TIMEOUT" in line]
    assert len(lines) == 1, proc.stderr[-3000:]
    assert "ERROR: " in lines[0]
    assert "ROBOTSASYNC_TIMEOUT='abc' is not accepted: expected a number >= 0.001" in lines[0]
    assert "Traceback" not in proc.stderr
    assert "never retrieved" not in proc.stderr
    assert host.paths() == []


@pytest.mark.slow
def test_backend_alone_stops_on_a_misspelt_name(site: Site, tmp_path: Path) -> None:
    """With only ROBOTSTXT_PARSER (Scrapy's own middleware), Scrapy builds the parser at
    startup: a misspelt name stops the crawl there, as one log line, nothing fetched."""
    host = site.host()
    proc = runspider(
        tmp_path,
        host.url("/page"),
        "DOWNLOADER_MIDDLEWARES={}",
        "ROBOTSTXT_PARSER=robots_async.contrib.scrapy.RobotParser",
        "ROBOTSASYNC_REFUSE_USAGES=train-ai",
    )
    assert proc.returncode == STARTUP_FAILURE_EXIT, proc.stderr[-3000:]
    lines = [line for line in proc.stderr.splitlines() if "ROBOTSASYNC_REFUSE_USAGE" in line]
    assert len(lines) == 1, proc.stderr[-3000:]
    assert "did you mean ROBOTSASYNC_REFUSE_USAGE?" in lines[0]
    assert "Traceback" not in proc.stderr
    assert host.paths() == []


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({}, False),
        ({"ROBOTSASYNC_REFUSE_USAGE": ["train-ai"]}, True),
        ({"ROBOTSASYNC_REFUSE_USAGE": []}, False),
        ({"ROBOTSASYNC_REFUSE_USAGE": ["train-ai"], "ROBOTSASYNC_USAGE_SIGNALS": False}, False),
        ({"ROBOTSASYNC_USAGE_SIGNALS": True}, True),
        ({"ROBOTSASYNC_USAGE_SIGNALS": None, "ROBOTSASYNC_REFUSE_USAGE": ["search"]}, True),
    ],
)
def test_usage_signals_default_follows_the_refusal(given: dict[str, Any], expected: bool) -> None:
    """Unset, the signals are read exactly when a category is refused."""
    assert read_settings(given).usage_signals is expected
