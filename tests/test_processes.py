"""Several web processes behind one port, against real processes: `concord serve --processes 2` (embedded:
in-process broker, whatever the database) and, on Redis, `concord web --processes 2` with a `concord worker`
group. Every request here opens a fresh connection, so the kernel spreads them over both
processes (SO_REUSEPORT); /healthz names the process that answered."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from sqlalchemy import select

from domain.kernel.models import OutboxJob, SweepRun
from infra.machine import GENERATION_FILE
from tests.conftest import REDIS_URL, RUN_ID
from tests.documents_support import make_key
from tests.processes import Server, answering_pids, both_processes_serve, command, start, start_server, stop
from tests.waiting import eventually

FRESH = 24  # reads per check: each on its own connection, so both processes answer some
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
MCP_ACCEPT = {"Accept": "application/json, text/event-stream"}


@pytest.fixture
async def fresh() -> AsyncIterator[aiohttp.ClientSession]:
    """A client that opens a new connection for every request."""
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as http:
        yield http


@pytest.fixture
async def hook(aiohttp_server: Any) -> tuple[str, list[dict[str, Any]]]:
    calls: list[dict[str, Any]] = []

    async def handle(request: web.Request) -> web.Response:
        calls.append(await request.json())
        return web.json_response({"ok": True})

    app = web.Application()
    app.router.add_post("/hook", handle)
    server = await aiohttp_server(app)
    return str(server.make_url("/hook")), calls


async def _registrations_limited_across_processes(server: Server, http: aiohttp.ClientSession) -> dict:
    """CONCORD_RATE_LIMIT_REGISTER (10 a minute) holds for the machine, not for each process."""
    agents = []
    for n in range(10):
        async with http.post(
            f"{server.hub}/api/pact/register", json={"agentName": f"mp-{n}-{RUN_ID}"}
        ) as resp:
            assert resp.status == 201, await resp.text()
            agents.append(await resp.json())
    async with http.post(f"{server.hub}/api/pact/register", json={"agentName": f"mp-x-{RUN_ID}"}) as resp:
        assert resp.status == 429, await resp.text()
        assert int(resp.headers["Retry-After"]) >= 1
    return {"Authorization": f"Bearer {agents[0]['apiKey']}"}


async def _topic_ids(http: aiohttp.ClientSession, hub: str) -> set[str]:
    async with http.get(f"{hub}/api/pact/topics?limit=100") as resp:
        assert resp.status == 200, await resp.text()
        return {t["id"] for t in (await resp.json())["topics"]}


async def _writes_are_read_on_every_process(
    server: Server, http: aiohttp.ClientSession, agent: dict, before: tuple[str, ...] = ()
) -> list[str]:
    """A write, then reads on fresh connections (both processes, each with the list cached before the
    write): every read sees it. `before`: the topics that exist already."""
    created = list(before)
    for n in range(len(created), len(created) + 4):
        for listed in await asyncio.gather(*(_topic_ids(http, server.hub) for _ in range(FRESH))):
            assert listed == set(created)  # warms both processes' caches with the current list
        topic = {"title": f"Topic {n} {RUN_ID}", "content": f"# Answer\n\nText {n}.\n", "tier": "empirical"}
        async with http.post(f"{server.hub}/api/pact/topics", json=topic, headers=agent) as resp:
            assert resp.status == 201, await resp.text()
            created.append((await resp.json())["id"])
        for listed in await asyncio.gather(*(_topic_ids(http, server.hub) for _ in range(FRESH))):
            assert listed == set(created)
    return created


async def _jobs_run_once(
    server: Server, http: aiohttp.ClientSession, agent: dict, topic: str, hook: Any
) -> None:
    """Escalations made on both processes: each notification job is sent and run exactly once."""
    url, calls = hook
    messages = [f"Check {n}" for n in range(8)]
    for message in messages:
        async with http.post(
            f"{server.hub}/api/pact/{topic}/escalate", json={"message": message}, headers=agent
        ) as resp:
            assert resp.status == 201, await resp.text()

    async def delivered() -> bool:
        return len(calls) >= len(messages)

    await eventually(delivered, timeout=60)
    assert sorted(c["escalation"]["message"] for c in calls) == messages


async def _mcp_on_every_process(server: Server, http: aiohttp.ClientSession, runtime: Any) -> None:
    """MCP is served statelessly: after the handshake (no session id is issued), each request of either
    protocol line stands alone, so whichever process gets it answers."""
    key = await make_key(runtime)
    headers = {**MCP_ACCEPT, **key["headers"]}
    async with http.post(f"{server.docs}/mcp", json=INIT, headers=headers) as resp:
        assert resp.status == 200, await resp.text()
        assert "Mcp-Session-Id" not in resp.headers
    legacy = {**headers, "MCP-Protocol-Version": "2025-06-18"}
    modern = {**headers, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
    envelope = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    for n in range(FRESH):
        if n % 2:
            message = {"jsonrpc": "2.0", "id": n, "method": "tools/list", "params": {"_meta": envelope}}
            sent = modern
        else:
            message, sent = {"jsonrpc": "2.0", "id": n, "method": "tools/list"}, legacy
        async with http.post(f"{server.docs}/mcp", json=message, headers=sent) as resp:
            assert resp.status == 200, await resp.text()
            assert "pact_join" in await resp.text()


async def _killed_child_is_replaced(server: Server, http: aiohttp.ClientSession, pids: set[int]) -> None:
    victim = min(pids)
    os.kill(victim, signal.SIGKILL)

    async def replaced() -> bool:
        now = await answering_pids(http, server.hub, tries=50)
        return len(now) == 2 and victim not in now

    await eventually(replaced, timeout=120, interval=0.5)


def _stops_cleanly(server: Server) -> None:
    children = server.children()
    code = stop(server.proc, signal.SIGTERM, timeout=90)
    text = server.log.read_text()
    assert code == 0, text[-4000:]
    for pid in children:  # reaped by the parent before it exited: none left behind
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert "Traceback" not in text, text[-4000:]


async def _shared_directory(child: int) -> Path:
    """The supervisor's shared directory, as the child maps its generation file (infra/machine.py)."""
    maps = await asyncio.to_thread(Path(f"/proc/{child}/maps").read_text)
    (mapped,) = {line.split()[-1] for line in maps.splitlines() if line.endswith(f"/{GENERATION_FILE}")}
    return Path(mapped).parent


