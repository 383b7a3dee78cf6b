"""How many bytes a parsed robots.txt retains once queried: a calibrated estimate.

Measuring each file with tracemalloc would cost more than parsing it, so the size is
a linear estimate from the file's shape, fitted by least squares to tracemalloc
measurements of 2,122 real files (a corpus of 2,090 plus tests/data/corpus) parsed,
then asked 20 questions by one token (bench/calibrate_sizing.py measures, fits and
reports). Since issue 13 the first question builds no agent index, only the asking
token's compiled rules: ~70 bytes per rule (its pattern string and two array
entries), more for wildcards, ``$`` anchors and ``/a*`` literals. Coefficients are
rounded up: the estimate is at least 0.99x the measured size of every one of those
files and 1.26x in total (refitted in issue 13's sixth round: ``/a*`` literals
counted, ~45 bytes each, which left two files at 0.93x; a glob keeps 300 bytes,
its piece index counted as built: 20 questions no longer build one, a crawl's
later questions do). Buckets shared between files with the same
rules (_compiled) are counted in full for each file: the bound stays conservative.
Warnings packed by the cache (an HTML page's hundred) count their own buffers
(_packed_warnings); the calibration packs as the cache does (total 1.27x).
Each further product token asked about (``user_agent=`` per call) builds the agent
index and compiles its own rules: not counted.

Content-Usage and Content-Signal lines (absent from that corpus) have terms of their
own, fitted to tracemalloc on 500 KB files of each kind asked as a crawler asks
(``allowed``, ``usage``, ``content_signals``): a Content-Usage line ~80 bytes, ~200
more with a path (its rule in the usage index), ~15 per byte of each distinct
preference text (its parsed labels); a Content-Signal line 14-20 bytes, each distinct
reading ~100 plus ~130 per label. Before, a file of 15,000 such lines retained 1-5 MB
and was counted as 2 KB.
"""

from __future__ import annotations

from operator import itemgetter
from sys import getsizeof
from typing import TYPE_CHECKING, Final

from .packed_warnings import PackedWarnings

if TYPE_CHECKING:
    from collections.abc import Iterable

    from .robots import RobotsTxt

__all__ = ["retained_size"]

_SYNTHETIC = 600
# The parsed file: every group, rule, warning and sitemap.
_FILE = 320
_PER_RULE = 5
_PER_PATTERN_BYTE = 1.1
_PER_GROUP = 330
_PER_AGENT = 80
_PER_WARNING = 170
#: A warning besides its text: its record or ParseWarning (~64), line (28) and slot (8).
_PER_WARNING_OBJECT = 100
#: A warning record's detail.
_DETAIL: Final = itemgetter(2)
_PER_SITEMAP = 80
_PER_SITEMAP_CHAR = 1.2
# The compiled bucket of one token's groups.
_BUCKET = 1500
_NO_RULES = 600  # the token's cache entries only
_PER_COMPILED_RULE = 72
_PER_COMPILED_BYTE = 1
_PER_WILDCARD = 300
_PER_ANCHOR = 170
_PER_RAISED = 50
# Content-Usage and Content-Signal lines (see the module docstring).
_PER_USAGE_LINE = 90
_PER_USAGE_PATH = 200
_PER_USAGE_TEXT_BYTE = 16
_PER_SIGNAL_LINE = 20
_PER_SIGNAL_READING = 100
_PER_SIGNAL_LABEL = 130


def retained_size(robots: RobotsTxt, robots_token: str = "*") -> int:
    """Estimated bytes ``robots`` holds once asked about by ``robots_token``."""
    if robots.synthetic is not None:
        return _SYNTHETIC
    # Read the parsed groups directly: the public ``groups`` view would build (and
    # keep) a normalised copy of every rule just to be counted.
    groups = robots._groups
    rules = pattern_bytes = agents = 0
    for group in groups:
        agents += len(group.agents)
        rules += len(group.lines)
        pattern_bytes += len(group.blob)
    sitemaps = robots.sitemaps
    parsed = (
        _FILE
        + _PER_RULE * rules
        + _PER_PATTERN_BYTE * pattern_bytes
        + _PER_GROUP * len(groups)
        + _PER_AGENT * agents
        + _warnings_size(robots)
        + _PER_SITEMAP * len(sitemaps)
        + _PER_SITEMAP_CHAR * sum(map(len, sitemaps))
        + _extension_size(robots)
    )
    return int(parsed + _bucket_size(robots, robots_token))


