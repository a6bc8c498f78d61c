"""`concord worker` against real processes on a real Redis: a worker process that dies (SIGKILL) or freezes
(SIGSTOP) is replaced by the group's parent and the next job runs; the alive file a liveness probe checks is
kept fresh while the group runs; SIGTERM stops the group cleanly; its processes stop when their parent is
killed. Dramatiq's own `dramatiq workers.main --processes N` shut the whole group down when one process died,
and a document waited minutes until something started a new one."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import REDIS_URL, RUN_ID
from tests.documents_support import make_key, upload
from tests.processes import children, command, free_port, running, start, stop
from tests.waiting import eventually

# From the kill until the next job's effect is seen: the parent's restart pause (0.5-1 s), a new process's
# start (imports, broker) and the job. A bound on the restart happening at all, not a speed check.
NEXT_JOB_BOUND = 60.0

needs_redis = pytest.mark.skipif(
    not REDIS_URL, reason="`concord worker` runs on Redis (CONCORD_TEST_REDIS_URL)"
)


@dataclass
class Group:
    proc: subprocess.Popen[bytes]
    log: Path
    alive: Path
    broker: Any  # a broker on the group's queue namespace, to send it jobs as a relay would
    metrics_port: int

    def workers(self) -> list[int]:
        return children(self.proc.pid)

    async def text(self) -> str:
        return await asyncio.to_thread(self.log.read_text)


async def _ready(group: Group, count: int, exclude: frozenset[int] = frozenset()) -> list[int]:
    """The group's worker processes once `count` of them (none of `exclude`) have said they are ready."""

    async def check() -> list[int] | None:
        if group.proc.poll() is not None:
            raise AssertionError(f"the group exited:\n{await group.text()}")
        text = await group.text()
        ready = [
            pid for pid in group.workers() if pid not in exclude and f"worker process {pid} ready" in text
        ]
        return ready if len(ready) >= count else None

    return await eventually(check, timeout=180, interval=0.2)  # a loaded machine imports slowly


@pytest.fixture
async def group(runtime: Any, tmp_path: Path) -> AsyncIterator[Group]:
    from dramatiq.brokers.redis import RedisBroker

    from workers import actors

    await runtime.relay.stop()  # this test relays to the group's queue itself
    namespace = f"concord-group-{RUN_ID}"  # a queue of its own: the test process's worker never sees it
    metrics_port = free_port()
    env = {
        "CONCORD_QUEUE_NAMESPACE": namespace,
        "CONCORD_WORKER_HEARTBEAT_TIMEOUT_SECONDS": "3",
        "CONCORD_WORKER_FROZEN_AFTER_SECONDS": "6",  # the least allowed: three missed beats
        "CONCORD_LOG_LEVEL": "INFO",
        "CONCORD_HOST": "127.0.0.1",
        "CONCORD_METRICS_PORT": str(metrics_port),
    }
    alive = tmp_path / "alive"
    args = [command("concord"), "worker", "--processes", "1", "--threads", "2"]
    proc = start([*args, "--metrics", "--alive-file", str(alive)], env, tmp_path / "group.log")
    broker = RedisBroker(url=REDIS_URL, namespace=namespace)
    actors.declare(broker, runtime.settings)
    try:
        yield Group(proc, tmp_path / "group.log", alive, broker, metrics_port)
    finally:
        stop(proc, timeout=90)
        for key in broker.client.scan_iter(f"{namespace}*"):
            broker.client.delete(key)


async def _convert_through(group: Group, runtime: Any, docs: Any, key: dict, name: str) -> str:
    """Upload a document and send its conversion to the group; its id."""
    from workers.relay import Relay

    resp = await upload(docs, key, f"# {name}\n\nConverted by the group.\n".encode(), f"{name}.md")
    assert resp.status == 202, await resp.text()
    assert await Relay(runtime.db, group.broker, 1.0).run_once() == 1
    return str((await resp.json())["id"])


async def _converted(docs: Any, key: dict, doc_id: str, timeout: float) -> None:
    async def ready() -> bool:
        resp = await docs.get(f"/api/documents/{doc_id}", headers=key["headers"])
        return (await resp.json())["status"] == "ready"

    await eventually(ready, timeout=timeout, interval=0.1)


