"""RFC 9309 (https://www.rfc-editor.org/rfc/rfc9309), one test per rule.

Each test's docstring names the section it checks. The last part checks where the
policies differ on purpose: ``rfc9309`` drops Google's leniency, ``first-match``
reads rules in file order.
"""

from __future__ import annotations

import pytest

import robots_async as ra

LONGEST_MATCH_POLICIES = ["google", "google-reference", "rfc9309"]
ALL_POLICIES = [*LONGEST_MATCH_POLICIES, "first-match"]


def allowed(body: str, url: str, token: str, policy: str = "google") -> bool:
    """Parse ``body`` under ``policy`` and ask about ``url`` for ``token``."""
    return ra.parse(body, policy=policy).allowed(url, robots_token=token)


# --- §2.1 Protocol definition -----------------------------------------------------


@pytest.mark.parametrize("policy", ALL_POLICIES)
def test_2_1_group_is_user_agents_then_rules(policy: str) -> None:
    """§2.1: consecutive user-agent lines share the rules; the next user-agent ends the group."""
    body = "User-agent: a\nUser-agent: b\nDisallow: /x\nUser-agent: c\nDisallow: /y\n"
    robots = ra.parse(body, policy=policy)
    assert [g.agents for g in robots.groups] == [("a", "b"), ("c",)]
    assert not robots.allowed("/x", robots_token="a")
    assert not robots.allowed("/x", robots_token="b")
    assert robots.allowed("/y", robots_token="b")
    assert robots.allowed("/x", robots_token="c")
    assert not robots.allowed("/y", robots_token="c")


@pytest.mark.parametrize("policy", ALL_POLICIES)
def test_2_1_last_group_without_rules_allows_everything(policy: str) -> None:
    """§2.1: a last group with no rules allows everything for its agents."""
    body = "User-agent: *\nDisallow: /\n\nUser-agent: quxbot\n"
    robots = ra.parse(body, policy=policy)
    assert robots.allowed("/anything", robots_token="quxbot")
    assert robots.explain("/anything", robots_token="quxbot").reason == "no-match"
    assert not robots.allowed("/anything", robots_token="otherbot")


# --- §2.2 Formal syntax -------------------------------------------------------------


@pytest.mark.parametrize("policy", ALL_POLICIES)
@pytest.mark.parametrize(
    ("agent_key", "rule_key"),
    [("user-agent", "disallow"), ("USER-AGENT", "DISALLOW"), ("User-Agent", "DisAllow")],
    ids=["lower", "upper", "mixed"],
)
def test_2_2_keys_are_case_insensitive(policy: str, agent_key: str, rule_key: str) -> None:
    """§2.2: keys are ABNF strings, so their case does not matter."""
    body = f"{agent_key}: a\n{rule_key}: /x\n"
    assert not allowed(body, "/x", "a", policy)


@pytest.mark.parametrize("policy", ALL_POLICIES)
@pytest.mark.parametrize(
    "line", ["Disallow:/x", "Disallow: /x", "Disallow :\t/x  ", "  Disallow  :  /x"]
)
def test_2_2_whitespace_around_colon_is_optional(policy: str, line: str) -> None:
    """§2.2: ``key *WS ":" *WS value``; whitespace around the colon is allowed."""
    assert not allowed(f"User-agent: a\n{line}\n", "/x", "a", policy)


@pytest.mark.parametrize("policy", ALL_POLICIES)
def test_2_2_comments_run_to_end_of_line(policy: str) -> None:
    """§2.2: ``#`` starts a comment that runs to the end of the line."""
    body = "# header\nUser-agent: a # the bot\nDisallow: /x#y\n"
    robots = ra.parse(body, policy=policy)
    assert robots.groups[0].agents == ("a",)
    assert robots.groups[0].rules == (ra.Rule(False, "/x", 3),)
    assert not robots.allowed("/xz", robots_token="a")


# --- §2.2.1 The user-agent line ------------------------------------------------------


