"""Habits brought from Protego work: the crawler name positionally (issue 28, item 13),
and Visit-time documented as it behaves (item 14)."""

from __future__ import annotations

import pytest

import robots_async as ra

BODY = """User-agent: MyBot
Disallow: /private
Crawl-delay: 2
Request-rate: 1/5s
Visit-time: 0100-0200
Visit-time: 0300-0400
Content-Usage: train-ai=n

User-agent: *
Disallow: /
"""


@pytest.fixture
def robots() -> ra.RobotsTxt:
    return ra.parse(BODY)


def test_the_crawler_name_may_be_positional(robots: ra.RobotsTxt) -> None:
    """``allowed(url, "MyBot")`` and friends answer as ``user_agent="MyBot"`` does."""
    url = "https://example.com/page"
    assert robots.allowed(url, "MyBot") is robots.allowed(url, user_agent="MyBot") is True
    assert robots.allowed("https://example.com/private/x", "MyBot") is False
    assert robots.allowed(url, "OtherBot/1.0") is False
    assert robots.explain(url, "MyBot") == robots.explain(url, user_agent="MyBot")
    assert robots.usage(url, "MyBot") == robots.usage(url, user_agent="MyBot")
    assert robots.crawl_delay("MyBot") == 2.0
    assert robots.request_rate("MyBot") == robots.request_rate(user_agent="MyBot")
    assert robots.visit_time("MyBot") == robots.visit_time(user_agent="MyBot")
    assert robots.groups_for("MyBot") == robots.groups_for(user_agent="MyBot")


def test_robots_token_stays_keyword_only(robots: ra.RobotsTxt) -> None:
    """The verbatim token is never confused with a User-Agent: keyword only."""
    with pytest.raises(TypeError):
        robots.allowed("https://example.com/", "MyBot", "mybot")  # type: ignore[misc]


def test_visit_time_within_a_group_is_the_last_line(robots: ra.RobotsTxt) -> None:
    """Two Visit-time lines in one group: the last counts, as the docstring says."""
    window = robots.visit_time("MyBot")
    assert window is not None
    assert (window.start.hour, window.end.hour) == (3, 4)
    if not ra.COMPILED:  # (a compiled build keeps no docstrings)
        doc = ra.RobotsTxt.visit_time.__doc__ or ""
        assert "last" in doc
        assert "first one given" not in doc
