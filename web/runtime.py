"""The process's shared services (database, broker, relay, scheduler, rate limits), started once and
handed to both apps."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

import dramatiq

from domain.kernel import outbox
from domain.kernel.db import Database
from domain.kernel.settings import Settings
from scheduler.runner import SchedulerService
from web.kernel.ratelimit import RateLimits
from web.kernel.readcache import ReadCache
from workers.broker import is_embedded, setup_broker
from workers.embedded import start_worker
from workers.relay import Relay

log = logging.getLogger("concord.runtime")


@dataclass
class Runtime:
    settings: Settings
    db: Database
    broker: dramatiq.Broker
    limits: RateLimits
    relay: Relay | None = None
    scheduler: SchedulerService | None = None
    worker: dramatiq.Worker | None = None
    cache: ReadCache | None = None
    extras: dict[str, object] = field(default_factory=dict)

    @classmethod
    async def start(
        cls, settings: Settings, *, relay: bool = True, scheduler: bool = False, worker: bool | None = None
    ) -> Runtime:
        db = Database(settings.db_url)
        broker = setup_broker(settings)
        rt = cls(settings=settings, db=db, broker=broker, limits=RateLimits(settings))
        rt.cache = ReadCache(db, settings.read_cache_seconds)
        embedded = is_embedded(broker)
        if worker if worker is not None else embedded:
            rt.worker = start_worker(broker, settings.worker_threads)
        if embedded:
            # The in-memory broker lost whatever it held when the last process stopped.
            async with db.transaction() as session:
                requeued = await outbox.requeue_unfinished(session)
            if requeued:
                log.info("requeued %d jobs sent before the last stop", requeued)
        if relay:
            rt.relay = Relay(db, broker, settings.relay_interval_seconds)
            db.on_commit(lambda session: rt.relay.wake() if outbox.has_new_jobs(session) else None)
            rt.relay.start()
        if scheduler:
            rt.scheduler = SchedulerService(db, settings)
            rt.scheduler.start()
        return rt

    async def stop(self) -> None:
        if self.scheduler is not None:
            await self.scheduler.stop()
        if self.relay is not None:
            await self.relay.stop()
        if self.worker is not None:
            await asyncio.to_thread(self.worker.stop)
        await self.db.dispose()
