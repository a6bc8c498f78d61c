"""The process's shared services: database, broker, outbox relay, scheduler, in-process worker, live events.

Started once per process and handed to both web apps (which attach their own web-only parts, such as
rate limits and the read cache), to the scheduler, and to the command line. Under the supervisor
(infra/supervisor.py) a process also counts its commits in the machine's shared generation and, with the
in-process broker, only the background process relays and runs jobs: the web processes ring its doorbell."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

import dramatiq
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel import commits, outbox
from domain.kernel.db import Database
from domain.kernel.settings import Settings
from infra import machine
from infra.live.hub import LiveEvents
from infra.live.transport import RedisPublisher
from infra.machine import Generation, LocalGeneration, SharedGeneration, Supervised
from infra.metrics import process_metrics
from scheduler.runner import SchedulerService
from workers import database as worker_database
from workers.broker import is_embedded, setup_broker
from workers.embedded import start_worker
from workers.relay import Relay

log = logging.getLogger("concord.runtime")


@dataclass
class Runtime:
    settings: Settings
    db: Database
    broker: dramatiq.Broker
    generation: Generation
    live: LiveEvents
    relay: Relay | None = None
    scheduler: SchedulerService | None = None
    worker: dramatiq.Worker | None = None
    supervised: Supervised | None = None
    publisher: RedisPublisher | None = None
    owns_db: bool = True

    @classmethod
    async def start(
        cls,
        settings: Settings,
        *,
        relay: bool = True,
        scheduler: bool = False,
        worker: bool | None = None,
        supervised: Supervised | None = None,
        db: Database | None = None,
    ) -> Runtime:
        """The process's services on `settings`; on `db` when given (its owner keeps it open after stop: the
        suite hands one Database to every test's runtime, so its pooled connections outlive a test)."""
        owns_db = db is None
        if db is None:
            db = Database(
                settings.db_url, pool_size=settings.db_pool_size, max_overflow=settings.db_max_overflow
            )
        process_metrics().track_pool("main", db.engine)
        broker = setup_broker(settings)
        generation: Generation = (
            SharedGeneration(supervised.generation_path, supervised.slot) if supervised else LocalGeneration()
        )
        machine_wide = generation if isinstance(generation, SharedGeneration) else None
        rt = cls(
            settings=settings,
            db=db,
            broker=broker,
            generation=generation,
            # Started by the web apps (web/app.py): only a process that serves them has listeners.
            live=LiveEvents(db, settings, machine_wide),
            supervised=supervised,
            owns_db=owns_db,
        )
        if settings.redis_url:  # this process's committed events, for the web processes of every machine
            rt.publisher = RedisPublisher(settings)
            rt.publisher.start()
        db.on_commit(rt._committed)
        embedded = is_embedded(broker)
        if worker if worker is not None else embedded:
            rt.worker = start_worker(broker, settings.worker_threads)
            worker_database.on_commit(lambda _session: generation.bump())
        if embedded and relay:
            # This process sends to an in-memory broker: what the last sender had in memory died with it.
            # Under the supervisor only the background process sends, so no live process holds these jobs.
            async with db.transaction() as session:
                requeued = await outbox.requeue_unfinished(session)
            if requeued:
                log.info("requeued %d jobs sent before the last stop", requeued)
        if relay:
            rt.relay = Relay(db, broker, settings.relay_interval_seconds)
            rt.relay.start()
            bell = supervised.doorbell if supervised is not None else None
            if bell is not None:  # the background process: web processes ring after adding jobs
                asyncio.get_running_loop().add_reader(bell, rt._doorbell_rang, bell)
        if scheduler:
            rt.scheduler = SchedulerService(db, settings)
            rt.scheduler.start()
        return rt

    def _committed(self, session: AsyncSession) -> None:
        """Commit hook: count the commit (read caches of the machine compare generations), and wake the
        relay at once when the unit of work added outbox jobs (here, or in the background process)."""
        if commits.seen_by_reads(session):
            self.generation.bump()
        if outbox.has_new_jobs(session):
            if self.relay is not None:
                self.relay.wake()
            elif self.supervised is not None and self.supervised.doorbell is not None:
                machine.ring(self.supervised.doorbell)

    def _doorbell_rang(self, doorbell: int) -> None:
        machine.drain(doorbell)
        if self.relay is not None:
            self.relay.wake()

    async def stop(self) -> None:
        await self.live.stop()
        if self.relay is not None and self.supervised is not None and self.supervised.doorbell is not None:
            asyncio.get_running_loop().remove_reader(self.supervised.doorbell)
        if self.scheduler is not None:
            await self.scheduler.stop()
        if self.relay is not None:
            await self.relay.stop()
        if self.worker is not None:
            await asyncio.to_thread(self.worker.stop)
        if self.publisher is not None:
            await asyncio.to_thread(self.publisher.stop)
        self.db.off_commit(self._committed)
        if self.owns_db:
            await self.db.dispose()
