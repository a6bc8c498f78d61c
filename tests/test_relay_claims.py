"""Several outbox relays on one database (as several web processes run them with Redis) send every committed
job exactly once between them: each claims rows in a write transaction (SQLite: BEGIN IMMEDIATE serialises
them; PostgreSQL: FOR UPDATE SKIP LOCKED) and marks them sent before it commits."""

from __future__ import annotations

import asyncio
from typing import Any

import dramatiq
from dramatiq.brokers.stub import StubBroker
from sqlalchemy import select

from domain.consensus import escalations
from domain.kernel import outbox
from domain.kernel.db import Database
from domain.kernel.models import OutboxJob
from workers import actors
from workers.relay import Relay

JOBS = 450  # several claims of 100 per relay
RELAYS = 4


def _sent_ids(broker: StubBroker) -> list[str]:
    return [dramatiq.Message.decode(raw).message_id for raw in list(broker.queues["default"].queue)]


async def test_relays_on_one_database_send_every_job_exactly_once(runtime: Any):
    await runtime.relay.stop()  # the test process's own relay must not take part
    async with runtime.db.transaction() as session:
        ids = [outbox.enqueue(session, escalations.NOTIFY_JOB, {"n": n}) for n in range(JOBS)]
    relays: list[Relay] = []
    for _ in range(RELAYS):  # a database handle and an in-memory broker each, as separate processes have
        broker = StubBroker()
        actors.declare(broker, runtime.settings)
        relays.append(Relay(Database(runtime.settings.db_url), broker, 60.0))
    try:
        await asyncio.gather(*(relay.run_once() for relay in relays for _ in range(2)))
    finally:
        for relay in relays:
            await relay.db.dispose()
    sent = [job_id for relay in relays for job_id in _sent_ids(relay.broker)]  # type: ignore[arg-type]
    assert sorted(sent) == sorted(ids)  # every job once, none twice
    async with runtime.db.read() as session:
        statuses = set((await session.scalars(select(OutboxJob.status))).all())
    assert statuses == {"sent"}
