"""Prometheus metrics of a Concord process, and the text `/metrics` answers.

Counted where they happen: HTTP requests (web/kernel/middleware.py; added to the samples in batches, at most
`FLUSH_SECONDS` late), background jobs (workers/metrics.py, a
Dramatiq middleware) and scheduler sweeps (scheduler/runner.py). One `Metrics` per process
(`process_metrics()`), whatever number of apps and runtimes the process starts.

Several processes, one scrape: when `PROMETHEUS_MULTIPROC_DIR` names a directory (infra/metrics_dir.py
sets it from `CONCORD_METRICS_DIR`, or to the supervisor's shared directory under `--processes N`),
prometheus-client writes every process's samples to files there and `/metrics` on any web process adds up
all of them, dead processes' included (counters never go back). That mode is chosen when prometheus-client is
imported, so the variable is set before anything imports it (concord_cli.py, workers/main.py).

Gauges that describe shared state (queue depth, outbox lag, whether the broker answers) are not kept per
process: the process that answers the scrape reads them from the broker and the database at that moment
(`exposition`).

What each process is (its CPU, memory and file descriptors: `process_*`) and its database pools are its own.
Alone, a process reports them at scrape time (prometheus-client's process collector, and the pools read as the
scrape is answered). In multiprocess mode a scrape answered by one process cannot read another's memory, so
every process writes its own values to the directory every `SAMPLE_SECONDS` (a daemon thread) and before it
answers a scrape: `process_*` gauges and the pool gauges carry a `pid` label (only processes still alive are
shown), and `process_cpu_seconds_total` adds up the CPU of every process the directory has seen. The build
(`concord_build_info`) is the same for every process of a machine and is answered by the scraped process.
"""

from __future__ import annotations

import asyncio
import atexit
import bisect
import glob
import hmac
import importlib.metadata
import logging
import os
import platform
import re
import threading
import time
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import dramatiq
from dramatiq.brokers.redis import RedisBroker
from dramatiq.brokers.stub import StubBroker
from dramatiq.common import dq_name, xq_name
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest, values
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.pool import QueuePool

from domain.kernel import outbox
from domain.kernel.db import Database
from domain.kernel.settings import get_settings

log = logging.getLogger("concord.metrics")

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
# How often a process writes its own process_* and pool values to the directory in multiprocess mode.
SAMPLE_SECONDS = 1.0
# The process collector's gauges (process_cpu_seconds_total is a counter, added up across processes).
PROCESS_GAUGES = {
    "process_virtual_memory_bytes": "Virtual memory size in bytes.",
    "process_resident_memory_bytes": "Resident memory size in bytes.",
    "process_start_time_seconds": "Start time of the process since unix epoch in seconds.",
    "process_open_fds": "Number of open file descriptors.",
    "process_max_fds": "Maximum number of open file descriptors.",
}
PROCESS_CPU = "process_cpu_seconds_total"
# A multiprocess file of a gauge kept only while its process lives: gauge_liveall_<pid>.db and the like.
_LIVE_FILE = re.compile(r"gauge_live[a-z]+_(\d+)\.db$")


def status_class(status: int) -> str:
    """The `status` label of the latency histogram: `2xx`, `4xx`, ... (a code per label would multiply its
    buckets by every status a route answers)."""
    return f"{status // 100}xx"


