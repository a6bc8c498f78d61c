"""Job outcomes and durations as Prometheus metrics (infra/metrics.py), counted by a Dramatiq middleware in
whichever process runs the jobs: the in-process worker, or each `dramatiq workers.main` process (which write
to `CONCORD_METRICS_DIR`, so that /metrics on a web process of the machine shows them).

Dramatiq ships a Prometheus middleware too, but it serves its own HTTP port from every worker machine
(0.0.0.0:9191), reads its directory from its own variable at import time and times in milliseconds; this one
writes to the same samples as the rest of Concord."""

from __future__ import annotations

import time
from typing import Any

import dramatiq
from dramatiq.broker import MessageProxy
from dramatiq.middleware import Middleware

from infra.metrics import Metrics


class JobMetrics(Middleware):
    """Outcomes per actor: done, failed (raised: retried while retries remain), dead (retries exhausted:
    Dramatiq dead-letters the message), skipped; and the run time of each attempt."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics
        self._started: dict[str, float] = {}

    def before_process_message(self, broker: dramatiq.Broker, message: MessageProxy) -> None:
        self._started[message.message_id] = time.perf_counter()

    def after_process_message(
        self,
        broker: dramatiq.Broker,
        message: MessageProxy,
        *,
        result: Any | None = None,
        exception: BaseException | None = None,
    ) -> None:
        started = self._started.pop(message.message_id, None)
        seconds = time.perf_counter() - started if started is not None else None
        outcome = "done" if exception is None else "failed"
        self.metrics.job(message.queue_name, message.actor_name, outcome, seconds)

    def after_skip_message(self, broker: dramatiq.Broker, message: MessageProxy) -> None:
        self._started.pop(message.message_id, None)
        self.metrics.job(message.queue_name, message.actor_name, "skipped")

    def after_nack(self, broker: dramatiq.Broker, message: MessageProxy) -> None:
        self.metrics.job(message.queue_name, message.actor_name, "dead")
