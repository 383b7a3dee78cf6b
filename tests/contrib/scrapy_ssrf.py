"""Scrapy components for test_scrapy_ssrf.py, loaded by path in the crawl subprocess.

:class:`DeclaredPublicMiddleware` is the drop-in middleware with 127.0.0.2 declared
public (every test server is on 127.0.0.0/8). :class:`MappedResolver` is Scrapy's
default resolver with some names answered from the ``SSRF_TEST_HOSTS`` setting: the
connection then reaches an address that no lookup of the guard's can see (the
system resolver does not know the name), as with DNS rebinding.
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING, Any

from scrapy.resolver import CachingThreadedResolver
from twisted.internet import defer

from robots_async._addresses import is_public
from robots_async.contrib.scrapy import RobotsTxtMiddleware

if TYPE_CHECKING:
    from collections.abc import Sequence

    from robots_async._addresses import IPAddress

PUBLIC_TWIN = "127.0.0.2"


def declared_public(address: IPAddress) -> bool:
    """The default classifier, with 127.0.0.2 standing in for a public address."""
    return address == ipaddress.ip_address(PUBLIC_TWIN) or is_public(address)


class DeclaredPublicMiddleware(RobotsTxtMiddleware):
    """The drop-in middleware, for which 127.0.0.2 is public."""

    public_address = staticmethod(declared_public)


class MappedResolver(CachingThreadedResolver):
    """Answers the names of ``SSRF_TEST_HOSTS`` (name -> IPv4 address) itself."""

    hosts: dict[str, str]

    @classmethod
    def from_crawler(cls, crawler: Any, reactor: Any) -> Any:
        """Scrapy's resolver, plus the test's names."""
        resolver = super().from_crawler(crawler, reactor)
        resolver.hosts = dict(crawler.settings.getdict("SSRF_TEST_HOSTS"))
        return resolver

    def getHostByName(self, name: str, timeout: Sequence[int] = ()) -> Any:
        """The mapped address for a test name, else Scrapy's lookup."""
        if name in self.hosts:
            return defer.succeed(self.hosts[name])
        return super().getHostByName(name, timeout)
