"""The parent of `concord serve` and `concord web` when they run several web processes.

It serves nothing itself. Before starting anything it checks that the ports are free (the children bind them
with SO_REUSEPORT, which would otherwise let them join another server's port) and makes the machine's
shared directory (infra/machine.py). Then it starts:

- N web processes, each binding both ports with SO_REUSEPORT, so the kernel spreads incoming connections
  over them;
- one background process, when there is work that must run exactly once on the machine: with the in-process
  broker (no Redis) the outbox relay and the worker (only it sends jobs, so only it requeues what a previous
  one had in memory, at its own start), and for `serve` the scheduler.

The children are forked from the supervisor (infra/forked.py) once it has imported what they run (`preload`):
they share its imported modules instead of each importing the application again.

It restarts a child that dies (after a pause that grows while a child keeps dying young), and on SIGTERM or
SIGINT sends SIGTERM to every child, waits for them to finish what they are doing (killing any that take
longer than STOP_GRACE_SECONDS), removes the shared directory and exits. Children ignore SIGINT (a terminal's
Ctrl-C reaches the whole process group; the parent decides) and stop by themselves if the parent disappears
(they hold the read end of a pipe whose write end only the parent keeps, so they see its end of file).

`keep`, the loop that runs and restarts one child, also keeps `concord worker`'s processes (workers/group.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import socket
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from domain.kernel.settings import Settings
from infra import machine
from infra.cpus import cores
from infra.forked import Forked, Forker, forking
from infra.machine import Role, Supervised

log = logging.getLogger("concord.supervisor")

Command = Literal["serve", "web"]
STOP_GRACE_SECONDS = 45.0  # a sweep in flight gets 30 s to commit (scheduler/runner.py)
YOUNG_SECONDS = 10.0  # a child that dies sooner is restarted after a growing pause
FIRST_PAUSE, LONGEST_PAUSE = 0.5, 30.0


def process_count(settings: Settings, option: int | None) -> int:
    wanted = option if option is not None else settings.web_processes
    return wanted if wanted > 0 else cores()


def check_port_free(host: str, port: int) -> None:
    """Refuse to start on a port some server already holds (SO_REUSEPORT would quietly share it)."""
    try:
        with socket.create_server((host, port)):  # SO_REUSEADDR, not SO_REUSEPORT
            pass
    except OSError as exc:
        raise SystemExit(f"concord: cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def _shared_directory() -> Path:
    """In memory (/dev/shm) where there is one, so that the generation file is never written to disk."""
    shm = Path("/dev/shm")
    base = str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None
    return Path(tempfile.mkdtemp(prefix="concord-", dir=base))


Entry = Callable[[Supervised], int]  # a forked child's work, on its place; its result is the exit status


@dataclass
class Kept:
    """A child process a supervisor keeps running: `entry` forked by `forker` (infra/forked.py), titled
    `title`, with `close_fds` closed in the child; forked again whenever it exits."""

    name: str
    entry: Callable[[], int]
    forker: Forker = field(repr=False)
    title: str
    close_fds: tuple[int, ...] = ()
    proc: Forked | None = field(default=None, repr=False)
    started: float = 0.0  # the event loop's time of its latest start


async def keep(child: Kept, stop: asyncio.Event, grace: float) -> int:
    """Run `child` until `stop` is set, restarting it whenever it exits (after a pause that grows while it
    keeps dying young); then SIGTERM it, and SIGKILL it after `grace` seconds. Its last exit code."""
    loop = asyncio.get_running_loop()
    pause = FIRST_PAUSE
    stopping = asyncio.ensure_future(stop.wait())
    try:
        while True:
            child.started = loop.time()
            proc = child.proc = child.forker.start(child.entry, title=child.title, close=child.close_fds)
            log.info("%s started (pid %d)", child.name, proc.pid)
            exited = asyncio.ensure_future(proc.wait())
            await asyncio.wait({exited, stopping}, return_when=asyncio.FIRST_COMPLETED)
            if not exited.done():
                return await _terminate(child, proc, exited, grace)
            lived = loop.time() - child.started
            pause = FIRST_PAUSE if lived >= YOUNG_SECONDS else min(pause * 2, LONGEST_PAUSE)
            log.error(
                "%s (pid %d) exited with %s after %.1f s; restarting in %.1f s",
                child.name,
                proc.pid,
                _describe(proc.returncode),
                lived,
                pause,
            )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(stopping), timeout=pause)
            if stop.is_set():
                return 0
    finally:
        stopping.cancel()


async def _terminate(child: Kept, proc: Forked, exited: asyncio.Future[int], grace: float) -> int:
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGTERM)
    try:
        code = await asyncio.wait_for(exited, timeout=grace)
    except TimeoutError:
        log.error("%s (pid %d) did not stop in time; killing it", child.name, proc.pid)
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        code = await proc.wait()
    if code == -signal.SIGTERM:  # still starting: it had no handler yet, and nothing to finish
        log.info("%s (pid %d) stopped while starting", child.name, proc.pid)
        return 0
    if code != 0:
        log.error("%s (pid %d) stopped with %s", child.name, proc.pid, _describe(code))
    return code


class Supervisor:
    def __init__(
        self,
        settings: Settings,
        command: Command,
        processes: int,
        entry: Entry,
        preload: Callable[[], object],
    ) -> None:
        self.settings = settings
        self.command = command
        self.processes = processes
        self.entry = entry
        self.preload = preload
        self.embedded = not settings.redis_url
        self.stop = asyncio.Event()

    def _children(
        self, directory: Path, lifeline: tuple[int, int], doorbell: tuple[int, int] | None, forker: Forker
    ) -> list[Kept]:
        def child(name: str, role: Role, slot: int, bell: int | None) -> Kept:
            supervised = Supervised(
                role=role, slot=slot, directory=str(directory), lifeline=lifeline[0], doorbell=bell
            )
            return Kept(
                name,
                entry=lambda: self.entry(supervised),
                forker=forker,
                title=f"concord {self.command}: {name}",
                close_fds=(lifeline[1],),  # the write end stays the parent's alone
            )

        reader, writer = doorbell if doorbell is not None else (None, None)
        children = [child(f"web process {n}", "web", n, writer) for n in range(self.processes)]
        if self.embedded or self.command == "serve":
            children.append(child("background process", "background", self.processes, reader))
        return children

    async def run(self) -> int:
        for port in (self.settings.hub_port, self.settings.docs_port):
            check_port_free(self.settings.host, port)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self.stop.set)
        directory = _shared_directory()
        lifeline, lifeline_writer = os.pipe()  # the parent keeps the only write end until it exits
        doorbell = os.pipe() if self.embedded else None
        if doorbell is not None:
            for fd in doorbell:
                os.set_blocking(fd, False)
        try:
            with forking(self.settings, directory, self.preload) as forker:
                codes = await self._keep(directory, (lifeline, lifeline_writer), doorbell, forker)
        finally:
            for fd in (lifeline, lifeline_writer, *(doorbell or ())):
                with contextlib.suppress(OSError):
                    os.close(fd)
            shutil.rmtree(directory, ignore_errors=True)
        return 0 if all(code == 0 for code in codes) else 1

    async def _keep(
        self, directory: Path, lifeline: tuple[int, int], doorbell: tuple[int, int] | None, forker: Forker
    ) -> list[int]:
        """Every child kept running until the supervisor stops; their last exit codes."""
        children = self._children(directory, lifeline, doorbell, forker)
        machine.create(directory, slots=len(children))
        keepers = [asyncio.create_task(keep(child, self.stop, STOP_GRACE_SECONDS)) for child in children]
        log.info(
            "Concord hub on http://%s:%d, documents on http://%s:%d: %d web processes%s (%s, %s broker, %s); "
            "supervisor pid %d",
            self.settings.host,
            self.settings.hub_port,
            self.settings.host,
            self.settings.docs_port,
            self.processes,
            " and a background process" if len(children) > self.processes else "",
            "SQLite" if self.settings.is_sqlite else "PostgreSQL",
            "in-process" if self.embedded else "Redis",
            self.settings.event_loop.value,  # the children's (this parent's own is asyncio's)
            os.getpid(),
        )
        return list(await asyncio.gather(*keepers))


def _describe(code: int | None) -> str:
    if code is not None and code < 0:
        return f"signal {signal.Signals(-code).name}"
    return f"code {code}"


def supervise(
    settings: Settings, command: Command, processes: int, entry: Entry, preload: Callable[[], object]
) -> int:
    """Run `processes` web children (and the background one) of `command`, each forked to run `entry` on
    its place, after `preload` imported what they run."""
    return asyncio.run(Supervisor(settings, command, processes, entry, preload).run())
