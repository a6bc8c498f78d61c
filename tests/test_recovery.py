"""Recovery: a job delivered again while it runs does not run twice at once (and the re-send of unfinished
jobs leaves a running one alone), on both databases; and, in production mode, a worker killed mid-job has
its job run again within seconds (by another worker, or the one its group starts in its place), through
Dramatiq's heartbeat requeue on a real Redis."""

from __future__ import annotations

import asyncio
import os
import re
import signal
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from sqlalchemy import select, text

from domain.consensus.models import Escalation
from domain.kernel import outbox
from domain.kernel.clock import utcnow
from domain.kernel.db import Database
from domain.kernel.ids import new_id
from domain.kernel.models import OutboxJob
from tests.conftest import PG_ADMIN_URL, REDIS_URL, RUN_ID
from tests.processes import command, descendants, running, start, stop
from tests.waiting import eventually


class Gate:
    """A job body that signals it started and then waits until the test lets it finish."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.runs = 0

    async def wait(self) -> None:
        self.runs += 1
        self.entered.set()
        await self.release.wait()


async def _sent_job(db: Database, actor: str) -> str:
    job_id = new_id()
    async with db.transaction() as session:
        session.add(
            OutboxJob(
                id=job_id, actor=actor, payload={}, status="sent", created_at=utcnow(), sent_at=utcnow()
            )
        )
    return job_id


async def _job(db: Database, job_id: str) -> OutboxJob:
    async with db.read() as session:
        job = await session.get(OutboxJob, job_id)
        assert job is not None
        return job


async def _requeue_all_sent(db: Database) -> int:
    async with db.transaction() as session:
        return await outbox.requeue_unfinished(session, older_than=timedelta(0))


async def _waiting_on_a_lock(db: Database) -> bool:
    async with db.read() as session:
        waiting = await session.scalar(
            text(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock'"
            )
        )
    return bool(waiting)


async def test_a_second_delivery_of_a_running_job_waits_then_does_nothing(runtime: Any) -> None:
    gate = Gate()

    async def handler(_session: Any, _payload: dict[str, Any]) -> None:
        await gate.wait()

    jobs = {"test.slow": outbox.Job("test.slow", handler)}
    job_id = await _sent_job(runtime.db, "test.slow")
    first = asyncio.create_task(outbox.run(runtime.db, job_id, jobs))
    await gate.entered.wait()
    second = asyncio.create_task(outbox.run(runtime.db, job_id, jobs))
    if runtime.db.is_sqlite:
        # SQLite: the running job holds the write lock; the re-send waits for it like the second delivery.
        requeue = asyncio.create_task(_requeue_all_sent(runtime.db))
    else:
        # PostgreSQL: the second delivery waits on the running job's row lock, and the re-send skips the row.
        await eventually(lambda: _waiting_on_a_lock(runtime.db))
        assert await _requeue_all_sent(runtime.db) == 0
        assert (await _job(runtime.db, job_id)).status == "sent"
    assert not second.done()
    gate.release.set()
    assert await first is True
    assert await second is False  # it found the job done
    if runtime.db.is_sqlite:
        assert await requeue == 0
    assert gate.runs == 1
    job = await _job(runtime.db, job_id)
    assert (job.status, job.attempts) == ("done", 1)


async def test_a_standalone_job_holds_a_lease_while_it_runs(runtime: Any) -> None:
    gate = Gate()

    async def standalone(_db: Database, _payload: dict[str, Any]) -> None:
        await gate.wait()

    jobs = {"test.outside": outbox.Job("test.outside", standalone=standalone, lease_seconds=300)}
    job_id = await _sent_job(runtime.db, "test.outside")
    first = asyncio.create_task(outbox.run(runtime.db, job_id, jobs))
    await gate.entered.wait()
    # No transaction of the outbox is open meanwhile: the row can be written (SQLite: the write lock is free).
    job = await _job(runtime.db, job_id)
    assert job.lease_until is not None
    assert job.lease_until > utcnow() + timedelta(seconds=200)
    with pytest.raises(outbox.Busy):
        await outbox.run(runtime.db, job_id, jobs)  # a second delivery meanwhile
    assert await _requeue_all_sent(runtime.db) == 0  # the re-send leaves the leased job alone
    gate.release.set()
    assert await first is True
    assert gate.runs == 1
    job = await _job(runtime.db, job_id)
    assert (job.status, job.attempts, job.lease_until) == ("done", 1, None)
    assert await outbox.run(runtime.db, job_id, jobs) is False


async def test_a_running_jobs_lease_is_renewed(runtime: Any) -> None:
    """A lease shorter than the run is renewed while the run lives: a slow run keeps its job, and a run that
    died would lose it within the lease's length."""
    gate = Gate()

    async def standalone(_db: Database, _payload: dict[str, Any]) -> None:
        await gate.wait()

    jobs = {"test.outside": outbox.Job("test.outside", standalone=standalone, lease_seconds=1.5)}
    job_id = await _sent_job(runtime.db, "test.outside")
    first = asyncio.create_task(outbox.run(runtime.db, job_id, jobs))
    await gate.entered.wait()
    taken = (await _job(runtime.db, job_id)).lease_until
    assert taken is not None

    async def renewed() -> bool:
        now = (await _job(runtime.db, job_id)).lease_until
        return now is not None and now > taken

    await eventually(renewed)
    with pytest.raises(outbox.Busy):
        await outbox.run(runtime.db, job_id, jobs)
    gate.release.set()
    assert await first is True
    assert gate.runs == 1


