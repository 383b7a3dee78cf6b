"""A malformed Redis URL is refused when the store is made, as a ConfigurationError
naming the URL (password hidden) and what is accepted: never redis-py's own exception
types, nor a store that fails every command of the crawl (found at first use)."""

from __future__ import annotations

import pytest

from robots_async import ConfigurationError
from robots_async.contrib.redis import RedisStore


@pytest.mark.parametrize(
    "url",
    [
        "redis://localhost:abc/0",  # redis-py: ValueError
        "rediss://localhost:99999",  # port out of range
        "redis://localhost:6379/notanint",  # redis-py: silently database 0
        "redis://localhost:6379/1/2",  # redis-py: silently database 12
        "redis://localhost:6379/-1",  # SELECT -1 failed every command
        "redis://localhost:6379/0?db=x",
        "redis://localhost:6379/0?sockettimeout=5",  # every command: TypeError
        "redis+cluster://",  # redis-py: RedisClusterException
        "redis+cluster://localhost:7000/1",  # no database in a cluster
        "redis+cluster://:::",
    ],
)
def test_malformed_url_is_a_configuration_error(url: str) -> None:
    with pytest.raises(ConfigurationError, match=r"^RedisStore\(url=\)=") as caught:
        RedisStore(url)
    assert "redis://host:6379/0" in caught.value.accepted


def test_password_is_not_shown() -> None:
    with pytest.raises(ConfigurationError) as caught:
        RedisStore("redis://user:s3cret@localhost:port/0")
    assert "s3cret" not in str(caught.value)
    assert "redis://user:***@localhost:port/0" in str(caught.value)


@pytest.mark.parametrize(
    "url",
    [
        "redis://localhost:6379",
        "redis://localhost:6379/",
        "redis://localhost:6379/15",
        "rediss://user:pw@localhost/2?socket_keepalive=true",
        "unix:///tmp/redis.sock?db=3",
        "redis+cluster://localhost:7000",
        "redis+cluster://localhost:7000/0",
    ],
)
async def test_well_formed_urls_are_accepted(url: str) -> None:
    """Made without connecting (a server down at startup is the documented fallback:
    each worker fetches for itself until the store answers)."""
    async with RedisStore(url):
        pass
