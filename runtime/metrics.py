"""Prometheus metrics of a Concord process, and the text `/metrics` answers.

Counted where they happen: HTTP requests (web/kernel/middleware.py; added to the samples in batches, at most
`FLUSH_SECONDS` late), background jobs (workers/metrics.py, a
Dramatiq middleware) and scheduler sweeps (scheduler/runner.py). One `Metrics` per process
(`process_metrics()`), whatever number of apps and runtimes the process starts.

Several processes, one scrape: when `PROMETHEUS_MULTIPROC_DIR` names a directory (runtime/metrics_dir.py
sets it from `CONCORD_METRICS_DIR`, or to the supervisor's shared directory under `--processes N`),
prometheus-client writes every process's samples to files there and `/metrics` on any web process adds up
all of them, dead processes' included (counters never go back). That mode is chosen when prometheus-client is
imported, so the variable is set before anything imports it (concord_cli.py, workers/main.py).

Gauges that describe shared state (queue depth, outbox lag) are not kept per process: the process that answers
the scrape reads them from the broker and the database at that moment (`exposition`).
"""

from __future__ import annotations

import asyncio
import hmac
import os
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import dramatiq
from dramatiq.brokers.redis import RedisBroker
from dramatiq.brokers.stub import StubBroker
from dramatiq.common import dq_name, xq_name
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest, values
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from domain.kernel import outbox
from domain.kernel.db import Database

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
MULTIPROCESS_ENV = "PROMETHEUS_MULTIPROC_DIR"
# Requests: from a fast cached read (1 ms) to a slow upload or a long poll (30 s).
HTTP_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
# Jobs and sweeps: from a row update (5 ms) to a large conversion (10 min).
WORK_BUCKETS = (0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0)
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNAUTHORIZED = "/metrics needs Authorization: Bearer with the operator's metrics token"
# Requests wait at most this long to be added to the samples: batching them saves a cached read a tenth of its
# CPU, and a longer wait would make one flush long enough to show in request latencies.
FLUSH_SECONDS = 0.1
UNMATCHED = "unmatched"  # the route label of a request no route matched (raw paths would be unbounded)


class Metrics:
    """The process's counters and histograms."""

    def __init__(self, directory: str | None) -> None:
        if directory and values.ValueClass is values.MutexValue:
            raise RuntimeError(
                f"{MULTIPROCESS_ENV} must be set before prometheus_client is first imported "
                "(runtime/metrics_dir.py)"
            )
        self.directory = directory
        self._pending: list[tuple[str, str, str, int, float]] = []
        self._flushing_on: asyncio.AbstractEventLoop | None = None
        self._request_children: dict[tuple[str, str, str, int], tuple[Counter, Histogram]] = {}
        self.registry = CollectorRegistry()
        reg = self.registry
        self.requests = Counter(
            "concord_http_requests",
            "HTTP requests answered, by app, method, route (its path template) and status.",
            ["app", "method", "route", "status"],
            registry=reg,
        )
        self.request_seconds = Histogram(
            "concord_http_request_duration_seconds",
            "Time from a request's arrival in the app to its response, by app, method and route.",
            ["app", "method", "route"],
            buckets=HTTP_BUCKETS,
            registry=reg,
        )
        self.jobs = Counter(
            "concord_jobs",
            "Background job runs by actor and outcome: done (succeeded), failed (raised; retried while "
            "retries remain), dead (retries exhausted, the job left failed), skipped.",
            ["queue", "actor", "outcome"],
            registry=reg,
        )
        self.job_seconds = Histogram(
            "concord_job_duration_seconds",
            "Time a worker spent running a job, by actor.",
            ["queue", "actor"],
            buckets=WORK_BUCKETS,
            registry=reg,
        )
        self.sweeps = Counter(
            "concord_sweep_runs",
            "Scheduler sweep runs by sweep and outcome (ok, failed).",
            ["sweep", "outcome"],
            registry=reg,
        )
        self.sweep_seconds = Histogram(
            "concord_sweep_duration_seconds",
            "Time a sweep run took, by sweep.",
            ["sweep"],
            buckets=WORK_BUCKETS,
            registry=reg,
        )

    def request(self, app: str, method: str, route: str, status: int, seconds: float) -> None:
        """Count a request. Recorded at once in this process's list, added to the shared samples within
        `FLUSH_SECONDS` (and before this process answers a scrape): a labelled child's increment and
        observation take a lock each, and in multiprocess mode write a memory-mapped file, which cost a
        cached read more than a tenth of its CPU when done per request."""
        self._pending.append((app, method, route, status, seconds))
        loop = asyncio.get_running_loop()
        if self._flushing_on is not loop:  # no flush scheduled on this loop (the first, or an old loop's)
            self._flushing_on = loop
            loop.call_later(FLUSH_SECONDS, self.flush)

    def flush(self) -> None:
        """Add the requests counted since the last flush to the samples."""
        self._flushing_on = None
        pending, self._pending = self._pending, []
        counts: dict[tuple[str, str, str, int], int] = {}
        for app, method, route, status, seconds in pending:
            method = method if method in METHODS else "other"
            key = (app, method, route, status)
            children = self._request_children.get(key)
            if children is None:
                # `labels()` validates its values and finds the child under a lock: looked up once per
                # label set (a bounded set: route templates, known methods, statuses) and kept.
                children = (
                    self.requests.labels(app, method, route, str(status)),
                    self.request_seconds.labels(app, method, route),
                )
                self._request_children[key] = children
            counts[key] = counts.get(key, 0) + 1
            children[1].observe(seconds)
        for key, count in counts.items():
            self._request_children[key][0].inc(count)

    def job(self, queue: str, actor: str, outcome: str, seconds: float | None = None) -> None:
        self.jobs.labels(queue, actor, outcome).inc()
        if seconds is not None:
            self.job_seconds.labels(queue, actor).observe(seconds)

    def sweep(self, name: str, outcome: str, seconds: float) -> None:
        self.sweeps.labels(name, outcome).inc()
        self.sweep_seconds.labels(name).observe(seconds)

    def samples(self) -> bytes:
        """Every process's samples in multiprocess mode, else this process's."""
        self.flush()
        if not self.directory:
            return generate_latest(self.registry)
        merged = CollectorRegistry()
        MultiProcessCollector(merged, path=self.directory)  # type: ignore[no-untyped-call]
        return generate_latest(merged)


