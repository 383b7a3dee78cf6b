"""RedisStore: robots.txt records and fetch leases shared by crawler workers.

    async with RedisStore("redis://localhost:6379/0") as store, robots_async.RobotsChecker(
        "MyBot/1.0", store=store
    ) as checker:
        ...

Each record is a Redis hash (JSON metadata with a schema version, raw body, last good
body; never a pickle) that expires ``keep_for`` after it was written. A lease is
``SET key token NX PX ttl`` (a key there without expiry is not one of ours: it is taken
over), released only by the worker holding its token, so a slow worker can never
release a lease another worker took after it expired. The Lua scripts are in
``_redis_scripts``. Every command
is bounded by ``timeout`` whatever client is used; any Redis failure is raised as
:class:`robots_async.StoreError` and a record that does not conform as
:class:`robots_async.InvalidRecordError`: the cache then answers from its own fetch.

Redis Cluster works unchanged: give a ``redis+cluster://host:port`` URL (any node) or
a ``redis.asyncio.RedisCluster``. An origin's keys carry its name as a hash tag
(``prefix:rec:{http://host:80}``), so they live in one slot, and every command and
script touches one key of one origin. An origin's tdmrep.json record
(``prefix:res:tdmrep:{...}``, expiring with the record) and its lease
(``prefix:lease:tdmrep:{...}``, renewed while its holder fetches) are kept apart from robots.txt's.
While a master fails over (seconds), the cache retries a failed command (its
``retry_failures``) for up to 5 s before fetching by itself.
"""

from __future__ import annotations

import asyncio
import math
import secrets
import sys
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

try:
    import redis.asyncio as aioredis
    from redis.asyncio.cluster import RedisCluster
    from redis.asyncio.retry import Retry
    from redis.backoff import NoBackoff
    from redis.exceptions import RedisClusterException, RedisError, ResponseError
except ImportError as exc:  # pragma: no cover - exercised without redis installed
    raise ImportError(
        "robots_async.contrib.redis needs redis-py: pip install 'robots-async[redis]'"
    ) from exc

from ..cache.closing import AsyncClosing
from ..cache.pace_table import Reservation
from ..cache.records import decode, encode
from ..cache.resources import decode_resource, encode_resource
from ..cache.store import Lease, ResourceLease, StoredRobots
from ..core.errors import ConfigurationError, InvalidRecordError, StoreError, _shown
from ..core.pacing import JITTER, MARGIN
from ..core.url import without_password
from ..fetch.deadline import within
from ._redis_scripts import ACQUIRE, OBSERVE, PACE, PUT, RELEASE, RENEW

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from ..cache.resources import ResourceKind, StoredResource
    from ..core.pacing import PaceRule
    from ..core.url import Origin

__all__ = ["RedisStore"]

DAY = 86_400.0
_L = TypeVar("_L", bound=Lease)
#: Commands in flight at once per store (at most the client pool's max_connections).
_MAX_IN_FLIGHT = 64
#: URL schemes that name a Redis Cluster (any of its nodes), mapped to redis-py's.
_CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}
#: Longest expiry sent to Redis, in milliseconds (~285,000 years: "forever"); Redis
#: refuses one whose deadline passes LLONG_MAX ms.
_MAX_MILLIS = 2**53


