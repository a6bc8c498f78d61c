"""Transactional job outbox.

`enqueue` writes a job row in the caller's transaction, so a job exists if and only if the change that
needs it committed. A relay (workers/relay.py) sends pending rows to the broker after commit; actors
run each job through `run`, which marks it done in the same transaction as its effect, so a job
delivered twice takes effect once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import bindparam, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel.clock import utcnow
from domain.kernel.db import Database, table_of
from domain.kernel.ids import new_id
from domain.kernel.models import OutboxJob
from domain.kernel.sqlutil import execute_counted
from domain.kernel.tasks import cancel_and_wait

JobHandler = Callable[[AsyncSession, dict[str, Any]], Awaitable[None]]
StandaloneHandler = Callable[[Database, dict[str, Any]], Awaitable[None]]
FailureHandler = Callable[[AsyncSession, dict[str, Any], str], Awaitable[None]]
Preparer = Callable[[Database, dict[str, Any]], Awaitable[Any]]
log = logging.getLogger("concord.outbox")
# The key under which a job's handler finds what its `prepare` step returned.
PREPARED = "_prepared"


@dataclass(frozen=True)
class Job:
    """A kind of background job: its name (the Dramatiq actor's), what it does, and what a job that keeps
    failing leaves behind. domain/wiring.py lists every one; workers declare one actor per entry.

    A job does its work either in the transaction that marks it done (`handler`: its effect and its
    completion commit together, so a redelivery finds it done), or, when the work must not happen inside a
    transaction (a request to another service), by itself (`standalone`: given the database, it opens its own
    short transactions around the slow part, recording what it attempts before and the outcome after, so
    that running it again after a crash or a failure repeats no side effect of its own).

    `prepare`, when given, is a handler's slow part (a document conversion, a page fetched from another
    site): it runs before the job's transaction with no transaction open (reading what it needs in short
    units of work of its own), and the handler finds its result under `payload[PREPARED]`, recording it in
    the transaction that marks the job done.

    While a `prepare` step or a standalone job runs, its row holds a lease of `lease_seconds`, renewed every
    third of that while the run lives: a second delivery meanwhile does not run it (`Busy`), nor does the
    re-send of unfinished jobs pick it; the lease of a run that died passes within `lease_seconds`."""

    name: str
    handler: JobHandler | None = None
    on_failure: FailureHandler | None = None
    prepare: Preparer | None = None
    standalone: StandaloneHandler | None = None
    lease_seconds: float = 60.0

    def __post_init__(self) -> None:
        if (self.handler is None) == (self.standalone is None):
            raise ValueError(f"job {self.name}: give a handler or a standalone function, one of them")


class Busy(Exception):
    """Another delivery is running this job's slow part (its lease has `seconds` left)."""

    def __init__(self, job_id: str, seconds: float) -> None:
        super().__init__(f"job {job_id} is being run by another delivery for up to {seconds:.0f} s more")
        self.seconds = seconds


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
    select(_JOBS.c.actor, _JOBS.c.status, _JOBS.c.payload, _JOBS.c.lease_until)
    .where(_JOBS.c.id == bindparam("p_id"))
    .with_for_update()
)
_LOAD_KIND = select(_JOBS.c.actor, _JOBS.c.status, _JOBS.c.payload).where(_JOBS.c.id == bindparam("p_id"))
_LEASE = (
    update(_JOBS)
    .where(_JOBS.c.id == bindparam("p_id"), _JOBS.c.status.not_in(("done", "failed")))
    .values(lease_until=bindparam("p_until"))
)
_MARK_DONE = (
    update(_JOBS)
    .where(_JOBS.c.id == bindparam("p_id"), _JOBS.c.status.not_in(("done", "failed")))
    .values(status="done", finished_at=bindparam("p_now"), attempts=_JOBS.c.attempts + 1, lease_until=None)
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
    """Put sent-but-unfinished jobs back to pending (their message may have died with a broker).

    A job that is running is never put back: its run holds its row locked (`run`), and the rows are picked
    with SKIP LOCKED (PostgreSQL); on SQLite a running job holds the write lock, so this waits for it."""
    now = utcnow()
    chosen = select(_JOBS.c.id).where(
        _JOBS.c.status == "sent", or_(_JOBS.c.lease_until.is_(None), _JOBS.c.lease_until < now)
    )
    if older_than is not None:
        chosen = chosen.where(_JOBS.c.sent_at < now - older_than)
    stmt = (
        update(_JOBS)
        .where(_JOBS.c.id.in_(chosen.with_for_update(skip_locked=True).scalar_subquery()))
        .values(status="pending")
    )
    return await execute_counted(session, stmt)


async def run(db: Database, job_id: str, jobs: Mapping[str, Job], *, actor: str | None = None) -> bool:
    """Run one job exactly once in effect. Returns False when there was nothing to do.

    A job with only a `handler` runs while its row is locked (FOR UPDATE on PostgreSQL; SQLite's write lock),
    in the transaction that marks it done: a second delivery meanwhile waits for that commit, then finds the
    job done and does nothing. A job with a part that runs with no transaction open (`prepare`, or a
    `standalone` job) takes a lease on its row in a first short transaction, keeps it while that part runs
    (renewed: `_leased`), and is marked done in a last one (with the handler's effect, for `prepare`); a
    second delivery meanwhile raises `Busy` (the worker sends it again once the lease has passed), so the
    slow part runs once at a time. `actor` (the job's kind, as the Dramatiq actor knows it) saves a look at
    the row."""
    try:
        kind = await _kind_of(db, job_id, jobs, actor)
        if kind is None:
            return False
        prepared: dict[str, Any] = {}
        if kind.standalone is not None or kind.prepare is not None:
            payload = await _take_lease(db, job_id, kind)
            if payload is None:
                return False
            async with _leased(db, job_id, kind.lease_seconds):
                if kind.standalone is not None:
                    await kind.standalone(db, payload)
                else:
                    assert kind.prepare is not None
                    prepared[kind.name] = await kind.prepare(db, payload)
            if kind.standalone is not None:
                async with db.transaction() as session:
                    await session.execute(_MARK_DONE, {"p_id": job_id, "p_now": utcnow()})
                return True
        async with db.transaction() as session:
            row = (await session.execute(_LOAD_FOR_RUN, {"p_id": job_id})).first()
            if row is None or row.status in ("done", "failed"):
                return False
            job = jobs[row.actor]
            if job.handler is None:  # a standalone job under another actor's name: nothing sane to do
                raise LookupError(f"job {job_id} is a {row.actor!r} job, not a {kind.name!r} one")
            payload = dict(row.payload)
            if row.actor in prepared:
                payload[PREPARED] = prepared[row.actor]
            await job.handler(session, payload)
            await session.execute(_MARK_DONE, {"p_id": job_id, "p_now": utcnow()})
            return True
    except Busy:
        raise
    except Exception as exc:
        async with db.transaction() as session:
            await session.execute(
                update(OutboxJob)
                .where(OutboxJob.id == job_id, OutboxJob.status != "done")
                .values(attempts=OutboxJob.attempts + 1, last_error=_describe(exc), lease_until=None)
            )
        raise


async def _kind_of(db: Database, job_id: str, jobs: Mapping[str, Job], actor: str | None) -> Job | None:
    if actor is not None:
        return jobs.get(actor)
    async with db.read() as session:
        row = (await session.execute(_LOAD_KIND, {"p_id": job_id})).first()
    return jobs.get(row.actor) if row is not None else None


async def _take_lease(db: Database, job_id: str, job: Job) -> dict[str, Any] | None:
    """Lease the job to this run in a short transaction: its payload, None if it is finished, `Busy` if
    another run holds it."""
    async with db.transaction() as session:
        row = (await session.execute(_LOAD_FOR_RUN, {"p_id": job_id})).first()
        if row is None or row.status in ("done", "failed"):
            return None
        now = utcnow()
        if row.lease_until is not None and row.lease_until > now:
            raise Busy(job_id, (row.lease_until - now).total_seconds())
        await session.execute(_LEASE, {"p_id": job_id, "p_until": now + timedelta(seconds=job.lease_seconds)})
        return dict(row.payload)


@asynccontextmanager
async def _leased(db: Database, job_id: str, seconds: float) -> AsyncIterator[None]:
    """Renew the job's lease every third of its length while the body runs: a lease can then be short (a
    run that died is noticed within `seconds`) and still cover a slow conversion."""

    async def renew() -> None:
        while True:
            await asyncio.sleep(seconds / 3)
            try:
                async with db.transaction() as session:
                    await session.execute(
                        _LEASE, {"p_id": job_id, "p_until": utcnow() + timedelta(seconds=seconds)}
                    )
            except Exception as exc:  # the next renewal may succeed; the lease still has two thirds left
                log.warning("could not renew the lease of job %s: %s", job_id, _describe(exc))

    renewer = asyncio.create_task(renew(), name=f"lease-{job_id}")
    try:
        yield
    finally:
        await cancel_and_wait(renewer)


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
