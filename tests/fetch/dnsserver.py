"""A tiny authoritative DNS server on 127.0.0.1 (UDP) for resolver tests and benches.

Names in ``answers`` get an A record (AAAA and other types: no data); names in
``silent`` are never answered, as a name whose lookup takes 25 s looks to a resolver
inside its deadline; anything else is NXDOMAIN. Point c-ares at it with
``aiohttp.AsyncResolver(nameservers=["127.0.0.1"], udp_port=port, tcp_port=port,
lookups="b")``. Also used by ``bench/isolation.py``.
"""

from __future__ import annotations

import asyncio
import ipaddress
import struct
from collections import Counter
from dataclasses import dataclass, field

_A, _IN = 1, 1
_NOERROR, _NXDOMAIN = 0, 3


@dataclass
class DNSServer(asyncio.DatagramProtocol):
    """Answers A queries from ``answers``; ignores ``silent`` names."""

    answers: dict[str, str] = field(default_factory=dict)
    silent: set[str] = field(default_factory=set)
    #: Queries received per name (all types).
    queries: Counter[str] = field(default_factory=Counter)
    port: int = 0
    _transport: asyncio.DatagramTransport | None = None

    async def start(self) -> DNSServer:
        """Listen on a free UDP port of 127.0.0.1."""
        loop = asyncio.get_running_loop()
        transport, _ = await loop.create_datagram_endpoint(
            lambda: self, local_addr=("127.0.0.1", 0)
        )
        self._transport = transport
        self.port = transport.get_extra_info("sockname")[1]
        return self

    def close(self) -> None:
        """Stop listening."""
        if self._transport is not None:
            self._transport.close()

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        parsed = _question(data)
        if parsed is None or self._transport is None:
            return
        name, qtype, end = parsed
        self.queries[name] += 1
        if name in self.silent:
            return
        address = self.answers.get(name)
        rcode = _NOERROR if address is not None else _NXDOMAIN
        records = b""
        if address is not None and qtype == _A:
            rdata = ipaddress.IPv4Address(address).packed
            records = struct.pack("!HHHIH", 0xC00C, _A, _IN, 60, len(rdata)) + rdata
        flags = 0x8400 | 0x0100 | 0x0080 | rcode  # response, authoritative, RD, RA
        header = struct.pack("!HHHHHH", _id(data), flags, 1, 1 if records else 0, 0, 0)
        self._transport.sendto(header + data[12:end] + records, addr)


def _id(data: bytes) -> int:
    return int(struct.unpack("!H", data[:2])[0])


def _question(data: bytes) -> tuple[str, int, int] | None:
    """(lower-cased name, qtype, offset after the question) of a query, or None."""
    labels: list[str] = []
    offset = 12
    try:
        while data[offset]:
            length = data[offset]
            labels.append(data[offset + 1 : offset + 1 + length].decode("ascii").lower())
            offset += 1 + length
        qtype = struct.unpack("!H", data[offset + 1 : offset + 3])[0]
    except (IndexError, UnicodeDecodeError, struct.error):
        return None
    return ".".join(labels), int(qtype), offset + 5
