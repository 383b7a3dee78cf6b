"""Scrapy settings using robots_async instead of Scrapy's robots.txt middleware.

Run from examples/scrapy_project: ``scrapy crawl site -a start=https://example.org/``.
Offline: ``python -m http.server 8000 --bind 127.0.0.1 --directory examples`` from the
repository root, then start at ``http://127.0.0.1:8000/`` (see spiders/site.py).
"""

BOT_NAME = "demo_project"
SPIDER_MODULES = ["demo_project.spiders"]
USER_AGENT = "DemoBot/1.0 (+https://example.org/demobot)"

# The two settings: obey robots.txt, through robots_async's drop-in middleware.
ROBOTSTXT_OBEY = True
DOWNLOADER_MIDDLEWARES = {
    "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
    "robots_async.contrib.scrapy.RobotsTxtMiddleware": 100,
}

# Optional robots_async settings (defaults shown; a bad value stops the crawl at
# startup; all of them: docs/configuration.md#scrapy-settings).
ROBOTSASYNC_POLICY = "google"  # or "google-reference", "rfc9309", "first-match"
ROBOTSASYNC_FETCH_POLICY = "rfc9309"  # or "googlebot", "yandex", "legacy-allow-on-error"
ROBOTSASYNC_MAX_CRAWL_DELAY = 30.0  # Crawl-delay applied to download slots, capped
ROBOTSASYNC_MAX_MEMORY = 256 * 1024 * 1024  # bytes of cached rules kept at most
ROBOTSASYNC_REFUSE_USAGE: list[str] = []  # e.g. ["train-ai"]: drop pages any opt-out refuses
# ROBOTSASYNC_REDIS_URL = "redis://localhost:6379/0"  # share robots.txt across workers

# The middleware runs on asyncio: keep Scrapy's default reactor (or set
# TWISTED_REACTOR_ENABLED = False); another TWISTED_REACTOR stops the crawl at startup.
TWISTED_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"

# Only the backend, keeping Scrapy's own middleware, would instead be:
# ROBOTSTXT_PARSER = "robots_async.contrib.scrapy.RobotParser"

CONCURRENT_REQUESTS_PER_DOMAIN = 4
TELNETCONSOLE_ENABLED = False
