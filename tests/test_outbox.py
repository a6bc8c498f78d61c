"""The job outbox with a real Dramatiq worker: escalation notifications delivered to a local webhook."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web
from sqlalchemy import select

from domain.agents.models import Agent
from domain.consensus import escalations
from domain.consensus.models import Escalation
from domain.kernel.context import Actor, Context
from domain.kernel.models import OutboxJob
from tests.conftest import REDIS_URL
from tests.waiting import eventually


class Webhook:
    """A local HTTP server standing in for the reviewers' notification endpoint."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.keys: list[str | None] = []
        self.fail_next = 0
        self.probe: Callable[[dict[str, Any]], Awaitable[None]] | None = None

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.calls.append(body)
        self.keys.append(request.headers.get("Idempotency-Key"))
        if self.probe is not None:
            await self.probe(body)
        if self.fail_next > 0:
            self.fail_next -= 1
            return web.Response(status=500, text="reviewer inbox down")
        return web.json_response({"ok": True})


@pytest.fixture
async def webhook(aiohttp_server: Any, settings: Any, monkeypatch: pytest.MonkeyPatch) -> Webhook:
    hook = Webhook()
    app = web.Application()
    app.router.add_post("/hook", hook.handle)
    server = await aiohttp_server(app)
    monkeypatch.setattr(settings, "escalation_webhook_url", str(server.make_url("/hook")))
    monkeypatch.setattr(settings, "outbound_trusted_hosts", [server.host])  # the operator's own service
    return hook


async def _topic(hub: Any, register: Any) -> tuple[dict[str, Any], str]:
    agent = await register()
    resp = await hub.post(
        "/api/pact/topics",
        headers=agent["headers"],
        json={"title": "Escalation target", "content": "# Answer\n\nText here.\n", "tier": "empirical"},
    )
    assert resp.status == 201, await resp.text()
    return agent, (await resp.json())["id"]


async def _escalation(runtime: Any, escalation_id: str) -> Escalation:
    async with runtime.db.read() as session:
        esc = await session.get(Escalation, escalation_id)
        assert esc is not None
        return esc


async def _ctx(runtime: Any, agent: dict[str, Any]) -> Context:
    async with runtime.db.read() as session:
        row = await session.get(Agent, agent["agentId"])
        assert row is not None
        return Context(actor=Actor(row.id, row.name, row.key_hash), request_id="test")


async def test_escalation_is_delivered_once_by_the_worker(
    hub: Any, register: Any, runtime: Any, webhook: Webhook
):
    agent, topic_id = await _topic(hub, register)
    resp = await hub.post(
        f"/api/pact/{topic_id}/escalate",
        headers=agent["headers"],
        json={"message": "Is s 19 still in force?"},
    )
    assert resp.status == 201
    esc_id = (await resp.json())["escalationId"]
    await eventually(lambda: _delivered(runtime, esc_id))
    assert len(webhook.calls) == 1
    assert webhook.calls[0]["escalation"]["message"] == "Is s 19 still in force?"
    assert webhook.calls[0]["escalation"]["resourceId"] == topic_id


async def _job_done(runtime: Any) -> bool:
    """The delivery is recorded in its own transaction (no transaction stays open across the POST), and the
    job is marked done in the next: a read between the two sees the job still `sent`."""
    async with runtime.db.read() as session:
        return (await session.scalars(select(OutboxJob))).one().status == "done"


async def _delivered(runtime: Any, esc_id: str) -> bool:
    return (await _escalation(runtime, esc_id)).delivery_status == "delivered"


