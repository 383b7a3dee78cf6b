"""Product tokens: from a User-Agent header to the name robots.txt groups use."""

from __future__ import annotations

import pytest

import robots_async as ra

GOOGLEBOT_DESKTOP = (
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Googlebot/2.1; "
    "+http://www.google.com/bot.html) Chrome/120.0.6099.71 Safari/537.36"
)
GOOGLEBOT_SMARTPHONE = (
    "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 "
    "(KHTML, like Gecko) Chrome/120.0.6099.71 Mobile Safari/537.36 "
    "(compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
)
GOOGLEBOT_CLASSIC = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"


@pytest.mark.parametrize(
    ("user_agent", "token"),
    [
        ("MyBot/1.0 (+http://x)", "MyBot"),
        ("Mozilla/5.0 (compatible; FooBot/2.1; +http://x)", "FooBot"),
        (GOOGLEBOT_CLASSIC, "Googlebot"),
        (GOOGLEBOT_DESKTOP, "Googlebot"),
        (GOOGLEBOT_SMARTPHONE, "Googlebot"),
        ("Googlebot/2.1 (+http://www.google.com/bot.html)", "Googlebot"),
        ("Googlebot-Image/1.0", "Googlebot-Image"),
        ("AdsBot-Google (+http://www.google.com/adsbot.html)", "AdsBot-Google"),
        ("Mediapartners-Google", "Mediapartners-Google"),
        ("Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", "bingbot"),
        ("DuckDuckBot/1.1; (+http://duckduckgo.com/duckduckbot.html)", "DuckDuckBot"),
        ("my_bot-x/3", "my_bot-x"),
        ("  MyBot/1.0", "MyBot"),
        ("MyBot", "MyBot"),
        ("", ""),
        ("123bot", "123bot"),
        ("360Spider/2.0 (+http://webscan.360.cn)", "360Spider"),
        ("MJ12bot/v1.4.8 (http://mj12bot.com/)", "MJ12bot"),
        ("archive.org_bot", "archive.org_bot"),
        ("Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)", "MJ12bot"),
        ("*", "*"),
        ("/1.0", ""),
    ],
    ids=[
        "simple",
        "compatible",
        "googlebot-classic",
        "googlebot-desktop",
        "googlebot-smartphone",
        "googlebot-short",
        "googlebot-image",
        "adsbot",
        "mediapartners",
        "bingbot",
        "duckduckbot",
        "underscore-dash",
        "leading-space",
        "bare",
        "empty",
        "digits-first",
        "360spider",
        "mj12bot",
        "archive-org",
        "compatible-digits",
        "star",
        "slash-first",
    ],
)
def test_product_token(user_agent: str, token: str) -> None:
    """The product token is the crawler's name up to the first space or "/"."""
    assert ra.product_token(user_agent) == token


@pytest.mark.parametrize("value", [None, b"MyBot", 3])
def test_product_token_rejects_non_str(value: object) -> None:
    """product_token raises TypeError for a non-str header."""
    with pytest.raises(TypeError):
        ra.product_token(value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("token", "valid"),
    [
        ("Googlebot", True),
        ("Googlebot-Image", True),
        ("my_bot", True),
        ("-", True),
        ("_", True),
        ("", False),
        ("Googlebot/2.1", False),
        ("Bot2", False),
        ("Foo Bar", False),
        (" FooBot", False),
        ("*", False),
        ("Bötbot", False),
        ("FooBot\n", False),
    ],
)
def test_is_valid_token(token: str, valid: bool) -> None:
    """A valid product token is one or more of A-Z, a-z, "-" and "_"."""
    assert ra.is_valid_token(token) is valid


def test_user_agent_and_robots_token_select_the_same_group() -> None:
    """user_agent= derives the token that robots_token= takes verbatim."""
    robots = ra.parse("User-agent: Googlebot\nDisallow: /g\n\nUser-agent: *\nDisallow: /s\n")
    for header in (GOOGLEBOT_CLASSIC, GOOGLEBOT_DESKTOP, GOOGLEBOT_SMARTPHONE):
        assert robots.explain("/g", user_agent=header) == robots.explain(
            "/g", robots_token="Googlebot"
        )
    assert robots.allowed("/g", robots_token=GOOGLEBOT_CLASSIC)
    assert not robots.allowed("/s", robots_token=GOOGLEBOT_CLASSIC)


def test_robots_token_wins_over_user_agent() -> None:
    """When both are given, robots_token is the one used."""
    robots = ra.parse("User-agent: a\nDisallow: /\n")
    assert not robots.allowed("/x", user_agent="b/1.0", robots_token="a")
    assert robots.explain("/x", user_agent="b/1.0", robots_token="a").token == "a"


def test_agent_is_required() -> None:
    """Every question needs user_agent= or robots_token=; neither is a TypeError."""
    robots = ra.parse("User-agent: a\nDisallow: /\n")
    with pytest.raises(TypeError):
        robots.allowed("/x")
    with pytest.raises(TypeError):
        robots.explain("/x")
    with pytest.raises(TypeError):
        robots.crawl_delay()
    with pytest.raises(TypeError):
        robots.request_rate()
    with pytest.raises(TypeError):
        robots.visit_time()
    with pytest.raises(TypeError):
        robots.groups_for()
