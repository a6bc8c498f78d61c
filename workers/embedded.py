"""The in-process worker of the embedded mode: Dramatiq worker threads inside the server process."""

from __future__ import annotations

import dramatiq
from dramatiq import Worker


def start_worker(broker: dramatiq.Broker, threads: int) -> Worker:
    worker = Worker(broker, worker_timeout=100, worker_threads=threads)
    worker.start()
    return worker
