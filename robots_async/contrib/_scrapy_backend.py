"""The ROBOTSTXT_PARSER backend alone applies two settings: the others need the
middleware, and given without it they would be ignored without a word.

``ROBOTSASYNC_REFUSE_USAGE = ["train-ai"]`` with only ``ROBOTSTXT_PARSER`` set crawled
a page whose robots.txt says ``Content-Usage: train-ai=n``: the AI opt-out the
settings asked for was off. Such a setting stops the crawl at startup instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._scrapy_settings import SETTINGS, ConfigurationError

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = ["check_backend_settings"]

#: The settings RobotParser itself applies.
_BACKEND = frozenset({"ROBOTSASYNC_POLICY", "ROBOTSASYNC_MAX_BYTES"})
_MIDDLEWARE = "robots_async.contrib.scrapy.RobotsTxtMiddleware"


def check_backend_settings(settings: BaseSettings, middleware: type) -> None:
    """Refuse a ``ROBOTSASYNC_*`` setting off its default that only ``middleware``
    applies, when that middleware (or a subclass) is not enabled.

    :raises ConfigurationError: naming the first such setting and the fix.
    """
    given = [
        setting.name
        for setting in SETTINGS
        if setting.name not in _BACKEND and setting.read(settings) != setting.read(None)
    ]
    if not given or _enabled(settings, middleware):
        return
    also = f"; also set: {', '.join(given[1:])}" if len(given) > 1 else ""
    raise ConfigurationError(
        given[0],
        settings.get(given[0]),
        "its default with ROBOTSTXT_PARSER alone, which applies only ROBOTSASYNC_POLICY "
        f"and ROBOTSASYNC_MAX_BYTES: enable {_MIDDLEWARE} in DOWNLOADER_MIDDLEWARES "
        "(in place of scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware) or "
        f"remove the setting{also}",
    )


def _enabled(settings: BaseSettings, middleware: type) -> bool:
    """True if DOWNLOADER_MIDDLEWARES enables ``middleware`` or a subclass of it."""
    from scrapy.utils.conf import build_component_list
    from scrapy.utils.misc import load_object

    for component in build_component_list(settings.getwithbase("DOWNLOADER_MIDDLEWARES")):
        try:
            found = load_object(component) if isinstance(component, str) else component
        except (ImportError, AttributeError, NameError, ValueError):
            continue  # Scrapy reports a path it cannot load when it builds the middlewares
        if isinstance(found, type) and issubclass(found, middleware):
            return True
    return False