class RedisStore(AsyncClosing):
    """:class:`robots_async.RobotsStore` on Redis.

    :param client: a ``redis://`` URL, a ``redis+cluster://`` URL (a node of a Redis
        Cluster), or a ``redis.asyncio.Redis`` or ``RedisCluster`` client (bytes
        responses; it is not closed by :meth:`aclose`).
    :param prefix: key prefix, so several crawls can share one database (no ``{`` or
        ``}``: those would change the keys' hash slot).
    :param keep_for: how long a record is kept after it was written, so that a later
        fetch can still fall back on its last good copy (RFC 9309 §2.3.1.4: 30 days).
    :param timeout: seconds any one command may take, whatever the client's own
        settings; also the socket timeouts of a client built from a URL.
    :raises ConfigurationError: for a URL that cannot work (a bad port, database or
        query option, no node), here rather than at every command; the server is not
        contacted (one down at startup is a store error: each worker fetches alone).
    """

    def __init__(
        self,
        client: str | aioredis.Redis | RedisCluster,
        *,
        prefix: str = "robots_async",
        keep_for: float = 30 * DAY,
        timeout: float = 2.0,
    ) -> None:
        _check_positive("timeout", timeout)
        _check_positive("keep_for", keep_for)
        if "{" in prefix or "}" in prefix:
            raise ValueError(f"RedisStore prefix may not contain '{{' or '}}': {prefix!r}")
        self._redis: aioredis.Redis | RedisCluster
        if isinstance(client, str):
            self._redis = _connect(client, timeout)
            self._owns = True
        else:
            if _client_options(client).get("decode_responses"):
                raise ValueError("RedisStore needs a client with decode_responses=False")
            self._redis = client
            self._owns = False
        self._prefix = prefix
        pool_limit = _client_options(self._redis).get("max_connections") or _MAX_IN_FLIGHT
        self._in_flight = asyncio.Semaphore(min(pool_limit, _MAX_IN_FLIGHT))
        self._keep_for = keep_for
        self._timeout = timeout
        self._acquire_script = self._redis.register_script(ACQUIRE)
        self._release_script = self._redis.register_script(RELEASE)
        self._renew_script = self._redis.register_script(RENEW)
        self._put_script = self._redis.register_script(PUT)
        self._pace_script = self._redis.register_script(PACE)
        self._observe_script = self._redis.register_script(OBSERVE)
        self._ready = not isinstance(self._redis, RedisCluster)
        self._ready_lock = asyncio.Lock()
        self._learnt = False

    @property
    def retry_failures(self) -> bool:
        """True on a Redis Cluster: a failed or unanswered command may be a failover
        under way (seconds), so the cache tries again within its patience before
        fetching by itself. A single server's failures are not retried."""
        return isinstance(self._redis, RedisCluster)

    async def get(self, origin: Origin) -> StoredRobots | None:
        """The record for ``origin``, or None.

        :raises InvalidRecordError: for a record that does not conform to the schema.
        """
        fields = await self._hash(self._key("rec", origin))
        if not fields:
            return None
        return decode({_text(name): value for name, value in fields.items()})

    async def put(self, origin: Origin, record: StoredRobots) -> None:
        """Replace the record of ``origin``, to be kept ``keep_for`` seconds."""
        keys = [self._key("rec", origin)]
        args: list[bytes | str | int] = [_millis(self._keep_for)]
        for name, value in encode(record).items():
            args += [name, value]
        await self._call(lambda: self._put_script(keys=keys, args=args))

    async def acquire(self, origin: Origin, ttl: float) -> Lease | None:
        """``SET lease token NX PX ttl`` (or over a key without expiry, not a lease of
        ours): the lease, or None if another worker holds it."""
        token = secrets.token_hex(16)
        key = self._key("lease", origin)
        taken = await self._take(key, token, ttl)
        return Lease(origin, token, time.time() + ttl) if taken else None

    async def release(self, lease: Lease) -> bool:
        """Release ``lease`` if it is still ours; False if it expired or was taken over."""
        keys = [self._key("lease", lease.origin)]
        deleted = await self._call(lambda: self._release_script(keys=keys, args=[lease.token]))
        return bool(deleted)

    async def renew(self, lease: Lease, ttl: float) -> Lease | None:
        """Extend ``lease`` to ``ttl`` seconds from now if it is still ours (one script)."""
        return await self._renew(self._key("lease", lease.origin), lease, ttl)

    async def get_resource(self, origin: Origin, kind: ResourceKind) -> StoredResource | None:
        """The ``kind`` record of ``origin`` (tdmrep.json), or None once it expired.

        :raises InvalidRecordError: a record that does not conform (or a newer layout).
        """
        fields = await self._hash(self._key(f"res:{kind}", origin))
        if not fields:
            return None
        return decode_resource({_text(name): value for name, value in fields.items()})

    async def put_resource(self, origin: Origin, record: StoredResource) -> None:
        """Replace the ``record.kind`` record of ``origin``; it expires after its
        lifetime (``expires - fetched_at``, a duration: the writer's clock is not Redis's)."""
        keys = [self._key(f"res:{record.kind}", origin)]
        args: list[bytes | str | int] = [max(1, _millis(record.expires - record.fetched_at))]
        for name, value in encode_resource(record).items():
            args += [name, value]
        await self._call(lambda: self._put_script(keys=keys, args=args))

    async def acquire_resource(
        self, origin: Origin, kind: ResourceKind, ttl: float
    ) -> ResourceLease | None:
        """The origin's ``kind`` lease as :meth:`acquire` takes one, or None if held."""
        token = secrets.token_hex(16)
        key = self._key(f"lease:{kind}", origin)
        taken = await self._take(key, token, ttl)
        return ResourceLease(origin, token, time.time() + ttl, kind) if taken else None

    async def release_resource(self, lease: ResourceLease) -> bool:
        """Release ``lease`` if it is still ours (the compare-and-delete script)."""
        keys = [self._key(f"lease:{lease.kind}", lease.origin)]
        deleted = await self._call(lambda: self._release_script(keys=keys, args=[lease.token]))
        return bool(deleted)

    async def renew_resource(self, lease: ResourceLease, ttl: float) -> ResourceLease | None:
        """Extend ``lease`` to ``ttl`` seconds from now if it is still ours (the
        compare-and-expire script, on the resource lease's key)."""
        return await self._renew(self._key(f"lease:{lease.kind}", lease.origin), lease, ttl)

    async def _take(self, key: str, token: str, ttl: float) -> bool:
        """Whether the lease at ``key`` was taken for ``token`` (the acquire script)."""
        args: list[str | int] = [token, _millis(ttl)]
        return bool(await self._call(lambda: self._acquire_script(keys=[key], args=args)))

    async def _hash(self, key: str) -> dict[bytes, bytes]:
        """The fields of the record at ``key`` (none if it is missing).

        :raises InvalidRecordError: the key holds another type (another program's): a
            record that does not conform, fetched and overwritten by the reader (as a
            store failure it stayed, and every worker fetched that origin every time).
        """
        fields: dict[bytes, bytes] = await _no_hash_is_invalid(
            self._call(lambda: self._redis.hgetall(key)), "record"
        )
        return fields

    async def _renew(self, key: str, lease: _L, ttl: float) -> _L | None:
        """``lease`` extended on ``key`` (one key, one slot), or None if it was lost."""
        args: list[str | int] = [lease.token, _millis(ttl)]
        renewed = await self._call(lambda: self._renew_script(keys=[key], args=args))
        return replace(lease, expires_at=time.time() + ttl) if renewed else None

    async def reserve(self, unit: str, rule: PaceRule, jitter: float) -> Reservation:
        """Reserve the next visit of ``unit`` under ``rule``: one script, one round
        trip, on the server's clock (see :mod:`robots_async.core.pacing`)."""
        wait, failures, reserved = await self._pace(unit, rule, jitter, "reserve")
        return Reservation(wait, failures, reserved=reserved)

    async def pause_left(self, unit: str, rule: PaceRule, jitter: float) -> float:
        """Seconds until the pauses ``unit`` asked for end (no visit reserved)."""
        wait, _, _ = await self._pace(unit, rule, jitter, "pause")
        return wait

    async def sent_late(self, unit: str, rule: PaceRule) -> None:
        """Record a page of ``unit`` sent now (the server's clock), after its turn."""
        await self._run_pace(unit, rule, 0.0, "sent")

    async def left_at_send(
        self, unit: str, rule: PaceRule, held: float, jitter: float
    ) -> tuple[float, float]:
        """For a page of ``unit`` whose turn began ``held`` seconds ago: the pauses
        left, and the seconds short of an interval after another page."""
        pause, _, short = await self._run_pace(unit, rule, jitter, "send", repr(float(held)))
        return max(0.0, float(pause)), max(0.0, float(short))

    async def observe(
        self,
        unit: str,
        rule: PaceRule,
        *,
        busy: bool,
        retry_after: float | None,
        elapsed: float | None = None,
    ) -> None:
        """Record a page response of ``unit``: 429/503 (``busy``) or a success,
        ``elapsed`` seconds after its request was sent (None: not known)."""
        keys = [self._unit_key(unit)]
        args: list[str] = [
            "1" if busy else "0",
            "" if retry_after is None else repr(float(retry_after)),
            repr(float(rule.max_retry_after)),
            repr(float(rule.max_backoff)),
            repr(MARGIN),
            repr(float(rule.first_backoff)),
            repr(1.0 + JITTER),
            "" if elapsed is None else repr(float(elapsed)),
        ]
        call = self._call(lambda: self._observe_script(keys=keys, args=args))
        await _no_hash_is_invalid(call, "pace")

    async def _pace(
        self, unit: str, rule: PaceRule, jitter: float, mode: str
    ) -> tuple[float, int, bool]:
        wait, failures, reserved = await self._run_pace(unit, rule, jitter, mode)
        return max(0.0, float(wait)), int(failures), bool(int(reserved))

    async def _run_pace(
        self, unit: str, rule: PaceRule, jitter: float, mode: str, *more: str
    ) -> Any:
        """The pace script's answer (three values) for ``unit`` in ``mode``."""
        keys = [self._unit_key(unit)]
        numbers = (rule.interval, rule.max_retry_after, rule.first_backoff, rule.max_backoff)
        args = [*(repr(float(n)) for n in numbers), repr(float(jitter)), repr(MARGIN), mode]
        args += [repr(JITTER), *more]
        call = self._call(lambda: self._pace_script(keys=keys, args=args))
        return await _no_hash_is_invalid(call, "pace")

    def _unit_key(self, unit: str) -> str:
        # The unit in braces is the hash tag (one slot). A host may hold "{" or "}"
        # only in theory (not in a URL host); escaped so it never splits the tag.
        tag = unit.replace("{", "%7B").replace("}", "%7D")
        return f"{self._prefix}:pace:{{{tag}}}"

    async def aclose(self) -> None:
        """Close the client if this store created it."""
        if self._owns:
            await self._redis.aclose()

    def _key(self, kind: str, origin: Origin) -> str:
        # The origin in braces is the key's hash tag: one slot per origin in a cluster.
        return f"{self._prefix}:{kind}:{{{origin.scheme}://{origin.host}:{origin.port}}}"

    async def _call(self, command: Callable[[], Awaitable[Any]]) -> Any:
        """Run ``command()`` within the timeout, counting the wait for a connection."""
        task = asyncio.ensure_future(self._limited(command))
        task.add_done_callback(_retrieved)
        try:
            async with within(self._timeout):
                return await _owned(task)
        except asyncio.TimeoutError as exc:
            self._rediscover()
            raise StoreError(f"redis: no answer within {self._timeout:g} s") from exc
        except (RedisError, OSError) as exc:
            self._rediscover()
            raise StoreError(f"redis: {exc}") from exc
        except (AttributeError, TypeError) as exc:
            # redis-py's asyncio connections leak these when a socket closes under a
            # write (redis/redis-py#4287, 8.1.0): a failed command all the same.
            self._rediscover()
            raise StoreError(f"redis: connection lost ({exc!r})") from exc

    async def _limited(self, command: Callable[[], Awaitable[Any]]) -> Any:
        # redis-py's default pool refuses a command beyond max_connections at once
        # ("Too many connections"); queue instead, so a burst of checks waits.
        async with self._in_flight:
            if not self._ready:
                await self._discover()
            return await command()

    async def _discover(self) -> None:
        """Learn a cluster's slots before the first commands, and again after a
        failure, once for all commands: redis-py's RedisCluster otherwise learns them
        inside each of a burst of commands, and each run replaces the connections the
        others are using (measured: 1 in 6 of 500 concurrent first commands failed
        with "Connection closed"), or keeps sending to a dead master's address after
        its replica took over (about 30 of 300 origins failed after a failover)."""
        async with self._ready_lock:
            if not self._ready:
                assert isinstance(self._redis, RedisCluster)
                if self._learnt:
                    await self._redis.nodes_manager.initialize()
                else:
                    _ = await self._redis.initialize()
                self._learnt = self._ready = True

    def _rediscover(self) -> None:
        """Make the next command re-learn a cluster's slots (a failover moves them)."""
        self._ready = not isinstance(self._redis, RedisCluster)


