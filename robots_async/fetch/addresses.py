"""Which IP addresses are public: the SSRF guard's notion of "inside".

Written out as explicit networks rather than read from ``ipaddress``'s
``is_private``/``is_global``, whose lists changed between Python releases (3.11 to
3.13) and omit carrier-grade NAT: the guard must not change with the interpreter.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable

__all__ = ["IPAddress", "PublicAddress", "ip_or_none", "is_public", "legacy_ipv4"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
#: Decides whether an address counts as public (tests inject their own).
PublicAddress = Callable[[IPAddress], bool]

_V4 = tuple(
    ipaddress.IPv4Network(net)
    for net in (
        "0.0.0.0/8",  # "this network", the unspecified address
        "10.0.0.0/8",  # private (RFC 1918)
        "100.64.0.0/10",  # carrier-grade NAT (RFC 6598); 100.100.100.200 cloud metadata
        "127.0.0.0/8",  # loopback
        "169.254.0.0/16",  # link-local; 169.254.169.254 cloud metadata
        "172.16.0.0/12",  # private (RFC 1918)
        "192.0.0.0/24",  # IETF protocol assignments (RFC 6890), e.g. 192.0.0.192 metadata
        "192.0.2.0/24",  # documentation
        "192.168.0.0/16",  # private (RFC 1918)
        "198.18.0.0/15",  # benchmarking, used inside networks
        "198.51.100.0/24",  # documentation
        "203.0.113.0/24",  # documentation
        "224.0.0.0/4",  # multicast
        "240.0.0.0/4",  # reserved, 255.255.255.255 broadcast
    )
)
_V6 = tuple(
    ipaddress.IPv6Network(net)
    for net in (
        "::/96",  # unspecified, loopback, deprecated IPv4-compatible addresses
        "64:ff9b:1::/48",  # local-use NAT64 (RFC 8215)
        "100::/64",  # discard-only
        "2001:db8::/32",  # documentation
        "fc00::/7",  # unique-local (fd00:ec2::254: cloud metadata)
        "fe80::/10",  # link-local
        "fec0::/10",  # deprecated site-local
        "ff00::/8",  # multicast
    )
)
#: NAT64 well-known prefix (RFC 6052): the last 32 bits are the IPv4 destination.
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def is_public(address: IPAddress) -> bool:
    """True unless ``address`` is loopback, private, link-local, CGNAT, unique-local,
    metadata, documentation, reserved, unspecified or multicast, directly or as the
    IPv4 address embedded in an IPv4-mapped, NAT64, 6to4 or Teredo address."""
    if isinstance(address, ipaddress.IPv4Address):
        return not any(address in net for net in _V4)
    embedded = _embedded_v4(address)
    if embedded is not None:
        return is_public(embedded)
    teredo = address.teredo
    if teredo is not None:
        return all(is_public(part) for part in teredo)
    return not any(address in net for net in _V6)


def ip_or_none(text: str) -> IPAddress | None:
    """``text`` as an IP address (brackets and a zone index allowed), else None."""
    text = text.strip("[]")
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def legacy_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """The address ``inet_aton`` reads in a digits-and-dots host that is not a
    dotted quad (``2130706433``, ``127.1``, ``0177.0.0.1``, ``127.0.0.1.``), else None.

    aiohttp refuses to connect to these (an invalid URL, read as "unavailable"); the
    guard judges them first, so a hop into non-public space reads as refused.
    """
    text = host.removesuffix(".")
    if not text.isascii() or not text.replace(".", "").isdigit():
        return None
    try:
        return ipaddress.IPv4Address(socket.inet_aton(text))
    except OSError:
        return None


def _embedded_v4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv4-mapped, NAT64 or 6to4 address reaches, if any."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address.sixtofour
