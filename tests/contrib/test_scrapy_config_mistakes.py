"""Configuration mistakes a Scrapy user makes, each stopping the crawl at startup with
a message naming the setting to fix (never a crawl that runs with the setting lost)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from scrapy import Request
from scrapy.utils.test import get_crawler

from robots_async.contrib.scrapy import (
    ConfigurationError,
    RobotParser,
    RobotsTxtMiddleware,
    UnknownSettingError,
    read_settings,
)

from .scrapy_cli import runspider
from .test_scrapy_settings import STARTUP_FAILURE_EXIT

if TYPE_CHECKING:
    from pathlib import Path

    from .conftest import Site


@pytest.mark.parametrize(
    ("name", "meant"),
    [
        ("ROBOTS_ASYNC_REFUSE_USAGE", "ROBOTSASYNC_REFUSE_USAGE"),
        ("Robots_Async_PACE", "ROBOTSASYNC_PACE"),
        ("ROBOTSASYNCPACE", "ROBOTSASYNC_PACE"),
        ("robotsasync_store", "ROBOTSASYNC_STORE"),
        ("ROBOTS-ASYNC_REDIS_URL", "ROBOTSASYNC_REDIS_URL"),
    ],
)
def test_misspelt_prefix_is_refused_naming_the_setting(name: str, meant: str) -> None:
    """The package is robots_async: ``ROBOTS_ASYNC_REFUSE_USAGE`` is the likeliest typo of
    all, and it used to be ignored as another library's setting (the AI opt-out off)."""
    with pytest.raises(UnknownSettingError, match=f"^unknown setting {name}; did you mean {meant}"):
        read_settings({name: "1"})


def test_other_prefixes_stay_scrapys_business() -> None:
    """Names that only start like ours are not ours: ROBOTSTXT_*, ROBOTS_* and the like."""
    config = read_settings({"ROBOTSTXT_OBEY": True, "ROBOTS_TXT_X": 1, "ROBOTSAS": 1})
    assert config.timeout == 30.0


@pytest.mark.slow
def test_misspelt_prefix_stops_scrapy_runspider(site: Site, tmp_path: Path) -> None:
    """``-s ROBOTS_ASYNC_REFUSE_USAGE=train-ai``: nothing is requested, and the log names
    the setting meant (it used to crawl the page that robots.txt refuses for AI training)."""
    host = site.host()
    host.serve("/robots.txt", "User-agent: *\nContent-Usage: train-ai=n\nAllow: /\n")
    proc = runspider(tmp_path, host.url("/page"), "ROBOTS_ASYNC_REFUSE_USAGE=train-ai")
    assert proc.returncode == STARTUP_FAILURE_EXIT, proc.stderr[-3000:]
    assert (
        "unknown setting ROBOTS_ASYNC_REFUSE_USAGE; did you mean ROBOTSASYNC_REFUSE_USAGE?"
        in proc.stderr
    )
    assert host.paths() == []


@pytest.mark.parametrize(
    "url", ["redis://localhost:abc/0", "redis://localhost:6379/notanint", "redis+cluster://"]
)
def test_malformed_redis_url_names_the_setting(url: str) -> None:
    """A URL with the right scheme but a bad port, database or no node stops the
    middleware naming ROBOTSASYNC_REDIS_URL (it raised redis-py's ValueError or
    RedisClusterException, or silently used database 0)."""
    crawler = get_crawler(settings_dict={"ROBOTSTXT_OBEY": True, "ROBOTSASYNC_REDIS_URL": url})
    with pytest.raises(ConfigurationError, match=rf"^ROBOTSASYNC_REDIS_URL='{re.escape(url)}'"):
        RobotsTxtMiddleware.from_crawler(crawler)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("crawler:s3cret@redis.internal:6379/0", "crawler:***@redis.internal:6379/0"),
        ("redis://crawler:s3cret@redis.internal:abc/0", "redis://crawler:***@redis.internal:abc/0"),
    ],
)
def test_a_refused_redis_url_keeps_its_password_out_of_the_message(url: str, shown: str) -> None:
    """The setting check (no scheme) and the store (a bad port) name the URL with its
    password hidden: the message goes to the crawl's log (the first showed it)."""
    crawler = get_crawler(settings_dict={"ROBOTSTXT_OBEY": True, "ROBOTSASYNC_REDIS_URL": url})
    with pytest.raises(ConfigurationError) as raised:
        RobotsTxtMiddleware.from_crawler(crawler)
    assert "s3cret" not in str(raised.value)
    assert f"ROBOTSASYNC_REDIS_URL='{shown}'" in str(raised.value)