def _liveness(alive: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "workers.liveness", str(alive), "20"],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.slow
@needs_redis
async def test_a_killed_worker_process_is_replaced_and_the_next_job_runs(
    group: Group, runtime: Any, docs: Any
) -> None:
    key = await make_key(runtime)
    (first,) = await _ready(group, 1)
    assert (await asyncio.to_thread(_liveness, group.alive)).returncode == 0
    os.kill(first, signal.SIGKILL)
    doc_id = await _convert_through(group, runtime, docs, key, "after-the-kill")
    await _converted(docs, key, doc_id, timeout=NEXT_JOB_BOUND)
    assert group.proc.poll() is None, await group.text()  # the group lives on
    (second,) = await _ready(group, 1, exclude=frozenset({first}))
    assert not running(first)
    assert f"worker process 0 (pid {first}) exited with signal SIGKILL" in await group.text()
    # The group's own metrics process counts the job of the new process (no CONCORD_METRICS_DIR: the
    # group's directory).
    async with aiohttp.ClientSession() as http:
        async with http.get(f"http://127.0.0.1:{group.metrics_port}/metrics") as resp:
            samples = [
                s
                for family in text_string_to_metric_families(await resp.text())
                for s in family.samples
                if s.name == "concord_jobs_total" and s.labels.get("outcome") == "done"
            ]
    assert [(s.labels["actor"], s.value) for s in samples] == [("documents.convert", 1.0)]
    # SIGTERM: the group stops its processes, exits 0 and removes the alive file.
    assert (await asyncio.to_thread(_liveness, group.alive)).returncode == 0
    workers = group.workers()
    assert await asyncio.to_thread(stop, group.proc, signal.SIGTERM, 90) == 0, await group.text()
    assert not [pid for pid in workers if running(pid)]
    assert "Traceback" not in await group.text()
    gone = await asyncio.to_thread(_liveness, group.alive)
    assert gone.returncode == 1
    assert "not alive" in gone.stderr
    assert str(group.alive) in gone.stderr


@pytest.mark.slow
@needs_redis
async def test_a_frozen_worker_process_is_replaced(group: Group, runtime: Any, docs: Any) -> None:
    key = await make_key(runtime)
    (frozen,) = await _ready(group, 1)
    os.kill(frozen, signal.SIGSTOP)  # alive, but nothing in it runs: no job, no beat
    try:
        # CONCORD_WORKER_FROZEN_AFTER_SECONDS (6 here) without a beat, then the parent's next look (every 5 s)
        # kills it.
        await _ready(group, 1, exclude=frozenset({frozen}))
        assert not running(frozen)
        assert f"(pid {frozen}) has not beaten for" in await group.text()
        doc_id = await _convert_through(group, runtime, docs, key, "after-the-freeze")
        await _converted(docs, key, doc_id, timeout=60)
    finally:
        if running(frozen):
            os.kill(frozen, signal.SIGKILL)


@pytest.mark.slow
@needs_redis
async def test_the_processes_stop_when_the_groups_parent_is_killed(group: Group) -> None:
    workers = await _ready(group, 1)
    processes = group.workers()  # the worker and the metrics process
    assert set(workers) < set(processes)
    # The group's directory, where the worker maps its metric samples' files (`<directory>/metrics/…`).
    maps = await asyncio.to_thread(Path(f"/proc/{workers[0]}/maps").read_text)
    (directory,) = {Path(line.split()[-1]).parent.parent for line in maps.splitlines() if "/metrics/" in line}
    group.proc.kill()  # no chance to stop them: they see their parent change
    group.proc.wait()

    async def gone() -> bool:
        return not [pid for pid in processes if running(pid)]

    await eventually(gone, timeout=60, interval=0.2)
    await asyncio.to_thread(shutil.rmtree, directory)  # the killed parent could not remove it


async def test_a_worker_without_redis_is_refused_plainly(tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    proc = start([command("concord"), "worker"], {"CONCORD_REDIS_URL": ""}, log)
    code = await asyncio.to_thread(proc.wait, 60)
    assert code == 1
    assert "CONCORD_REDIS_URL is not set" in log.read_text()


def test_the_liveness_check_reads_the_age_of_the_alive_file(tmp_path: Path) -> None:
    """`python -m workers.liveness PATH [SECONDS]`, as the probe runs it: 0 when fresh, 1 with the reason when
    stale or missing, 2 on a bad command line."""
    alive = tmp_path / "alive"
    missing = _liveness(alive)
    assert missing.returncode == 1
    assert f"not alive: {alive}: No such file or directory" in missing.stderr
    alive.touch()
    assert _liveness(alive).returncode == 0
    old = alive.stat().st_mtime - 300  # the probe above allows 20 s
    os.utime(alive, (old, old))
    stale = _liveness(alive)
    assert stale.returncode == 1
    assert re.search(r"was last touched 30\d s ago \(more than 20 s\)", stale.stderr), stale.stderr
    bad = subprocess.run(
        [sys.executable, "-m", "workers.liveness", str(alive), "soon"], capture_output=True, text=True
    )
    assert bad.returncode == 2
    assert "not a number of seconds: 'soon'" in bad.stderr