@pytest.mark.parametrize("policy", ALL_POLICIES)
@pytest.mark.parametrize("token", ["foobot", "FOOBOT", "FooBot", "fOObOT"])
def test_2_2_1_agent_matching_is_case_insensitive(policy: str, token: str) -> None:
    """§2.2.1: groups are matched to the product token case-insensitively."""
    body = "User-agent: FooBot\nDisallow: /x\n"
    assert not allowed(body, "/x", token, policy)


@pytest.mark.parametrize("policy", LONGEST_MATCH_POLICIES)
def test_2_2_1_groups_for_the_same_agent_are_combined(policy: str) -> None:
    """§2.2.1: the rules of every group matching the agent are combined into one."""
    body = (
        "User-agent: foobot\nDisallow: /a\n\n"
        "User-agent: other\nDisallow: /b\n\n"
        "User-agent: FooBot\nDisallow: /c\nAllow: /a/open\n"
    )
    robots = ra.parse(body, policy=policy)
    assert not robots.allowed("/a", robots_token="foobot")
    assert not robots.allowed("/c", robots_token="foobot")
    assert robots.allowed("/b", robots_token="foobot")
    assert robots.allowed("/a/open", robots_token="foobot")
    assert len(robots.groups_for(robots_token="foobot")) == 2


@pytest.mark.parametrize("policy", ALL_POLICIES)
def test_2_2_1_star_group_applies_when_no_group_matches(policy: str) -> None:
    """§2.2.1: with no matching group the crawler obeys the ``*`` group."""
    body = "User-agent: foobot\nDisallow: /f\n\nUser-agent: *\nDisallow: /s\n"
    robots = ra.parse(body, policy=policy)
    assert not robots.allowed("/s", robots_token="barbot")
    assert robots.allowed("/f", robots_token="barbot")
    assert robots.allowed("/s", robots_token="foobot")


@pytest.mark.parametrize("policy", ALL_POLICIES)
def test_2_2_1_no_matching_group_and_no_star_allows_all(policy: str) -> None:
    """§2.2.1: with no matching group and no ``*`` group, no rules apply."""
    robots = ra.parse("User-agent: foobot\nDisallow: /\n", policy=policy)
    verdict = robots.explain("/x", robots_token="barbot")
    assert verdict.allowed
    assert verdict.reason == "no-group"


@pytest.mark.parametrize("policy", ALL_POLICIES)
def test_2_2_1_product_token_comes_from_the_user_agent(policy: str) -> None:
    """§2.2.1: the product token is taken from the crawler's User-Agent string."""
    robots = ra.parse("User-agent: FooBot\nDisallow: /x\n", policy=policy)
    assert not robots.allowed("/x", user_agent="FooBot/2.1 (+https://example.org/bot)")
    assert robots.allowed("/x", user_agent="BarBot/2.1 (+https://example.org/bot)")


# --- §2.2.2 The Allow and Disallow lines ---------------------------------------------


@pytest.mark.parametrize("policy", LONGEST_MATCH_POLICIES)
@pytest.mark.parametrize(
    ("url", "expected", "line"),
    [
        ("/folder/page", True, 3),
        ("/folder/other", False, 2),
        ("/folderx", True, 0),
    ],
)
def test_2_2_2_most_specific_match_wins(policy: str, url: str, expected: bool, line: int) -> None:
    """§2.2.2: the match with the most octets decides, whatever the rule order."""
    body = "User-agent: *\nDisallow: /folder/\nAllow: /folder/page\n"
    verdict = ra.parse(body, policy=policy).explain(url, robots_token="bot")
    assert (verdict.allowed, verdict.line) == (expected, line)


@pytest.mark.parametrize("policy", LONGEST_MATCH_POLICIES)
@pytest.mark.parametrize(
    "body",
    ["User-agent: *\nAllow: /p\nDisallow: /p\n", "User-agent: *\nDisallow: /p\nAllow: /p\n"],
    ids=["allow-first", "disallow-first"],
)
def test_2_2_2_allow_wins_equivalent_rules(policy: str, body: str) -> None:
    """§2.2.2: when an allow and a disallow rule are equivalent, allow wins."""
    verdict = ra.parse(body, policy=policy).explain("/page", robots_token="bot")
    assert verdict.allowed
    assert verdict.reason == "allow"
    assert verdict.rule is not None
    assert verdict.rule.allow


