"""One active scheduler: the leader lock, in process and across real `concord scheduler` processes."""

from __future__ import annotations

import asyncio
import logging
import signal
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from domain.kernel.db import Database
from domain.kernel.models import SweepRun
from scheduler.leader import LeaderLock
from scheduler.runner import SchedulerService
from tests.processes import command, start, stop
from tests.waiting import eventually


async def test_a_second_lock_waits_until_the_first_is_released(runtime: Any):
    other = Database(runtime.settings.db_url)
    first, second = (
        LeaderLock(runtime.db),
        LeaderLock(other),
    )
    try:
        assert await first.try_acquire()
        assert not await second.try_acquire()
        assert await first.still_held()
        await first.release()
        assert await second.try_acquire()
        assert not await first.try_acquire()
    finally:
        await first.release()
        await second.release()
        await other.dispose()


async def _holders(runtime: Any) -> dict[str, int]:
    async with runtime.db.read() as session:
        rows = await session.execute(select(SweepRun.holder, func.count()).group_by(SweepRun.holder))
        return {holder: n for holder, n in rows.tuples().all()}


@pytest.mark.slow
async def test_two_scheduler_processes_never_sweep_at_once(runtime: Any, tmp_path: Path):
    env = {"CONCORD_SWEEP_INTERVAL_SCALE": "0.01", "CONCORD_LOG_LEVEL": "INFO"}
    procs = [start([command("concord"), "scheduler"], env, tmp_path / f"scheduler-{n}.log") for n in range(2)]
    try:
        holders = await eventually(lambda: _holders(runtime), timeout=30)
        await asyncio.sleep(2)  # both processes are up and have tried for the lock by now
        holders = await _holders(runtime)
        assert len(holders) == 1, holders  # only the leader ever ran a sweep
        leader_pid = int(next(iter(holders)).rsplit(":", 1)[1])
        leader = next(p for p in procs if p.pid == leader_pid)
        follower = next(p for p in procs if p.pid != leader_pid)
        assert follower.poll() is None  # the follower is alive, waiting on the lock

        stop(leader, signal.SIGKILL)  # the leader dies without releasing anything itself

        async def follower_took_over() -> bool:
            return any(h.endswith(f":{follower.pid}") for h in await _holders(runtime))

        await eventually(follower_took_over, timeout=30)
    finally:
        for proc in procs:
            stop(proc)
    logs = "".join((tmp_path / f"scheduler-{n}.log").read_text() for n in range(2))
    assert "is the leader" in logs
    assert "waiting for the leader lock" in logs


async def test_a_sweep_submitted_as_the_scheduler_stops_ends_quietly(runtime: Any, caplog: Any):
    """APScheduler cancels on shutdown what it has submitted and not yet finished; a sweep submitted in the
    same instant as the stop (a job falling due at SIGTERM, nothing else in flight) must end without an
    error in the log."""
    caplog.set_level("INFO", logger="apscheduler")
    settings = runtime.settings.model_copy(update={"sweep_interval_scale": 0.01})
    service = SchedulerService(runtime.db, settings)
    service.start()

    def said(text: str) -> int:
        return sum(text in r.getMessage() for r in caplog.records)

    async def paused_and_idle() -> bool:
        if service.scheduler is None or not service.scheduler.running:
            return False
        service.scheduler.pause()  # no more submissions; wait for the first sweeps to end
        ended = said("executed successfully") + said("raised an exception")
        return said("Running job") > 0 and said("Running job") == ended

    await eventually(paused_and_idle, timeout=30)
    scheduler = service.scheduler
    assert scheduler is not None
    caplog.clear()
    now = datetime.now(UTC)
    for job in scheduler.get_jobs():
        job.modify(next_run_time=now)
    scheduler.resume()  # processes the due jobs at once: every sweep is submitted, none has started
    await service.stop()
    await asyncio.sleep(0.5)  # a cancelled job is logged by a callback after the shutdown
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert not errors, errors
    assert not scheduler.running
