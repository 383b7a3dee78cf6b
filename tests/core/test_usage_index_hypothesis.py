"""The Content-Usage index against a naive evaluation written from the rules alone
(a regular expression per pattern, every rule tried), over random rule sets and paths."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from robots_async.core.usage_index import UsageIndex

# Few characters, so that random patterns and paths often meet; "*" and "$" as
# wildcards and as literals in the middle, "%2F" as an escaped slash.
_PIECES = ["/", "a", "b", "*", "$", "%2F", "ab/"]
patterns = st.lists(st.lists(st.sampled_from(_PIECES), max_size=6).map("".join), max_size=12)
_path = st.lists(st.sampled_from(_PIECES), max_size=6).map("".join).map("/".__add__)
paths = st.lists(_path, min_size=1, max_size=8)


def naive_matches(pattern: str, target: str) -> bool:
    """Google's rule: ``*`` is any run of characters, a final ``$`` ends the path,
    anything else is a prefix; an empty pattern applies everywhere."""
    anchored = pattern.endswith("$")
    body = pattern[:-1] if anchored else pattern
    regex = ".*".join(re.escape(part) for part in body.split("*"))
    return re.match(regex + (r"\Z" if anchored else ""), target, re.DOTALL) is not None


def naive_best(rules: list[str], target: str) -> list[int]:
    """Ordinals of the longest matching patterns, in file order."""
    matching = [i for i, pattern in enumerate(rules) if naive_matches(pattern, target)]
    if not matching:
        return []
    top = max(len(rules[i]) for i in matching)
    return [i for i in matching if len(rules[i]) == top]


@settings(max_examples=400, deadline=None)
@given(patterns, paths)
def test_index_equals_the_naive_evaluation(rules: list[str], targets: list[str]) -> None:
    index = UsageIndex(rules)
    for target in targets:
        assert index.best(target) == naive_best(rules, target), (rules, target)