@pytest.mark.parametrize("policy", ALL_POLICIES)
def test_2_2_2_no_matching_rule_allows(policy: str) -> None:
    """§2.2.2: if no rule of the matching group matches, the URI is allowed."""
    verdict = ra.parse("User-agent: *\nDisallow: /x\n", policy=policy).explain(
        "/y", robots_token="b"
    )
    assert verdict.allowed
    assert verdict.reason == "no-match"
    assert verdict.line == 0


@pytest.mark.parametrize("policy", ["google", "rfc9309", "first-match"])
@pytest.mark.parametrize(
    "url", ["/robots.txt", "https://example.com/robots.txt", "http://example.com:8080/robots.txt"]
)
def test_2_2_2_robots_txt_is_implicitly_allowed(policy: str, url: str) -> None:
    """§2.2.2: /robots.txt itself is implicitly allowed, even under ``Disallow: /``."""
    robots = ra.parse("User-agent: *\nDisallow: /\nDisallow: /robots.txt$\n", policy=policy)
    assert robots.allowed(url, robots_token="bot")
    assert robots.explain(url, robots_token="bot").reason == "robots-txt"
    assert not robots.allowed("/robots.txt.bak", robots_token="bot")


def test_2_2_2_robots_txt_not_special_in_google_reference() -> None:
    """§2.2.2 is not implemented by Google's reference: Disallow: / blocks /robots.txt."""
    robots = ra.parse("User-agent: *\nDisallow: /\n", policy="google-reference")
    verdict = robots.explain("/robots.txt", robots_token="bot")
    assert (verdict.allowed, verdict.reason, verdict.line) == (False, "disallow", 2)


@pytest.mark.parametrize("policy", ALL_POLICIES)
def test_2_2_2_matching_is_case_sensitive(policy: str) -> None:
    """§2.2.2: path matching SHOULD be case-sensitive."""
    robots = ra.parse("User-agent: *\nDisallow: /Private\n", policy=policy)
    assert not robots.allowed("/Private/x", robots_token="bot")
    assert robots.allowed("/private/x", robots_token="bot")
    assert robots.allowed("/PRIVATE/x", robots_token="bot")


@pytest.mark.parametrize("policy", ALL_POLICIES)
def test_2_2_2_matching_starts_at_first_octet_of_path(policy: str) -> None:
    """§2.2.2: a rule is matched from the first octet of the path (a prefix match)."""
    robots = ra.parse("User-agent: *\nDisallow: /a\n", policy=policy)
    assert not robots.allowed("https://example.com/abc", robots_token="bot")
    assert robots.allowed("https://example.com/x/a", robots_token="bot")
    assert not robots.allowed("https://example.com/a?q=1", robots_token="bot")


@pytest.mark.parametrize(
    ("pattern", "url"),
    [
        ("/foo/bar?baz=quz", "/foo/bar?baz=quz"),
        ("/foo/bar/ツ", "/foo/bar/%E3%83%84"),
        ("/foo/bar/%E3%83%84", "/foo/bar/%E3%83%84"),
        ("/foo/bar/%62%61%7A", "/foo/bar/baz"),
        ("/foo/bar/ツ", "/foo/bar/ツ"),
        ("/foo/bar/baz", "/foo/bar/%62%61%7A"),
        ("/foo/bar/%e3%83%84", "/foo/bar/%E3%83%84"),
        ("/a%2fb", "/a%2Fb"),
    ],
    ids=[
        "fig4-query",
        "fig4-raw-pattern",
        "fig4-encoded-pattern",
        "fig4-unreserved-escapes",
        "raw-url",
        "escaped-url",
        "lower-hex-pattern",
        "lower-hex-reserved",
    ],
)
def test_2_2_2_percent_encoding_normalised_under_rfc9309(pattern: str, url: str) -> None:
    """§2.2.2 (Figure 4): both sides are %-normalised before comparison under rfc9309."""
    body = f"User-agent: *\nDisallow: {pattern}$\n"
    assert not allowed(body, url, "bot", "rfc9309")


