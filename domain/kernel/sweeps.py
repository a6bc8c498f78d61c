"""Periodic sweeps over the shared domain. The scheduler calls them; each records its run."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel import commits, outbox
from domain.kernel.clock import utcnow
from domain.kernel.db import Database
from domain.kernel.models import OutboxJob, SweepRun
from domain.kernel.settings import get_settings
from domain.kernel.sqlutil import execute_counted

log = logging.getLogger("concord.sweeps")
SweepFn = Callable[[AsyncSession], Awaitable[int]]


@dataclass(frozen=True)
class Sweep:
    name: str
    interval_seconds: float
    fn: SweepFn


async def run(db: Database, item: Sweep, holder: str) -> int:
    started = utcnow()
    async with db.transaction() as session:
        count = await item.fn(session)
        if not count:
            commits.unseen_by_reads(session)  # only its run record: no cached read is out of date
        session.add(
            SweepRun(
                name=item.name, holder=holder, started_at=started, finished_at=utcnow(), result=str(count)
            )
        )
    if count:
        log.info("sweep %s changed %d rows", item.name, count)
    return count


async def requeue_stale_jobs(session: AsyncSession) -> int:
    """Jobs sent long ago, neither finished nor running, lost their message (a broker crash): send them
    again after `CONCORD_JOB_RESEND_AFTER_SECONDS`."""
    return await outbox.requeue_unfinished(
        session, older_than=timedelta(seconds=get_settings().job_resend_after_seconds)
    )


def retention_cutoff() -> datetime:
    """Rows that finished before this are history nobody reads any more (`CONCORD_RETENTION_DAYS`)."""
    return utcnow() - timedelta(days=get_settings().retention_days)


async def purge_history(session: AsyncSession) -> int:
    """Sweep runs (several a minute) and finished jobs pile up forever otherwise. Failed jobs stay: they
    are what an operator has to look at."""
    cutoff = retention_cutoff()
    runs = await execute_counted(session, delete(SweepRun).where(SweepRun.started_at < cutoff))
    jobs = await execute_counted(
        session, delete(OutboxJob).where(OutboxJob.status == "done", OutboxJob.finished_at < cutoff)
    )
    return runs + jobs
