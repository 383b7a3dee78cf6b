"""Google's reference behaviour, case by case (tests/data/google_cases.jsonl).

Under ``google-reference`` every case must give the reference's verdict and matching
line. Under ``google`` only the documented improvements may change an answer:
/robots.txt is always allowed, raw non-ASCII in a URL is %-encoded first, a group
naming the crawler exactly is its group, and an empty token never selects a named
group. Each difference is classified (tests/conformance/test_improvements.py does the
same over the real corpus).
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


# The documented improvements of "google" over the reference, each a class of case.
IMPROVEMENTS = ("robots-txt", "exact-name", "empty-token", "encoded-url")


def improvement_class(body: bytes, token: str, url: str) -> str | None:
    """Which documented improvement lets ``google`` differ here; None if none may."""
    if ra.request_target(url) == "/robots.txt":
        return "robots-txt"  # RFC 9309 §2.2.2 (google_semantics.md item 42)
    google = ra.parse(body, policy="google", max_bytes=None)
    reference = ra.parse(body, policy="google-reference", max_bytes=None)
    chosen = google.groups_for(robots_token=token)
    if chosen != reference.groups_for(robots_token=token):
        if not token:  # an empty token gets the "*" groups, never a named one
            return "empty-token" if chosen == google.groups_for(robots_token="*") else None
        # Otherwise every group chosen must name the crawler exactly (up to " " or "/").
        names_it = all(
            any(ra.product_token(agent).lower() == token.lower() for agent in group.agents)
            for group in chosen
        )
        return "exact-name" if chosen and names_it else None
    if not url.isascii():
        return "encoded-url"
    return None


def _differences(cases: list[dict[str, Any]]) -> dict[str, str | None]:
    """id -> improvement class, for every case where google differs from the reference."""
    found = {}
    for case in cases:
        verdict = _verdict(case, "google")
        reference = _verdict(case, "google-reference")
        if (verdict.allowed, verdict.line) != (reference.allowed, reference.line):
            found[case["id"]] = improvement_class(case_body(case), case["agent"], case["url"])
    return found


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
    """google gives the reference answer, except where a documented improvement applies."""
    verdict = _verdict(case, "google")
    assert _allowed(case, "google") is verdict.allowed
    if (verdict.allowed, verdict.line) == (case["allowed"], case["line"]):
        return
    kind = improvement_class(case_body(case), case["agent"], case["url"])
    assert kind in IMPROVEMENTS
    if kind == "robots-txt":
        assert verdict.allowed is True
        assert verdict.reason == "robots-txt"
    elif kind == "empty-token":
        # An empty token gets the "*" groups, never a group it does not name.
        robots = ra.parse(case_body(case), policy="google", max_bytes=None)
        star = robots.groups_for(robots_token="*")
        assert robots.groups_for(robots_token=case["agent"]) == star


def test_google_policy_differences_are_all_classified() -> None:
    """Exactly these reference cases differ under google, each in a documented class."""
    assert _differences(CASES) == {
        "x:url[https://example.com/robots.txt|/robots.txt$]": "robots-txt",
        # "User-agent: Googlebot2" names the crawler Googlebot2 exactly.
        "x:ua_value[Googlebot2|Googlebot2]": "exact-name",
        "x:ua_value[Bötbot|Bötbot]": "exact-name",
        # The reference's quirk: an empty agent selects "User-agent:" and "*bot" groups.
        "x:ua_query_empty_vs_empty_line": "empty-token",
        "x:ua_query_empty_vs_starfoo": "empty-token",
    }


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