def test_2_2_2_unreserved_escapes_not_decoded_under_google() -> None:
    """§2.2.2 Figure 4 is where Google differs: %62%61%7A is not baz under google."""
    body = "User-agent: *\nDisallow: /foo/bar/%62%61%7A\n"
    assert allowed(body, "/foo/bar/baz", "bot", "google")
    assert allowed(body, "/foo/bar/baz", "bot", "google-reference")
    assert not allowed(body, "/foo/bar/baz", "bot", "rfc9309")


def test_2_2_2_reserved_escapes_stay_encoded_under_rfc9309() -> None:
    """§2.2.2: an encoded reserved character (%2F) is not decoded, so it is not ``/``."""
    body = "User-agent: *\nDisallow: /a%2Fb\n"
    assert allowed(body, "/a/b", "bot", "rfc9309")
    assert not allowed(body, "/a%2fb", "bot", "rfc9309")


@pytest.mark.parametrize("policy", ALL_POLICIES)
def test_2_2_2_rules_outside_a_group_are_ignored(policy: str) -> None:
    """§2.2.2: rules before the first user-agent line SHOULD be ignored."""
    robots = ra.parse("Disallow: /\nUser-agent: *\nDisallow: /x\n", policy=policy)
    assert robots.allowed("/y", robots_token="bot")
    assert not robots.allowed("/x", robots_token="bot")
    assert ("rule-outside-group", 1) in {(w.code, w.line) for w in robots.warnings}


# --- §2.2.3 Special characters -------------------------------------------------------


@pytest.mark.parametrize("policy", ALL_POLICIES)
@pytest.mark.parametrize(
    ("pattern", "url", "matches"),
    [
        ("/*.gif$", "/img/a.gif", True),
        ("/*.gif$", "/img/a.gif?x=1", False),
        ("/*.gif", "/img/a.gif?x=1", True),
        ("/a*c", "/abbbc/d", True),
        ("/a*c", "/ab", False),
        ("/x$", "/x", True),
        ("/x$", "/xy", False),
        ("*/private", "/a/b/private", True),
    ],
)
def test_2_2_3_star_and_dollar(policy: str, pattern: str, url: str, matches: bool) -> None:
    """§2.2.3: ``*`` matches any run of characters and a final ``$`` ends the pattern."""
    body = f"User-agent: *\nDisallow: {pattern}\n"
    assert allowed(body, url, "bot", policy) is not matches


@pytest.mark.parametrize("policy", ["rfc9309", "first-match"])
def test_2_2_3_encoded_star_and_dollar_are_literal_under_rfc9309(policy: str) -> None:
    """§2.2.3: ``%2A`` and ``%24`` in a pattern match a literal ``*`` and ``$`` in the URL."""
    star = ra.parse("User-agent: *\nDisallow: /a%2Ab\n", policy=policy)
    assert not star.allowed("/a*b", robots_token="bot")
    assert star.allowed("/axb", robots_token="bot")
    dollar = ra.parse("User-agent: *\nDisallow: /a%24\n", policy=policy)
    assert not dollar.allowed("/a$", robots_token="bot")
    assert not dollar.allowed("/a$/more", robots_token="bot")
    assert dollar.allowed("/a", robots_token="bot")


def test_2_2_3_encoded_star_is_plain_text_under_google() -> None:
    """§2.2.3 ``%2A`` is not implemented by Google: the pattern text %2A needs %2A in the URL."""
    robots = ra.parse("User-agent: *\nDisallow: /a%2Ab\n")
    assert robots.allowed("/a*b", robots_token="bot")
    assert not robots.allowed("/a%2Ab", robots_token="bot")


# --- §2.2.4 Other records ------------------------------------------------------------