async def test_a_lease_left_by_a_dead_run_passes(runtime: Any) -> None:
    # The app's relay would send the job put back to pending to a broker that has no such actor.
    await runtime.relay.stop()
    ran: list[str] = []

    async def standalone(_db: Database, payload: dict[str, Any]) -> None:
        ran.append("ran")

    jobs = {"test.outside": outbox.Job("test.outside", standalone=standalone, lease_seconds=60)}
    job_id = await _sent_job(runtime.db, "test.outside")
    async with runtime.db.transaction() as session:  # a run that died holding the lease, which has passed
        job = await session.get(OutboxJob, job_id)
        assert job is not None
        job.lease_until = utcnow() - timedelta(seconds=1)
        job.sent_at = utcnow() - timedelta(hours=1)
    assert await _requeue_all_sent(runtime.db) == 1  # unfinished and not running: sent again
    assert (await _job(runtime.db, job_id)).status == "pending"
    assert await outbox.run(runtime.db, job_id, jobs) is True
    assert ran == ["ran"]


async def test_a_conversion_delivered_again_while_it_runs_converts_once(docs: Any, runtime: Any) -> None:
    """A second delivery of a conversion (a message put back from a worker thought dead) while the first
    converts is told the job is busy and converts nothing; the document is converted once. The gate holds
    the real conversion step (`prepare_conversion`) until the second delivery has been turned away."""
    from domain import wiring
    from domain.documents import library
    from tests.built_documents import docx_bytes
    from tests.documents_support import make_key, upload, wait_status

    await runtime.relay.stop()  # the job stays in the outbox: only this test's deliveries run it
    gate = Gate()

    async def gated(db: Database, payload: dict[str, Any]) -> Any:
        await gate.wait()
        return await library.prepare_conversion(db, payload)

    jobs = {**wiring.JOBS, library.CONVERT_JOB.name: replace(library.CONVERT_JOB, prepare=gated)}
    key = await make_key(runtime)
    resp = await upload(docs, key, docx_bytes(), "twice.docx")
    assert resp.status == 202, await resp.text()
    doc_id = (await resp.json())["id"]
    async with runtime.db.read() as session:
        job_id = await session.scalar(select(OutboxJob.id).where(OutboxJob.actor == library.CONVERT_JOB.name))
    assert job_id is not None
    async with runtime.db.transaction() as session:  # handed to the broker long ago, as a relay would
        job = await session.get(OutboxJob, job_id)
        assert job is not None
        job.status, job.sent_at = "sent", utcnow() - timedelta(hours=1)
    first = asyncio.create_task(outbox.run(runtime.db, job_id, jobs, actor=library.CONVERT_JOB.name))
    await gate.entered.wait()
    with pytest.raises(outbox.Busy):
        await outbox.run(runtime.db, job_id, jobs, actor=library.CONVERT_JOB.name)
    assert await _requeue_all_sent(runtime.db) == 0  # nor does the re-send of unfinished jobs pick it
    gate.release.set()
    assert await first is True
    assert gate.runs == 1
    assert (await wait_status(docs, key, doc_id, "ready"))["status"] == "ready"
    job = await _job(runtime.db, job_id)
    assert (job.status, job.attempts, job.lease_until) == ("done", 1, None)
    assert await outbox.run(runtime.db, job_id, jobs, actor=library.CONVERT_JOB.name) is False
    assert gate.runs == 1


def _owner_of_connection(peer: tuple[str, int], roots: list[int]) -> int:
    """The process (under `roots`) whose TCP connection comes from `peer` (its local address and port)."""
    port = f"{peer[1]:04X}"
    inodes = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[1].endswith(f":{port}"):
            inodes.add(f"socket:[{fields[9]}]")
    for pid in [p for root in roots for p in (root, *descendants(root))]:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                if os.readlink(fd) in inodes:
                    return pid
            except OSError:
                continue
    raise AssertionError(f"no worker process holds the connection from {peer}")


# ---- production mode: kill -9 a worker mid-job ----------------------------------------------------------

# Seconds from the kill until the job has run again: the heartbeat timeout (3 s here), the next queue
# maintenance (seconds), and what is left of the killed run's lease on the job (at most 20 s).
RECOVERY_BOUND = 60