def test_redis_prefix_with_braces_names_the_setting() -> None:
    """RedisStore refuses '{' and '}' in a prefix (hash slots): the setting is refused at
    reading, under its own name (it was RedisStore's ValueError, unreported)."""
    crawler = get_crawler(
        settings_dict={
            "ROBOTSTXT_OBEY": True,
            "ROBOTSASYNC_REDIS_URL": "redis://localhost:6379/0",
            "ROBOTSASYNC_REDIS_PREFIX": "crawl{1}",
        }
    )
    with pytest.raises(ConfigurationError, match=r"^ROBOTSASYNC_REDIS_PREFIX='crawl\{1\}'"):
        RobotsTxtMiddleware.from_crawler(crawler)


def test_store_in_a_missing_directory_names_the_setting(tmp_path: Path) -> None:
    """ROBOTSASYNC_STORE where no file can be stops the middleware (it logged a warning
    and crawled without a store: with ROBOTSASYNC_PACE, every process paced alone)."""
    path = str(tmp_path / "missing" / "robots.sqlite")
    crawler = get_crawler(settings_dict={"ROBOTSTXT_OBEY": True, "ROBOTSASYNC_STORE": path})
    with pytest.raises(
        ConfigurationError, match=rf"^ROBOTSASYNC_STORE={re.escape(repr(path))} is not accepted"
    ):
        RobotsTxtMiddleware.from_crawler(crawler)


async def test_jobdir_not_made_yet_is_made(tmp_path: Path) -> None:
    """A JOBDIR that Scrapy has not made yet (SpiderState off) gets its store file."""
    jobdir = tmp_path / "job" / "one"
    crawler = get_crawler(
        settings_dict={
            "ROBOTSTXT_OBEY": True,
            "JOBDIR": str(jobdir),
            "EXTENSIONS": {"scrapy.extensions.spiderstate.SpiderState": None},
        }
    )
    middleware = RobotsTxtMiddleware.from_crawler(crawler)
    assert (jobdir / "robots_async.sqlite").is_file()
    await middleware._spider_closed()


@pytest.mark.parametrize("name", [".", "missing/audit.jsonl"])
def test_audit_log_that_cannot_be_written_names_the_setting(tmp_path: Path, name: str) -> None:
    """A directory was accepted (the crawl ran; its audit lines failed at the first batch
    and at close); a missing directory was refused as 'AuditLog(path=)', not the setting."""
    path = str(tmp_path / name)
    crawler = get_crawler(settings_dict={"ROBOTSTXT_OBEY": True, "ROBOTSASYNC_AUDIT_LOG": path})
    with pytest.raises(
        ConfigurationError, match=rf"^ROBOTSASYNC_AUDIT_LOG={re.escape(repr(path))}"
    ):
        RobotsTxtMiddleware.from_crawler(crawler)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("ROBOTSTXT_USER_AGENT", "(+https://example.org/bot)"),
        ("ROBOTSTXT_USER_AGENT", "/MyBot"),
        ("USER_AGENT", " (compatible) "),
    ],
)
def test_user_agent_without_a_crawler_name_is_refused(name: str, value: str) -> None:
    """No product token: the crawl matched robots.txt as the nameless crawler (only the
    ``*`` group, never its own), where RobotsChecker refuses that User-Agent."""
    crawler = get_crawler(settings_dict={"ROBOTSTXT_OBEY": True, name: value})
    with pytest.raises(ConfigurationError, match=rf"^{name}={re.escape(repr(value))} is not"):
        RobotsTxtMiddleware.from_crawler(crawler)


def test_user_agent_is_not_checked_where_robotstxt_user_agent_names_the_crawler() -> None:
    crawler = get_crawler(
        settings_dict={
            "ROBOTSTXT_OBEY": True,
            "ROBOTSTXT_USER_AGENT": "MyBot",
            "USER_AGENT": "(compatible)",
        }
    )
    RobotsTxtMiddleware.from_crawler(crawler)


