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

from scrapy.resolver import CachingThreadedResolver, dnscache
from twisted.internet import defer

from robots_async.contrib.scrapy import RobotsTxtMiddleware
from robots_async.fetch.addresses import is_public

if TYPE_CHECKING:
    from collections.abc import Sequence

    from robots_async.fetch.addresses import IPAddress

PUBLIC_TWIN = "127.0.0.2"


def declared_public(address: IPAddress) -> bool:
    """The default classifier, with 127.0.0.2 standing in for a public address."""
    return address == ipaddress.ip_address(PUBLIC_TWIN) or is_public(address)


class DeclaredPublicMiddleware(RobotsTxtMiddleware):
    """The drop-in middleware, for which 127.0.0.2 is public."""

    public_address = staticmethod(declared_public)


class MappedResolver(CachingThreadedResolver):
    """Answers the names of ``SSRF_TEST_HOSTS`` itself: name -> a list of IPv4
    addresses, the i-th lookup getting the i-th (the last repeats), as a rebinding
    name does. Scrapy's DNS cache (``DNSCACHE_ENABLED``) still applies."""

    hosts: dict[str, list[str]]
    lookups: dict[str, int]

    @classmethod
    def from_crawler(cls, crawler: Any, reactor: Any) -> Any:
        """Scrapy's resolver, plus the test's names."""
        resolver = super().from_crawler(crawler, reactor)
        resolver.hosts = dict(crawler.settings.getdict("SSRF_TEST_HOSTS"))
        resolver.lookups = {}
        return resolver

    def getHostByName(self, name: str, timeout: Sequence[int] = ()) -> Any:
        """The scripted address for a test name, else Scrapy's lookup."""
        answers = self.hosts.get(name)
        if answers is None or name in dnscache:
            return super().getHostByName(name, timeout)
        seen = self.lookups[name] = self.lookups.get(name, 0) + 1
        address = answers[min(seen, len(answers)) - 1]
        if dnscache.limit:
            dnscache[name] = address
        return defer.succeed(address)