def authorized(token: str | None, authorization: str) -> bool:
    """Whether a scrape may read /metrics: no token configured, or `Authorization: Bearer <token>`."""
    if token is None:
        return True
    given = authorization[7:].strip() if authorization[:7].lower() == "bearer " else ""
    return hmac.compare_digest(given.encode(), token.encode())


@lru_cache
def process_metrics() -> Metrics:
    return Metrics(os.environ.get(MULTIPROCESS_ENV) or None)


@dataclass(frozen=True)
class QueueDepth:
    queue: str
    ready: int
    delayed: int
    dead: int


def queue_depths(broker: dramatiq.Broker) -> list[QueueDepth]:
    """Messages waiting in each Dramatiq queue (blocking: Redis round trips)."""
    queues = sorted(q for q in broker.get_declared_queues() if not q.endswith((".DQ", ".XQ")))
    if isinstance(broker, RedisBroker):
        pipe = broker.client.pipeline(transaction=False)
        for q in queues:
            key = f"{broker.namespace}:{q}"
            pipe.llen(key)
            pipe.llen(f"{broker.namespace}:{dq_name(q)}")
            pipe.zcard(f"{broker.namespace}:{xq_name(q)}")
        counts = [int(n) for n in pipe.execute()]
        return [QueueDepth(q, *counts[i * 3 : i * 3 + 3]) for i, q in enumerate(queues)]
    if isinstance(broker, StubBroker):
        return [
            QueueDepth(
                q,
                broker.queues[q].qsize(),
                broker.queues[dq_name(q)].qsize() if dq_name(q) in broker.queues else 0,
                len(broker.dead_letters_by_queue.get(q, ())),
            )
            for q in queues
        ]
    return []


class _Snapshot(Collector):
    """Gauges read at scrape time."""

    def __init__(self, depths: list[QueueDepth], lag: outbox.Lag) -> None:
        self.depths, self.lag = depths, lag

    def collect(self) -> Iterable[GaugeMetricFamily]:
        depth = GaugeMetricFamily(
            "concord_queue_messages",
            "Messages in the broker's queues: ready (waiting for a worker), delayed (retries waiting for "
            "their time), dead (dead-lettered).",
            labels=["queue", "state"],
        )
        for d in self.depths:
            depth.add_metric([d.queue, "ready"], d.ready)
            depth.add_metric([d.queue, "delayed"], d.delayed)
            depth.add_metric([d.queue, "dead"], d.dead)
        yield depth
        jobs = GaugeMetricFamily(
            "concord_outbox_jobs",
            "Jobs in the outbox by status: pending (committed, not yet handed to the broker), sent (handed "
            "over, not finished), failed (gave up; an operator looks at them).",
            labels=["status"],
        )
        for status in ("pending", "sent", "failed"):
            jobs.add_metric([status], self.lag.counts.get(status, 0))
        yield jobs
        yield GaugeMetricFamily(
            "concord_outbox_oldest_pending_seconds",
            "Age of the oldest job not yet handed to the broker (0: none pending): the relay's lag.",
            value=self.lag.oldest_pending_seconds,
        )
        yield GaugeMetricFamily(
            "concord_outbox_oldest_unfinished_seconds",
            "Age of the oldest job pending or sent but not finished (0: none).",
            value=self.lag.oldest_unfinished_seconds,
        )


async def exposition(metrics: Metrics, db: Database, broker: dramatiq.Broker) -> bytes:
    """The text of one scrape: the counters of every process, then the gauges of shared state."""
    depths = await asyncio.to_thread(queue_depths, broker)
    async with db.read() as session:
        lag = await outbox.lag(session)
    snapshot = CollectorRegistry()
    snapshot.register(_Snapshot(depths, lag))
    return metrics.samples() + generate_latest(snapshot)
