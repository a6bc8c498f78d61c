"""A micro-cache for the hub's hottest anonymous reads (topic content, sections, lists, stats).

Entries are invalidated by every write committed on this machine: the runtime's generation is bumped after
each commit (infra/machine.py; shared by the processes of one supervisor), and an entry is served only
while the generation it was read under is still current. So a client reads its own writes whichever
process of the machine answers; writes made on other machines become visible after at most
`CONCORD_READ_CACHE_SECONDS` (default 1 s; 0 turns the cache off). Requests that miss together share one
read, and an entry still in use is re-read in the background before it expires, so hot reads never wait.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from domain.kernel.db import Database
from infra.machine import Generation

MAX_ENTRIES = 4096
# Request targets (path and query, as sent) known to be answered by an entry: as many as the entries.
MAX_TARGETS = MAX_ENTRIES
# An entry served after the first half of its life is re-read in the background: under full load a read can
# take hundreds of milliseconds, and the new value must arrive before the old one expires. A hot entry is
# so read about twice a life per process (after a quarter of it, four times: a fifth of a web process's
# samples under wrk went to those re-reads and the SQLite thread's share of the GIL).
REFRESH_AHEAD = 0.5

log = logging.getLogger("concord.readcache")


class _Abandoned(Exception):
    """The request that was reading an entry for others was cancelled (its client went away)."""


class ReadCache:
    def __init__(self, db: Database, generation: Generation, ttl_seconds: float) -> None:
        self.db = db
        self.ttl = ttl_seconds
        self.generation = generation
        self._entries: OrderedDict[Hashable, tuple[Hashable, float, Any]] = OrderedDict()
        # One read per key and generation at a time: when an entry expires under load, the requests that
        # miss together wait for the first one's read instead of each running the same query.
        self._reading: dict[Hashable, tuple[Hashable, asyncio.Future[Any]]] = {}
        self._refreshing: set[asyncio.Task[None]] = set()  # referenced until done (asyncio keeps weak refs)
        # An anonymous GET's target as sent (`/api/pact/t1/content?resolve=true`) -> its entry's key and its
        # route's template: learnt from the request that the route answered, so that the next one with the
        # same target is answered before routing (`hot`).
        self._targets: dict[str, tuple[Hashable, str, Callable[[AsyncConnection], Awaitable[Any]]]] = {}

    def learn(
        self, target: str, key: Hashable, route: str, make: Callable[[AsyncConnection], Awaitable[Any]]
    ) -> None:
        """Remember that an anonymous GET of `target` (its path and query exactly as sent) is answered with
        the entry `key`, read by `make`, whatever else the request carries (the route's answer depends on the
        target only), for the route `route` (its template, for the metrics)."""
        if self.ttl <= 0 or target in self._targets:
            return
        if len(self._targets) >= MAX_TARGETS:
            del self._targets[next(iter(self._targets))]  # the oldest learnt
        self._targets[target] = (key, route, make)

    def hot(self, target: str) -> tuple[Any, str] | None:
        """The entry a GET of `target` is answered with, and its route's template, as `get` would answer it
        without waiting (current and unexpired; re-read in the background when due); None when the target is
        not known or its entry is missing, stale or expired (then the route answers: it reads)."""
        known = self._targets.get(target)
        if known is None:
            return None
        key, route, make = known
        hit = self._entries.get(key)
        if hit is None:
            return None
        generation = self.generation.current()
        now = time.monotonic()
        if hit[0] != generation or hit[1] <= now:
            return None
        self._entries.move_to_end(key)
        if hit[1] - now < self.ttl * REFRESH_AHEAD and key not in self._reading:
            self._refresh(key, generation, now, make)
        return hit[2], route

    def fresh(self, key: Hashable) -> Any | None:
        """The entry's value while it is current and young enough to need no re-read, else None (then
        `get`): a hot read answered without a coroutine of its own."""
        hit = self._entries.get(key)
        if hit is None or hit[0] != self.generation.current():
            return None
        left = hit[1] - time.monotonic()
        if left < self.ttl * REFRESH_AHEAD:
            return None  # expired, or to be re-read in the background: `get` does both
        self._entries.move_to_end(key)
        return hit[2]

    async def get(self, key: Hashable, make: Callable[[AsyncConnection], Awaitable[Any]]) -> Any:
        if self.ttl <= 0:
            async with self.db.read_connection() as conn:
                return await make(conn)
        now = time.monotonic()
        generation = self.generation.current()  # read before the data: a commit after it changes it
        hit = self._entries.get(key)
        if hit is not None and hit[0] == generation and hit[1] > now:
            self._entries.move_to_end(key)
            if hit[1] - now < self.ttl * REFRESH_AHEAD and key not in self._reading:
                self._refresh(key, generation, now, make)
            return hit[2]
        reading = self._reading.get(key)
        if reading is not None and reading[0] == generation:
            try:
                return await asyncio.shield(reading[1])
            except _Abandoned:
                pass  # the request reading it went away first: read it here
        value = await self._read(key, generation, make)
        self._store(key, generation, now + self.ttl, value)
        return value

    def _store(self, key: Hashable, generation: Hashable, expires: float, value: Any) -> None:
        if self.generation.current() != generation:
            return  # something committed during the read: the value may already be out of date
        self._entries[key] = (generation, expires, value)
        self._entries.move_to_end(key)
        while len(self._entries) > MAX_ENTRIES:
            self._entries.popitem(last=False)

    def _refresh(
        self,
        key: Hashable,
        generation: Hashable,
        now: float,
        make: Callable[[AsyncConnection], Awaitable[Any]],
    ) -> None:
        """Re-read a hot entry in the background while it is still served: without it, every request for the
        key would wait for the read when the entry expires (a stall each TTL). Its new life counts from now,
        before the read, so the staleness bound holds."""
        future = self._begin(key, generation)  # at once: the requests of this same loop turn see it

        async def refresh() -> None:
            try:
                value = await self._fill(key, future, make)
            except Exception:
                log.warning("background refresh of a cached read failed", exc_info=True)
                return
            self._store(key, generation, now + self.ttl, value)

        def done(task: asyncio.Task[None]) -> None:
            self._refreshing.discard(task)
            if not future.done():  # cancelled before it began: waiters read for themselves
                future.set_exception(_Abandoned())
                future.exception()
                if self._reading.get(key, (None, None))[1] is future:
                    del self._reading[key]

        task = asyncio.create_task(refresh())
        self._refreshing.add(task)
        task.add_done_callback(done)

    def _begin(self, key: Hashable, generation: Hashable) -> asyncio.Future[Any]:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._reading[key] = (generation, future)
        return future

    async def _read(
        self, key: Hashable, generation: Hashable, make: Callable[[AsyncConnection], Awaitable[Any]]
    ) -> Any:
        return await self._fill(key, self._begin(key, generation), make)

    async def _fill(
        self, key: Hashable, future: asyncio.Future[Any], make: Callable[[AsyncConnection], Awaitable[Any]]
    ) -> Any:
        """Read the value for `future` (registered under `key`), and hand it to whoever waits on it."""
        try:
            async with self.db.read_connection() as conn:
                value = await make(conn)
        except BaseException as exc:
            future.set_exception(_Abandoned() if isinstance(exc, asyncio.CancelledError) else exc)
            future.exception()  # retrieved: with no waiter, asyncio must not report it as unhandled
            raise
        else:
            future.set_result(value)
            return value
        finally:
            if self._reading.get(key, (None, None))[1] is future:
                del self._reading[key]
