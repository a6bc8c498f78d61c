"""The outbox relay: sends committed job rows to the broker, woken after commits and on a timer."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta

import dramatiq
import redis
from dramatiq.brokers.stub import StubBroker
from dramatiq.errors import ActorNotFound
from dramatiq.errors import ConnectionError as BrokerConnectionError

from domain.kernel import commits, outbox
from domain.kernel.clock import utcnow
from domain.kernel.db import Database
from domain.kernel.tasks import cancel_and_wait

log = logging.getLogger("concord.relay")
BATCH = 100
# While the broker stays unreachable, a WARNING says so again this often (once when it goes, once when back).
REMIND_EVERY = timedelta(minutes=5)
# What an unreachable broker raises: redis-py's connection and timeout errors (wrapping the socket's).
UNREACHABLE = (redis.ConnectionError, redis.TimeoutError, BrokerConnectionError)


class BrokerOutage:
    """What the relay says about an unreachable broker: one WARNING with the reason (no traceback: the
    reason is the whole story, and a pass fails every `interval` seconds), a reminder every `remind`, and
    one INFO when a pass succeeds again."""

    def __init__(self, remind: timedelta = REMIND_EVERY) -> None:
        self.remind = remind
        self.since: datetime | None = None
        self._said: datetime | None = None

    def failed(self, exc: BaseException) -> None:
        now = utcnow()
        reason = f"{type(exc).__name__}: {exc}"
        if self.since is None:
            self.since = self._said = now
            log.warning(
                "the broker is unreachable; outbox jobs wait in the database until it is back (%s)", reason
            )
        elif self._said is not None and now - self._said >= self.remind:
            self._said = now
            down = int((now - self.since).total_seconds())
            log.warning(
                "the broker is still unreachable after %d s; outbox jobs are waiting (%s)", down, reason
            )

    def passed(self) -> None:
        if self.since is not None:
            down = int((utcnow() - self.since).total_seconds())
            log.info("the broker is reachable again after %d s; sending the waiting outbox jobs", down)
        self.since = self._said = None


class Relay:
    def __init__(self, db: Database, broker: dramatiq.Broker, interval: float) -> None:
        self.db = db
        self.broker = broker
        self.interval = interval
        self._wake = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self.outage = BrokerOutage()

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

    async def run_pass(self) -> None:
        """One pass of the loop: send what is pending, and say (once) when the broker is out of reach."""
        try:
            await self.run_once()
        except UNREACHABLE as exc:
            self.outage.failed(exc)
            return
        except Exception:
            log.exception("outbox relay pass failed; retrying")
            return
        self.outage.passed()

    async def _loop_forever(self) -> None:
        while True:
            self._wake.clear()
            await self.run_pass()
            # asyncio.timeout, not wait_for: on Python 3.11 wait_for returns the event's result instead of
            # raising when this task is cancelled just as a commit wakes it, and the relay never stopped.
            try:
                async with asyncio.timeout(self.interval):
                    await self._wake.wait()
            except TimeoutError:
                pass

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.create_task(self._loop_forever(), name="outbox-relay")

    async def stop(self) -> None:
        if self._task is not None:
            await cancel_and_wait(self._task)
