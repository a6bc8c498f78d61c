"""The process's shared services: database, broker, outbox relay, scheduler and in-process worker.

Started once per process and handed to both web apps (which attach their own web-only parts, such as
rate limits and the read cache), to the scheduler, and to the command line."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

import dramatiq
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel import outbox
from domain.kernel.db import Database
from domain.kernel.settings import Settings
from scheduler.runner import SchedulerService
from workers.broker import is_embedded, setup_broker
from workers.embedded import start_worker
from workers.relay import Relay

log = logging.getLogger("concord.runtime")


@dataclass
class Runtime:
    settings: Settings
    db: Database
    broker: dramatiq.Broker
    relay: Relay | None = None
    scheduler: SchedulerService | None = None
    worker: dramatiq.Worker | None = None

    @classmethod
    async def start(
        cls, settings: Settings, *, relay: bool = True, scheduler: bool = False, worker: bool | None = None
    ) -> Runtime:
        db = Database(settings.db_url)
        broker = setup_broker(settings)
        rt = cls(settings=settings, db=db, broker=broker)
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
            db.on_commit(rt._wake_relay)
            rt.relay.start()
        if scheduler:
            rt.scheduler = SchedulerService(db, settings)
            rt.scheduler.start()
        return rt

    def _wake_relay(self, session: AsyncSession) -> None:
        """Commit hook: a unit of work that added outbox jobs wakes the relay at once."""
        if self.relay is not None and outbox.has_new_jobs(session):
            self.relay.wake()

    async def stop(self) -> None:
        if self.scheduler is not None:
            await self.scheduler.stop()
        if self.relay is not None:
            await self.relay.stop()
        if self.worker is not None:
            await asyncio.to_thread(self.worker.stop)
        await self.db.dispose()
