"""Content codings aiohttp leaves undone: stacks (``gzip, deflate``) and ``x-gzip``.

aiohttp decodes a response only when its first ``Content-Encoding`` value is exactly
one coding it knows; ``gzip, deflate`` (RFC 9110 §8.4: applied in that order) reaches
the reader still compressed, and those bytes parsed as robots.txt read as an empty
file: allow all. :func:`plan` says, from every ``Content-Encoding`` value of a
response, whether aiohttp's body is text, needs decoding here, or cannot be read (the
fetch then fails closed, as a protocol error). :class:`StackDecoder` removes the
codings last-applied first, each step bounded, so a bomb stacked in layers still stops
at the parser's byte limit.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

__all__ = ["ACCEPTED_CODINGS", "CodingPlan", "StackDecoder", "decode_whole", "plan"]

#: Codings aiohttp decodes itself when one is the whole header value.
_AIOHTTP_DECODES: Final = frozenset({"gzip", "deflate", "br", "zstd"})


def _brotli() -> tuple[Any, type[Exception]]:
    """Brotli's streaming decompressor class and error when a version with bounded
    output (``output_buffer_limit``, Brotli 1.2) is installed; (None, ValueError)
    otherwise: br is then neither asked for nor read (it fails closed)."""
    try:
        import brotli
    except ImportError:
        return None, ValueError
    decompressor = getattr(brotli, "Decompressor", None)
    if decompressor is None or not hasattr(decompressor(), "can_accept_more_data"):
        return None, ValueError
    return decompressor, brotli.error


_BROTLI, _BROTLI_ERROR = _brotli()
#: Codings this module decodes, alone or stacked; every stream is checked to its end.
_DECODED_HERE: Final = frozenset({"gzip", "x-gzip", "deflate"} | ({"br"} if _BROTLI else set()))
#: The Accept-Encoding of robots.txt requests: what this module decodes.
ACCEPTED_CODINGS: Final = "gzip, deflate, br" if _BROTLI else "gzip, deflate"
#: Codings that mean "not compressed", and values seen in the wild from servers that
#: mislabel plain text (``Content-Encoding: utf-8``); their bodies are read as they are.
_NOT_COMPRESSION: Final = frozenset({"identity", "", "none", "utf-8", "utf8", "text", "binary"})
#: Codings nobody decodes here, alone or stacked: the body cannot be read. The IANA
#: HTTP Content Coding registry's (RFC 9110 §16.6.1) and common unregistered
#: compressions (an unknown token is otherwise taken for a mislabelled plain body).
_UNREADABLE: Final = frozenset(
    {
        "compress", "x-compress", "br", "zstd", "exi", "pack200-gzip", "aes128gcm",
        "dcb", "dcz", "bzip2", "x-bzip2", "xz", "lzma", "lz4", "snappy",
    } - _DECODED_HERE
)  # fmt: skip
#: Output bound of one decompression step (bytes); a bomb expands one step at a time.
_STEP = 64 * 1024
#: What an inner stage may take in beyond twice the final output (bytes). Compressed
#: data is at most ~0.1% larger than its text, so a real stack stays far below this;
#: an inner stream that swallows input without output (bytes after its end, a gzip
#: comment, empty deflate blocks) would otherwise make the outer stages expand
#: without bound on the event loop: 589 bytes on the wire cost 241 s of CPU.
_SLACK = 1024 * 1024
#: The first bytes of a gzip member (RFC 1952 §2.3.1).
_GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True, slots=True)
class CodingPlan:
    """How to read a response body given its ``Content-Encoding`` values."""

    #: "as-is": aiohttp's bytes are the text (decoded by it, or never encoded);
    #: "decode": run them through :class:`StackDecoder` (``codings`` in applied order);
    #: "refuse": they cannot be read (``reason`` says why).
    action: Literal["as-is", "decode", "refuse"]
    codings: tuple[str, ...] = ()
    reason: str = ""


def plan(
    values: Iterable[str], transfer: Iterable[str] = (), *, client_decodes: bool = True
) -> CodingPlan:
    """The plan for a response whose ``Content-Encoding`` header lines are ``values``
    (``transfer``: its ``Transfer-Encoding`` lines). ``client_decodes``: the codings
    are those aiohttp read (False: what is left after a client that removes the
    codings it decodes from the header, as Scrapy's HttpCompressionMiddleware does)."""
    lines = list(values)
    # aiohttp removes only "chunked": a transfer coding before it (RFC 9112 §6.1,
    # "gzip, chunked") reached the parser compressed and read as an empty file.
    # Sent without our asking (we send no TE header), it fails closed.
    for line in transfer:
        for token in (part.partition(";")[0].strip().lower() for part in line.split(",")):
            if token not in {"chunked", "identity", ""}:
                return CodingPlan("refuse", (token,), f"transfer coding {token!r} not supported")
    codings = tuple(
        token
        for line in lines
        # A coding takes no parameters (RFC 9110 §8.4.1); one sent anyway
        # ("gzip;q=1") still names the coding, whose bytes were once parsed as text.
        for token in (part.partition(";")[0].strip().lower() for part in line.split(","))
        if token not in _NOT_COMPRESSION
    )
    if not codings:
        return CodingPlan("as-is")
    first_line = lines[0].strip().lower() if lines[0].isascii() else ""
    aiohttp_decoded = client_decodes and first_line in _AIOHTTP_DECODES
    if aiohttp_decoded and len(codings) == 1:
        return CodingPlan("as-is")
    if aiohttp_decoded:
        # aiohttp already undid the first-applied coding before the later ones: the
        # order is wrong and the bytes are lost. Fail closed.
        return CodingPlan("refuse", codings, f"content codings {', '.join(codings)} split "
                          "over several header lines")  # fmt: skip
    unknown = [c for c in codings if c not in _DECODED_HERE]
    if not unknown:
        return CodingPlan("decode", codings)
    unreadable = [c for c in unknown if c in _UNREADABLE or len(codings) > 1]
    if unreadable:
        return CodingPlan("refuse", codings, f"content coding {unreadable[0]!r} not supported")
    # One unknown token that names no compression (``Content-Encoding: latin-1``): a
    # mislabelled plain body, read as it is rather than refused.
    return CodingPlan("as-is")


class StackDecoder:
    """Removes a stack of gzip/deflate codings, last-applied first, in bounded steps."""

    def __init__(self, codings: tuple[str, ...]) -> None:
        # Decoders in the order they run: the last coding applied is removed first.
        self._stages: list[_Stage | _BrotliStage] = [
            _BrotliStage() if coding == "br" else _Stage(coding) for coding in reversed(codings)
        ]
        # Bytes fed to each stage after the first, and bytes given out at the end.
        self._fed = [0] * len(self._stages)
        self._out = 0

    def feed(self, data: bytes) -> Iterator[bytes]:
        """Decoded pieces of at most ``_STEP`` bytes each for ``data``; stop iterating
        whenever enough was read (the rest of the input is then never expanded)."""
        return self._through(0, data)

    def flush(self) -> Iterator[bytes]:
        """What remains once the input has ended; raises zlib.error on a cut stream."""
        for index, stage in enumerate(self._stages):
            yield from self._through(index + 1, stage.flush())

    def _through(self, index: int, data: bytes) -> Iterator[bytes]:
        if index == len(self._stages):
            if data:
                self._out += len(data)
                yield data
            return
        if index:
            self._fed[index] += len(data)
            if self._fed[index] > 2 * self._out + _SLACK:
                raise zlib.error(f"{self._stages[index].coding} stream expands without output")
        for piece in self._stages[index].decode(data):
            yield from self._through(index + 1, piece)


class _Stage:
    """One zlib decoder with bounded output per call."""

    def __init__(self, coding: str) -> None:
        self.coding = coding
        self._decoder: zlib._Decompress | None = None
        self._pending = b""
        self._ignoring = False  # bytes after the last stream: ignored

    def _start(self, data: bytes) -> zlib._Decompress:
        if self.coding == "deflate":
            # RFC 9110 §8.4.1.2 says zlib-wrapped; many servers send raw deflate, which
            # browsers (and aiohttp) also accept: the first byte tells them apart.
            wrapped = (data[0] & 0x0F) == 8 and (data[0] << 8 | data[1]) % 31 == 0
            return zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)
        return zlib.decompressobj(16 + zlib.MAX_WBITS)

    def decode(self, data: bytes) -> Iterator[bytes]:
        """Decoded pieces of ``data``, each at most ``_STEP`` bytes."""
        while data and not self._ignoring:
            if self._decoder is None or self._decoder.eof:
                data, self._pending = self._pending + data, b""
                if len(data) < 2:
                    self._pending = data
                    return
                if self._decoder is not None and not self._next_member(data):
                    # Trailing bytes after the stream end are ignored, as browsers do.
                    self._ignoring = True
                    return
                self._decoder = self._start(data)
            piece = self._decoder.decompress(data, _STEP)
            data = self._decoder.unconsumed_tail or self._decoder.unused_data
            if piece:
                yield piece

    def _next_member(self, data: bytes) -> bool:
        """True if ``data`` after an ended stream starts another gzip member: a gzip
        body is a series of members (RFC 1952 §2.2), all decoded (as aiohttp does)."""
        return self.coding != "deflate" and data.startswith(_GZIP_MAGIC)

    def flush(self) -> bytes:
        """The decoder's remaining output (empty once its stream has ended)."""
        if self._decoder is None:
            if self._pending:
                raise zlib.error(f"{self.coding} stream cut short")
            return b""
        if not self._decoder.eof:
            raise zlib.error(f"{self.coding} stream cut short")
        return self._decoder.flush()


