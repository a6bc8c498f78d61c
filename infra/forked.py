"""Children a supervisor forks from itself, after importing what they run (as `gunicorn --preload` does).

A child started as a new interpreter imports the whole application again (1.5 s of CPU and 140 MB each on a
2-core machine, 2026-11-28); a forked one starts from its parent's imported modules, shares their memory
until it writes to it, and is serving in a fraction of that. The parent stays single-threaded (no executor,
no child-watcher threads), so that a fork copies no lock another thread holds.

In the child, before it runs anything: the parent's signal handlers and asyncio's wakeup descriptor are let
go (a signal to the child must not wake the parent's loop), SIGINT is ignored (a terminal's Ctrl-C reaches
the whole process group; the parent decides), the descriptors only the parent may hold are closed, and the
process takes a title of its own (`ps` shows `concord serve: web process 0`). It never returns into the
parent's code: its entry's result is its exit status.

The parent learns of a child's end from SIGCHLD, on its event loop (`Forked.wait`).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import gc
import os
import signal
import sys
import traceback
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from setproctitle import setproctitle

from domain.kernel.settings import Settings
from infra import metrics_dir

# Blocked across the fork, so that none reaches the child before its handlers are reset.
_BLOCKED = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGCHLD}
_RESET = (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD)


class Forked:
    """A forked child, as the parent sees it: the parts of `asyncio.subprocess.Process` a supervisor uses."""

    def __init__(self, pid: int, ended: asyncio.Future[int]) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._ended = ended

    async def wait(self) -> int:
        code = await asyncio.shield(self._ended)
        self.returncode = code
        return code

    def send_signal(self, sig: int) -> None:
        if self.returncode is None and not self._ended.done():  # a reaped pid may be another process's
            os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class Forker:
    """Forks children on the running loop and reaps them on SIGCHLD. One per process; `close` when done."""

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._running: dict[int, asyncio.Future[int]] = {}
        self._loop.add_signal_handler(signal.SIGCHLD, self._reap)

    def start(self, entry: Callable[[], int], *, title: str, close: Iterable[int] = ()) -> Forked:
        """Fork; the child closes `close`, takes `title`, runs `entry` and exits with its result."""
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, _BLOCKED)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(entry, title, tuple(close), previous)  # never returns
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        ended: asyncio.Future[int] = self._loop.create_future()
        self._running[pid] = ended
        self._reap()  # it may have ended already, before its SIGCHLD could be handled
        return Forked(pid, ended)

    def _reap(self) -> None:
        for pid, ended in list(self._running.items()):
            try:
                done, status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere: its status is lost
                done, status = pid, 255 << 8
            if done == pid:
                del self._running[pid]
                if not ended.done():
                    ended.set_result(os.waitstatus_to_exitcode(status))

    def close(self) -> None:
        self._loop.remove_signal_handler(signal.SIGCHLD)


@contextlib.contextmanager
def forking(settings: Settings, directory: Path, preload: Callable[[], object]) -> Iterator[Forker]:
    """A Forker for a parent whose children share `directory`: their metric samples chosen there first
    (prometheus_client fixes its mode when `preload` imports it), what they run imported, and the collector's
    view of it frozen, so that the pages the children share stay shared."""
    metrics_dir.configure(settings, str(directory))
    preload()
    gc.collect()
    gc.freeze()
    forker = Forker()
    try:
        yield forker
    finally:
        forker.close()


def _child(entry: Callable[[], int], title: str, close: tuple[int, ...], mask: Iterable[int]) -> None:
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        for sig in _RESET:
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        asyncio.events._set_running_loop(None)  # the parent's loop, copied mid-run: never resumed here
        asyncio.set_event_loop(None)
        for fd in close:
            with contextlib.suppress(OSError):
                os.close(fd)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        setproctitle(title)
        code = entry()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            atexit._run_exitfuncs()  # what the child registered (a metrics directory's live gauges forgotten)
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)
