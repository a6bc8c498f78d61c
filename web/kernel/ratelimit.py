"""Per-client rate limits (moving window) from the `limits` library.

Where the counts live: Redis when it is configured (every process of every machine); else, under the
supervisor, an SQLite file the machine's web processes share (web/kernel/limitstore.py), so N processes do
not allow N times the limit; else this process's memory.

Redis trouble never fails a request. The rate limits' connections come from a pool of
`CONCORD_REDIS_MAX_CONNECTIONS` per process that a request waits on (up to `CONCORD_REDIS_TIMEOUT_SECONDS`)
instead of failing when every connection is busy; a connection that went stale (a Redis restart) is
retried once on a fresh one. When Redis still cannot answer (down, unreachable, slower than the timeout,
the pool still busy), the process falls back to counting as it does without Redis (the machine's shared
file under the supervisor, else its own memory): every limit still holds, per machine. It logs one warning
when that starts and one when Redis answers again, and meanwhile tries Redis again every
`RETRY_REDIS_SECONDS` (one request, not every one, so none waits on a dead Redis). Readiness (`/readyz`) and
scrapes ask Redis as they answer (`refresh`) and name the state (`rateLimits`,
`concord_rate_limits_fallback`)."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
from collections.abc import Callable
from pathlib import Path

import redis.asyncio
from limits import RateLimitItem, RateLimitItemPerSecond
from limits.aio.storage import MemoryStorage, RedisStorage, Storage
from limits.aio.strategies import MovingWindowRateLimiter
from limits.util import WindowStats
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from domain.kernel.errors import RateLimited
from domain.kernel.settings import Settings
from web.kernel.limitstore import SQLiteWindowStorage

log = logging.getLogger("concord.ratelimit")

RETRY_REDIS_SECONDS = 5.0
# What a Redis call can raise besides RedisError when the server is gone (sockets, the pool's wait).
REDIS_TROUBLE = (RedisError, OSError, TimeoutError)


def client_name() -> str:
    """The name the rate limits' Redis connections give themselves: which process on which machine."""
    return f"concord-rate-limits:{socket.gethostname()}:{os.getpid()}"


def redis_pool(settings: Settings) -> redis.asyncio.BlockingConnectionPool:
    """The web process's pool for Redis: bounded, waited on when busy, every call time-bounded."""
    assert settings.redis_url
    timeout = settings.redis_timeout_seconds
    return redis.asyncio.BlockingConnectionPool.from_url(
        settings.redis_url,
        client_name=client_name(),  # CLIENT LIST says whose connections these are
        max_connections=settings.redis_max_connections,
        timeout=timeout,  # how long a request waits for a free connection
        socket_connect_timeout=timeout,
        socket_timeout=timeout,
        retry=Retry(NoBackoff(), 1),  # a connection gone stale is retried once, on a new connection
        retry_on_error=[RedisConnectionError, RedisTimeoutError],
    )


