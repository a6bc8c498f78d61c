"""CPU-heavy work on large documents off the event loop: parsing a text for its sections, rendering it
as HTML.

markdown-it is pure Python: a 15 MB document takes seconds to parse and more to render, and in a thread it
would still hold the GIL the event loop needs (every request of the process would wait its turn every few
milliseconds). So the work runs in a process pool of its own (one child per process using it: these are
rare, large jobs, and a web process must not take more than its core), started lazily from the
forkserver, with each child replaced after a number of jobs (a parse of a large text leaves a large heap
behind). The text goes to the child through the pool's queue (pickled in the pool's own thread), the
small answer comes back. A child that dies breaks the pool; the next call makes a new one and the job
is tried once more.

Small texts (up to sections.LARGE characters) are handled inline: a pool round trip would cost more.
Two callers waiting for the same text's outline share one job."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import select
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar, cast

from domain.consensus import sections

T = TypeVar("T")
TASKS_PER_CHILD = 20

_pool: ProcessPoolExecutor | None = None
_pool_lock = threading.Lock()
_pending: dict[Any, asyncio.Future[Any]] = {}


def _context() -> Any:
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        # The converters' sandbox starts its children from the same forkserver: keep its preload too.
        ctx.set_forkserver_preload(["domain.documents.sandbox", __name__])
        return ctx
    return multiprocessing.get_context("spawn")


# The child runs at a lower CPU priority than the process it works for: where cores are few, a long parse
# or render must not take CPU time from the requests the web processes answer meanwhile.
CHILD_NICENESS = 10


def _watch_parent(owner: int) -> None:
    """In the child: lower its CPU priority, and end when the process that uses the pool (`owner`) is gone,
    killed outright included. Not by the parent pid: the child's parent is the forkserver, which every
    forkserver child keeps alive (each holds the end of the pipe the forkserver watches for its owner's
    exit)."""
    if hasattr(os, "nice"):
        os.nice(CHILD_NICENESS)
    if not hasattr(os, "pidfd_open"):  # not Linux: the child ends with the pool, or with the machine
        return
    try:
        handle = os.pidfd_open(owner)
    except ProcessLookupError:
        os._exit(0)

    def watch() -> None:
        select.select([handle], [], [])  # readable once the owner has exited
        os._exit(0)

    threading.Thread(target=watch, name="concord-offload-owner", daemon=True).start()


def _executor() -> ProcessPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ProcessPoolExecutor(
                1,
                mp_context=_context(),
                max_tasks_per_child=TASKS_PER_CHILD,
                initializer=_watch_parent,
                initargs=(os.getpid(),),
            )
        return _pool


def _discard(broken: ProcessPoolExecutor) -> None:
    global _pool
    with _pool_lock:
        if _pool is broken:
            _pool = None
    broken.shutdown(wait=False, cancel_futures=True)


async def run(fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` in the pool (both picklable: a module-level function and plain data)."""
    loop = asyncio.get_running_loop()
    for attempt in (1, 2):
        pool = _executor()
        try:
            return await loop.run_in_executor(pool, fn, *args)
        except BrokenProcessPool:
            _discard(pool)
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


async def shared(key: Any, fn: Callable[..., T], *args: Any) -> T:
    """`run(fn, *args)`, once for all callers asking with the same `key` while it runs (callers on one
    event loop: a worker thread's loop has jobs of its own)."""
    full = (asyncio.get_running_loop(), key)
    waiting = _pending.get(full)
    if waiting is None:
        waiting = asyncio.ensure_future(run(fn, *args))
        _pending[full] = waiting
        waiting.add_done_callback(lambda _: _pending.pop(full, None))
    return cast(T, await asyncio.shield(waiting))


async def outline(markdown: str) -> None:
    """Make sure the text's sections are known (sections.known), parsing it in the pool if need be; after
    this, sections.parse/find/tree on the same text cost no parse."""
    if sections.known(markdown):
        return
    shape = await shared(("outline", len(markdown), hash(markdown)), sections.outline, markdown)
    sections.remember(markdown, shape)


def shutdown() -> None:
    """Stop the pool's child (a process about to exit)."""
    global _pool
    with _pool_lock:
        pool, _pool = _pool, None
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=True)
