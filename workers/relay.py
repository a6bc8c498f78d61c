"""The outbox relay: sends committed job rows to the broker, woken after commits and on a timer."""

from __future__ import annotations

import asyncio
import logging

import dramatiq
from dramatiq.brokers.stub import StubBroker
from dramatiq.errors import ActorNotFound

from domain.kernel import commits, outbox
from domain.kernel.db import Database
from domain.kernel.models import OutboxJob

log = logging.getLogger("concord.relay")


class Relay:
    def __init__(self, db: Database, broker: dramatiq.Broker, interval: float) -> None:
        self.db = db
        self.broker = broker
        self.interval = interval
        self._wake = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None

    def wake(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._wake.set)

    def _send(self, job: OutboxJob) -> None:
        actor = self.broker.get_actor(job.actor)
        self.broker.enqueue(
            dramatiq.Message(
                queue_name=actor.queue_name,
                actor_name=job.actor,
                args=(job.id,),
                kwargs={},
                options={},
                message_id=job.id,
            )
        )

    async def run_once(self) -> int:
        sent = 0
        while True:
            async with self.db.transaction() as session:
                commits.unseen_by_reads(session)  # job statuses only: no API read shows them
                jobs = await outbox.claim_pending(session, limit=100)
                sent_now = []
                for job in jobs:
                    try:
                        if isinstance(self.broker, StubBroker):
                            self._send(job)
                        else:
                            await asyncio.to_thread(self._send, job)
                    except ActorNotFound:
                        # Not listed in domain/wiring.py: no worker could ever run it, so fail it visibly.
                        log.error("job %s names no declared actor %r", job.id, job.actor)
                        outbox.mark_failed(job, f"no worker declares the job {job.actor!r}")
                        continue
                    sent_now.append(job)
                outbox.mark_sent(sent_now)
            sent += len(jobs)
            if len(jobs) < 100:
                return sent

    async def _loop_forever(self) -> None:
        while True:
            self._wake.clear()
            try:
                await self.run_once()
            except Exception:
                log.exception("outbox relay pass failed; retrying")
            try:
                await asyncio.wait_for(self._wake.wait(), timeout=self.interval)
            except TimeoutError:
                pass

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.create_task(self._loop_forever(), name="outbox-relay")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