def _connect(url: str, timeout: float) -> aioredis.Redis | RedisCluster:
    """A client for ``url``: a RedisCluster for a ``redis+cluster://`` URL."""
    # One attempt per command: the cache retries on its own schedule, and redis-py's
    # default retries multiply a dead server's timeout.
    options: dict[str, Any] = {
        "socket_timeout": timeout,
        "socket_connect_timeout": timeout,
        "retry": Retry(NoBackoff(), 0),
    }
    scheme, separator, rest = url.partition("://")
    cluster = scheme.lower() in _CLUSTER_SCHEMES and bool(separator)
    try:
        _check_database(url, cluster=cluster)
        if cluster:
            # One more attempt, after redis-py re-learns the slots: a command sent to a
            # master that has just been replaced then reaches its successor.
            options["retry"] = Retry(NoBackoff(), 1)
            cluster_url = f"{_CLUSTER_SCHEMES[scheme.lower()]}://{rest}"
            return RedisCluster.from_url(cluster_url, **options)
        client = aioredis.Redis.from_url(url, **options)
        # A connection made (not connected) here refuses an unknown query option,
        # which otherwise failed every command of the crawl with a TypeError.
        pool = client.connection_pool
        pool.connection_class(**pool.connection_kwargs)
    except (ValueError, TypeError, RedisError, RedisClusterException) as exc:
        hidden = without_password(url)  # no password in logs
        reason = str(exc).partition("\n")[0]
        raise ConfigurationError(
            "RedisStore(url=)",
            hidden,
            f"a Redis URL such as 'redis://host:6379/0', 'rediss://user:password@host/0', "
            f"'unix:///path/redis.sock?db=0' or 'redis+cluster://host:7000' ({reason})",
        ) from None
    return client


