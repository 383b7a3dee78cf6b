"""ROBOTSASYNC_PACE and Scrapy's download slots: a slot's delay is part of a paced
request's turn, and a paced crawl's slots send without jitter.

Scrapy's slot sends a request a random 0.5-1.5x its delay after its last send
(DOWNLOAD_DELAY_JITTER): a page went after its turn, and the next page at its own,
closer than the site's interval (Crawl-delay 1, DOWNLOAD_DELAY 1: gaps of 0.63-0.93 s
in one process, 0.10-0.32 s between two crawls sharing a store). Without jitter, and
with its delay in the turn's interval, a slot whose last send was its origin's last
turn sends the next page at its turn.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

__all__ = ["PacedSlots"]

logger = logging.getLogger("robots_async.contrib.scrapy")


class PacedSlots:
    """The download slots of a paced crawl: their delays, their jitter off."""

    def __init__(self, crawler: Crawler) -> None:
        self._crawler = crawler
        #: AutoThrottle moves its slots' delays as responses come: left to the slots.
        self._autothrottle = crawler.settings.getbool("AUTOTHROTTLE_ENABLED")
        #: Whether the jitter turned off was logged, and the slots missing warned of.
        self._told = False
        self._warned = False

    def steady(self, downloader: Any) -> None:
        """Turn off the jitter of the slots ``downloader`` makes from now on (its
        default, DOWNLOAD_DELAY_JITTER, and each DOWNLOAD_SLOTS entry's own), as the
        spider opens: a slot made for robots.txt set its next send at a jittered
        delay before any paced request could turn it off (a first page went 0.6 s
        after its turn; with an entry's own jitter, two crawls' pages 0.84 s apart)."""
        turned_off = False
        if getattr(downloader, "_jitter", None):
            downloader._jitter = 0.0
            turned_off = True
        entries = getattr(downloader, "per_slot_settings", None)
        if isinstance(entries, dict):
            for entry in entries.values():
                if isinstance(entry, dict) and entry.get("jitter", True):
                    entry["jitter"] = 0.0  # read before the deprecated randomize_delay
                    turned_off = True
        if turned_off:
            self._tell_jitter_off()

    def _tell_jitter_off(self) -> None:
        """Log, once, that the slots send without jitter (the user set it, or its
        default is on)."""
        if not self._told:
            self._told = True
            logger.info(
                "robots_async: ROBOTSASYNC_PACE sends the requests of its download "
                "slots at their delay without jitter (DOWNLOAD_DELAY_JITTER): a "
                "random delay after a turn sent pages closer than the site's interval"
            )

    def delay(self, request: Request) -> float:
        """The delay of ``request``'s download slot (DOWNLOAD_DELAY, a DOWNLOAD_SLOTS
        entry's, a spider's ``download_delay``), its jitter turned off. 0 under
        AutoThrottle: its delay, read as a request began to wait, held the crawl at
        its start delay (every start request waits at once, and a turn keeps the
        interval it was taken with: 8 pages 1.0 s apart where AutoThrottle halved its
        delay from 1 s after each); its slot still applies it in this process, and
        DOWNLOAD_DELAY, its floor, is the turn's."""
        slot = self._slot(request)
        if slot is None:
            return 0.0
        if slot.jitter:
            slot.jitter = 0.0  # a slot made before the spider opened (steady())
            self._tell_jitter_off()
        if self._autothrottle:
            return 0.0
        return max(0.0, float(slot.delay))

    def _slot(self, request: Request) -> Any:
        """``request``'s download slot in Scrapy's downloader, made now if it is not
        yet, as the downloader makes it (DOWNLOAD_SLOTS, AutoThrottle's start delay):
        a crawl's first requests begin to wait before any is sent, and their turns need
        its delay. None where this Scrapy has no such slots (warned once)."""
        try:
            engine: Any = self._crawler.engine
            downloader: Any = engine.downloader
        except (AttributeError, RuntimeError):
            return None  # not crawling yet (Scrapy 2.19 raises then)
        made = getattr(downloader, "_get_slot", None)  # private: guarded, warned
        found = made(request) if callable(made) else None
        slot = found[1] if isinstance(found, tuple) and len(found) == 2 else None
        if hasattr(slot, "jitter") and hasattr(slot, "delay"):
            return slot
        if not self._warned:
            self._warned = True
            logger.warning(
                "robots_async: Scrapy's download slots have no delay and jitter here; "
                "a slot's random delay can send a paced request after its turn, closer "
                "than the interval to the next one"
            )
        return None
