"""Google's reference behaviour, case by case (tests/data/google_cases.jsonl).

Under ``google-reference`` every case must give the reference's verdict and matching
line. Under ``google`` only the documented improvements may change an answer:
/robots.txt is always allowed, and raw non-ASCII in a URL is %-encoded first.
"""

from __future__ import annotations

from typing import Any

import pytest

import robots_async as ra
from tests.helpers import case_body, load_jsonl

CASES = load_jsonl("google_cases.jsonl")
DISAGREEMENTS = load_jsonl("disagreements.jsonl")


def _is_robots_txt(case: dict[str, Any]) -> bool:
    return ra.request_target(case["url"]) == "/robots.txt"


def _verdict(case: dict[str, Any], policy: str) -> ra.Verdict:
    robots = ra.parse(case_body(case), policy=policy, max_bytes=None)
    return robots.explain(case["url"], robots_token=case["agent"])


def _allowed(case: dict[str, Any], policy: str) -> bool:
    robots = ra.parse(case_body(case), policy=policy, max_bytes=None)
    return robots.allowed(case["url"], robots_token=case["agent"])


# The only cases on which "google" may differ from the reference: a /robots.txt URL
# that the reference disallows (RFC 9309 §2.2.2; google_semantics.md item 42).
EXPECTED_GOOGLE_DIFFERENCES = {
    case["id"] for case in CASES if _is_robots_txt(case) and not case["allowed"]
}

# Disagreement rows with a raw non-ASCII URL, and the answer once it is %-encoded:
# id -> (allowed, line).
ENCODED_URL_ANSWERS = {
    "rt:ID_Encoding:03": (True, 3),  # Allow: /foo/bar/ツ matches /foo/bar/%E3%83%84
    "rt:ID_Encoding:05": (True, 3),  # Allow: /foo/bar/%E3%83%84 matches too
    "x:div_raw_utf8_url": (False, 2),  # Disallow: /ä matches /%C3%A4
}


def test_case_files_are_complete() -> None:
    """The case files hold the 453 agreed cases and the 21 disagreements, ids unique."""
    assert len(CASES) == 453
    assert len(DISAGREEMENTS) == 21
    assert len({c["id"] for c in CASES + DISAGREEMENTS}) == 474


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_reference_policy_matches_google(case: dict[str, Any]) -> None:
    """google-reference gives Google's verdict and matching line for every case."""
    verdict = _verdict(case, "google-reference")
    assert (verdict.allowed, verdict.line) == (case["allowed"], case["line"])
    assert _allowed(case, "google-reference") is case["allowed"]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_google_policy_matches_google(case: dict[str, Any]) -> None:
    """google gives the reference answer, except that /robots.txt is always allowed."""
    verdict = _verdict(case, "google")
    if _is_robots_txt(case):
        assert verdict.allowed is True
        assert verdict.reason == "robots-txt"
    else:
        assert (verdict.allowed, verdict.line) == (case["allowed"], case["line"])
    assert _allowed(case, "google") is verdict.allowed


def test_google_policy_differs_only_on_robots_txt() -> None:
    """Exactly the expected cases differ between google and google-reference."""
    differing = set()
    for case in CASES:
        verdict = _verdict(case, "google")
        if (verdict.allowed, verdict.line) != (case["allowed"], case["line"]):
            differing.add(case["id"])
    assert differing == EXPECTED_GOOGLE_DIFFERENCES
    assert len(differing) == 1


@pytest.mark.parametrize("row", DISAGREEMENTS, ids=[r["id"] for r in DISAGREEMENTS])
def test_disagreement_reference_follows_upstream(row: dict[str, Any]) -> None:
    """google-reference gives the upstream (jwm.robotstxt) answer where bindings disagree."""
    verdict = _verdict(row, "google-reference")
    assert (verdict.allowed, verdict.line) == (row["jwm_robotstxt"], row["jwm_line"])
    assert _allowed(row, "google-reference") is row["jwm_robotstxt"]


@pytest.mark.parametrize("row", DISAGREEMENTS, ids=[r["id"] for r in DISAGREEMENTS])
def test_disagreement_google_encodes_raw_urls(row: dict[str, Any]) -> None:
    """google %-encodes raw non-ASCII URLs; every other disagreement row follows upstream."""
    verdict = _verdict(row, "google")
    if row["id"] in ENCODED_URL_ANSWERS:
        assert (verdict.allowed, verdict.line) == ENCODED_URL_ANSWERS[row["id"]]
        assert (verdict.allowed, verdict.line) != (row["jwm_robotstxt"], row["jwm_line"])
    else:
        assert (verdict.allowed, verdict.line) == (row["jwm_robotstxt"], row["jwm_line"])
    assert _allowed(row, "google") is verdict.allowed


def test_encoded_url_rows_exist() -> None:
    """Every row named in the encoded-URL table is in disagreements.jsonl with a raw URL."""
    rows = {r["id"]: r for r in DISAGREEMENTS}
    for case_id in ENCODED_URL_ANSWERS:
        assert not rows[case_id]["url"].isascii()
