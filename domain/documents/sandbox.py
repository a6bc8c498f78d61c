"""Each document conversion in a child process of its own, with memory and CPU-time limits.

The calling thread starts a child (from a forkserver whose converters are already imported; `spawn`
where the platform has no forkserver), which sets its limits (`resource.setrlimit`: address space,
CPU time, no core file), converts the upload from its file and sends back the Markdown or a reason on a
pipe, then exits. A conversion that runs out of memory or CPU time therefore ends that child only: never
the worker, never another conversion, and the worker's memory is back where it was once the child is
gone. A child that neither answers nor exits within the wall-clock bound is killed, and one whose worker
process dies (an out-of-memory kill, `kill -9`) dies with it (`_end_with_worker`).

Every reason in an `Outcome` is a plain sentence for the document's owner; what went wrong inside a
converter (an exception's text) is only in `detail`, for the log."""

from __future__ import annotations

import ctypes
import multiprocessing
import resource
import select
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from domain.documents.errors import ConversionError

MB = 1024 * 1024
NESTED = "the document is nested too deeply to convert"
KILLED = "conversion was stopped by the system: it needed more memory or CPU time than the server could give"
CRASHED = "the file could not be converted: it is damaged or uses something the converter does not support"


@dataclass(frozen=True)
class Limits:
    memory_mb: int
    cpu_seconds: int

    @property
    def wall_seconds(self) -> float:
        """How long a child may take in all (waiting for a core included) before it is killed; with the
        default 120 s of CPU, within Dramatiq's 10-minute time limit of a job."""
        return self.cpu_seconds * 4 + 30

    def memory_reason(self) -> str:
        return f"conversion exceeded the memory limit of {self.memory_mb} MB"

    def cpu_reason(self) -> str:
        unit = "second" if self.cpu_seconds == 1 else "seconds"
        return f"conversion exceeded the CPU time limit of {self.cpu_seconds} {unit}"

    def wall_reason(self) -> str:
        return f"conversion took longer than {self.wall_seconds:g} seconds and was stopped"


@dataclass(frozen=True)
class Outcome:
    markdown: str | None
    error: str | None
    elapsed_ms: int
    detail: str | None = None  # for the log only, never shown to a client
    source_map: dict[str, Any] | None = None  # a DOCX's sections → original blocks (convert_docx)


def _context() -> Any:
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        # Imported once in the forkserver, so each child starts with the converters loaded.
        ctx.set_forkserver_preload([__name__, "domain.documents.convert"])
        return ctx
    return multiprocessing.get_context("spawn")


PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _end_with_worker(conn: Connection) -> bool:
    """Have the kernel SIGKILL this child when its parent ends (Linux; elsewhere nothing); False when the
    worker is already gone, so that the child ends at once.

    The parent is the forkserver, which ends as soon as the worker process that started it is gone (it waits
    on a pipe only that process holds open), so a worker's death ends the forkserver and then the child.
    PR_SET_PDEATHSIG follows the *thread* that forked, not the process: the forkserver forks on its only
    thread; with `spawn` the parent is the worker thread in `run`, which waits for the child and outlives it.
    Without this, the child of a killed worker went on converting, reparented to PID 1, until its CPU limit.

    The worker may have died before the kernel was asked: only the worker reads the answer pipe, so a pipe
    without a reader (POLLERR on its write end) means it is gone."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    poller = select.poll()
    poller.register(conn.fileno(), 0)  # no events asked for: only POLLERR and POLLHUP are reported
    return not poller.poll(0)


def _set_limits(memory_bytes: int, cpu_seconds: int) -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    _, cpu_hard = resource.getrlimit(resource.RLIMIT_CPU)
    # At the soft limit the kernel sends SIGXCPU (which ends the child); the hard one is a backstop.
    hard = cpu_seconds + 2 if cpu_hard == resource.RLIM_INFINITY else min(cpu_hard, cpu_seconds + 2)
    resource.setrlimit(resource.RLIMIT_CPU, (min(cpu_seconds, hard), hard))
    _, as_hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = memory_bytes if as_hard == resource.RLIM_INFINITY else min(as_hard, memory_bytes)
    resource.setrlimit(resource.RLIMIT_AS, (limit, as_hard))


def _convert(to_result: Callable[[str, Path], Any], kind: str, path: str) -> tuple[str, Any]:
    """("ok", (markdown, source map)), ("failed", reason), ("memory", ""), ("missing", "") or
    ("crashed", what)."""
    try:
        return "ok", to_result(kind, Path(path))
    except ConversionError as exc:
        return "failed", exc.reason
    except MemoryError:
        return "memory", ""
    except RecursionError:
        return "failed", NESTED
    except FileNotFoundError:
        return "missing", ""
    except Exception as exc:
        return "crashed", f"{type(exc).__name__}: {exc}"[:2000]


def _child(conn: Connection, kind: str, path: str, memory_bytes: int, cpu_seconds: int) -> None:
    if not _end_with_worker(conn):
        return
    # Deferred to the child (start-up cost: pypdf, python-docx and BeautifulSoup never load in the worker or
    # web process that imports this module); the forkserver preloads them, and they load before the limits.
    from domain.documents import convert

    _set_limits(memory_bytes, cpu_seconds)
    answer = _convert(convert.file_to_result, kind, path)
    try:
        conn.send(answer)
    except MemoryError:  # the Markdown itself did not fit in what is left to pickle it
        del answer
        conn.send(("memory", ""))
    conn.close()


def run(kind: str, path: Path, limits: Limits) -> Outcome:
    """Convert the file at `path` in a child process within `limits` (blocking: call it from a thread).

    Raises FileNotFoundError when the file is gone (the job is retried); every other problem is an
    Outcome with a plain reason."""
    if not path.is_file():
        raise FileNotFoundError(str(path))
    ctx = _context()
    started = time.perf_counter()
    receiver, sender = ctx.Pipe(duplex=False)
    child = ctx.Process(
        target=_child,
        args=(sender, kind, str(path), limits.memory_mb * MB, limits.cpu_seconds),
        name="concord-convert",
        daemon=True,
    )
    answer: tuple[str, Any] | None = None
    timed_out = False
    try:
        child.start()
    finally:
        sender.close()  # only the child writes; its end closing is how a dead child shows
    try:
        if receiver.poll(limits.wall_seconds):
            try:
                answer = receiver.recv()
            except (EOFError, OSError):
                answer = None  # it died without answering
        else:
            timed_out = True
    finally:
        receiver.close()
        child.join(5 if answer is not None else 0.5)
        if child.exitcode is None:
            child.kill()
            child.join()
        exitcode = child.exitcode
        child.close()
    elapsed = int((time.perf_counter() - started) * 1000)
    if answer is not None:
        status, value = answer
        if status == "ok":
            markdown, source_map = value
            return Outcome(markdown, None, elapsed, source_map=source_map)
        if status == "failed":
            return Outcome(None, value, elapsed)
        if status == "memory":
            return Outcome(None, limits.memory_reason(), elapsed)
        if status == "missing":
            raise FileNotFoundError(str(path))
        return Outcome(None, CRASHED, elapsed, detail=value)
    if timed_out:
        return Outcome(None, limits.wall_reason(), elapsed)
    if exitcode == -signal.SIGXCPU:  # sent by the kernel at the soft CPU limit
        return Outcome(None, limits.cpu_reason(), elapsed, detail="converter ended by SIGXCPU")
    if exitcode == -signal.SIGKILL:  # the hard CPU limit, or the kernel short of memory
        return Outcome(None, KILLED, elapsed, detail="converter ended by SIGKILL")
    return Outcome(None, CRASHED, elapsed, detail=f"converter exited with {exitcode} without answering")