async def _outbox_done(runtime: Any) -> bool:
    async with runtime.db.read() as session:
        statuses = (await session.scalars(select(OutboxJob.status))).all()
    return bool(statuses) and set(statuses) == {"done"}


@pytest.mark.slow
async def test_serve_with_two_processes(
    runtime: Any, hook: Any, fresh: aiohttp.ClientSession, tmp_path: Path
):
    env = {
        "CONCORD_REDIS_URL": "",  # the embedded mode: in-process broker, worker and scheduler
        "CONCORD_ESCALATION_WEBHOOK_URL": hook[0],
        "CONCORD_OUTBOUND_TRUSTED_HOSTS": "127.0.0.1",  # the operator's own webhook receiver, on loopback
    }
    server = await start_server([command("concord"), "serve", "--processes", "2"], env, tmp_path, runtime)
    try:
        pids = await both_processes_serve(server, fresh)
        assert len(server.children()) == 3  # and the background process: relay, worker, scheduler
        agent = await _registrations_limited_across_processes(server, fresh)
        topics = await _writes_are_read_on_every_process(server, fresh, agent)
        await _jobs_run_once(server, fresh, agent, topics[0], hook)
        await eventually(lambda: _outbox_done(runtime))
        await _mcp_on_every_process(server, fresh, runtime)
        async with runtime.db.read() as session:  # the scheduler runs in one process, not in the web ones
            holders = set((await session.scalars(select(SweepRun.holder))).all())
        assert len(holders) == 1, holders
        assert int(next(iter(holders)).rsplit(":", 1)[1]) not in pids
        await _killed_child_is_replaced(server, fresh, pids)
        await _writes_are_read_on_every_process(server, fresh, agent, before=tuple(topics))
    finally:
        if server.proc.poll() is None:
            _stops_cleanly(server)


@pytest.mark.slow
async def test_children_stop_when_the_supervisor_dies(runtime: Any, tmp_path: Path):
    env = {"CONCORD_REDIS_URL": ""}
    server = await start_server([command("concord"), "web", "--processes", "2"], env, tmp_path, runtime)
    first = server.children()
    assert len(first) == 3  # two web processes and the background one (in-process broker)

    # A child sent SIGTERM stops alone and is replaced: forked from the supervisor, it must not have passed
    # the signal on to its parent's loop (which would stop everything).
    victim = min(first)
    os.kill(victim, signal.SIGTERM)

    async def replaced() -> bool:
        now = server.children()
        return len(now) == 3 and victim not in now

    await eventually(replaced, timeout=60, interval=0.2)
    assert server.proc.poll() is None
    assert first - {victim} <= server.children()  # the others went on
    children = server.children()
    shared = {await _shared_directory(pid) for pid in children}
    server.proc.kill()  # no chance to stop them: the lifeline pipe closes with it
    server.proc.wait()

    async def gone() -> bool:
        for pid in children:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                continue
            stat = await asyncio.to_thread(Path(f"/proc/{pid}/stat").read_text)
            if stat.rsplit(")", 1)[1].split()[0] != "Z":  # a zombie has exited (its parent is gone)
                return False
        return True

    await eventually(gone, timeout=90, interval=0.2)
    for directory in shared:  # the killed parent could not remove its shared directory
        shutil.rmtree(directory)


@pytest.mark.slow
@pytest.mark.skipif(not REDIS_URL, reason="production mode needs Redis (CONCORD_TEST_REDIS_URL)")
async def test_web_with_two_processes_and_a_worker_process_on_redis(
    runtime: Any, hook: Any, fresh: aiohttp.ClientSession, tmp_path: Path
):
    env = {
        "CONCORD_ESCALATION_WEBHOOK_URL": hook[0],
        "CONCORD_OUTBOUND_TRUSTED_HOSTS": "127.0.0.1",  # the operator's own webhook receiver, on loopback
        # A namespace of their own, so the test process's worker cannot take the jobs.
        "CONCORD_QUEUE_NAMESPACE": f"concord-mp-{RUN_ID}",
    }
    worker_log = tmp_path / "worker.log"
    worker = start([command("concord"), "worker", "--processes", "1", "--threads", "2"], env, worker_log)
    try:  # the worker is stopped even when the server never starts (it would heartbeat in Redis for good)
        server = await start_server([command("concord"), "web", "--processes", "2"], env, tmp_path, runtime)
        try:
            await both_processes_serve(server, fresh)
            assert len(server.children()) == 2  # with Redis, `web` needs no background process
            agent = await _registrations_limited_across_processes(server, fresh)  # counted in Redis
            topics = await _writes_are_read_on_every_process(server, fresh, agent)
            await _jobs_run_once(server, fresh, agent, topics[0], hook)  # relayed by both, run by the worker
            await eventually(lambda: _outbox_done(runtime))
        finally:
            _stops_cleanly(server)
    finally:
        stop(worker)
