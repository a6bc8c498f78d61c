"""One process of a `concord worker` group (workers/group.py): Dramatiq worker threads on the Redis broker, or
the group's metrics exposition.

A worker process runs what Dramatiq's own CLI runs in each of its children (the broker of
workers/broker.py, its `process_boot` hooks, a `dramatiq.Worker` of `threads` threads) and stops the same way:
on SIGTERM it stops fetching, puts back what it had fetched but not started, and lets running jobs finish for
the group's shutdown timeout. It ignores SIGINT (the group's parent decides when its children stop).

A thread of every member keeps in touch with the parent: it touches the member's beat file every
BEAT_SECONDS (the parent kills a worker process whose beat goes stale: frozen, not merely busy, since jobs run
on other threads), and stops the member, as SIGTERM would, when the parent is gone (its parent process id
changed), so that no member outlives its group."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from domain.kernel.settings import Settings
from infra import collector, metrics_dir

log = logging.getLogger("concord.workers")

Role = Literal["worker", "metrics"]
BEAT_SECONDS = 2.0


@dataclass(frozen=True)
class Member:
    """A child's place in its group, handed to it when the group's parent forks it."""

    role: Role
    slot: int
    directory: str  # the group's directory: beat files, and the samples when CONCORD_METRICS_DIR is unset
    parent: int  # the group's process id
    threads: int = 1
    shutdown_seconds: float = 600.0

    @property
    def beat_path(self) -> Path:
        return beat_path(Path(self.directory), self.slot)


def beat_path(directory: Path, slot: int) -> Path:
    return directory / f"worker-{slot}.beat"


def preload() -> None:
    """What a member runs, imported by the group's parent before it forks them (after it chose the metrics
    directory: prometheus_client, which workers.broker imports, reads it at import)."""
    import dramatiq  # noqa: F401

    import infra.live.transport  # noqa: F401
    import workers.broker  # noqa: F401
    import workers.exposition  # noqa: F401


def run(settings: Settings, member: Member) -> int:
    # Before prometheus_client is imported (workers.broker imports it): every member writes its samples to the
    # same directory, which the metrics member (or a web process, given CONCORD_METRICS_DIR) adds up.
    metrics_dir.configure(settings, member.directory)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if member.role == "metrics":
        return _expose(member)
    return _work(settings, member)


def _keep_in_touch(member: Member) -> None:
    while True:
        if member.role == "worker":
            with contextlib.suppress(OSError):  # the group's directory goes when its parent stops
                member.beat_path.touch()
        if os.getppid() != member.parent:
            log.warning("%s process %d: its worker group is gone; stopping", member.role, os.getpid())
            os.kill(os.getpid(), signal.SIGTERM)
            return
        time.sleep(BEAT_SECONDS)


def _touching(member: Member) -> None:
    threading.Thread(target=_keep_in_touch, args=(member,), name="concord-group-touch", daemon=True).start()


def _work(settings: Settings, member: Member) -> int:
    collector.pause()  # until the worker runs: what it imports and builds now, it keeps
    import dramatiq

    from infra.live.transport import RedisPublisher
    from workers.broker import setup_broker

    stopping: list[int] = []  # the signals received; a flag, not an Event: the handler runs on this thread,
    # and an Event's set() takes a lock its wait() may be holding at that moment

    def on_term(signum: int, _frame: object) -> None:
        stopping.append(signum)

    signal.signal(signal.SIGTERM, on_term)
    _touching(member)
    # The events its jobs commit, for the event streams of every web process (infra/live).
    publisher = RedisPublisher(settings)
    publisher.start()
    broker = setup_broker(settings)
    broker.emit_after("process_boot")  # as Dramatiq's CLI does: starts the time-limit watcher
    worker = dramatiq.Worker(broker, worker_threads=member.threads)
    worker.start()
    collector.settle()
    log.info("worker process %d ready: %d threads", os.getpid(), member.threads)
    while not stopping:
        time.sleep(0.5)
    log.info(
        "worker process %d stopping: running jobs get %g s to finish", os.getpid(), member.shutdown_seconds
    )
    worker.stop(timeout=int(member.shutdown_seconds * 1000))
    broker.close()
    publisher.stop()
    return 0


def _expose(member: Member) -> int:
    from workers import exposition

    _touching(member)
    return exposition.serve()  # aiohttp's run_app: SIGTERM stops it
