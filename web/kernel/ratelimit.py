"""Per-client rate limits (moving window) from the `limits` library.

Where the counts live: Redis when it is configured (every process of every machine); else, under the
supervisor, an SQLite file the machine's web processes share (web/kernel/limitstore.py), so N processes do
not allow N times the limit; else this process's memory."""

from __future__ import annotations

import time
from pathlib import Path

from limits import RateLimitItemPerMinute
from limits.aio.storage import MemoryStorage, RedisStorage, Storage
from limits.aio.strategies import MovingWindowRateLimiter

from domain.kernel.errors import RateLimited
from domain.kernel.settings import Settings
from web.kernel.limitstore import SQLiteWindowStorage


class RateLimits:
    def __init__(self, settings: Settings, shared_file: Path | None = None) -> None:
        storage: Storage
        if settings.redis_url:
            storage = RedisStorage(
                "async+" + settings.redis_url,
                implementation="redispy",
                key_prefix=f"{settings.queue_namespace}:ratelimit",
            )
        elif shared_file is not None:
            storage = SQLiteWindowStorage(shared_file)
        else:
            storage = MemoryStorage()
        self.limiter = MovingWindowRateLimiter(storage)

    async def hit(self, name: str, per_minute: int, client: str) -> None:
        item = RateLimitItemPerMinute(per_minute)
        if await self.limiter.hit(item, name, client):
            return
        stats = await self.limiter.get_window_stats(item, name, client)
        retry_after = max(1, int(stats.reset_time - time.time()) + 1)
        raise RateLimited(
            f"too many {name} requests: at most {per_minute} per minute; retry in {retry_after} s",
            retry_after=retry_after,
        )