class _BrotliStage:
    """One brotli decoder (RFC 7932) with bounded output per call; its errors and a cut
    stream are raised as zlib.error, as the other stages' are."""

    coding = "br"

    def __init__(self) -> None:
        self._decoder = _BROTLI()

    def decode(self, data: bytes) -> Iterator[bytes]:
        """Decoded pieces of ``data``, each at most ``_STEP`` bytes."""
        decoder = self._decoder
        try:
            if decoder.is_finished():
                return  # bytes after the stream's end are ignored, as gzip's
            # Output pending past the limit comes from more calls with no input, until
            # one gives nothing (can_accept_more_data() is already True by then).
            piece = decoder.process(data, output_buffer_limit=_STEP)
            while piece:
                yield piece
                piece = decoder.process(b"", output_buffer_limit=_STEP)
        except _BROTLI_ERROR as exc:
            raise zlib.error(f"br: {exc}") from exc

    def flush(self) -> bytes:
        """Nothing more; raises zlib.error if the stream did not end."""
        if not self._decoder.is_finished():
            raise zlib.error("br stream cut short")
        return b""


def decode_whole(body: bytes, codings: tuple[str, ...], limit: int | None) -> bytes:
    """``body`` with ``codings`` removed, stopping once ``limit`` bytes are out (the
    rest is ignored, as past the parser's limit); raises zlib.error if unreadable."""
    decoder = StackDecoder(codings)
    out = bytearray()
    for piece in decoder.feed(body):
        out += piece
        if limit is not None and len(out) >= limit:
            return bytes(out)
    for piece in decoder.flush():
        out += piece
    return bytes(out)
