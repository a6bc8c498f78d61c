"""The bulk path of a corpus import: while one is under way, new sections are not full-text indexed row by
row; the index is brought up to date once, when the last import under way finishes.

How each database does it (the SQL is in legislation_queries.py):
- SQLite: while a row of legislation_bulk_imports exists, migration 0039's triggers put a new section's id
  in legislation_sections_fts_pending instead of writing its FTS5 row; the end indexes the pending rows with
  INSERT … SELECT, a chunk a transaction. An ordinary ingest (the staff API, `concord seed`) indexes its own
  sections in its own transaction, so what it writes during a bulk import is searchable at once.
- PostgreSQL: the GIN index is dropped at the start and built again at the end, in one pass. Search stays
  correct without it (the expression is matched row by row), only slower.

Safety: the import's row is written (and committed) before its first batch, so a crash or a kill leaves it
behind: every section the import committed is stored and either indexed or pending. The row names its host
and process; the next import (a resume) and the scheduler's sweep (`axiom.finish_bulk_imports`, run when the
scheduler starts and every few minutes) drop a row whose process is gone (or whose heartbeat, beaten each
batch, is older than STALE_AFTER). When no import is left under way the import's end finishes the indexing
itself; the sweep hands it to a worker (FINISH_JOB), which does it a chunk a transaction as an import's end
does: on SQLite a gigabyte's sections take minutes, and one transaction would hold the writers that long."""

from __future__ import annotations

import os
import socket
import uuid
from datetime import timedelta
from pathlib import Path

from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from domain.axiom import legislation, legislation_queries
from domain.axiom.models import LegislationBulkImport
from domain.kernel import outbox
from domain.kernel.clock import utcnow
from domain.kernel.db import Database
from domain.kernel.models import OutboxJob

STALE_AFTER = timedelta(minutes=15)
CHUNK = 50_000  # pending sections indexed a transaction at the end of an import (SQLite)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


async def clear_stale(session: AsyncSession) -> int:
    """Drop the rows of imports that are no longer running: a process of this host that is gone, or any
    whose heartbeat is older than STALE_AFTER; the number dropped."""
    host = socket.gethostname()
    stale = [
        run.id
        for run in await session.scalars(select(LegislationBulkImport))
        if run.heartbeat_at < utcnow() - STALE_AFTER or (run.host == host and not _alive(run.pid))
    ]
    if stale:
        await session.execute(delete(LegislationBulkImport).where(LegislationBulkImport.id.in_(stale)))
    return len(stale)


async def _under_way(session: AsyncSession) -> int:
    return await session.scalar(select(func.count()).select_from(LegislationBulkImport)) or 0


async def begin(db: Database, path: Path) -> str:
    """Record a bulk import of `path` as under way (committed before it writes anything); its id."""
    run_id = str(uuid.uuid4())
    now = utcnow()
    async with db.transaction() as session:
        await clear_stale(session)
        session.add(
            LegislationBulkImport(
                id=run_id,
                path=str(path)[:1000],
                host=socket.gethostname()[:255],
                pid=os.getpid(),
                started_at=now,
                heartbeat_at=now,
            )
        )
        await session.flush()
        await legislation_queries.suspend_index(session)
    return run_id


async def heartbeat(session: AsyncSession, run_id: str) -> None:
    await session.execute(
        update(LegislationBulkImport).where(LegislationBulkImport.id == run_id).values(heartbeat_at=utcnow())
    )


async def finish(db: Database, run_id: str) -> int:
    """The import `run_id` is over (done or failed): its row goes, and when no other import is under way the
    full-text index is brought up to date: catch_up's answer (0 when another import is still under way)."""
    async with db.transaction() as session:
        await session.execute(delete(LegislationBulkImport).where(LegislationBulkImport.id == run_id))
        await clear_stale(session)
        if await _under_way(session):
            return 0
    return await catch_up(db)


async def catch_up(db: Database) -> int:
    """Index what bulk imports left pending, a chunk a transaction (SQLite), or build the missing GIN
    index (PostgreSQL: -1 when built)."""
    total = 0
    while True:
        async with db.transaction() as session:
            if await _under_way(session):
                return total  # one began meanwhile: it finishes the work
            if await legislation_queries.restore_index(session):
                await legislation.bump_generation(session)
                return -1
            done = await legislation_queries.index_pending(session, limit=CHUNK)
            if done:
                await legislation.bump_generation(session)
        total += done
        if done < CHUNK:
            return total


async def _finish_job(db: Database, payload: dict[str, object]) -> None:
    await catch_up(db)


# The indexing an import that died left undone, a chunk a transaction (standalone: catch_up commits each).
FINISH_JOB = outbox.Job("axiom.finish_bulk_index", standalone=_finish_job, lease_seconds=300)


async def sweep(session: AsyncSession) -> int:
    """The scheduler's repair (`axiom.finish_bulk_imports`): rows of imports that died are dropped and, when
    none is left under way and indexing is undone, a FINISH_JOB is queued (unless one still is); the number
    of rows dropped and jobs queued."""
    changed = await clear_stale(session)
    if await _under_way(session) or not await legislation_queries.index_incomplete(session):
        return changed
    queued = await session.scalar(
        select(func.count())
        .select_from(OutboxJob)
        .where(OutboxJob.actor == FINISH_JOB.name, OutboxJob.status.not_in(("done", "failed")))
    )
    if queued:
        return changed
    outbox.enqueue(session, FINISH_JOB, {})
    return changed + 1