def test_user_agent_in_bytes_is_read_as_text() -> None:
    """ROBOTSTXT_USER_AGENT = b"MyBot/1.0" (Scrapy's own middleware takes bytes) made
    every request fail with product_token's TypeError."""
    crawler = get_crawler(
        settings_dict={"ROBOTSTXT_OBEY": True, "ROBOTSTXT_USER_AGENT": b"MyBot/1.0"}
    )
    middleware = RobotsTxtMiddleware.from_crawler(crawler)
    assert middleware._user_agent(Request("http://example.org/")) == "MyBot/1.0"


def test_user_agent_of_another_type_is_refused() -> None:
    crawler = get_crawler(settings_dict={"ROBOTSTXT_OBEY": True, "ROBOTSTXT_USER_AGENT": 7})
    with pytest.raises(ConfigurationError, match=r"^ROBOTSTXT_USER_AGENT=7 is not accepted"):
        RobotsTxtMiddleware.from_crawler(crawler)


BACKEND = "robots_async.contrib.scrapy.RobotParser"
MIDDLEWARE = "robots_async.contrib.scrapy.RobotsTxtMiddleware"


@pytest.mark.parametrize(
    ("given", "named"),
    [
        ({"ROBOTSASYNC_REFUSE_USAGE": ["train-ai"]}, "ROBOTSASYNC_REFUSE_USAGE"),
        ({"ROBOTSASYNC_PACE": True}, "ROBOTSASYNC_PACE"),
        ({"ROBOTSASYNC_AUDIT_LOG": "audit.jsonl"}, "ROBOTSASYNC_AUDIT_LOG"),
        ({"ROBOTSASYNC_TIMEOUT": 3}, "ROBOTSASYNC_TIMEOUT"),
    ],
)
def test_a_setting_the_backend_alone_would_ignore_stops_it(
    given: dict[str, object], named: str
) -> None:
    """With ROBOTSTXT_PARSER alone (Scrapy's own middleware), a ROBOTSASYNC_* setting
    only our middleware applies was ignored without a word: REFUSE_USAGE crawled a
    train-ai=n page. It now stops the crawl naming the setting and the fix."""
    settings = {"ROBOTSTXT_OBEY": True, "ROBOTSTXT_PARSER": BACKEND, **given}
    crawler = get_crawler(settings_dict=settings)
    with pytest.raises(ConfigurationError, match=rf"^{named}=") as raised:
        RobotParser.from_crawler(crawler, b"")
    assert MIDDLEWARE in str(raised.value)


def test_the_backend_takes_its_own_settings_and_any_with_the_middleware() -> None:
    """POLICY and MAX_BYTES are the backend's own; with our middleware enabled (by
    path or a subclass), every setting is applied, so none is refused."""
    own = {"ROBOTSASYNC_POLICY": "rfc9309", "ROBOTSASYNC_MAX_BYTES": 100_000}
    crawler = get_crawler(settings_dict={"ROBOTSTXT_PARSER": BACKEND, **own})
    RobotParser.from_crawler(crawler, b"User-agent: *\nDisallow: /x\n")

    class Mine(RobotsTxtMiddleware):
        pass

    for enabled in (MIDDLEWARE, Mine):
        settings = {
            "ROBOTSTXT_PARSER": BACKEND,
            "ROBOTSASYNC_REFUSE_USAGE": ["train-ai"],
            "DOWNLOADER_MIDDLEWARES": {enabled: 100},
        }
        RobotParser.from_crawler(get_crawler(settings_dict=settings), b"")


@pytest.mark.slow
def test_the_backend_alone_with_refuse_usage_stops_scrapy_runspider(
    site: Site, tmp_path: Path
) -> None:
    """A real crawl: nothing fetched, exit status of a failed start, one log line."""
    host = site.host()
    proc = runspider(
        tmp_path,
        host.url("/page"),
        "DOWNLOADER_MIDDLEWARES={}",
        f"ROBOTSTXT_PARSER={BACKEND}",
        "ROBOTSASYNC_REFUSE_USAGE=train-ai",
    )
    assert proc.returncode == STARTUP_FAILURE_EXIT, proc.stderr[-3000:]
    assert f"enable {MIDDLEWARE}" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert host.paths() == []
