"""What the processes of one `concord serve` / `concord web` share on their machine.

The supervisor (infra/supervisor.py) makes a directory before it starts its children and hands each child a
`Supervised` description of its place. In that directory:

- `generation`: one 8-byte commit counter per child, in a memory-mapped file. A process bumps its own counter
  after every commit; the machine's generation is all counters together, so a cached read made before any
  commit on the machine no longer matches after it (web/kernel/readcache.py). Each counter has exactly one
  writer, so no cross-process lock is needed; it only grows, so an old generation never comes back.
- `ratelimits.sqlite`: the rate-limit windows of all web processes when there is no Redis
  (web/kernel/limitstore.py).

Processes that are not supervised (a single process, the tests) count their commits in memory instead.
"""

from __future__ import annotations

import mmap
import os
import struct
import threading
from collections.abc import Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

COUNTER = struct.Struct("=Q")
GENERATION_FILE = "generation"
RATE_LIMIT_FILE = "ratelimits.sqlite"

Role = Literal["web", "background"]


class Generation(Protocol):
    def bump(self) -> None: ...

    def current(self) -> Hashable: ...


class LocalGeneration:
    """Commits of this process only (a process that shares its machine with no other Concord process)."""

    def __init__(self) -> None:
        self._count = 0
        self._lock = threading.Lock()  # worker threads may commit too

    def bump(self) -> None:
        with self._lock:
            self._count += 1

    def current(self) -> int:
        return self._count


class SharedGeneration:
    """Commits of every process of the machine: this process writes its own slot, reads them all."""

    def __init__(self, path: Path, slot: int) -> None:
        fd = os.open(path, os.O_RDWR)
        try:
            self._map = mmap.mmap(fd, 0)
        finally:
            os.close(fd)
        if (slot + 1) * COUNTER.size > len(self._map):
            raise ValueError(f"slot {slot} is outside the generation file {path}")
        self._offset = slot * COUNTER.size
        self._lock = threading.Lock()
        self.bump()  # a process that died between a commit and its bump: its successor makes up for it

    def bump(self) -> None:
        with self._lock:
            (count,) = COUNTER.unpack_from(self._map, self._offset)
            # One aligned 8-byte store: readers see the old or the new value, never a mix.
            COUNTER.pack_into(self._map, self._offset, count + 1)

    def current(self) -> bytes:
        return self._map[:]

    def others(self) -> bytes:
        """The counters of the machine's other processes (a change: one of them committed)."""
        return self._map[: self._offset] + self._map[self._offset + COUNTER.size :]

    def close(self) -> None:
        self._map.close()


def create(directory: Path, slots: int) -> None:
    """The supervisor's part: the shared files, before any child starts."""
    (directory / GENERATION_FILE).write_bytes(bytes(COUNTER.size * max(1, slots)))


@dataclass(frozen=True)
class Supervised:
    """A child's place under the supervisor, handed to it when it is forked."""

    role: Role
    slot: int  # its counter in the generation file; a restarted child takes over the slot
    directory: str
    lifeline: int  # read end of a pipe only the supervisor writes to: end of file means it is gone
    doorbell: int | None = None  # embedded broker: web children write to it, the background child reads

    @property
    def generation_path(self) -> Path:
        return Path(self.directory) / GENERATION_FILE

    @property
    def rate_limit_path(self) -> Path:
        return Path(self.directory) / RATE_LIMIT_FILE


def ring(fd: int) -> None:
    """Tell the background process that committed jobs wait (a full pipe already says so)."""
    try:
        os.write(fd, b"\x01")
    except BlockingIOError:
        pass


def drain(fd: int) -> None:
    """Empty the doorbell pipe (non-blocking), so that its next ring wakes the reader again."""
    try:
        while os.read(fd, 4096):
            pass
    except BlockingIOError:
        pass