class HangingHook:
    """The reviewers' webhook: the first POST is never answered (its worker dies waiting); later ones are."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.first = asyncio.Event()
        self.never = asyncio.Event()
        self.peer: tuple[str, int] | None = None

    async def handle(self, request: web.Request) -> web.Response:
        self.calls.append(await request.json())
        if len(self.calls) == 1:
            self.peer = request.transport.get_extra_info("peername") if request.transport else None
            self.first.set()
            await self.never.wait()
        return web.json_response({"ok": True})


@pytest.fixture
async def hanging_hook(aiohttp_server: Any) -> AsyncIterator[tuple[str, HangingHook]]:
    hook = HangingHook()
    app = web.Application()
    app.router.add_post("/hook", hook.handle)
    server = await aiohttp_server(app)
    yield str(server.make_url("/hook")), hook
    hook.never.set()


@pytest.mark.skipif(
    not (PG_ADMIN_URL and REDIS_URL),
    reason="production mode: `concord worker` groups on Redis and PostgreSQL "
    "(CONCORD_TEST_DATABASE_URL and CONCORD_TEST_REDIS_URL)",
)
@pytest.mark.slow
async def test_a_worker_killed_mid_job_has_its_job_run_again_by_another(
    hub: Any, register: Any, runtime: Any, hanging_hook: tuple[str, HangingHook], tmp_path: Path
) -> None:
    from dramatiq.brokers.redis import RedisBroker

    from workers import actors
    from workers.relay import Relay

    url, hook = hanging_hook
    namespace = f"concord-kill-{RUN_ID}"  # a queue of their own: the test process's worker never sees it
    env = {
        "CONCORD_QUEUE_NAMESPACE": namespace,
        "CONCORD_ESCALATION_WEBHOOK_URL": url,
        "CONCORD_OUTBOUND_TRUSTED_HOSTS": "127.0.0.1",  # the operator's own receiver, on loopback
        "CONCORD_WORKER_HEARTBEAT_TIMEOUT_SECONDS": "3",
        "CONCORD_LOG_LEVEL": "INFO",
    }
    await runtime.relay.stop()  # this test relays to the workers' queue itself
    agent = await register()
    resp = await hub.post(
        "/api/pact/topics",
        headers=agent["headers"],
        json={"title": "Kill test", "content": "# Answer\n\nText.\n", "tier": "empirical"},
    )
    topic_id = (await resp.json())["id"]
    resp = await hub.post(
        f"/api/pact/{topic_id}/escalate", headers=agent["headers"], json={"message": "Still?"}
    )
    assert resp.status == 201, await resp.text()
    esc_id = (await resp.json())["escalationId"]

    broker = RedisBroker(url=REDIS_URL, namespace=namespace)
    actors.declare(broker, runtime.settings)
    # Two worker groups of one process each, up and idle before the job is sent (as a deployment's pods
    # are); one takes it.
    args = [command("concord"), "worker", "--processes", "1", "--threads", "1"]
    workers = [start(args, env, tmp_path / f"{name}.log") for name in ("a", "b")]
    try:

        async def both_ready() -> bool:
            logs = [await asyncio.to_thread((tmp_path / f"{n}.log").read_text) for n in ("a", "b")]
            return all(re.search(r"worker process \d+ ready", log) for log in logs)

        await eventually(both_ready, timeout=180, interval=0.2)
        assert await Relay(runtime.db, broker, 1.0).run_once() == 1
        await asyncio.wait_for(hook.first.wait(), timeout=60)  # a worker is posting: mid-job
        assert hook.peer is not None
        owner = _owner_of_connection(hook.peer, [w.pid for w in workers])
        assert owner not in [w.pid for w in workers], "a group's parent runs no job"
        os.kill(owner, signal.SIGKILL)  # the process running the job; its group's parent starts another

        async def delivered() -> bool:
            # A delivery's effect commits before its job is marked done (a standalone job: the post runs
            # outside any transaction, domain/kernel/outbox.py), so both are waited for.
            async with runtime.db.read() as session:
                esc = await session.get(Escalation, esc_id)
                job = (await session.scalars(select(OutboxJob))).one()
                return esc is not None and esc.delivery_status == "delivered" and job.status == "done"

        await eventually(delivered, timeout=RECOVERY_BOUND, interval=0.2)
        assert len(hook.calls) == 2  # the killed attempt and the one that finished it
        assert not running(owner)
        assert all(w.poll() is None for w in workers)  # both groups live on
        async with runtime.db.read() as session:
            job = (await session.scalars(select(OutboxJob))).one()
            esc = await session.get(Escalation, esc_id)
        assert (job.status, job.lease_until) == ("done", None)
        assert esc is not None
        assert esc.delivery_attempts == 2
    finally:
        for worker in workers:
            stop(worker)
        for key in broker.client.scan_iter(f"{namespace}*"):
            broker.client.delete(key)
