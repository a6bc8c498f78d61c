"""Transactional job outbox.

`enqueue` writes a job row in the caller's transaction, so a job exists if and only if the change that
needs it committed. A relay (workers/relay.py) sends pending rows to the broker after commit; actors
run each job through `run`, which marks it done in the same transaction as its effect, so a job
delivered twice takes effect once.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel.clock import new_id, utcnow
from domain.kernel.db import Database
from domain.kernel.models import OutboxJob
from domain.kernel.sqlutil import execute_counted

JobHandler = Callable[[AsyncSession, dict[str, Any]], Awaitable[None]]
FailureHandler = Callable[[AsyncSession, dict[str, Any], str], Awaitable[None]]


@dataclass(frozen=True)
class Job:
    """A kind of background job: its name (the Dramatiq actor's), what it does, and what a job that keeps
    failing leaves behind. domain/wiring.py lists every one; workers declare one actor per entry."""

    name: str
    handler: JobHandler
    on_failure: FailureHandler | None = None


def enqueue(session: AsyncSession, job: Job, payload: dict[str, Any]) -> str:
    job_id = new_id()
    session.add(OutboxJob(id=job_id, actor=job.name, payload=payload, status="pending", created_at=utcnow()))
    session.info["outbox_dirty"] = True
    return job_id


def has_new_jobs(session: AsyncSession) -> bool:
    return bool(session.info.pop("outbox_dirty", False))


async def claim_pending(session: AsyncSession, limit: int = 100) -> list[OutboxJob]:
    stmt = (
        select(OutboxJob)
        .where(OutboxJob.status == "pending")
        .order_by(OutboxJob.created_at)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    return list((await session.scalars(stmt)).all())


def mark_sent(jobs: list[OutboxJob]) -> None:
    now = utcnow()
    for job in jobs:
        job.status = "sent"
        job.sent_at = now


def mark_failed(job: OutboxJob, reason: str) -> None:
    job.status = "failed"
    job.finished_at = utcnow()
    job.last_error = reason[:2000]


async def requeue_unfinished(session: AsyncSession, *, older_than: timedelta | None = None) -> int:
    """Put sent-but-unfinished jobs back to pending (their message may have died with a broker)."""
    stmt = update(OutboxJob).where(OutboxJob.status == "sent")
    if older_than is not None:
        stmt = stmt.where(OutboxJob.sent_at < utcnow() - older_than)
    return await execute_counted(session, stmt.values(status="pending"))


async def run(db: Database, job_id: str, jobs: Mapping[str, Job]) -> bool:
    """Run one job exactly once in effect. Returns False when there was nothing to do."""
    try:
        async with db.transaction() as session:
            job = await session.scalar(select(OutboxJob).where(OutboxJob.id == job_id).with_for_update())
            if job is None or job.status in ("done", "failed"):
                return False
            await jobs[job.actor].handler(session, dict(job.payload))
            job.status = "done"
            job.finished_at = utcnow()
            job.attempts += 1
        return True
    except Exception as exc:
        async with db.transaction() as session:
            await session.execute(
                update(OutboxJob)
                .where(OutboxJob.id == job_id, OutboxJob.status != "done")
                .values(attempts=OutboxJob.attempts + 1, last_error=_describe(exc))
            )
        raise


async def give_up(db: Database, job_id: str, jobs: Mapping[str, Job]) -> None:
    """Retries are exhausted: leave the job, and what it was for, in a visible failed state."""
    async with db.transaction() as session:
        job = await session.scalar(select(OutboxJob).where(OutboxJob.id == job_id).with_for_update())
        if job is None or job.status in ("done", "failed"):
            return
        job.status = "failed"
        job.finished_at = utcnow()
        reason = job.last_error or "retries exhausted"
        kind = jobs.get(job.actor)
        on_failure = kind.on_failure if kind is not None else None
        if on_failure is not None:
            await on_failure(session, dict(job.payload), reason)


async def get(session: AsyncSession, job_id: str) -> OutboxJob | None:
    return await session.get(OutboxJob, job_id)


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:2000]
