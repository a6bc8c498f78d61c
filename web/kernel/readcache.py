"""A micro-cache for the hub's hottest anonymous reads (topic content, sections, lists, stats).

Entries are invalidated by every write this process commits (a generation counter bumped after
commit), so a process always reads its own writes; writes made by other processes become visible
after at most `CONCORD_READ_CACHE_SECONDS` (default 1 s; 0 turns the cache off).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel.db import Database

MAX_ENTRIES = 4096


class ReadCache:
    def __init__(self, db: Database, ttl_seconds: float) -> None:
        self.db = db
        self.ttl = ttl_seconds
        self.generation = 0
        self._entries: OrderedDict[Hashable, tuple[int, float, Any]] = OrderedDict()
        db.on_commit(lambda _session: self.bump())

    def bump(self) -> None:
        self.generation += 1

    async def get(self, key: Hashable, make: Callable[[AsyncSession], Awaitable[Any]]) -> Any:
        if self.ttl <= 0:
            async with self.db.read() as session:
                return await make(session)
        now = time.monotonic()
        hit = self._entries.get(key)
        if hit is not None and hit[0] == self.generation and hit[1] > now:
            self._entries.move_to_end(key)
            return hit[2]
        generation = self.generation  # a write committed while we read must not be cached as current
        async with self.db.read() as session:
            value = await make(session)
        self._entries[key] = (generation, now + self.ttl, value)
        self._entries.move_to_end(key)
        while len(self._entries) > MAX_ENTRIES:
            self._entries.popitem(last=False)
        return value
