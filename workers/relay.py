"""The outbox relay: sends committed job rows to the broker, woken after commits and on a timer."""

from __future__ import annotations

import asyncio
import logging

import dramatiq
from dramatiq.brokers.stub import StubBroker
from dramatiq.errors import ActorNotFound

from domain.kernel import commits, outbox
from domain.kernel.db import Database

log = logging.getLogger("concord.relay")
BATCH = 100


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

    def _send(self, job_id: str, actor_name: str) -> None:
        actor = self.broker.get_actor(actor_name)
        self.broker.enqueue(
            dramatiq.Message(
                queue_name=actor.queue_name,
                actor_name=actor_name,
                args=(job_id,),
                kwargs={},
                options={},
                message_id=job_id,
            )
        )

    def _send_batch(
        self, claimed: list[tuple[str, str]], progress: list[str], unrunnable: list[tuple[str, str]]
    ) -> None:
        """Send every claimed job; `progress` gets each id once handed over (or known unrunnable)."""
        for job_id, actor_name in claimed:
            try:
                self._send(job_id, actor_name)
            except ActorNotFound:
                # Not listed in domain/wiring.py: no worker could ever run it, so fail it visibly.
                log.error("job %s names no declared actor %r", job_id, actor_name)
                unrunnable.append((job_id, actor_name))
            progress.append(job_id)

    async def run_once(self) -> int:
        sent = 0
        while True:
            # One statement marks a batch sent (autocommit on PostgreSQL): nothing is locked while sending.
            async with self.db.single_statement() as session:
                claimed = await outbox.claim_for_sending(session, limit=BATCH)
            unrunnable: list[tuple[str, str]] = []
            progress: list[str] = []
            try:
                if claimed:
                    if isinstance(self.broker, StubBroker):
                        self._send_batch(claimed, progress, unrunnable)
                    else:
                        # One thread hop for the whole batch: a burst is bounded by Redis, not by hand-offs.
                        await asyncio.to_thread(self._send_batch, claimed, progress, unrunnable)
            except BaseException:
                async with self.db.transaction() as session:  # the rest were not sent: pending again
                    commits.unseen_by_reads(session)
                    await outbox.unclaim(session, [job_id for job_id, _actor in claimed[len(progress) :]])
                raise
            finally:
                if unrunnable:
                    async with self.db.transaction() as session:
                        commits.unseen_by_reads(session)
                        for job_id, actor_name in unrunnable:
                            await outbox.fail_unrunnable(
                                session, job_id, f"no worker declares the job {actor_name!r}"
                            )
            sent += len(claimed)
            if len(claimed) < BATCH:
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
