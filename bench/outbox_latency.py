"""Outbox latency benchmark (on demand, never in CI): enqueue-to-start through the transactional outbox
against a plain Dramatiq send, on PostgreSQL + Redis, in the same run.

- outbox: a unit of work writes the job row (`outbox.enqueue`) and commits; the commit wakes the relay, which
  claims the row and sends it to Redis; a Dramatiq worker runs the actor, which loads the row and starts the
  job's handler (`outbox.run`). Measured from the commit's return to the handler's first line.
- plain: `actor.send()` to the same Redis broker; measured from the send to the actor's first line.

Both go through the same broker, namespace and worker (`--threads`, Dramatiq's AsyncIO middleware), one job at
a time (`--jobs` of each, interleaved), then a burst of `--burst` jobs at once (after a burst to warm the
pools). Prints p50/p99 and the ratio.

    python -m bench.outbox_latency [--jobs 200] [--burst 50] [--threads 8]
        [--database-url postgresql://postgres@127.0.0.1:5432/postgres] [--redis-url redis://127.0.0.1:6379/0]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import threading
import time
import uuid
from typing import Any

import asyncpg

from bench.write_path import forget_namespace

STARTS: dict[str, float] = {}
_STARTED = threading.Condition()


def _started(key: str) -> None:
    with _STARTED:
        STARTS[key] = time.perf_counter()
        _STARTED.notify_all()


async def _wait_started(keys: list[str], timeout: float = 30.0) -> None:
    def wait() -> None:
        deadline = time.monotonic() + timeout
        with _STARTED:
            while not all(k in STARTS for k in keys):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise SystemExit(f"{sum(k not in STARTS for k in keys)} jobs never started")
                _STARTED.wait(left)

    await asyncio.to_thread(wait)


def stats(latencies: list[float]) -> tuple[float, float, float]:
    ordered = sorted(latencies)
    p99 = ordered[max(0, int(len(ordered) * 0.99) - 1)]
    return statistics.median(ordered) * 1000, p99 * 1000, statistics.mean(ordered) * 1000


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--burst", type=int, default=50)
    parser.add_argument("--threads", type=int, default=8, help="worker threads (deploy/README.md: -t 8)")
    parser.add_argument("--database-url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    args = parser.parse_args()

    run = uuid.uuid4().hex[:8]
    db_name = f"concord_bench_{run}"
    admin = await asyncpg.connect(args.database_url)
    await admin.execute(f'CREATE DATABASE "{db_name}"')
    await admin.close()
    base = args.database_url.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://", 1)
    os.environ.update(
        {
            "CONCORD_DATABASE_URL": f"{base}/{db_name}",
            "CONCORD_REDIS_URL": args.redis_url,
            "CONCORD_QUEUE_NAMESPACE": f"concord-bench-{run}",
            "CONCORD_DATA_DIR": tempfile.mkdtemp(prefix="concord-bench-"),
            "CONCORD_LOG_LEVEL": "WARNING",
        }
    )
    # Imported once the settings point at the benchmark's own database and queue namespace.
    import dramatiq
    from dramatiq.asyncio import get_event_loop_thread

    from domain.kernel import outbox
    from domain.kernel.db import Database
    from domain.kernel.settings import get_settings
    from migrations import upgrade_async
    from runtime.process import Runtime
    from workers.embedded import start_worker

    settings = get_settings()
    await upgrade_async(settings.db_url)
    rt = await Runtime.start(settings, relay=True, scheduler=False, worker=False)
    worker_db: list[Database] = []  # made on the worker's event loop (engines are bound to their loop)

    async def noop(session: Any, payload: dict[str, Any]) -> None:
        _started(payload["key"])

    noop_job = outbox.Job("bench.noop", noop)

    async def through_outbox(job_id: str) -> None:
        if not worker_db:
            worker_db.append(Database(settings.db_url))
        await outbox.run(worker_db[0], job_id, {noop_job.name: noop_job})

    async def plain(key: str) -> None:
        _started(key)

    broker = rt.broker
    dramatiq.actor(actor_name="bench.noop", broker=broker)(through_outbox)
    plain_actor = dramatiq.actor(actor_name="bench.plain", broker=broker)(plain)
    worker = start_worker(broker, args.threads)
    try:

        async def send_outbox(key: str) -> float:
            async with rt.db.transaction() as session:
                outbox.enqueue(session, noop_job, {"key": key})
            return time.perf_counter()

        async def send_plain(key: str) -> float:
            began = time.perf_counter()
            await asyncio.to_thread(plain_actor.send, key)
            return began

        senders = {"outbox": send_outbox, "plain": send_plain}
        single: dict[str, list[float]] = {name: [] for name in senders}
        for name, send in senders.items():  # warm-up: pooled connections, prepared statements, loops
            keys = [f"warm-{name}-{n}" for n in range(args.burst)]
            await asyncio.gather(*(send(k) for k in keys))
            await _wait_started(keys)
        for n in range(args.jobs):
            for name, send in senders.items():
                key = f"{name}-{n}"
                sent = await send(key)
                await _wait_started([key])
                single[name].append(STARTS[key] - sent)
        burst: dict[str, list[float]] = {}
        for name, send in senders.items():
            keys = [f"burst-{name}-{n}" for n in range(args.burst)]
            sent_at = await asyncio.gather(*(send(k) for k in keys))
            await _wait_started(keys)
            burst[name] = [STARTS[k] - s for k, s in zip(keys, sent_at, strict=True)]
    finally:
        for db in worker_db:  # on the worker's loop, which made it
            get_event_loop_thread().run_coroutine(db.dispose())  # type: ignore[union-attr]
        await asyncio.to_thread(worker.stop)
        await rt.stop()
        admin = await asyncpg.connect(args.database_url)
        await admin.execute(f'DROP DATABASE IF EXISTS "{db_name}" WITH (FORCE)')
        await admin.close()
        forget_namespace(args.redis_url, settings.queue_namespace)

    print()
    print(f"enqueue-to-start latency, PostgreSQL + Redis, one Dramatiq worker ({args.threads} threads)")
    print(f"{'mode':<34}{'p50 ms':>9}{'p99 ms':>9}{'mean ms':>9}{'p50 vs plain':>14}")
    for label, table, count in (("one at a time", single, args.jobs), ("burst", burst, args.burst)):
        plain_p50 = stats(table["plain"])[0]
        for name in ("plain", "outbox"):
            p50, p99, mean = stats(table[name])
            ratio = f"{p50 / plain_p50:13.2f}x"
            print(f"{f'{name} send, {label} ({count})':<34}{p50:9.2f}{p99:9.2f}{mean:9.2f}{ratio}")


if __name__ == "__main__":
    asyncio.run(main())
