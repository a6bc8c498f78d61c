"""The outbox relay while the broker is out of reach (a Redis URL on a closed port): one WARNING with the
reason and no traceback, however many passes fail, a reminder after a while, one INFO when the broker is
back; the jobs wait in the database meanwhile and are sent once it answers."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

import pytest
from dramatiq.brokers.redis import RedisBroker
from dramatiq.brokers.stub import StubBroker
from sqlalchemy import select

from domain.consensus import escalations
from domain.kernel import outbox
from domain.kernel.models import OutboxJob
from tests.processes import free_port
from workers import actors
from workers.relay import REMIND_EVERY, Relay


def _relay_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "concord.relay"]


async def _status(runtime: Any, job_id: str) -> str:
    async with runtime.db.read() as session:
        return str(await session.scalar(select(OutboxJob.status).where(OutboxJob.id == job_id)))


async def test_an_unreachable_broker_is_reported_once_then_its_return(
    runtime: Any, clock: Any, caplog: pytest.LogCaptureFixture
) -> None:
    await runtime.relay.stop()  # this test drives a relay of its own
    async with runtime.db.transaction() as session:
        job_id = outbox.enqueue(session, escalations.NOTIFY_JOB, {"escalation_id": "none"})
    down = RedisBroker(url=f"redis://127.0.0.1:{free_port()}/0", namespace="concord-outage")  # nobody listens
    actors.declare(down, runtime.settings)
    relay = Relay(runtime.db, down, 60.0)
    caplog.set_level(logging.INFO, logger="concord.relay")

    for _ in range(4):
        await relay.run_pass()
    lines = _relay_lines(caplog)
    assert [r.levelname for r in lines] == ["WARNING"], [r.getMessage() for r in lines]
    assert "broker is unreachable" in lines[0].getMessage()
    assert "ConnectionError" in lines[0].getMessage()  # the reason
    assert lines[0].exc_info is None  # no traceback
    assert await _status(runtime, job_id) == "pending"  # waiting in the database

    clock.advance(REMIND_EVERY + timedelta(seconds=1))
    await relay.run_pass()
    await relay.run_pass()
    lines = _relay_lines(caplog)
    assert [r.levelname for r in lines] == ["WARNING", "WARNING"]
    assert "still unreachable" in lines[1].getMessage()

    up = StubBroker()  # the broker answers again
    actors.declare(up, runtime.settings)
    relay.broker = up
    await relay.run_pass()
    await relay.run_pass()
    lines = _relay_lines(caplog)
    assert [r.levelname for r in lines] == ["WARNING", "WARNING", "INFO"]
    assert "reachable again" in lines[2].getMessage()
    assert all(r.exc_info is None for r in lines)
    assert await _status(runtime, job_id) == "sent"
