"""Helpers to run Concord's own commands as real subprocesses in tests, and an app served as they serve it."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp

from tests.waiting import eventually

BIN = Path(sys.executable).parent


# Ports handed to the servers tests start: from a range below Linux's ephemeral ports (32768-60999), where
# the kernel picks the local port of every outgoing connection and of a bind to port 0, so that a port
# found free is not taken by a connection (or another worker's bind to 0) before the server binds it; each
# test process starts at its own place in the range (by its pid) and moves on from there.
PORTS = range(20000, 32000)
_ports = itertools.count(os.getpid() * 997 % len(PORTS))


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on or is bound to now, for a server a test starts."""
    for _ in range(len(PORTS)):
        port = PORTS[next(_ports) % len(PORTS)]
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {PORTS}")


def command(name: str) -> str:
    path = BIN / name
    if not path.exists():
        raise RuntimeError(f"{name} is not installed next to {sys.executable}; run `make install`")
    return str(path)


def start(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    handle = log.open("wb")
    return subprocess.Popen(args, env={**os.environ, **env}, stdout=handle, stderr=subprocess.STDOUT)


def stop(proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM, timeout: float = 20) -> int:
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            return proc.wait(timeout=5)
    return proc.returncode


async def ready(proc: subprocess.Popen[bytes], log: Path, *bases: str, tries: int = 1800) -> None:
    """Wait until every base URL answers /readyz with 200 (a loaded machine takes long to import and start
    everything); fail with the server's log if it exits first or never gets there."""
    async with aiohttp.ClientSession() as http:
        for base in bases:
            for _ in range(tries):
                if proc.poll() is not None:
                    raise AssertionError(f"server exited early:\n{await asyncio.to_thread(log.read_text)}")
                try:
                    async with http.get(f"{base}/readyz") as resp:
                        if resp.status == 200:
                            break
                except aiohttp.ClientError:
                    pass
                await asyncio.sleep(0.1)
            else:
                raise AssertionError(f"{base} never became ready:\n{await asyncio.to_thread(log.read_text)}")


@contextlib.asynccontextmanager
async def served(app: Any) -> AsyncIterator[int]:
    """`app` on a free loopback port through Concord's own runner, as `concord serve` runs it (aiohttp's test
    server differs: it cancels a handler whose client left, and answers unparseable requests its own way);
    the port."""
    from aiohttp import web

    from web.kernel.server import Runner

    runner = Runner(app, access_log=None)
    await runner.setup()
    port = free_port()
    try:
        await web.TCPSite(runner, "127.0.0.1", port).start()
        yield port
    finally:
        await runner.cleanup()


async def concord(
    *args: str, timeout: float = 120, env: dict[str, str] | None = None
) -> tuple[int, str, str]:
    """`concord ARGS…` in a child process (asynchronously: the app under test keeps running), with this
    run's settings and `env` over them; answers its exit code, stdout and stderr."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "concord_cli",
        *args,
        env={**os.environ, **(env or {})},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=timeout)
    return proc.returncode or 0, out.decode(), err.decode()


def children(pid: int) -> list[int]:
    """The processes any thread of `pid` started that still have it as their parent (none once it is gone).
    Per thread: a process started from a worker thread (the conversions' forkserver) is listed under it."""
    found: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except (FileNotFoundError, ProcessLookupError):
        return found
    for task in tasks:
        try:
            found += [int(child) for child in (task / "children").read_text().split()]
        except (FileNotFoundError, ProcessLookupError):
            continue  # a thread that ended meanwhile
    return found


def descendants(pid: int) -> list[int]:
    """Every process under `pid`, deepest first."""
    found: list[int] = []
    for child in children(pid):
        found += [*descendants(child), child]
    return found


def running(pid: int) -> bool:
    """True while `pid` exists and has not exited (a zombie has: only its parent's wait is missing)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def conversion_children(pid: int) -> list[int]:
    """The document conversions running under `pid`: children of the multiprocessing forkserver that a worker
    process starts for them (domain/documents/sandbox.py)."""
    found: list[int] = []
    for process in descendants(pid):
        try:
            cmdline = Path(f"/proc/{process}/cmdline").read_bytes()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if b"multiprocessing.forkserver" in cmdline:
            found += [child for child in children(process) if child not in found]
    return found


class Server:
    def __init__(self, proc: subprocess.Popen[bytes], log: Path, hub: str, docs: str) -> None:
        self.proc, self.log, self.hub, self.docs = proc, log, hub, docs

    def children(self) -> set[int]:
        path = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children")
        return {int(pid) for pid in path.read_text().split()}


async def start_server(args: list[str], env: dict[str, str], tmp_path: Path, runtime: Any) -> Server:
    """`concord serve` or `web` (`args`) with `env` on free ports, on the suite's database, once both apps
    answer; its log in `tmp_path`. The read cache is kept long, so that a stale read would show."""
    await runtime.relay.stop()  # the test process shares the database: its relay must not take the jobs
    hub_port, docs_port = free_port(), free_port()
    env = {
        **env,
        "CONCORD_HUB_PORT": str(hub_port),
        "CONCORD_DOCS_PORT": str(docs_port),
        "CONCORD_LOG_LEVEL": "INFO",
        # Long enough that a stale entry would outlive the test: only shared invalidation keeps reads fresh.
        "CONCORD_READ_CACHE_SECONDS": "300",
    }
    log = tmp_path / "server.log"
    server = Server(
        start(args, env, log), log, f"http://127.0.0.1:{hub_port}", f"http://127.0.0.1:{docs_port}"
    )
    try:
        await ready(server.proc, log, server.hub, server.docs)
    except BaseException:
        # A server left running would hold the scheduler's leader lock and sweep the next tests' rows.
        stop(server.proc)
        raise
    return server


async def answering_pids(http: aiohttp.ClientSession, base: str, want: int = 2, tries: int = 400) -> set[int]:
    """Web process ids answering /healthz on fresh connections, until `want` distinct ones answered."""
    seen: set[int] = set()
    for _ in range(tries):
        try:
            async with http.get(f"{base}/healthz") as resp:
                seen.add((await resp.json())["pid"])
        except aiohttp.ClientError:
            continue  # a connection that reached a process as it was killed
        if len(seen) >= want:
            break
    return seen


async def both_processes_serve(server: Server, http: aiohttp.ClientSession) -> set[int]:
    """Both web processes answer on both ports (the first to start answers alone for a while)."""

    async def two(base: str) -> set[int]:
        pids = await answering_pids(http, base, tries=50)
        return pids if len(pids) == 2 else set()

    pids: set[int] = await eventually(lambda: two(server.hub), timeout=120, interval=0.2)
    assert pids <= server.children()
    assert await eventually(lambda: two(server.docs), timeout=60, interval=0.2) == pids
    return pids
