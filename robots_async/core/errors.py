"""The exception tree of robots_async.

Content never raises: a robots.txt body is parsed leniently and problems become
``warnings``; a failed fetch becomes a documented verdict. Exceptions are kept for
misuse of the API and for adapters that must refuse a request::

    RobotsError                          base of everything raised here
    ├── InvalidURLError(ValueError)      not an absolute http(s) URL
    ├── InvalidUserAgentError(ValueError) no usable product token in a User-Agent
    ├── ConfigurationError(ValueError)   a setting refused at construction
    │   └── ConfigurationTypeError(TypeError)  ... because its type is wrong
    ├── ClosedError(RuntimeError)        parser, cache or checker used after close
    ├── EventLoopError(RuntimeError)     cache or checker used in a second event loop
    ├── StoreError                       a shared store failed (the cache carries on locally)
    │   └── InvalidRecordError           a shared record does not conform (read as a miss)
    ├── DisallowedError                  an adapter refused a request robots.txt forbids
    ├── UsageRefusedError                an adapter refused a response's content usage
    ├── URLTypeError(TypeError)          a URL of a type the checker does not take
    └── PageInputTypeError(TypeError)    page headers or body of a type we cannot read
"""

from __future__ import annotations

__all__ = [
    "ClosedError",
    "ConfigurationError",
    "ConfigurationTypeError",
    "EventLoopError",
    "InvalidRecordError",
    "InvalidURLError",
    "InvalidUserAgentError",
    "PageInputTypeError",
    "RobotsError",
    "SitemapError",
    "StoreError",
    "URLTypeError",
]


class RobotsError(Exception):
    """Base class of every exception raised by robots_async."""


class InvalidURLError(RobotsError, ValueError):
    """Raised when a URL is not absolute or its scheme is not http or https."""

    def __init__(self, url: object, reason: str) -> None:
        super().__init__(f"{reason}: {url!r}")
        self.url = url
        self.reason = reason


class URLTypeError(RobotsError, TypeError):
    """Raised for a URL that is neither text, a ``yarl.URL``, nor an object whose
    ``str()`` is an absolute http(s) URL (an ``httpx.URL``, say)."""

    def __init__(self, url: object) -> None:
        super().__init__(
            f"url must be a str, yarl.URL, httpx.URL or an object whose str() is an "
            f"absolute http(s) URL, not {type(url).__name__}"
        )
        self.url = url


class PageInputTypeError(RobotsError, TypeError):
    """Raised for response headers that are neither a mapping, a multi-dict nor an
    iterable of ``(name, value)`` pairs of str or bytes, or a body that is not bytes."""

    def __init__(self, what: str, value: object) -> None:
        super().__init__(f"{what}; got {type(value).__name__}")
        self.value = value


class InvalidUserAgentError(RobotsError, ValueError):
    """Raised when no RFC 9309 product token can be derived from a User-Agent."""


class ClosedError(RobotsError, RuntimeError):
    """Raised when a parser, cache or checker is used after it was closed."""


class StoreError(RobotsError):
    """Raised by a shared store that cannot be reached or answered nonsense."""


class InvalidRecordError(StoreError):
    """Raised for a shared-store record that does not conform to the record schema."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"invalid record: {field}: {reason}")
        self.field = field
        self.reason = reason


class EventLoopError(RobotsError, RuntimeError):
    """Raised when a cache or checker is used in an event loop other than its first.

    Its fetches, connections and in-flight tasks belong to that loop (each
    ``asyncio.run()`` makes a new one): create the checker inside the loop using it.
    """


class SitemapError(RobotsError):
    """A sitemap that cannot be read safely (entity declarations, malformed XML).

    Raised inside the sitemap parser and turned into that sitemap's warning: it ends
    one sitemap, never the iteration over an origin's sitemaps.
    """


class ConfigurationError(RobotsError, ValueError):
    """Raised at construction for a setting outside its accepted values.

    Bad configuration fails loudly and early, never as a silent verdict later:
    ``setting`` names it, ``value`` is what was given, ``accepted`` says what is
    allowed (also in the message).
    """

    def __init__(self, setting: str, value: object, accepted: str) -> None:
        super().__init__(f"{setting}={_shown(value)} is not accepted: expected {accepted}")
        self.setting = setting
        self.value = value
        self.accepted = accepted


class ConfigurationTypeError(ConfigurationError, TypeError):
    """A :class:`ConfigurationError` for a setting of the wrong type (also a TypeError)."""


def _shown(value: object) -> str:
    """``repr(value)`` cut to 200 characters for a message; an int too long for
    ``repr`` (over ``sys.get_int_max_str_digits()`` digits) is described instead."""
    try:
        text = repr(value)
    except ValueError:
        return f"<{type(value).__name__} too large to print>"
    return text if len(text) <= 200 else text[:200] + "..."