async def test_the_webhook_is_posted_with_no_transaction_open(
    hub: Any, register: Any, runtime: Any, webhook: Webhook
):
    """While the receiver handles the POST, the job's rows are free (a write to them would otherwise wait on
    the worker: NOWAIT fails at once on PostgreSQL, SQLite's write lock would be held) and the attempt is
    already committed: recorded before, outcome after."""
    seen: list[tuple[int, str, str, bool]] = []

    async def probe(body: dict[str, Any]) -> None:
        esc_id = body["escalation"]["escalationId"]
        async with runtime.db.transaction() as session:
            esc = await session.scalar(
                select(Escalation).where(Escalation.id == esc_id).with_for_update(nowait=True)
            )
            job = await session.scalar(select(OutboxJob).with_for_update(nowait=True))
            assert esc is not None
            assert job is not None
            seen.append((esc.delivery_attempts, esc.delivery_status, job.status, job.lease_until is not None))

    webhook.probe = probe
    agent, topic_id = await _topic(hub, register)
    resp = await hub.post(
        f"/api/pact/{topic_id}/escalate", headers=agent["headers"], json={"message": "outside"}
    )
    esc_id = (await resp.json())["escalationId"]
    await eventually(lambda: _delivered(runtime, esc_id))
    await eventually(lambda: _job_done(runtime))  # marked done after the delivery's own commit
    assert seen == [(1, "pending", "sent", True)]  # the attempt committed, the job leased to this run
    esc = await _escalation(runtime, esc_id)
    assert esc.delivery_attempts == 1
    assert esc.delivered_at is not None
    assert webhook.keys == [f"escalation.created:{esc_id}"]
    async with runtime.db.read() as session:
        job = (await session.scalars(select(OutboxJob))).one()
        assert (job.status, job.attempts, job.lease_until) == ("done", 1, None)


async def test_job_of_a_rolled_back_transaction_never_runs(
    hub: Any, register: Any, runtime: Any, webhook: Webhook
):
    agent, topic_id = await _topic(hub, register)
    ctx = await _ctx(runtime, agent)

    async def create_then_fail() -> None:
        async with runtime.db.transaction() as session:
            await escalations.create(
                session, ctx, resource_type="topic", resource_id=topic_id, message="never sent"
            )
            raise RuntimeError("abort")

    with pytest.raises(RuntimeError, match="abort"):
        await create_then_fail()
    await runtime.relay.run_once()
    async with runtime.db.read() as session:
        assert (await session.scalars(select(OutboxJob))).all() == []
        assert (await session.scalars(select(Escalation))).all() == []
    # Prove the pipeline is live: a committed escalation after it is delivered, and only that one.
    resp = await hub.post(
        f"/api/pact/{topic_id}/escalate", headers=agent["headers"], json={"message": "sent"}
    )
    sent_id = (await resp.json())["escalationId"]
    await eventually(lambda: _delivered(runtime, sent_id))
    assert [c["escalation"]["message"] for c in webhook.calls] == ["sent"]


async def test_job_whose_send_was_interrupted_runs_after_restart(
    hub: Any, register: Any, runtime: Any, webhook: Webhook
):
    agent, topic_id = await _topic(hub, register)
    await runtime.relay.stop()  # the process "crashes" after commit, before the relay sends
    resp = await hub.post(
        f"/api/pact/{topic_id}/escalate", headers=agent["headers"], json={"message": "later"}
    )
    esc_id = (await resp.json())["escalationId"]
    await asyncio.sleep(0.5)
    async with runtime.db.read() as session:
        job = (await session.scalars(select(OutboxJob))).one()
        assert job.status == "pending"
    assert webhook.calls == []

    from runtime.process import Runtime

    restarted = await Runtime.start(runtime.settings, relay=True, scheduler=False, worker=False)
    try:
        await eventually(lambda: _delivered(runtime, esc_id))
    finally:
        await restarted.stop()
    assert len(webhook.calls) == 1


@pytest.mark.skipif(bool(REDIS_URL), reason="the in-memory broker is the one that loses sent messages")
async def test_sent_jobs_lost_with_the_in_memory_broker_are_requeued_at_start(
    hub: Any, register: Any, runtime: Any, webhook: Webhook
):
    agent, topic_id = await _topic(hub, register)
    await runtime.relay.stop()
    resp = await hub.post(
        f"/api/pact/{topic_id}/escalate", headers=agent["headers"], json={"message": "lost"}
    )
    esc_id = (await resp.json())["escalationId"]
    async with runtime.db.transaction() as session:  # marked sent, but the broker died with the message
        job = (await session.scalars(select(OutboxJob))).one()
        job.status = "sent"
    from runtime.process import Runtime

    restarted = await Runtime.start(runtime.settings, relay=True, scheduler=False, worker=False)
    try:
        await eventually(lambda: _delivered(runtime, esc_id))
    finally:
        await restarted.stop()
    assert len(webhook.calls) == 1