def _check_database(url: str, *, cluster: bool) -> None:
    """Refuse a database path redis-py would misread: ``/x`` was ignored (database 0),
    ``/1/2`` read as 12, ``/-1`` failed every command; a cluster has database 0 only."""
    if url.lower().startswith("unix:"):
        return  # the path is the socket's; the database is ?db=
    path = urlsplit(url).path.strip("/")
    if path and not (path == "0" if cluster else path.isascii() and path.isdigit()):
        raise ValueError(f"database {path!r} is not {'0' if cluster else 'a number'}")


def _client_options(client: aioredis.Redis | RedisCluster) -> dict[str, Any]:
    """The connection options of a client (a cluster keeps them per node)."""
    if isinstance(client, RedisCluster):
        return dict(client.get_connection_kwargs())
    pool = client.connection_pool
    return {**pool.connection_kwargs, "max_connections": pool.max_connections}


async def _owned(task: asyncio.Future[Any]) -> Any:
    """Await ``task``, cancelling it when the caller is cancelled (or times out).

    Through a shield, so the caller's CancelledError is its own: redis-py may turn
    the task's cancellation into a RedisError, which must not replace it.
    """
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        task.cancel()
        raise


def _retrieved(task: asyncio.Future[Any]) -> None:
    """Mark a command's failure as seen: when our caller is cancelled first (the
    cache's own timeout), redis-py may still turn the cancellation into a
    ClusterDownError or ConnectionError that nobody awaits (asyncio then logs
    "Task exception was never retrieved"; seen during failovers)."""
    if not task.cancelled():
        task.exception()