class Metrics:
    """The process's counters and histograms."""

    def __init__(self, directory: str | None) -> None:
        if directory and values.ValueClass is values.MutexValue:
            raise RuntimeError(
                f"{MULTIPROCESS_ENV} must be set before prometheus_client is first imported "
                "(infra/metrics_dir.py)"
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
            "Time from a request's arrival in the app to its response, by app, method, route and status "
            "class (2xx, 3xx, 4xx, 5xx).",
            ["app", "method", "route", "status"],
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
        self.event_streams = Gauge(
            "concord_event_streams",
            "Live event streams (Server-Sent Events, GET /api/pact/{id}/events/stream) open now, by app.",
            ["app"],
            multiprocess_mode="livesum",
            registry=reg,
        )
        self.event_streams_ended = Counter(
            "concord_event_streams_ended",
            "Live event streams ended, by app and why: client (it went away), slow (it read too slowly and "
            "was dropped), lifetime (CONCORD_SSE_MAX_SECONDS), shutdown (its process stopped), error.",
            ["app", "reason"],
            registry=reg,
        )
        # Written when a process learns its state (readiness, a scrape): the highest of the machine's live
        # processes in multiprocess mode, so one process counting alone shows.
        self.rate_limits_fallback = Gauge(
            "concord_rate_limits_fallback",
            "1 while an app's rate limits count on the machine (its shared file or the process's memory) "
            "because Redis cannot answer, else 0.",
            ["app"],
            multiprocess_mode="livemax",
            registry=reg,
        )
        self._pools: dict[str, weakref.ref[AsyncEngine]] = {}
        self._pool_gauges = {
            name: Gauge(name, text, ["pool"], multiprocess_mode="liveall", registry=reg)
            for name, text in (
                ("concord_db_pool_size", "Connections a database pool keeps open once needed."),
                (
                    "concord_db_pool_max_overflow",
                    "Connections a pool may open beyond its size at busy moments.",
                ),
                (
                    "concord_db_pool_checked_out",
                    "Connections of a pool in use now (a request or job holds one).",
                ),
                ("concord_db_pool_overflow", "Connections open beyond the pool's size now."),
            )
        }
        self._sampling_lock = threading.Lock()
        self._sampler_pid: int | None = None
        self._process: ProcessCollector | None = None
        self._process_gauges: dict[str, Gauge] = {}
        self._cpu: Counter | None = None
        self._cpu_seen = 0.0
        if directory:
            # Not registered anywhere: in multiprocess mode only the files are read.
            self._process = ProcessCollector(registry=None)
            self._process_gauges = {
                name: Gauge(name, text, multiprocess_mode="liveall", registry=None)
                for name, text in PROCESS_GAUGES.items()
            }
            self._cpu = Counter(
                PROCESS_CPU.removesuffix("_total"),
                "Total user and system CPU time spent in seconds, by every process of the machine that "
                "wrote to the metrics directory.",
                registry=None,
            )
            atexit.register(_forget_live_values, directory)
            self._start_sampler()
        else:
            ProcessCollector(registry=reg)
            reg.register(BuildInfo())

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
        durations: dict[tuple[str, str, str, int], list[float]] = {}
        for app, method, route, status, seconds in pending:
            method = method if method in METHODS else "other"
            key = (app, method, route, status)
            if key not in self._request_children:
                # `labels()` validates its values and finds the child under a lock: looked up once per
                # label set (a bounded set: route templates, known methods, statuses) and kept.
                self._request_children[key] = (
                    self.requests.labels(app, method, route, str(status)),
                    self.request_seconds.labels(app, method, route, status_class(status)),
                )
            counts[key] = counts.get(key, 0) + 1
            durations.setdefault(key, []).append(seconds)
        for key, count in counts.items():
            counter, histogram = self._request_children[key]
            counter.inc(count)
            observe_all(histogram, durations[key])

    def job(self, queue: str, actor: str, outcome: str, seconds: float | None = None) -> None:
        self.jobs.labels(queue, actor, outcome).inc()
        if seconds is not None:
            self.job_seconds.labels(queue, actor).observe(seconds)

    def sweep(self, name: str, outcome: str, seconds: float) -> None:
        self.sweeps.labels(name, outcome).inc()
        self.sweep_seconds.labels(name).observe(seconds)

    def event_stream(self, app: str, opened: bool, ended: str | None = None) -> None:
        """A live event stream opened, or ended (and why)."""
        self.event_streams.labels(app).inc(1 if opened else -1)
        if ended is not None:
            self.event_streams_ended.labels(app, ended).inc()

    def rate_limits(self, app: str, fallback: bool) -> None:
        """Whether `app`'s rate limits in this process count without Redis although it is configured."""
        self.rate_limits_fallback.labels(app).set(1 if fallback else 0)

    def track_pool(self, name: str, engine: AsyncEngine) -> None:
        """Report `engine`'s connection pool as `pool=name` (the last engine given a name wins; a pool
        without a size, SQLAlchemy's NullPool, is not reported)."""
        self._pools[name] = weakref.ref(engine)
        if self.directory:
            self._start_sampler()  # a process forked after the sampler started has none of its own
            self.sample()  # shown from now on, not from the sampler's next round

    def sample(self) -> None:
        """Read the pools (and, in multiprocess mode, this process's own process_* values) into the gauges.
        Cheap: a few counters and /proc reads."""
        with self._sampling_lock:
            for name, ref in list(self._pools.items()):
                engine = ref()
                pool = engine.pool if engine is not None else None
                if not isinstance(pool, QueuePool):
                    continue
                for gauge, number in (
                    ("concord_db_pool_size", pool.size()),
                    ("concord_db_pool_max_overflow", getattr(pool, "_max_overflow", 0)),
                    ("concord_db_pool_checked_out", pool.checkedout()),
                    ("concord_db_pool_overflow", max(0, pool.overflow())),
                ):
                    self._pool_gauges[gauge].labels(name).set(number)
            if self._process is None or self._cpu is None:
                return
            for family in self._process.collect():
                for sample in family.samples:
                    if sample.name == PROCESS_CPU:
                        if sample.value > self._cpu_seen:
                            self._cpu.inc(sample.value - self._cpu_seen)
                            self._cpu_seen = sample.value
                    elif (gauge_ := self._process_gauges.get(sample.name)) is not None:
                        gauge_.set(sample.value)

    def _start_sampler(self) -> None:
        if self._sampler_pid == os.getpid():
            return
        self._sampler_pid = os.getpid()
        self._cpu_seen = 0.0  # a forked child's CPU starts at its own zero
        threading.Thread(target=self._sample_forever, name="concord-metrics-sampler", daemon=True).start()

    def _sample_forever(self) -> None:
        while True:
            try:
                self.sample()
            except Exception:  # never let one bad read end the sampling (logged, retried next time)
                log.exception("sampling the process's metrics failed")
            time.sleep(SAMPLE_SECONDS)

    def samples(self) -> bytes:
        """Every process's samples in multiprocess mode, else this process's."""
        self.flush()
        self.sample()
        if not self.directory:
            return generate_latest(self.registry)
        merged = CollectorRegistry()
        merged.register(LiveFiles(self.directory))
        merged.register(BuildInfo())
        return generate_latest(merged)


class LiveFiles(Collector):
    """prometheus-client's multiprocess collector over the directory's files, minus the live-only gauges
    (`liveall`, `livemax`, ...) of processes that are gone: a process removes its own when it exits, but one
    that was killed cannot. The processes sharing a directory share a machine (README "Metrics and logs"), so
    a process id that does not exist here belongs to a dead process."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def collect(self) -> Iterable[Metric]:
        files = [
            path
            for path in glob.glob(os.path.join(self.directory, "*.db"))
            if (live := _LIVE_FILE.search(path)) is None or _alive(int(live.group(1)))
        ]
        merged: Iterable[Metric] = MultiProcessCollector.merge(files, accumulate=True)  # type: ignore[no-untyped-call]
        return merged


def _forget_live_values(directory: str) -> None:
    """At exit: remove this process's live-only gauges (of whichever process exits, a forked child too)."""
    mark_process_dead(os.getpid(), directory)  # type: ignore[no-untyped-call]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


class BuildInfo(Collector):
    """`concord_build_info{version, python, revision} 1`: which build a process runs."""

    def collect(self) -> Iterable[Metric]:
        info = GaugeMetricFamily(
            "concord_build_info",
            "The running build: Concord's version, Python's version and the source revision (always 1).",
            labels=["version", "python", "revision"],
        )
        info.add_metric(list(build_labels()), 1)
        yield info


@lru_cache
def build_labels() -> tuple[str, str, str]:
    try:
        version = importlib.metadata.version("concord")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    return version, platform.python_version(), get_settings().build_revision or "unknown"


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

    def __init__(self, broker_up: bool, depths: list[QueueDepth], lag: outbox.Lag) -> None:
        self.broker_up, self.depths, self.lag = broker_up, depths, lag

    def collect(self) -> Iterable[GaugeMetricFamily]:
        yield GaugeMetricFamily(
            "concord_broker_up",
            "1 when the broker answered this scrape (or is in-process), 0 when it did not: jobs wait in the "
            "outbox meanwhile and queue depths are not shown.",
            value=1 if self.broker_up else 0,
        )
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


async def exposition(metrics: Metrics, db: Database, broker: dramatiq.Broker, timeout: float) -> bytes:
    """The text of one scrape: the counters of every process, then the gauges of shared state. A broker that
    does not answer within `timeout` is reported down (`concord_broker_up 0`), not an error."""
    samples = metrics.samples()  # first: the pools as they are, before this scrape takes a connection
    try:
        depths = await asyncio.wait_for(asyncio.to_thread(queue_depths, broker), timeout)
        broker_up = True
    except Exception as exc:  # Redis down, unreachable or slower than the bound
        log.debug("queue depths not read: %s", exc)
        depths, broker_up = [], False
    async with db.read() as session:
        lag = await outbox.lag(session)
    snapshot = CollectorRegistry()
    snapshot.register(_Snapshot(broker_up, depths, lag))
    return samples + generate_latest(snapshot)


def observe_all(histogram: Any, amounts: list[float]) -> None:
    """`histogram.observe(a)` for each amount, as one write per bucket touched and one for the sum: in
    multiprocess mode every observation is a locked write of a memory-mapped value, twice (the sum, the
    bucket), which per request was most of a flush. Reaches into prometheus_client's Histogram child
    (`_upper_bounds`, `_buckets`, `_sum`, as its own `observe` uses them); a child without them (another
    version's) is observed one amount at a time."""
    bounds = getattr(histogram, "_upper_bounds", None)
    buckets = getattr(histogram, "_buckets", None)
    total = getattr(histogram, "_sum", None)
    if bounds is None or buckets is None or total is None or len(bounds) != len(buckets):
        for amount in amounts:
            histogram.observe(amount)
        return
    hits = [0] * len(bounds)
    for amount in amounts:
        hits[bisect.bisect_left(bounds, amount)] += 1  # the first bound >= amount, as observe picks it
    total.inc(sum(amounts))
    for i, n in enumerate(hits):
        if n:
            buckets[i].inc(n)
