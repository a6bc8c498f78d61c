"""One thin actor per domain job: load the outbox row by id, run the domain handler, commit."""

from __future__ import annotations

from typing import Any

import dramatiq

from domain import wiring
from domain.kernel import outbox
from domain.kernel.settings import get_settings
from workers.database import worker_db

GIVE_UP = "outbox.give_up"


@dramatiq.actor(actor_name=GIVE_UP, max_retries=3)
async def give_up(message_data: dict[str, Any], retry_info: dict[str, Any] | None = None) -> None:
    """Called by Dramatiq when a job's retries are exhausted: leave it visibly failed, never stuck."""
    args = message_data.get("args") or []
    if args:
        await outbox.give_up(worker_db(), str(args[0]), wiring.JOBS)


def _declare(name: str) -> dramatiq.Actor[[str], None]:
    settings = get_settings()

    async def run(job_id: str) -> None:
        await outbox.run(worker_db(), job_id, wiring.JOBS)

    run.__name__ = name.replace(".", "_")
    declare = dramatiq.actor(
        actor_name=name,
        max_retries=settings.job_max_retries,
        min_backoff=settings.job_min_backoff_ms,
        max_backoff=max(settings.job_min_backoff_ms, 300_000),
        on_retry_exhausted=GIVE_UP,
    )
    return declare(run)


ACTORS = {name: _declare(name) for name in sorted(wiring.JOBS)}