def _text(name: bytes | str) -> str:
    return name.decode("utf-8", "replace") if isinstance(name, bytes) else name


def _millis(seconds: float) -> int:
    """``seconds`` as a PX/PEXPIRE argument, capped at :data:`_MAX_MILLIS` (a larger
    one overflows to ``int(inf)`` here, or Redis refuses it as an invalid expire time)."""
    return int(min(seconds, _MAX_MILLIS / 1000) * 1000)


def _check_positive(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(
            f"RedisStore {name} must be a positive number of seconds, not {_shown(value)}"
        )
    if value > sys.float_info.max or not math.isfinite(value):  # 10**400: no float
        raise ValueError(f"RedisStore {name} must be finite, not {_shown(value)}")


async def _no_hash_is_invalid(call: Awaitable[Any], field: str) -> Any:
    """``call``'s answer; :raises InvalidRecordError: (``field``) when its key holds
    another type than a hash (another program's, or damaged): that record failed, not
    the store (a record is fetched and overwritten, a pace unit paced alone).
    """
    try:
        return await call
    except StoreError as exc:
        cause = exc.__cause__
        if isinstance(cause, ResponseError) and str(cause).startswith("WRONGTYPE"):
            raise InvalidRecordError(field, "the key holds no hash") from exc
        raise
