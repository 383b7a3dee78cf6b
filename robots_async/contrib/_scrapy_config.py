"""From Scrapy settings to the objects they configure: the FetchPolicy, the shared store,
and the reactor check."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..fetch.policy import FetchPolicy
from ._scrapy_settings import (
    ConfigurationError,
    ScrapyConfig,
)

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from ..cache.store import RobotsStore

__all__ = ["fetch_policy_from"]


_FETCH_PRESETS = {
    "rfc9309": FetchPolicy.rfc9309,
    "googlebot": FetchPolicy.googlebot,
    "yandex": FetchPolicy.yandex,
    "legacy-allow-on-error": FetchPolicy.legacy_allow_on_error,
}


def fetch_policy_from(config: ScrapyConfig) -> FetchPolicy:
    """The :class:`FetchPolicy` described by the ``ROBOTSASYNC_*`` settings.

    :raises ConfigurationError: naming the Scrapy setting, for a value that passed
        the table's check but that the policy itself refuses.
    """
    preset = _FETCH_PRESETS[config.fetch_policy]
    try:
        return preset(
            max_bytes=config.max_bytes,
            total_timeout=config.timeout,
            forbidden=config.forbidden,
            private_redirects=config.private_redirects,
        )
    except ValueError as exc:
        raise _as_setting_error(exc) from exc


#: FetchPolicy fields and the settings that fill them (for the core's error messages).
_POLICY_FIELDS = {
    "max_bytes": "ROBOTSASYNC_MAX_BYTES",
    "total_timeout": "ROBOTSASYNC_TIMEOUT",
    "forbidden": "ROBOTSASYNC_FORBIDDEN",
    "private_redirects": "ROBOTSASYNC_PRIVATE_REDIRECTS",
}


def _as_setting_error(exc: ValueError) -> ConfigurationError:
    """The core's refusal of a FetchPolicy field, re-worded with the Scrapy setting."""
    field = str(getattr(exc, "setting", "")).rpartition(".")[2]
    setting = _POLICY_FIELDS.get(field, f"ROBOTSASYNC_* ({field or 'FetchPolicy'})")
    return ConfigurationError(
        setting, getattr(exc, "value", None), getattr(exc, "accepted", str(exc))
    )


def _store_from(config: ScrapyConfig, jobdir: str | None = None) -> RobotsStore | None:
    """Redis if configured; else the SQLite file (by default in JOBDIR); else none.

    :raises StoreSchemaError: a store file from a newer version (stops the crawl).
    :raises ConfigurationError: naming ROBOTSASYNC_REDIS_URL, for a URL the store
        refuses (a bad port, database or query option), or ROBOTSASYNC_STORE (JOBDIR)
        for a path where no SQLite file can be (a missing or read-only directory).
    """
    if config.redis_url is not None:
        from .redis import RedisStore

        try:
            return RedisStore(config.redis_url, prefix=config.redis_prefix)
        except ConfigurationError as exc:
            raise ConfigurationError("ROBOTSASYNC_REDIS_URL", exc.value, exc.accepted) from None
    path, setting = config.store, "ROBOTSASYNC_STORE"
    if path is None and jobdir:
        # Scrapy makes JOBDIR when SpiderState or the scheduler first needs it, maybe
        # after this middleware is built: make it now, as they would.
        path, setting = os.path.join(jobdir, "robots_async.sqlite"), "JOBDIR"
        try:
            os.makedirs(jobdir, exist_ok=True)
        except OSError as exc:
            raise ConfigurationError(
                setting, jobdir, f"a directory that can be made ({exc.strerror or exc})"
            ) from None
    if not path:
        return None
    from ..cache.sqlite import SQLiteStore

    try:
        return SQLiteStore(path)
    except ConfigurationError as exc:
        raise ConfigurationError(setting, exc.value, exc.accepted) from None


def _require_asyncio(crawler: Crawler) -> None:
    """Refuse a non-asyncio Twisted reactor at startup (the cache runs on asyncio)."""
    from scrapy.utils.asyncio import is_asyncio_available

    try:
        available = is_asyncio_available()
    except RuntimeError:  # no reactor, no running loop: built outside a crawl
        return
    if not available:
        raise ConfigurationError(
            "TWISTED_REACTOR",
            crawler.settings.get("TWISTED_REACTOR"),
            "'twisted.internet.asyncioreactor.AsyncioSelectorReactor' (Scrapy's default) or "
            "TWISTED_REACTOR_ENABLED = False: robots_async's RobotsTxtMiddleware needs "
            "asyncio (under other reactors use only the backend, ROBOTSTXT_PARSER = "
            "'robots_async.contrib.scrapy.RobotParser')",
        )