class RateLimits:
    def __init__(
        self,
        settings: Settings,
        shared_file: Path | None = None,
        *,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._monotonic = monotonic
        local: Storage = SQLiteWindowStorage(shared_file) if shared_file is not None else MemoryStorage()
        self.local = MovingWindowRateLimiter(local)
        self.local_kind = "shared file" if shared_file is not None else "process memory"
        self.shared: MovingWindowRateLimiter | None = None
        self._redis: redis.asyncio.Redis | None = None  # for `refresh`'s PING, on the limits' own pool
        if settings.redis_url:
            pool = redis_pool(settings)
            storage = RedisStorage(
                "async+" + settings.redis_url,
                implementation="redispy",
                key_prefix=f"{settings.queue_namespace}:ratelimit",
                connection_pool=pool,  # type: ignore[arg-type]  # passed on to redis-py
            )
            self.shared = MovingWindowRateLimiter(storage)
            self._redis = redis.asyncio.Redis(connection_pool=pool)
        self.redis_problem: str | None = None  # why Redis is not used now, while it is not
        self._retry_redis_at = 0.0

    async def close(self) -> None:
        """Close the limits' Redis connections (the app's cleanup): a process that builds its apps again, or
        stops, leaves none open for the garbage collector or the server's idle timeout to find."""
        if self._redis is not None:
            await self._redis.aclose(close_connection_pool=True)  # the limits' own pool, shared with it

    @property
    def state(self) -> str:
        """Where the counts live now, for readiness: `redis`, `shared file`, `process memory`, or
        `shared file (redis unreachable: …)` / `process memory (redis unreachable: …)` while falling back."""
        if self.shared is None:
            return self.local_kind
        if self.redis_problem is None:
            return "redis"
        return f"{self.local_kind} (redis unreachable: {self.redis_problem})"

    async def hit(self, name: str, limit: int, client: str, *, seconds: int = 60) -> None:
        """Count one `name` request of `client`; 429 (RateLimited) when `limit` were counted in the last
        `seconds` already (that one is not counted)."""
        await self._ask(name, limit, client, seconds, count=True)

    async def check(self, name: str, limit: int, client: str, *, seconds: int = 60) -> None:
        """RateLimited if `client` has used up `name` (as `hit` would say), counting nothing: for a budget
        that only some outcomes spend (counted afterwards with `hit`)."""
        await self._ask(name, limit, client, seconds, count=False)

    async def _ask(self, name: str, limit: int, client: str, seconds: int, *, count: bool) -> None:
        item = RateLimitItemPerSecond(limit, seconds)
        limiter = self._limiter()
        try:
            allowed, stats = await _consult(limiter, item, name, client, count)
        except REDIS_TROUBLE as exc:
            if limiter is not self.shared:
                raise
            self._redis_failed(exc)
            limiter = self.local
            allowed, stats = await _consult(limiter, item, name, client, count)
        else:
            if limiter is self.shared and self.redis_problem is not None:
                log.warning("rate limits: Redis answers again; counting there again")
                self.redis_problem = None
        if allowed or stats is None:
            return
        retry_after = max(1, int(stats.reset_time - time.time()) + 1)
        raise RateLimited(
            f"too many {name} requests: at most {limit} per {window(seconds)}; retry in {retry_after} s",
            retry_after=retry_after,
        )

    @property
    def falling_back(self) -> bool:
        """Whether the limits count on the machine although Redis is configured (it cannot answer)."""
        return self.shared is not None and self.redis_problem is not None

    async def refresh(self, timeout: float) -> str:
        """Ask Redis now (a PING on the limits' own connections, bounded by `timeout`) and record the answer,
        so that `state` says what is in force at this moment, not as of the last limited request (readiness
        and scrapes call it). Answers `state`."""
        if self._redis is None:
            return self.state
        try:
            await asyncio.wait_for(self._redis.ping(), timeout)
        except TimeoutError:
            self._redis_failed(TimeoutError(f"no answer within {timeout:g} s"))
        except REDIS_TROUBLE as exc:
            self._redis_failed(exc)
        else:
            if self.redis_problem is not None:
                log.warning("rate limits: Redis answers again; counting there again")
                self.redis_problem = None
        return self.state

    def _limiter(self) -> MovingWindowRateLimiter:
        if self.shared is None:
            return self.local
        if self.redis_problem is not None:
            now = self._monotonic()
            if now < self._retry_redis_at:
                return self.local
            self._retry_redis_at = now + RETRY_REDIS_SECONDS  # this request tries Redis; the rest wait
        return self.shared

    def _redis_failed(self, exc: BaseException) -> None:
        problem = describe(exc)
        if self.redis_problem is None:
            log.warning(
                "rate limits: Redis cannot answer (%s); counting in %s until it does",
                problem,
                self.local_kind,
            )
        self.redis_problem = problem
        self._retry_redis_at = self._monotonic() + RETRY_REDIS_SECONDS


async def _consult(
    limiter: MovingWindowRateLimiter, item: RateLimitItem, name: str, client: str, count: bool
) -> tuple[bool, WindowStats | None]:
    """Whether the request is allowed (counted when `count`), and the window's state when it is not."""
    allowed = await (limiter.hit if count else limiter.test)(item, name, client)
    return allowed, None if allowed else await limiter.get_window_stats(item, name, client)


def window(seconds: int) -> str:
    """A window's length in words: `minute`, `hour`, `10 minutes`, `90 s`."""
    for unit, size in (("hour", 3600), ("minute", 60)):
        if seconds == size:
            return unit
        if seconds % size == 0:
            return f"{seconds // size} {unit}s"
    return f"{seconds} s"


def describe(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text[:200]