async def test_a_job_delivered_twice_takes_effect_once(
    hub: Any, register: Any, runtime: Any, webhook: Webhook
):
    agent, topic_id = await _topic(hub, register)
    resp = await hub.post(
        f"/api/pact/{topic_id}/escalate", headers=agent["headers"], json={"message": "once"}
    )
    esc_id = (await resp.json())["escalationId"]
    await eventually(lambda: _delivered(runtime, esc_id))

    async def finished() -> OutboxJob | None:
        # The escalation reads "delivered" as soon as the webhook answered, a moment before the job's row is
        # marked done in a transaction of its own; a redelivery in between finds the lease held and is sent
        # again once it has passed (outbox.Busy), which the join below would wait for.
        async with runtime.db.read() as session:
            job = (await session.scalars(select(OutboxJob))).one()
        return job if job.status == "done" else None

    job = await eventually(finished)
    for _ in range(2):  # the broker redelivers the same message
        runtime.relay._send(job.id, job.actor)
    await asyncio.to_thread(runtime.broker.join, "default", timeout=20_000)
    async with runtime.db.read() as session:
        job = (await session.scalars(select(OutboxJob))).one()
        assert job.status == "done"
        assert job.attempts == 1
    assert len(webhook.calls) == 1


async def test_a_failing_webhook_is_retried_until_it_answers(
    hub: Any, register: Any, runtime: Any, webhook: Webhook
):
    webhook.fail_next = 1
    agent, topic_id = await _topic(hub, register)
    resp = await hub.post(
        f"/api/pact/{topic_id}/escalate", headers=agent["headers"], json={"message": "retry"}
    )
    esc_id = (await resp.json())["escalationId"]
    await eventually(lambda: _delivered(runtime, esc_id))
    assert len(webhook.calls) == 2  # one failure, one success
    # Both attempts are one notification to the receiver; each is recorded once, nothing else repeats.
    assert webhook.keys == [f"escalation.created:{esc_id}"] * 2
    assert (await _escalation(runtime, esc_id)).delivery_attempts == 2

    await eventually(lambda: _job_done(runtime))
    async with runtime.db.read() as session:
        job = (await session.scalars(select(OutboxJob))).one()
        assert job.status == "done"
        assert job.attempts == 2
        assert job.lease_until is None


async def test_retries_exhausted_leave_a_visible_failure(
    hub: Any, register: Any, runtime: Any, webhook: Webhook
):
    webhook.fail_next = 100
    agent, topic_id = await _topic(hub, register)
    resp = await hub.post(
        f"/api/pact/{topic_id}/escalate", headers=agent["headers"], json={"message": "doomed"}
    )
    esc_id = (await resp.json())["escalationId"]

    async def failed() -> bool:
        return (await _escalation(runtime, esc_id)).delivery_status == "failed"

    await eventually(failed, timeout=30)
    esc = await _escalation(runtime, esc_id)
    assert "500" in (esc.delivery_error or "")
    async with runtime.db.read() as session:
        job = (await session.scalars(select(OutboxJob))).one()
        assert job.status == "failed"
        assert job.attempts == 1 + runtime.settings.job_max_retries
    assert len(webhook.calls) == 1 + runtime.settings.job_max_retries


def test_every_job_sweep_and_seeder_of_the_domain_is_wired():
    """Jobs are declared next to their handlers and listed in domain/wiring.py: one left out of the list
    would be enqueued and never run, so every Job, sweep and seeder function in the domain must be there."""
    import importlib
    import inspect
    import pkgutil

    import domain
    from domain import wiring
    from domain.kernel.outbox import Job

    declared: dict[str, Job] = {}
    for info in pkgutil.walk_packages(domain.__path__, "domain."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, Job):
                declared[value.name] = value
    assert declared, "no Job found: the scan is broken"
    assert set(declared) == set(wiring.JOBS)
    assert all(wiring.JOBS[name] is job for name, job in declared.items())
    names = [s.name for s in wiring.SWEEPS] + [s.name for s in wiring.SEEDERS]
    assert len(names) == len(set(names)), "a sweep or seeder name is listed twice"
    assert all(inspect.iscoroutinefunction(s.fn) for s in wiring.SWEEPS)
    assert all(inspect.iscoroutinefunction(s.fn) for s in wiring.SEEDERS)
