"""CPU time of running processes and their descendants, read from /proc (Linux), for per-operation costs."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return found


def _own(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None  # gone
    return (int(fields[11]) + int(fields[12])) / _TICKS  # utime + stime


def cpu_by_pid(pids: list[int]) -> dict[int, float]:
    """User + system CPU seconds of `pids` and every live descendant, by process."""
    found: dict[int, float] = {}
    todo = list(pids)
    while todo:
        pid = todo.pop()
        if pid in found:
            continue
        own = _own(pid)
        if own is not None:
            found[pid] = own
            todo += _children(pid)
    return found


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds of `pids` and every live descendant."""
    return sum(cpu_by_pid(pids).values())


def cpu_since(before: dict[int, float], pids: list[int]) -> float:
    """CPU seconds `pids` (and descendants) spent since `before` (a cpu_by_pid); new processes count whole,
    ended ones not at all (what they spent after `before` is lost)."""
    now = cpu_by_pid(pids)
    return sum(t - before.get(pid, 0.0) for pid, t in now.items())


def machine_idle() -> float:
    """Seconds of idle CPU time of the whole machine since boot, summed over its cores (/proc/stat)."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()
    return (int(fields[4]) + int(fields[5])) / _TICKS  # idle + iowait


def title(pid: int) -> str:
    """A process's command line as it shows in ps (a serving process sets its own title: "concord web: web
    process 0"); empty once it is gone."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def rss_by_pid(pids: list[int]) -> dict[int, int]:
    """Resident memory (KiB) of `pids` and every live descendant, by process."""
    found: dict[int, int] = {}
    for pid in cpu_by_pid(pids):
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue  # gone
        rss = [int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")]
        found[pid] = rss[0] if rss else 0
    return found


def pss_by_pid(pids: list[int]) -> dict[int, int]:
    """Proportional memory (KiB) of `pids` and every live descendant, by process: each shared page counted
    once over its sharers (forked web processes share their parent's imported code, which RSS counts in
    full in every one of them)."""
    found: dict[int, int] = {}
    for pid in cpu_by_pid(pids):
        try:
            rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except OSError:
            continue  # gone, or no smaps_rollup (Linux before 4.14)
        pss = [int(line.split()[1]) for line in rollup.splitlines() if line.startswith("Pss:")]
        found[pid] = pss[0] if pss else 0
    return found


class PeakRss:
    """The highest resident memory of each process of a tree while it runs (sampled every `every` s)."""

    def __init__(self, pids: list[int], every: float = 0.25) -> None:
        self.pids = pids
        self.every = every
        self.peak: dict[int, int] = {}
        self._task: asyncio.Task[None] | None = None

    async def _sample(self) -> None:
        while True:
            for pid, kib in rss_by_pid(self.pids).items():
                self.peak[pid] = max(kib, self.peak.get(pid, 0))
            await asyncio.sleep(self.every)

    async def __aenter__(self) -> PeakRss:
        self._task = asyncio.create_task(self._sample())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