@pytest.mark.parametrize("policy", ALL_POLICIES)
def test_2_2_4_sitemap_does_not_end_a_group(policy: str) -> None:
    """§2.2.4: a Sitemap line MUST NOT end a group."""
    body = (
        "User-agent: a\nSitemap: https://example.com/1.xml\nUser-agent: b\nDisallow: /x\n"
        "Sitemap: https://example.com/2.xml\nDisallow: /y\n"
    )
    robots = ra.parse(body, policy=policy)
    assert len(robots.groups) == 1
    for token in ("a", "b"):
        assert not robots.allowed("/x", robots_token=token)
        assert not robots.allowed("/y", robots_token=token)
    assert robots.sitemaps == ("https://example.com/1.xml", "https://example.com/2.xml")


@pytest.mark.parametrize("policy", ALL_POLICIES)
def test_2_2_4_other_records_do_not_interfere(policy: str) -> None:
    """§2.2.4: records outside the protocol MUST NOT interfere with the core records."""
    body = (
        "User-agent: a\nCrawl-delay: 3\nNoindex: /x\nUser-agent: b\nHost: example.com\n"
        "Disallow: /x\nClean-param: ref\nDisallow: /y\n"
    )
    robots = ra.parse(body, policy=policy)
    assert [g.agents for g in robots.groups] == [("a", "b")]
    for token in ("a", "b"):
        assert not robots.allowed("/x", robots_token=token)
        assert not robots.allowed("/y", robots_token=token)


# --- §2.3.1.5 Parsing errors and §2.5 limits ------------------------------------------


@pytest.mark.parametrize("policy", ALL_POLICIES)
def test_2_3_1_5_unparsable_lines_are_skipped(policy: str) -> None:
    """§2.3.1.5: every line that can be parsed is used; junk lines are skipped."""
    body = "<html>\nUser-agent: *\n}{ junk ;;\nDisallow: /x\n\x01\x02\nDisallow: /y\n"
    robots = ra.parse(body, policy=policy)
    assert not robots.allowed("/x", robots_token="bot")
    assert not robots.allowed("/y", robots_token="bot")
    assert robots.allowed("/z", robots_token="bot")


