"""Periodic sweeps over the shared domain. The scheduler calls them; each records its run."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel import commits, outbox
from domain.kernel.clock import utcnow
from domain.kernel.db import Database
from domain.kernel.models import SweepRun

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
    """Jobs sent long ago but never finished lost their message (a broker crash): send them again."""
    return await outbox.requeue_unfinished(session, older_than=timedelta(minutes=15))
