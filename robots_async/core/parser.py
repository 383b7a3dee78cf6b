"""Incremental robots.txt tokenizer: bytes in, one event per directive line out.

Feed it chunks as they arrive; any chunking gives the same events as one ``feed`` of
the whole body. Line handling follows Google's reference: a UTF-8 BOM (even partial)
is skipped at the start, CR, LF and CRLF end lines, 16,663 bytes of a line are kept,
a NUL ends a line's content, ``#`` starts a comment anywhere.
"""

from __future__ import annotations

import re
import sys
from itertools import compress, count, repeat
from operator import itemgetter, lt
from typing import TYPE_CHECKING, Final

from .errors import ClosedError
from .policy import MatchPolicy, PolicyName, get_policy
from .results import W
from .robots import RobotsTxt
from .rules import (
    ALLOW,
    CLEAN_PARAM,
    CONTENT_SIGNAL,
    CONTENT_USAGE,
    CRAWL_DELAY,
    DETAIL_BYTES,
    DISALLOW,
    HOST,
    MAX_WARNINGS,
    REQUEST_RATE,
    SITEMAP,
    UNKNOWN,
    USER_AGENT,
    VISIT_TIME,
    RulesBuilder,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator


__all__ = ["DEFAULT_MAX_BYTES", "MAX_LINE_BYTES", "RobotsParser", "parse"]

#: Google keeps 2083 * 8 - 1 bytes of a line; the rest up to the line end is dropped.
MAX_LINE_BYTES: Final = 16_663
#: RFC 9309 §2.5: the parsing limit MUST be at least 500 KiB; content after it is ignored.
DEFAULT_MAX_BYTES: Final = 512_000

_BOM: Final = b"\xef\xbb\xbf"
# Int needles: `in` takes them on a fast path (13 ns; b"#" costs 95 ns a call).
_HASH: Final = ord("#")
_NUL: Final = 0
_CR: Final = ord("\r")
_BOM_DONE: Final = 3
# A comment runs from "#" to the line break. _split replaces it with one space, not
# nothing: "\r#c\n" must stay two line breaks, and values are stripped anyway.
_COMMENT: Final = re.compile(rb"#[^\r\n]*")
# The same without CRs in the text: SRE runs "." 8x faster than a class (a minified
# 190 KB line with a "#": 48 us instead of 390 us).
_COMMENT_NO_CR: Final = re.compile(rb"#.*")

_CANONICAL: Final = {
    b"user-agent": USER_AGENT,
    b"allow": ALLOW,
    b"disallow": DISALLOW,
    b"sitemap": SITEMAP,
}
# Not part of RFC 9309; parsed and exposed, never used for the allow decision.
_EXTENSIONS: Final = {
    b"crawl-delay": CRAWL_DELAY,
    b"request-rate": REQUEST_RATE,
    b"visit-time": VISIT_TIME,
    b"host": HOST,
    b"clean-param": CLEAN_PARAM,
    # draft-ietf-aipref-attach: AI usage preferences; never used for Allow/Disallow.
    b"content-usage": CONTENT_USAGE,
    # contentsignals.org: usage signals per group; never used for Allow/Disallow.
    b"content-signal": CONTENT_SIGNAL,
    b"content-signals": CONTENT_SIGNAL,  # a misspelling seen in files (crawler-commons)
}
# Google's key spellings in the order its parser tests them (matched by prefix).
_GOOGLE_PREFIXES: Final = (
    (b"user-agent", USER_AGENT, False),
    (b"useragent", USER_AGENT, True),
    (b"user agent", USER_AGENT, True),
    (b"allow", ALLOW, False),
    (b"disallow", DISALLOW, False),
    (b"dissallow", DISALLOW, True),
    (b"dissalow", DISALLOW, True),
    (b"disalow", DISALLOW, True),
    (b"diasllow", DISALLOW, True),
    (b"disallaw", DISALLOW, True),
    (b"sitemap", SITEMAP, False),
    (b"site-map", SITEMAP, True),
)


def _prefix_pattern(*, typos: bool) -> re.Pattern[bytes]:
    """Google's spellings as one alternation: the first that matches wins, as in its
    loop (one match instead of 12 ``startswith``: 175 ns, not 680, for CSS's
    ``display`` and other unknown keys)."""
    spellings = (s for s, _, typo in _GOOGLE_PREFIXES if typos or not typo)
    return re.compile(b"|".join(map(re.escape, spellings)))


_PREFIXES: Final = _prefix_pattern(typos=False)
_TYPO_PREFIXES: Final = _prefix_pattern(typos=True)
_PREFIX_KINDS: Final = {spelling: (kind, typo) for spelling, kind, typo in _GOOGLE_PREFIXES}


def _spellings(keys: dict[bytes, int]) -> dict[bytes, int]:
    """Each key as lower case, Capitalised and Title-Cased (how files write them)."""
    table = dict(keys)
    for key, kind in keys.items():
        table[key.capitalize()] = kind
        table[key.title()] = kind
        table[key.upper()] = kind
    return table


_KINDS: Final = _spellings(_CANONICAL | _EXTENSIONS)


def _limit(value: object, name: str) -> int | None:
    """Validate the setting ``name``: a non-negative int, or None for no limit."""
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int or None, not {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{name} must not be negative: {value}")
    return value


def _has_long_line(text: bytes) -> bool:
    """Whether a line of ``text`` is longer than the cap.

    Jumps from the last break within each window of MAX_LINE_BYTES + 1 bytes to
    the next window: a few ``rfind`` calls per 16 KB, no list of lines.
    """
    start, end = 0, len(text)
    while end - start > MAX_LINE_BYTES:
        window = start + MAX_LINE_BYTES + 1
        brk = max(text.rfind(b"\n", start, window), text.rfind(b"\r", start, window))
        if brk < 0:
            return True
        start = brk + 1
    return False


def _without_comments(text: bytes) -> bytes:
    """``text`` with each comment replaced by a space (see _COMMENT)."""
    if _HASH not in text:
        return text
    return (_COMMENT if _CR in text else _COMMENT_NO_CR).sub(b" ", text)


def _ignore(_: object) -> None:
    """Stands in for a group's patterns.append before the first group."""


# First bytes of every key spelling we know; a key starting otherwise is unknown.
_KEY_INITIALS: Final = frozenset(
    bytes([c]) for k in (*_CANONICAL, *_EXTENSIONS) for c in (k[0], k[0] - 32)
)
#: A line's first byte (b"" for an empty line).
_LEAD: Final = itemgetter(slice(0, 1))
#: The text of a numbered line.
_TEXT: Final = itemgetter(1)
#: What precedes the separator in a partition() result.
_BEFORE: Final = itemgetter(0)
#: A line that starts with one of these (lower-cased) may be a directive: every key
#: we know, and every spelling Google accepts as a prefix of a key.
_KEY_STARTS: Final = tuple(
    sorted({*_CANONICAL, *_EXTENSIONS, *(p for p, _, _ in _GOOGLE_PREFIXES)})
)
#: Lines of a long chunk the loop takes at a time (see RobotsParser._lines).
_BLOCK: Final = 512


def _candidates(lines: list[bytes], first: int) -> Iterator[tuple[int, bytes]]:
    """The numbered lines that may hold a directive: they start with a key we know.

    Others can only add warnings, so once the warnings are full they are skipped
    by filters that run in C: a key's first byte, then a key's spelling on the few
    lines left (~110 ns a line, half of the loop's; a regex for the spelling cost
    ~450 ns a line). Lines come back without leading whitespace: the loop strips
    keys and values anyway.
    """
    stripped = list(map(bytes.lstrip, lines))
    leads = map(_KEY_INITIALS.__contains__, map(_LEAD, stripped))
    numbered = list(compress(enumerate(stripped, first), leads))
    spelled = map(bytes.startswith, map(bytes.lower, map(_TEXT, numbered)), repeat(_KEY_STARTS))
    return compress(numbered, spelled)


class RobotsParser:
    """Incremental robots.txt parser: ``feed()`` chunks of bytes, then ``close()``.

    :param policy: ``"google"`` (default), ``"rfc9309"``, ``"first-match"`` or a
        :class:`MatchPolicy`.
    :param max_bytes: bytes parsed at most (RFC 9309 §2.5); later input is ignored
        cheaply, the line cut by the limit is dropped, and ``truncated`` is set.
        ``None`` means no limit.
    :param max_warnings: line warnings kept (the first ones; a ``too-many-warnings``
        marker says more were dropped); file-level warnings are always kept.
        ``None`` keeps every one (a linter's choice; a cache wants the bound).
    """

    __slots__ = (
        "_bom",
        "_builder",
        "_closed",
        "_line",
        "_max_bytes",
        "_pending",
        "_policy",
        "_seen",
        "_skip_lf",
        "_truncated",
    )

    def __init__(
        self,
        policy: PolicyName | MatchPolicy = "google",
        *,
        max_bytes: int | None = DEFAULT_MAX_BYTES,
        max_warnings: int | None = MAX_WARNINGS,
    ) -> None:
        self._max_bytes = _limit(max_bytes, "max_bytes")
        self._policy = get_policy(policy)
        cap = _limit(max_warnings, "max_warnings")
        self._builder = RulesBuilder(self._policy, sys.maxsize if cap is None else cap)
        self._pending = bytearray()
        self._bom = 0
        self._line = 0
        self._seen = 0
        self._skip_lf = False
        self._truncated = False
        self._closed = False

    @property
    def truncated(self) -> bool:
        """True once input beyond ``max_bytes`` has been seen (and ignored)."""
        return self._truncated

    @property
    def bytes_seen(self) -> int:
        """How many bytes were accepted for parsing (at most ``max_bytes``)."""
        return self._seen

    def feed(self, chunk: bytes | bytearray | memoryview) -> None:
        """Parse the complete lines in ``chunk``; keep a partial last line for later.

        :raises TypeError: if ``chunk`` is not bytes-like.
        :raises ClosedError: after :meth:`close`.
        """
        self._feed(chunk, last=False)

    def _feed(self, chunk: bytes | bytearray | memoryview, *, last: bool) -> None:
        """:meth:`feed`; ``last`` says that the body ends with this chunk (parse())."""
        if not isinstance(chunk, (bytes, bytearray, memoryview)):
            raise TypeError(f"feed() takes bytes, not {type(chunk).__name__}")
        if self._closed:
            raise ClosedError("feed() after close()")
        if self._truncated or not chunk:
            return
        data = self._accept(chunk if type(chunk) is bytes else bytes(chunk))
        if self._bom != _BOM_DONE:
            if self._bom == 0 and data[:1] != _BOM[:1]:
                self._bom = _BOM_DONE  # the usual start: no BOM at all
            else:
                data = self._skip_bom(data)
        if self._skip_lf and data:
            # A CR ended the previous chunk: an LF right after it belongs to that break.
            self._skip_lf = False
            if data[0] == 0x0A:
                data = data[1:]
        if data:
            self._split(data, last=last and not self._truncated)

    def close(self) -> RobotsTxt:
        """Parse the final line (if the body did not end with a break) and build.

        :raises ClosedError: when called twice.
        """
        if self._closed:
            raise ClosedError("close() called twice")
        self._closed = True
        if self._pending:
            if self._truncated:
                self._builder.warn(self._line + 1, W.TRUNCATED_LINE, "")
            else:
                line = bytes(self._pending)
                self._lines(self._clip([line], line))
            self._pending.clear()
        if self._truncated:
            self._builder.warn(self._line, W.TRUNCATED, str(self._max_bytes))
        rules = self._builder.build()
        return RobotsTxt(
            rules.groups,
            policy=rules.policy,
            sitemaps=rules.sitemaps,
            host=rules.host,
            clean_params=rules.clean_params,
            warnings=rules.warnings,
            truncated=self._truncated,
            file_signals=rules.file_signals,
        )

    def _accept(self, data: bytes) -> bytes:
        """Count ``data`` against ``max_bytes`` and cut it at the limit."""
        limit = self._max_bytes
        if limit is not None and self._seen + len(data) > limit:
            data = data[: limit - self._seen]
            self._truncated = True
        self._seen += len(data)
        return data

    def _skip_bom(self, data: bytes) -> bytes:
        """Skip a leading UTF-8 BOM, or a prefix of one, split across any chunks."""
        matched, i = self._bom, 0
        while matched < len(_BOM) and i < len(data) and data[i] == _BOM[matched]:
            matched += 1
            i += 1
        # Undecided only if the chunk ran out while every byte so far fitted the BOM.
        self._bom = matched if i == len(data) and matched < len(_BOM) else _BOM_DONE
        return data[i:]

    def _split(self, data: bytes, *, last: bool) -> None:
        """Parse the complete lines of ``data`` (all of it if ``last``), keep the rest."""
        # The end of the body ends its last line: parse() needs no close() pass for
        # a body without a final line break (a third of the corpus): -1.5 us each.
        end = len(data) - 1 if last else max(data.rfind(b"\n"), data.rfind(b"\r"))
        pending = self._pending
        if end < 0:
            # No break yet: keep one byte past the cap, enough to report a long line.
            room = MAX_LINE_BYTES + 1 - len(pending)
            if room > 0:
                pending += data[:room]
            return
        self._skip_lf = end == len(data) - 1 and data[end] == 0x0D
        complete = data[: end + 1]
        if pending:
            complete = bytes(pending) + complete
            pending.clear()
        rest = data[end + 1 :]
        if _NUL in complete or (len(complete) > MAX_LINE_BYTES and _has_long_line(complete)):
            self._lines(self._clip(complete.splitlines(), complete))
        else:
            # One C pass for the chunk's comments instead of a test per line in
            # _lines: -2.5 us a file (bench_core corpus, 42 us).
            self._lines(_without_comments(complete).splitlines())
        if rest:
            pending += rest[: MAX_LINE_BYTES + 1]

    def _lines(self, lines: list[bytes]) -> None:
        """Emit the directives of complete lines (clipped, comments removed).

        Once the warnings are full (HTML served as robots.txt fills them within its
        first few hundred lines), only lines that can hold a directive are looped
        over: the others could only have added a warning. Long chunks go to the
        loop in blocks so that this starts as soon as the warnings are full.
        """
        first = self._line + 1
        self._line += len(lines)
        warnings, cap = self._builder.warnings, self._builder.max_warnings
        if len(warnings) > cap:
            self._directives(_candidates(lines, first))
        elif len(lines) <= _BLOCK:
            # enumerate() instead of `n += 1` in the loop: -1.2 us a file (corpus: 43 us).
            self._directives(enumerate(lines, first))
        else:
            for start in range(0, len(lines), _BLOCK):
                block = lines[start : start + _BLOCK]
                if len(warnings) > cap:
                    self._directives(_candidates(block, first + start))
                else:
                    self._directives(enumerate(block, first + start))

    def _directives(self, numbered: Iterable[tuple[int, bytes]]) -> None:  # noqa: PLR0912
        """The hot loop of parsing: one directive (or warning) per numbered line.

        Allow/Disallow lines (most of a file) are appended to the current group
        inline, and junk (HTML served as robots.txt) is recorded without a call;
        every other directive goes to its builder handler. Splitting this loop into
        helpers costs a call per line: bench/bench_core.py measured it.
        """
        builder = self._builder
        kinds, allow, initials = _KINDS, ALLOW, _KEY_INITIALS  # locals: LOAD_FAST in the loop
        handle = builder.handle
        warnings, sitemaps, cap = builder.warnings, builder.sitemaps, builder.max_warnings
        group = builder.group
        add_pattern: Callable[[bytes], None]
        add_line: Callable[[int], None]
        if group is None:
            # A rule before the first group only gives a warning: the hot path below
            # needs no test for it (its signed line number tells Allow from Disallow).
            add_pattern, add_line = _ignore, builder.rule_outside_group
        else:
            add_pattern, add_line = group.patterns.append, group.lines.append
        for n, raw in numbered:
            key, colon, value = raw.partition(b":")
            if colon:
                # The usual spellings are in the table as written: no lower(), no strip().
                kind = kinds.get(key)
                if kind is None:
                    key = key.strip()
                    # Junk (CSS, HTML) is told apart by its first byte before lower().
                    if key[:1] not in initials:
                        if key and len(warnings) <= cap:
                            warnings.append((n, W.UNKNOWN_KEY, key[:DETAIL_BYTES]))
                        continue
                    kind = kinds.get(key.lower())
                    if kind is None:
                        kind = self._classify(key, n)
                if kind <= allow:  # DISALLOW or ALLOW: the hot path
                    add_pattern(value)
                    add_line(-n if kind else n)
                elif kind == USER_AGENT:
                    group = builder.user_agent(n, value.strip())
                    add_pattern, add_line = group.patterns.append, group.lines.append
                # An absolute URL, the usual case, is kept without a call (-0.3 us a
                # line); find() >= 0 is twice as fast as `in` for a bytes needle.
                elif kind == SITEMAP and value.find(b"://") >= 0:
                    sitemaps[value.strip()] = None
                elif kind != UNKNOWN:
                    handle(kind, n, value.strip())
                continue
            raw = raw.strip()
            if not raw:
                continue
            if raw[:1] in initials:
                self._no_colon(raw, n)
                if builder.group is not group:
                    group = builder.group
                    if group is not None:
                        add_pattern, add_line = group.patterns.append, group.lines.append
            elif len(warnings) <= cap:
                warnings.append((n, W.NO_SEPARATOR, raw[:DETAIL_BYTES]))

    def _clip(self, lines: list[bytes], text: bytes) -> list[bytes]:
        """Apply the line cap, the NUL rule and comments to the ``lines`` of ``text``
        (rare input: a long line or a NUL in it), each rule one pass in C. A loop
        over the lines was half the parse of such files (HTML pages with a long
        script line: www.renderotica.com's 4,534 lines, 0.8 of 1.6 ms)."""
        if len(text) > MAX_LINE_BYTES:
            first = self._line + 1
            for i in compress(count(), map(lt, repeat(MAX_LINE_BYTES), map(len, lines))):
                self._builder.long_line(first + i, len(lines[i]))
                lines[i] = lines[i][:MAX_LINE_BYTES]
        # Content ends at a NUL, then at a "#"; a line without either is kept as is
        # (partition returns the line itself).
        for mark in (b"\0", b"#"):
            if mark in text:
                lines = list(map(_BEFORE, map(bytes.partition, lines, repeat(mark))))
        return lines

    def _classify(self, key: bytes, line: int) -> int:
        """Resolve a key that is not spelled canonically: prefix, typo or unknown."""
        policy = self._policy
        if policy.prefix_keys:
            prefixes = _TYPO_PREFIXES if policy.accept_typos else _PREFIXES
            match = prefixes.match(key.lower())
            if match is not None:
                kind, typo = _PREFIX_KINDS[match.group()]
                if typo:
                    self._builder.warn(line, W.TYPO, key)
                return kind
        self._builder.warn(line, W.UNKNOWN_KEY, key)
        return UNKNOWN

    def _no_colon(self, line: bytes, n: int) -> None:
        """Google accepts ``key value`` (exactly two space/tab separated tokens)."""
        if self._policy.whitespace_separator:
            text = line.replace(b"\t", b" ")
            key, _, value = text.partition(b" ")
            value = value.lstrip(b" ")
            if value and value.find(b" ") < 0:  # not `in`: see _HASH
                self._builder.warn(n, W.MISSING_COLON, b"")
                key = key.strip()
                kind = _KINDS.get(key.lower())
                if kind is None:
                    kind = self._classify(key, n)
                # Slice the original line: only the spaces/tabs were rewritten.
                self._builder.directive(kind, n, line[len(line) - len(value) :].strip())
                return
        self._builder.warn(n, W.NO_SEPARATOR, line)


def _encode(text: str) -> bytes:
    try:  # round-trips text decoded with errors="surrogateescape"
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # other lone surrogates: keep them as bytes
        return text.encode("utf-8", "surrogatepass")


def parse(
    body: bytes | bytearray | memoryview | str,
    *,
    policy: PolicyName | MatchPolicy = "google",
    max_bytes: int | None = DEFAULT_MAX_BYTES,
    max_warnings: int | None = MAX_WARNINGS,
) -> RobotsTxt:
    """Parse a whole robots.txt body (``str`` is encoded as UTF-8); the keywords are
    :class:`RobotsParser`'s.

    Never raises on content: what cannot be parsed is skipped and reported in
    ``RobotsTxt.warnings``.
    """
    if isinstance(body, str):
        body = _encode(body)
    parser = RobotsParser(policy, max_bytes=max_bytes, max_warnings=max_warnings)
    parser._feed(body, last=True)
    return parser.close()