def test_2_5_parsing_limit_is_at_least_500_kib() -> None:
    """§2.5: the parsing limit MUST be at least 500 KiB; content within it is used."""
    assert ra.DEFAULT_MAX_BYTES >= 500 * 1024
    head = b"User-agent: *\n"
    filler = b"# " + b"x" * 97 + b"\n"  # 100 bytes per comment line
    padding = filler * ((500 * 1024 - len(head)) // len(filler) - 1)
    body = head + padding + b"Disallow: /late\n"
    assert len(body) <= 500 * 1024
    robots = ra.parse(body)
    assert not robots.truncated
    assert not robots.allowed("/late", robots_token="bot")


def test_2_5_content_after_the_limit_is_ignored() -> None:
    """§2.5: content after the parsing limit may be ignored (and is, by default)."""
    head = b"User-agent: *\n"
    padding = b"#" * (ra.DEFAULT_MAX_BYTES + 10) + b"\n"
    robots = ra.parse(head + padding + b"Disallow: /late\n")
    assert robots.truncated
    assert robots.allowed("/late", robots_token="bot")


# --- §5 Examples -----------------------------------------------------------------------

RFC_5_1 = """\
User-Agent: *
Disallow: *.gif$
Disallow: /example/
Allow: /publications/

User-Agent: foobot
Disallow:/
Allow:/example/page.html
Allow:/example/allowed.gif

User-Agent: barbot
User-Agent: bazbot
Disallow: /example/page.html

User-Agent: quxbot

EOF
"""


@pytest.mark.parametrize("policy", LONGEST_MATCH_POLICIES)
@pytest.mark.parametrize(
    ("token", "url", "expected"),
    [
        ("otherbot", "/example/x", False),
        ("otherbot", "/publications/x", True),
        ("otherbot", "/a.gif", False),
        ("otherbot", "/publications/a.gif", True),
        ("otherbot", "/x", True),
        ("foobot", "/example/page.html", True),
        ("foobot", "/example/allowed.gif", True),
        ("foobot", "/example/other", False),
        ("foobot", "/x", False),
        ("barbot", "/example/page.html", False),
        ("bazbot", "/example/page.html", False),
        ("bazbot", "/example/other", True),
        ("barbot", "/a.gif", True),
        ("quxbot", "/example/page.html", True),
        ("quxbot", "/a.gif", True),
    ],
)
def test_5_1_simple_example(policy: str, token: str, url: str, expected: bool) -> None:
    """§5.1: the RFC's simple example, group by group."""
    assert allowed(RFC_5_1, url, token, policy) is expected


@pytest.mark.parametrize("policy", LONGEST_MATCH_POLICIES)
def test_5_2_longest_match(policy: str) -> None:
    """§5.2: /example/page/disallow.gif is allowed; the longer disallow does not match it."""
    body = "User-Agent: foobot\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n"
    robots = ra.parse(body, policy=policy)
    verdict = robots.explain("/example/page/disallow.gif", robots_token="foobot")
    assert (verdict.allowed, verdict.line) == (True, 2)
    verdict = robots.explain("/example/page/disallowed.gif", robots_token="foobot")
    assert (verdict.allowed, verdict.line) == (False, 3)


# --- Where the policies differ on purpose ------------------------------------------


@pytest.mark.parametrize(
    ("body", "url"),
    [
        ("Useragent: a\nDisallow: /x\n", "/x"),
        ("User agent: a\nDisallow: /x\n", "/x"),
        ("User-agent: a\nDissallow: /x\n", "/x"),
        ("User-agent: a\nDissalow: /x\n", "/x"),
        ("User-agent: a\nDisalow: /x\n", "/x"),
        ("User-agent: a\nDiasllow: /x\n", "/x"),
        ("User-agent: a\nDisallaw: /x\n", "/x"),
    ],
    ids=["useragent", "user agent", "dissallow", "dissalow", "disalow", "diasllow", "disallaw"],
)
def test_rfc9309_rejects_google_typos(body: str, url: str) -> None:
    """rfc9309 accepts only the RFC's key spellings; google accepts its typos with a warning."""
    google = ra.parse(body, policy="google")
    assert not google.allowed(url, robots_token="a")
    assert "typo" in {w.code for w in google.warnings}
    strict = ra.parse(body, policy="rfc9309")
    assert strict.allowed(url, robots_token="a")
    assert "unknown-key" in {w.code for w in strict.warnings}


def test_rfc9309_rejects_site_map_typo() -> None:
    """rfc9309 ignores ``Site-map:``; google reads it as a Sitemap with a typo warning."""
    body = "Site-map: https://example.com/s.xml\n"
    assert ra.parse(body, policy="google").sitemaps == ("https://example.com/s.xml",)
    assert ra.parse(body, policy="rfc9309").sitemaps == ()


@pytest.mark.parametrize(
    "body",
    [
        "User-agent: a\nDisallowed: /x\n",
        "User-agent: a\nDisallow-this: /x\n",
        "User-agents: a\nDisallow: /x\n",
    ],
    ids=["disallowed", "disallow-this", "user-agents"],
)
def test_rfc9309_rejects_prefix_keys(body: str) -> None:
    """rfc9309 needs exact keys; google accepts any key that starts with a known one."""
    assert not allowed(body, "/x", "a", "google")
    assert allowed(body, "/x", "a", "rfc9309")
    assert allowed(body, "/x", "a", "first-match")


def test_rfc9309_rejects_whitespace_instead_of_colon() -> None:
    """rfc9309 needs the colon; google takes ``key value`` (two tokens) with a warning."""
    body = "user-agent a\ndisallow /x\n"
    google = ra.parse(body, policy="google")
    assert not google.allowed("/x", robots_token="a")
    assert [w.code for w in google.warnings] == ["missing-colon", "missing-colon"]
    strict = ra.parse(body, policy="rfc9309")
    assert strict.allowed("/x", robots_token="a")
    assert strict.groups == ()
    assert [w.code for w in strict.warnings] == ["no-separator", "no-separator"]


def test_rfc9309_has_no_index_html_rule() -> None:
    """rfc9309 does not apply Google's rule that Allow: /d/index.html allows /d/."""
    body = "User-agent: a\nDisallow: /d/\nAllow: /d/index.html\n"
    assert allowed(body, "/d/", "a", "google")
    assert not allowed(body, "/d/", "a", "rfc9309")
    assert allowed(body, "/d/index.html", "a", "rfc9309")


@pytest.mark.parametrize(
    ("body", "first_match", "longest_match"),
    [
        ("User-agent: *\nDisallow: /\nAllow: /a\n", False, True),
        ("User-agent: *\nAllow: /a\nDisallow: /\n", True, True),
        ("User-agent: *\nAllow: /\nDisallow: /a\n", True, False),
        ("User-agent: *\nDisallow:\nDisallow: /a\n", False, False),
    ],
    ids=["disallow-first", "allow-first", "short-allow-first", "empty-rule-skipped"],
)
def test_first_match_uses_file_order(body: str, first_match: bool, longest_match: bool) -> None:
    """first-match: the first matching non-empty rule in file order decides."""
    assert allowed(body, "/a", "bot", "first-match") is first_match
    assert allowed(body, "/a", "bot", "google") is longest_match
    assert allowed(body, "/a", "bot", "rfc9309") is longest_match


def test_first_match_reports_the_first_rule() -> None:
    """first-match: the verdict names the first matching rule and its line."""
    body = "User-agent: *\nDisallow: /\nAllow: /a\n"
    verdict = ra.parse(body, policy="first-match").explain("/a", robots_token="bot")
    assert verdict.rule == ra.Rule(False, "/", 2)
    assert (verdict.allowed, verdict.reason, verdict.line) == (False, "disallow", 2)


@pytest.mark.parametrize("token", ["a", "bot"])
def test_first_match_uses_only_the_first_group(token: str) -> None:
    """first-match: only the first group naming the agent (or the first ``*`` group) applies."""
    agent = "a" if token == "a" else "*"
    body = f"User-agent: {agent}\nDisallow: /x\n\nUser-agent: {agent}\nDisallow: /y\n"
    first = ra.parse(body, policy="first-match")
    assert not first.allowed("/x", robots_token=token)
    assert first.allowed("/y", robots_token=token)
    assert len(first.groups_for(robots_token=token)) == 1
    assert not allowed(body, "/y", token, "google")


@pytest.mark.parametrize(
    ("target", "normalised"),
    [
        # RFC 3986 §5.2.4's own examples of remove_dot_segments.
        ("/a/b/c/./../../g", "/a/g"),
        ("/mid/content=5/../6", "/mid/6"),
        # And the forms a crawler meets (RFC 3986 §5.4.2 abnormal examples included).
        ("/./private/d", "/private/d"),
        ("/x/../private/e", "/private/e"),
        ("/../../private", "/private"),
        ("/a/.", "/a/"),
        ("/a/b/..", "/a/"),
        ("/%2E%2E/private", "/private"),
        ("/.%2e/private", "/private"),
        ("/a?next=../private", "/a?next=../private"),
    ],
)
def test_2_2_2_dot_segments_removed_under_rfc9309(target: str, normalised: str) -> None:
    """rfc9309 normalises the target as RFC 3986 does: unreserved escapes, dot segments."""
    from robots_async.core.policy import rfc_target

    assert rfc_target(target) == normalised
    body = f"User-agent: *\nDisallow: {normalised.partition('?')[0]}$\n"
    if "?" not in target:
        assert not allowed(body, target, "bot", "rfc9309")
        assert not allowed(body, target, "bot", "first-match")


def test_2_2_2_dot_segments_kept_under_google() -> None:
    """google matches the URL as written, as Google's reference does (the checker
    resolves dot segments first, because that is what its client sends)."""
    body = "User-agent: *\nDisallow: /private\n"
    assert allowed(body, "/x/../private", "bot", "google")
    assert allowed(body, "/x/../private", "bot", "google-reference")
    assert not allowed(body, "/x/../private", "bot", "rfc9309")
