"""RedisStore: robots.txt records and fetch leases shared by crawler workers.

    store = RedisStore("redis://localhost:6379/0")
    checker = robots_async.RobotsChecker("MyBot/1.0", store=store)

Each record is a Redis hash (JSON metadata, raw body, last good body; never a
pickle) that expires once it is of no use. A lease is ``SET key token NX PX ttl``,
released only by the worker holding its token, so a slow worker can never release
a lease another worker took after it expired. Any Redis failure is raised as
:class:`robots_async.StoreError`; the cache then answers from its own fetch.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from typing import TYPE_CHECKING, Any

try:
    import redis.asyncio as aioredis
    from redis.exceptions import RedisError
except ImportError as exc:  # pragma: no cover - exercised without redis installed
    raise ImportError(
        "robots_async.contrib.redis needs redis-py: pip install 'robots-async[redis]'"
    ) from exc

from .._errors import StoreError
from .._store import Lease, StoredRobots

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from .._url import Origin

__all__ = ["RedisStore"]

DAY = 86_400.0
# Delete the lease only if it still holds our token (compare-and-delete).
_RELEASE = """
if redis.call("get", KEYS[1]) == ARGV[1] then
    return redis.call("del", KEYS[1])
end
return 0
"""


class RedisStore:
    """:class:`robots_async.RobotsStore` on Redis.

    :param client: a ``redis://`` URL or a ``redis.asyncio.Redis`` client (bytes
        responses; it is not closed by :meth:`aclose`).
    :param prefix: key prefix, so several crawls can share one database.
    :param keep_for: how long a record outlives its expiry, so that a later fetch
        can still fall back on its last good copy (RFC 9309 §2.3.1.4: 30 days).
    :param timeout: socket timeout for a URL-built client, in seconds.
    """

    def __init__(
        self,
        client: str | aioredis.Redis,
        *,
        prefix: str = "robots_async",
        keep_for: float = 30 * DAY,
        timeout: float = 2.0,
    ) -> None:
        if isinstance(client, str):
            self._redis = aioredis.Redis.from_url(
                client, socket_timeout=timeout, socket_connect_timeout=timeout
            )
            self._owns = True
        else:
            if client.connection_pool.connection_kwargs.get("decode_responses"):
                raise ValueError("RedisStore needs a client with decode_responses=False")
            self._redis = client
            self._owns = False
        self._prefix = prefix
        self._keep_for = keep_for
        self._release_script = self._redis.register_script(_RELEASE)

    async def get(self, origin: Origin) -> StoredRobots | None:
        """The record for ``origin``, or None."""
        fields = await self._call(self._redis.hgetall(self._key("rec", origin)))
        if not fields:
            return None
        try:
            metadata = json.loads(fields[b"meta"])
            last_good = fields.get(b"last_good")
            return StoredRobots.from_parts(metadata, fields.get(b"body", b""), last_good)
        except (KeyError, ValueError, TypeError) as exc:
            raise StoreError(f"unreadable record for {origin}: {exc}") from exc

    async def put(self, origin: Origin, record: StoredRobots) -> None:
        """Store ``record`` until ``keep_for`` after it expires."""
        key = self._key("rec", origin)
        mapping: dict[str | bytes, str | bytes] = {
            "meta": json.dumps(record.metadata()),
            "body": record.body,
        }
        if record.last_good_body is not None:
            mapping["last_good"] = record.last_good_body
        lifetime = max(record.expires_at - time.time(), 1.0) + self._keep_for
        async with self._redis.pipeline(transaction=True) as pipe:
            # Commands on a pipeline are queued (their return value is the pipeline).
            _ = pipe.delete(key)
            _ = pipe.hset(key, mapping=mapping)  # type: ignore[arg-type]
            _ = pipe.pexpire(key, int(lifetime * 1000))
            await self._call(pipe.execute())

    async def acquire(self, origin: Origin, ttl: float) -> Lease | None:
        """``SET lease token NX PX ttl``: the lease, or None if another worker holds it."""
        token = secrets.token_hex(16)
        taken = await self._call(
            self._redis.set(self._key("lease", origin), token, nx=True, px=int(ttl * 1000))
        )
        return Lease(origin, token, time.time() + ttl) if taken else None

    async def release(self, lease: Lease) -> bool:
        """Release ``lease`` if it is still ours; False if it expired or was taken over."""
        keys = [self._key("lease", lease.origin)]
        deleted = await self._call(self._release_script(keys=keys, args=[lease.token]))
        return bool(deleted)

    async def aclose(self) -> None:
        """Close the client if this store created it."""
        if self._owns:
            await self._redis.aclose()

    def _key(self, kind: str, origin: Origin) -> str:
        return f"{self._prefix}:{kind}:{origin.scheme}://{origin.host}:{origin.port}"

    @staticmethod
    async def _call(awaitable: Awaitable[Any]) -> Any:
        try:
            return await awaitable
        except (RedisError, OSError, asyncio.TimeoutError) as exc:
            raise StoreError(f"redis: {exc}") from exc
