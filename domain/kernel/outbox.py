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

from sqlalchemy import bindparam, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel.clock import new_id, utcnow
from domain.kernel.db import Database, table_of
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


_JOBS = table_of(OutboxJob)
# Built once, executed with parameters.
_CLAIM = (
    update(_JOBS)
    .where(
        _JOBS.c.id.in_(
            select(_JOBS.c.id)
            .where(_JOBS.c.status == "pending")
            .order_by(_JOBS.c.created_at)
            .limit(bindparam("p_limit"))
            .with_for_update(skip_locked=True)
            .scalar_subquery()
        )
    )
    .values(status="sent", sent_at=bindparam("p_now"))
    .returning(_JOBS.c.id, _JOBS.c.actor, _JOBS.c.created_at)
)


# A job's run: its row locked, then marked done in the same transaction as its effect.
_LOAD_FOR_RUN = (
    select(_JOBS.c.actor, _JOBS.c.status, _JOBS.c.payload)
    .where(_JOBS.c.id == bindparam("p_id"))
    .with_for_update()
)
_MARK_DONE = (
    update(_JOBS)
    .where(_JOBS.c.id == bindparam("p_id"))
    .values(status="done", finished_at=bindparam("p_now"), attempts=_JOBS.c.attempts + 1)
)


async def claim_for_sending(session: AsyncSession, limit: int = 100) -> list[tuple[str, str]]:
    """Mark up to `limit` pending jobs sent, in one statement; (id, actor) of each, oldest first.

    The relay commits this before it sends (so a worker that gets a message never waits on the relay's row
    lock): a job whose send then fails is put back (`unclaim`), and one whose relay died between the two
    is put back by the sweep of sent-but-unfinished jobs (`requeue_unfinished`)."""
    claimed = await session.execute(_CLAIM, {"p_limit": limit, "p_now": utcnow()})
    return [(row.id, row.actor) for row in sorted(claimed.all(), key=lambda r: (r.created_at, r.id))]


async def unclaim(session: AsyncSession, job_ids: list[str]) -> None:
    """Put claimed jobs back to pending (their send failed)."""
    await session.execute(
        update(_JOBS)
        .where(_JOBS.c.id.in_(job_ids), _JOBS.c.status == "sent")
        .values(status="pending", sent_at=None)
    )


async def fail_unrunnable(session: AsyncSession, job_id: str, reason: str) -> None:
    await session.execute(
        update(_JOBS)
        .where(_JOBS.c.id == job_id)
        .values(status="failed", finished_at=utcnow(), last_error=reason[:2000])
    )


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
            row = (await session.execute(_LOAD_FOR_RUN, {"p_id": job_id})).first()
            if row is None or row.status in ("done", "failed"):
                return False
            await jobs[row.actor].handler(session, dict(row.payload))
            await session.execute(_MARK_DONE, {"p_id": job_id, "p_now": utcnow()})
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


@dataclass(frozen=True)
class Lag:
    """How far behind the background work is: jobs by status (done ones not counted), and the age of the
    oldest job not yet handed to the broker and of the oldest not yet finished."""

    counts: dict[str, int]
    oldest_pending_seconds: float
    oldest_unfinished_seconds: float


async def lag(session: AsyncSession) -> Lag:
    rows = (
        await session.execute(
            select(_JOBS.c.status, func.count(), func.min(_JOBS.c.created_at))
            .where(_JOBS.c.status != "done")
            .group_by(_JOBS.c.status)
        )
    ).all()
    now = utcnow()

    def age(statuses: tuple[str, ...]) -> float:
        oldest = [r[2] for r in rows if r[0] in statuses and r[2] is not None]
        return max(0.0, (now - min(oldest)).total_seconds()) if oldest else 0.0

    return Lag(
        counts={str(r[0]): int(r[1]) for r in rows},
        oldest_pending_seconds=age(("pending",)),
        oldest_unfinished_seconds=age(("pending", "sent")),
    )
