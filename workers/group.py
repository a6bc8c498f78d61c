"""`concord worker`: a group of Dramatiq worker processes on the Redis broker, kept running by their parent.

Dramatiq's own command (`dramatiq workers.main --processes N`) shuts its whole group down as soon as one of
its processes dies (an out-of-memory kill, a `kill -9`), and the jobs wait until something starts a new group.
This parent instead starts N worker processes (workers/process.py), forked from itself once it has imported
what they run (infra/forked.py: they share its imported modules instead of importing them again), and
restarts one that exits, with infra/supervisor.py's `keep` (a growing pause while a process keeps dying
young); with `--metrics`, one more process serves the group's samples on CONCORD_METRICS_PORT. The jobs a dead
process had fetched go back on the queue once its Redis heartbeat is older than
CONCORD_WORKER_HEARTBEAT_TIMEOUT_SECONDS (workers/broker.py), for its successor or any other worker.

Every worker process touches a beat file in the group's directory every couple of seconds, from a thread of
its own; one silent for CONCORD_WORKER_FROZEN_AFTER_SECONDS (stopped, or frozen) is killed, and so
restarted. The parent touches `--alive-file` every ALIVE_SECONDS while its own loop runs: a liveness probe
(`python -m workers.liveness`) checks that the file is fresh, so that a group whose parent hangs is
restarted from outside.

On SIGTERM or SIGINT the parent sends SIGTERM to every process, which stop fetching, put back what they had
fetched but not started, and let running jobs finish for `--shutdown-timeout` seconds; a process still running
STOP_MARGIN_SECONDS after that is killed. The group's directory and the alive file are then removed."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from domain.kernel.settings import Settings
from domain.kernel.tasks import cancel_and_wait
from infra.forked import Forker, forking
from infra.supervisor import Kept, keep
from workers.process import Member, beat_path, preload, run

log = logging.getLogger("concord.workers")

ALIVE_SECONDS = 5.0
STOP_MARGIN_SECONDS = 15.0


@dataclass(frozen=True)
class Options:
    processes: int
    threads: int
    shutdown_seconds: float
    metrics: bool = False
    alive_file: Path | None = None


def _directory() -> Path:
    """In memory (/dev/shm) where there is one: beat files are touched every couple of seconds."""
    shm = Path("/dev/shm")
    base = str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None
    return Path(tempfile.mkdtemp(prefix="concord-worker-", dir=base))


class WorkerGroup:
    def __init__(self, settings: Settings, options: Options) -> None:
        self.settings = settings
        self.options = options
        self.stop = asyncio.Event()

    def _members(self, directory: Path, forker: Forker) -> list[tuple[Member, Kept]]:
        options, parent = self.options, os.getpid()
        members = [
            Member("worker", n, str(directory), parent, options.threads, options.shutdown_seconds)
            for n in range(options.processes)
        ]
        if options.metrics:
            members.append(Member("metrics", options.processes, str(directory), parent))
        settings = self.settings

        def kept(member: Member) -> Kept:
            name = f"{member.role} process {member.slot}"
            return Kept(
                name, entry=lambda: run(settings, member), forker=forker, title=f"concord worker: {name}"
            )

        return [(member, kept(member)) for member in members]

    async def run(self) -> int:
        alive = self.options.alive_file
        if alive is not None:
            try:
                alive.touch()
            except OSError as exc:
                raise SystemExit(
                    f"concord worker: cannot write the alive file {alive}: {exc.strerror or exc}"
                ) from None
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self.stop.set)
        directory = _directory()
        grace = self.options.shutdown_seconds + STOP_MARGIN_SECONDS
        try:
            with forking(self.settings, directory, preload) as forker:
                members = self._members(directory, forker)
                keepers = [asyncio.create_task(keep(kept, self.stop, grace)) for _member, kept in members]
                log.info(
                    "Concord worker group: %d processes of %d threads on Redis (queue namespace %s)%s; "
                    "parent pid %d",
                    self.options.processes,
                    self.options.threads,
                    self.settings.queue_namespace,
                    f", metrics on port {self.settings.metrics_port}" if self.options.metrics else "",
                    os.getpid(),
                )
                watcher = asyncio.create_task(self._watch(members, directory))
                try:
                    codes = await asyncio.gather(*keepers)
                finally:
                    await cancel_and_wait(watcher)
        finally:
            shutil.rmtree(directory, ignore_errors=True)
            if alive is not None:
                with contextlib.suppress(OSError):
                    alive.unlink()
        return 0 if all(code == 0 for code in codes) else 1

    async def _watch(self, members: list[tuple[Member, Kept]], directory: Path) -> None:
        """Kill worker processes that stopped beating, and keep the alive file fresh, until cancelled (the
        file stays fresh while the group stops, however long its jobs take to finish)."""
        loop = asyncio.get_running_loop()
        while True:
            for member, kept in members:
                if self.stop.is_set() or member.role != "worker":
                    continue
                proc = kept.proc
                if proc is None or proc.returncode is not None:
                    continue  # being restarted
                silent = min(loop.time() - kept.started, _beat_age(beat_path(directory, member.slot)))
                if silent > self.settings.worker_frozen_after_seconds:
                    log.error(
                        "%s (pid %d) has not beaten for %.0f s; killing it", kept.name, proc.pid, silent
                    )
                    with contextlib.suppress(ProcessLookupError):
                        proc.kill()
            if self.options.alive_file is not None:
                with contextlib.suppress(OSError):
                    self.options.alive_file.touch()
            await asyncio.sleep(ALIVE_SECONDS)


def _beat_age(path: Path) -> float:
    try:
        return time.time() - path.stat().st_mtime
    except FileNotFoundError:
        return float("inf")


def run_group(settings: Settings, options: Options) -> int:
    return asyncio.run(WorkerGroup(settings, options).run())