def _extension_size(robots: RobotsTxt) -> int:
    """The Content-Usage and Content-Signal lines: equal texts and readings are shared
    objects (the parse memos), so each distinct one is counted once."""
    size = 0
    texts: dict[int, int] = {}
    readings: dict[int, tuple[tuple[str, bool], ...]] = {}
    signal_lines = [group.signals for group in robots._groups if group.signals is not None]
    if robots._file_signals is not None:
        signal_lines.append(robots._file_signals)
    for group in robots._groups:
        usage = group.usage
        if usage is None:
            continue
        paths = usage.paths
        size += _PER_USAGE_LINE * len(paths) + sum(map(len, paths))
        size += _PER_USAGE_PATH * (len(paths) - paths.count(b""))
        texts.update((id(text), len(text)) for text in usage.texts)
    for lines in signal_lines:
        size += _PER_SIGNAL_LINE * len(lines)
        readings.update((id(reading), reading) for reading in lines.readings)
    size += _PER_USAGE_TEXT_BYTE * sum(texts.values())
    for reading in readings.values():
        labels = sum(map(len, (label for label, _ in reading)))
        size += _PER_SIGNAL_READING + _PER_SIGNAL_LABEL * len(reading) + labels
    return size


def _warnings_size(robots: RobotsTxt) -> int:
    """The parsed file's warnings: packed ones count their buffers (_packed_warnings);
    a few (under PACK_FROM) at least _PER_WARNING each, more for a long text."""
    warnings = robots._warnings
    if isinstance(warnings, PackedWarnings):
        return warnings.retained()
    # _PER_WARNING was fitted on the corpus's short ASCII details. Non-ASCII text (a
    # U+FFFD for each bad byte) takes 2-4 bytes a character, and reading formats a
    # message around each: files of 15 such retained 5.2-6.4 KB, estimated 3.5-3.9.
    if isinstance(warnings, tuple):
        texts: Iterable[str | bytes] = [warning.message for warning in warnings]
    else:
        texts = map(_DETAIL, warnings)
    return sum(max(_PER_WARNING, _PER_WARNING_OBJECT + getsizeof(text)) for text in texts)


def bucket_features(robots: RobotsTxt, robots_token: str) -> tuple[int, int, int, int, int]:
    """(rules, pattern bytes, wildcards, ``$`` anchors, ``/a*`` literals) of the
    token's groups."""
    groups = robots._groups
    rules = pattern_bytes = wildcards = anchors = raised = 0
    for index in robots._indices(robots_token):
        group = groups[index]
        if not group.lines:
            continue
        blob = group.blob
        rules += len(group.lines)
        pattern_bytes += len(blob)
        # A "*" that ends a pattern makes a raised literal (its own sorted index);
        # one inside is a glob.
        ends = blob.count(b"*\n") + blob.endswith(b"*")
        wildcards += blob.count(b"*") - ends
        raised += ends
        anchors += blob.count(b"$")
    return rules, pattern_bytes, wildcards, anchors, raised


def _bucket_size(robots: RobotsTxt, robots_token: str) -> int:
    """The compiled rules of the groups that apply to ``robots_token``."""
    rules, pattern_bytes, wildcards, anchors, raised = bucket_features(robots, robots_token)
    if not rules:
        return _NO_RULES
    return (
        _BUCKET
        + _PER_COMPILED_RULE * rules
        + _PER_COMPILED_BYTE * pattern_bytes
        + _PER_WILDCARD * wildcards
        + _PER_ANCHOR * anchors
        + _PER_RAISED * raised
    )
