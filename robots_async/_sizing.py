"""How many bytes a parsed robots.txt retains once queried: a calibrated estimate.

Measuring each file with tracemalloc would cost more than parsing it, so the size is
a linear estimate from the file's shape, fitted to tracemalloc measurements of 730
real files (../shared/corpus and tests/data/corpus) parsed, then queried 20 times.
Most of the cost is what the first question builds: the agent index (~330 bytes
per user-agent line) and the compiled rules of the asking token's groups (~300
bytes per rule, more for wildcards, ``$`` anchors and each distinct pattern
length, which gets its own table). Coefficients are rounded up: the estimate is at
least 0.96x the measured size of every one of those files and 1.13x in total
(bench/isolation.py measures it again). Each further product token asked about
(``user_agent=`` per call) compiles its own rules: not counted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._robots import RobotsTxt

__all__ = ["retained_size"]

_SYNTHETIC = 600
# The parsed file: every group, rule, warning and sitemap.
_FILE = 512
_PER_RULE = 6
_PER_PATTERN_BYTE = 1.2
_PER_GROUP = 400
_PER_AGENT = 420  # the agent index included
_PER_WARNING = 170
_PER_SITEMAP = 80
_PER_SITEMAP_CHAR = 1.2
# The compiled bucket of one token's groups.
_BUCKET = 2560
_PER_COMPILED_RULE = 300
_PER_COMPILED_BYTE = 2
_PER_PATTERN_LENGTH = 200
_PER_WILDCARD = 200
_PER_ANCHOR = 260


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
        + _PER_WARNING * len(robots._warnings)
        + _PER_SITEMAP * len(sitemaps)
        + _PER_SITEMAP_CHAR * sum(map(len, sitemaps))
    )
    return int(parsed + _bucket_size(robots, robots_token))


def _bucket_size(robots: RobotsTxt, robots_token: str) -> int:
    """The compiled rules of the groups that apply to ``robots_token``."""
    groups = robots._groups
    rules = pattern_bytes = wildcards = anchors = 0
    lengths: set[int] = set()
    for index in robots._indices(robots_token):
        group = groups[index]
        if not group.lines:
            continue
        blob = group.blob
        rules += len(group.lines)
        pattern_bytes += len(blob)
        # A "*" that ends a pattern is dropped when compiling; one inside is a glob.
        wildcards += blob.count(b"*") - blob.count(b"*\n") - blob.endswith(b"*")
        anchors += blob.count(b"$")
        lengths.update(map(len, blob.split(b"\n")))
    return (
        _BUCKET
        + _PER_COMPILED_RULE * rules
        + _PER_COMPILED_BYTE * pattern_bytes
        + _PER_PATTERN_LENGTH * len(lengths)
        + _PER_WILDCARD * wildcards
        + _PER_ANCHOR * anchors
    )
