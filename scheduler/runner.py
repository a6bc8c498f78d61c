"""Runs the domain sweeps on an AsyncIOScheduler once this process holds the leader lock."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
from datetime import UTC, datetime

from apscheduler.schedulers.asyncio import AsyncIOScheduler

from domain import wiring
from domain.kernel import sweeps
from domain.kernel.db import Database
from domain.kernel.settings import Settings
from domain.kernel.tasks import cancel_and_wait
from infra.metrics import process_metrics
from scheduler.leader import LeaderLock

log = logging.getLogger("concord.scheduler")


def holder_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class SchedulerService:
    def __init__(self, db: Database, settings: Settings) -> None:
        self.db = db
        self.settings = settings
        self.lock = LeaderLock(db)
        self.holder = holder_name()
        self.scheduler: AsyncIOScheduler | None = None
        self._task: asyncio.Task[None] | None = None
        self.is_leader = False
        self._running: set[asyncio.Task[object]] = set()
        self._stopping = False

    async def _run(self) -> None:
        log.info("scheduler %s waiting for the leader lock", self.holder)
        await self.lock.acquire()
        self.is_leader = True
        log.info("scheduler %s is the leader", self.holder)
        self.scheduler = AsyncIOScheduler(job_defaults={"coalesce": True, "max_instances": 1})
        scale = self.settings.sweep_interval_scale
        for item in wiring.SWEEPS:
            self.scheduler.add_job(
                self._guarded,
                "interval",
                seconds=max(0.2, item.interval_seconds * scale),
                args=[item],
                id=item.name,
                name=item.name,
                next_run_time=datetime.now(UTC),
            )
        self.scheduler.start()
        while await self.lock.still_held():
            await asyncio.sleep(5)
        # Lost the lock (database connection died): stop sweeping at once, then stand again.
        log.error("scheduler %s lost the leader lock; stopping sweeps", self.holder)
        self.scheduler.shutdown(wait=False)
        self.is_leader = False
        await self.lock.release()
        await self._run()

    async def _guarded(self, item: sweeps.Sweep) -> None:
        if self._stopping:
            return
        task = asyncio.current_task()
        if task is not None:
            self._running.add(task)
        started = time.perf_counter()
        outcome = "failed"
        try:
            await sweeps.run(self.db, item, self.holder)
            outcome = "ok"
        except Exception:
            log.exception("sweep %s failed", item.name)
        finally:
            process_metrics().sweep(item.name, outcome, time.perf_counter() - started)
            if task is not None:
                self._running.discard(task)

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="scheduler")

    async def stop(self) -> None:
        self._stopping = True  # a sweep that starts from now on returns at once
        if self.scheduler is not None and self.scheduler.running:
            self.scheduler.pause()  # and none is submitted
        # A sweep submitted in this instant has not taken its first step: let it, so that it returns instead
        # of being cancelled by the shutdown below (APScheduler logs a cancelled job as an error). Those in
        # flight commit before the database goes away.
        await asyncio.sleep(0)
        if self._running:
            await asyncio.wait(set(self._running), timeout=30)
        if self.scheduler is not None and self.scheduler.running:
            self.scheduler.shutdown(wait=False)
        if self._task is not None:
            await cancel_and_wait(self._task)
        await self.lock.release()
