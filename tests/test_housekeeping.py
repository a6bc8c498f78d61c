"""Housekeeping of the kernel's history: sweep runs (several a minute) and finished background jobs are
deleted once `CONCORD_RETENTION_DAYS` (7) have passed; failed jobs stay for an operator."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import func, select

from domain import wiring
from domain.kernel import sweeps
from domain.kernel.clock import utcnow
from domain.kernel.ids import new_id
from domain.kernel.models import OutboxJob, SweepRun
from tests.waiting import eventually


async def _count(runtime: Any, model: Any, *where: Any) -> int:
    async with runtime.db.read() as session:
        return int(await session.scalar(select(func.count()).select_from(model).where(*where)) or 0)


async def test_old_sweep_runs_and_finished_jobs_are_purged(hub, register, runtime, clock):
    purge = next(s for s in wiring.SWEEPS if s.name == "kernel.purge_history")
    agent = await register()
    resp = await hub.post(
        "/api/pact/topics",
        headers=agent["headers"],
        json={"title": "Housekeeping", "content": "# A\n\nText.\n", "tier": "empirical"},
    )
    topic_id = (await resp.json())["id"]
    # An escalation without a webhook still runs its notification job to completion.
    resp = await hub.post(f"/api/pact/{topic_id}/escalate", headers=agent["headers"], json={"message": "?"})
    assert resp.status == 201

    async def done() -> bool:
        return await _count(runtime, OutboxJob, OutboxJob.status == "done") == 1

    await eventually(done)
    async with runtime.db.transaction() as session:
        session.add(
            OutboxJob(id=new_id(), actor="gone.job", payload={}, status="failed", created_at=utcnow())
        )
    assert await sweeps.run(runtime.db, purge, "test") == 0  # recorded as the first run

    clock.advance(timedelta(days=7, minutes=1))
    assert await sweeps.run(runtime.db, purge, "test") == 2  # the first run and the finished job
    assert await _count(runtime, OutboxJob, OutboxJob.status == "failed") == 1
    assert await _count(runtime, SweepRun) == 1  # the run that just purged
