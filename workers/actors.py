"""One thin actor per domain job: load the outbox row by id, run the domain handler, commit.

`declare(broker)` puts them on the process's broker when it is set up (workers/broker.py); nothing is
declared by importing this module."""

from __future__ import annotations

from typing import Any

import dramatiq

from domain import wiring
from domain.kernel import outbox
from domain.kernel.settings import Settings
from workers.database import worker_db

GIVE_UP = "outbox.give_up"


async def give_up(message_data: dict[str, Any], retry_info: dict[str, Any] | None = None) -> None:
    """Called by Dramatiq when a job's retries are exhausted: leave it visibly failed, never stuck."""
    args = message_data.get("args") or []
    if args:
        await outbox.give_up(worker_db(), str(args[0]), wiring.JOBS)


def _job_actor(broker: dramatiq.Broker, settings: Settings, name: str) -> dramatiq.Actor[[str], None]:
    async def run(job_id: str) -> None:
        try:
            await outbox.run(worker_db(), job_id, wiring.JOBS, actor=name)
        except outbox.Busy as busy:
            # Another delivery holds the job (a message put back from a worker thought dead, or sent twice):
            # look again once its lease has passed. Not a failure, so no retry is spent on it.
            actor.send_with_options(args=(job_id,), delay=int(busy.seconds * 1000) + 1000)

    run.__name__ = name.replace(".", "_")
    declare = dramatiq.actor(
        actor_name=name,
        broker=broker,
        max_retries=settings.job_max_retries,
        min_backoff=settings.job_min_backoff_ms,
        max_backoff=max(settings.job_min_backoff_ms, 300_000),
        on_retry_exhausted=GIVE_UP,
    )
    actor = declare(run)
    return actor


def declare(broker: dramatiq.Broker, settings: Settings) -> dict[str, dramatiq.Actor[Any, Any]]:
    """Every job of domain/wiring.py as an actor on `broker`, plus the give-up hook they share."""
    actors: dict[str, dramatiq.Actor[Any, Any]] = {
        GIVE_UP: dramatiq.actor(actor_name=GIVE_UP, broker=broker, max_retries=3)(give_up)
    }
    for name in sorted(wiring.JOBS):
        actors[name] = _job_actor(broker, settings, name)
    return actors
