"""Live events fan-out benchmark (on demand, never in CI): N Server-Sent Events listeners on one topic, spread
over the web processes of `concord web --processes P` (PostgreSQL + Redis; `--sqlite` runs `concord serve
--processes P` on SQLite without Redis), and the delivery latency of every event of a series of merges.

Latency is measured per event and listener: the time its message was read by the client, less the event's
`createdAt` (stamped when the event was appended, a little before its commit, so the figure is an upper
bound of commit-to-delivery). Client and servers share the machine's clock.

The baseline, measured in the same run by the same client processes, is a bare aiohttp server as many
processes sharing a port (SO_REUSEPORT), each subscribed to a Redis channel and handing every message it
gets to each of its listeners' queues, one task per connection writing what its queue holds at once, as
Concord's hub does minus the database, the ordering and the replay. The bench publishes to it a message of
the size of a Concord event for each event of Concord's run, at the same moments (relative to the first),
stamped with the time of publishing; the ratios say what Concord adds to the fan-out itself.

Since an event is stamped when it is appended, inside its writer's transaction, the latency from the stamp
includes the rest of that transaction; the second line measures from the moment the writing client got its
answer (after the commit), a lower bound that is negative when the event reached the listener first. The
commit lies between the two.

RSS of each web process is read before the listeners connect and with all of them connected: the
difference over the listeners a process serves is the memory one listener costs (its connection, request,
queue and task).

The listeners are read by `--clients` processes of this script, so that the reading of N streams (which
costs CPU per message in any client) does not queue behind one core; they share the machine with the
servers, as every benchmark here does.

    python -m bench.sse_fanout [--listeners 1000] [--processes 2] [--merges 20] [--clients 4]
        [--database-url postgresql://postgres@127.0.0.1:5432/postgres] [--redis-url redis://127.0.0.1:6379/0]
        [--sqlite]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import aiohttp
import redis.asyncio

from bench.procstat import _children, cpu_by_pid, cpu_since
from bench.read_path import wait_processes
from bench.write_path import admin_sql, database_url, forget_namespace, wait_ready
from tests.processes import command, free_port

BARE_SERVER = """
import asyncio, sys
import redis.asyncio
from aiohttp import web

queues = set()

async def stream(request):
    queue = asyncio.Queue(maxsize=256)
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await response.prepare(request)
    await response.write(b"retry: 2000\\n\\n")
    queues.add(queue)
    try:
        while True:
            frames = [await queue.get()]
            while not queue.empty():
                frames.append(queue.get_nowait())
            await response.write(b"".join(frames))
    except ConnectionError:
        return response
    finally:
        queues.discard(queue)

async def pump(app):
    client = redis.asyncio.Redis.from_url(sys.argv[2])
    pubsub = client.pubsub(ignore_subscribe_messages=True)
    await pubsub.subscribe(sys.argv[3])

    async def run():
        async for message in pubsub.listen():
            data = message["data"]
            frame = b"id: x\\nevent: bench\\ndata: " + data + b"\\n\\n"
            for queue in list(queues):
                if queue.full():
                    queues.discard(queue)
                else:
                    queue.put_nowait(frame)

    task = asyncio.create_task(run())
    yield
    task.cancel()

app = web.Application()
app.cleanup_ctx.append(pump)
app.router.add_get("/stream", stream)
web.run_app(
    app, host="127.0.0.1", port=int(sys.argv[1]), access_log=None, print=None, reuse_port=True,
    shutdown_timeout=1,
)
"""

CONTENT = "# Answer\n\nThe first answer.\n\n# Discussion\n\nOpen points.\n"


# ---- the listening clients (each in a process of its own) ----


def _created(line: bytes) -> tuple[int, float] | None:
    """(sequence number, createdAt as epoch seconds) of a `data:` line, read without parsing all of it."""
    at = line.find(b'"createdAt":"')
    seq_at = line.find(b'"sequenceNumber":')
    if at < 0 or seq_at < 0:
        return None
    end = line.index(b'"', at + 13)
    stamp = datetime.fromisoformat(line[at + 13 : end].decode()).timestamp()
    seq_end = seq_at + 17
    while line[seq_end : seq_end + 1].isdigit():
        seq_end += 1
    return int(line[seq_at + 17 : seq_end]), stamp


async def _listen(url: str, headers: dict[str, str], count: int, pipe: Connection) -> None:
    received: list[tuple[int, float, float]] = []  # (sequence number, read at, createdAt), epoch seconds
    connected = 0
    all_in = asyncio.Event()
    stop = asyncio.Event()
    connector = aiohttp.TCPConnector(limit=0, force_close=True)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=None)) as http:

        async def one() -> None:
            nonlocal connected
            async with http.get(url, headers=headers) as resp:
                if resp.status != 200:
                    raise SystemExit(f"{url}: {resp.status} {await resp.text()}")
                connected += 1
                if connected == count:
                    all_in.set()
                while not stop.is_set():
                    line = await resp.content.readline()
                    if not line:
                        return
                    if line.startswith(b"data: "):
                        now = time.time()
                        found = _created(line)
                        if found is not None:
                            received.append((found[0], now, found[1]))

        tasks = []
        for n in range(count):
            tasks.append(asyncio.create_task(one()))
            if n % 50 == 49:
                await asyncio.sleep(0.05)  # no thundering herd of connects
        await all_in.wait()
        pipe.send("connected")
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, pipe.recv)  # "stop"
        stop.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    pipe.send(received)


def client_main(url: str, headers: dict[str, str], count: int, pipe: Connection) -> None:
    asyncio.run(_listen(url, headers, count, pipe))


class Listeners:
    """N listeners of `url`, read by `clients` processes."""

    def __init__(self, url: str, headers: dict[str, str], n: int, clients: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.pipes: list[Connection] = []
        self.procs = []
        for i in range(clients):
            share = n // clients + (1 if i < n % clients else 0)
            mine, theirs = context.Pipe()
            proc = context.Process(target=client_main, args=(url, headers, share, theirs), daemon=True)
            proc.start()
            self.pipes.append(mine)
            self.procs.append(proc)

    async def connected(self) -> None:
        for pipe in self.pipes:
            answer = await asyncio.to_thread(pipe.recv)
            assert answer == "connected", answer

    async def results(self) -> list[tuple[int, float, float]]:
        found: list[tuple[int, float, float]] = []
        for pipe in self.pipes:
            pipe.send("stop")
        for pipe in self.pipes:
            found += await asyncio.to_thread(pipe.recv)
        for proc in self.procs:
            proc.join(timeout=10)
        return found


# ---- measuring ----


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def sockets(pid: int) -> int:
    count = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            count += os.readlink(fd).startswith("socket:")
        except OSError:
            pass
    return count


@dataclass
class Row:
    label: str
    deliveries: int
    expected: int
    latencies: list[float]  # from the event's stamp (Concord: its append, before the commit)
    rss: list[tuple[int, int, int]]  # per web process: (RSS idle KiB, RSS with listeners KiB, listeners)
    cpu: float  # CPU seconds of the web processes while the events were delivered
    answered: list[float]  # Concord: from the writer's answer (after the commit)

    def pct(self, q: float, values: list[float] | None = None) -> float:
        ordered = sorted(self.latencies if values is None else values)
        return ordered[min(len(ordered) - 1, int(len(ordered) * q))] * 1000 if ordered else float("nan")

    def per_listener_kib(self) -> float:
        grown = sum(after - before for before, after, _ in self.rss)
        listeners = sum(n for _, _, n in self.rss)
        return grown / max(listeners, 1)


HEADER = (
    f"{'target':<30}{'delivered':>10}{'missing':>8}{'p50 ms':>8}{'p90 ms':>8}{'p99 ms':>8}{'max ms':>8}"
    f"{'<100 ms':>8}{'CPU us/dlv':>11}{'KiB/lsn':>9}  RSS per web process MiB: idle -> listening (sockets)"
)


def _figures(label: str, row: Row, values: list[float]) -> str:
    under = sum(1 for x in values if x < 0.1) / max(len(values), 1)
    return (
        f"{label:<30}{row.deliveries:>10}{row.expected - row.deliveries:>8}{row.pct(0.5, values):>8.1f}"
        f"{row.pct(0.9, values):>8.1f}{row.pct(0.99, values):>8.1f}{max(values, default=0) * 1000:>8.1f}"
        f"{under:>8.1%}"
    )


def line(row: Row, baseline: Row | None) -> str:
    rss = ", ".join(f"{b // 1024}->{a // 1024} ({n})" for b, a, n in row.rss)
    cpu = row.cpu / max(row.deliveries, 1) * 1e6
    text = f"{_figures(row.label, row, row.latencies)}{cpu:>11.1f}{row.per_listener_kib():>9.1f}  {rss}"
    if row.answered:
        text += "\n" + _figures("  from the writer's answer", row, row.answered)
    if baseline is not None:
        base_cpu = baseline.cpu / max(baseline.deliveries, 1)
        text += (
            f"\n  vs bare: p50 {row.pct(0.5) / baseline.pct(0.5):.2f}x,"
            f" p99 {row.pct(0.99) / baseline.pct(0.99):.2f}x"
            f" (from the writer's answer: p50 {row.pct(0.5, row.answered) / baseline.pct(0.5):.2f}x,"
            f" p99 {row.pct(0.99, row.answered) / baseline.pct(0.99):.2f}x); CPU a delivery "
            f"{(row.cpu / max(row.deliveries, 1)) / max(base_cpu, 1e-9):.2f}x; memory a listener "
            f"{row.per_listener_kib() / max(baseline.per_listener_kib(), 1e-9):.2f}x"
        )
    return text


# ---- the two targets ----


async def _post(http: aiohttp.ClientSession, url: str, body: Any, headers: dict[str, str]) -> Any:
    async with http.post(url, json=body, headers=headers) as resp:
        data = await resp.json()
        if resp.status >= 300:
            raise SystemExit(f"{url}: {resp.status} {data}")
        return data


async def seed_topic(hub: str) -> tuple[str, list[dict[str, str]], list[str]]:
    async with aiohttp.ClientSession() as http:
        agents, ids = [], []
        for role in ("author", "reviewer-a", "reviewer-b"):
            name = f"fan-{role}-{uuid.uuid4().hex[:6]}"
            reg = await _post(http, f"{hub}/api/pact/register", {"agentName": name}, {})
            agents.append({"Authorization": f"Bearer {reg['apiKey']}"})
            ids.append(reg["agentId"])
        body = {"title": f"Fan-out {uuid.uuid4().hex[:8]}", "content": CONTENT, "tier": "empirical"}
        topic = await _post(http, f"{hub}/api/pact/topics", body, agents[0])
        for reviewer in agents[1:]:
            await _post(http, f"{hub}/api/pact/{topic['id']}/vote", {"vote": "approve"}, reviewer)
            await _post(http, f"{hub}/api/pact/{topic['id']}/join", None, reviewer)
        return topic["id"], agents, ids


async def events_after(hub: str, topic_id: str, after: int) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    async with aiohttp.ClientSession() as http:
        cursor = str(after)
        while True:
            params = {"after": cursor, "limit": "200"}
            async with http.get(f"{hub}/api/pact/{topic_id}/events", params=params) as resp:
                page = await resp.json()
            found += page["events"]
            if not page["hasMore"]:
                return found
            cursor = page["nextCursor"]


async def last_seq(hub: str, topic_id: str) -> int:
    async with aiohttp.ClientSession() as http:
        after, seq = "0", 0
        while True:
            async with http.get(
                f"{hub}/api/pact/{topic_id}/events", params={"after": after, "limit": "200"}
            ) as r:
                page = await r.json()
            if page["events"]:
                seq = page["events"][-1]["sequenceNumber"]
            if not page["hasMore"]:
                return int(seq)
            after = page["nextCursor"]


async def run_concord(
    hub: str, web_pids: list[int], n: int, clients: int, merges: int, gap: float
) -> tuple[Row, list[float]]:
    topic_id, agents, agent_ids = await seed_topic(hub)
    idle = {pid: (rss_kib(pid), sockets(pid)) for pid in web_pids}
    listeners = Listeners(f"{hub}/api/pact/{topic_id}/events/stream", {}, n, clients)
    await listeners.connected()
    await asyncio.sleep(2)  # the replays are done; memory settles
    loaded = {pid: (rss_kib(pid), sockets(pid)) for pid in web_pids}
    start = await last_seq(hub, topic_id)
    answered: dict[tuple[str, str], float] = {}  # (proposal id, who) -> when the writer got its answer
    cpu_before = cpu_by_pid(web_pids)
    async with aiohttp.ClientSession() as http:
        for i in range(merges):
            body = {
                "sectionId": "sec:answer",
                "newContent": f"Answer {i} {uuid.uuid4().hex}",
                "summary": "Sharper",
            }
            made = await _post(http, f"{hub}/api/pact/{topic_id}/proposals", body, agents[0])
            answered[(made["id"], agent_ids[0])] = time.time()
            for reviewer, reviewer_id in zip(agents[1:], agent_ids[1:], strict=True):
                await _post(http, f"{hub}/api/pact/{topic_id}/proposals/{made['id']}/approve", None, reviewer)
                answered[(made["id"], reviewer_id)] = time.time()
            await asyncio.sleep(gap)
    await asyncio.sleep(3)  # the last deliveries
    cpu = cpu_since(cpu_before, web_pids)
    written = await events_after(hub, topic_id, start)
    end = start + len(written)
    # Each event was written by the request of its actor on its proposal; the merge, by the last approval;
    # an event about something else (an obligation, the topic's standing) by the request of the event before.
    when: dict[int, float] = {}
    previous = 0.0
    for event in written:
        key = (event["correlationId"], event["agentId"])
        merged = (event["correlationId"], agent_ids[2])
        previous = answered.get(key, answered.get(merged, previous))
        when[event["sequenceNumber"]] = previous
    received = [(seq, at, created) for seq, at, created in await listeners.results() if seq > start]
    rss = [(idle[p][0], loaded[p][0], loaded[p][1] - idle[p][1]) for p in web_pids]
    row = Row(
        f"concord ({len(web_pids)} processes)",
        len(received),
        (end - start) * n,
        [at - created for _, at, created in received],
        rss,
        cpu,
        [at - when[seq] for seq, at, _ in received],
    )
    stamps = [datetime.fromisoformat(e["createdAt"]).timestamp() for e in written]
    return row, [at - stamps[0] for at in stamps]


async def run_bare(redis_url: str, processes: int, n: int, clients: int, timeline: list[float]) -> Row:
    """The bare fan-out, sent as many messages as Concord's run had events, each at its event's moment
    (relative to the first), so that both see the same bursts."""
    port = free_port()
    channel = f"bench-fanout-{uuid.uuid4().hex[:8]}"
    procs = [
        subprocess.Popen([sys.executable, "-c", BARE_SERVER, str(port), redis_url, channel])
        for _ in range(processes)
    ]
    try:
        url = f"http://127.0.0.1:{port}/stream"
        for _ in range(300):
            if all(sockets(p.pid) for p in procs):
                break
            await asyncio.sleep(0.1)
        await asyncio.sleep(1.5)
        idle = {p.pid: (rss_kib(p.pid), sockets(p.pid)) for p in procs}
        listeners = Listeners(url, {}, n, clients)
        await listeners.connected()
        await asyncio.sleep(2)
        loaded = {p.pid: (rss_kib(p.pid), sockets(p.pid)) for p in procs}
        pids = [p.pid for p in procs]
        cpu_before = cpu_by_pid(pids)
        client = redis.asyncio.Redis.from_url(redis_url)
        padding = "x" * 700  # about the size of one of Concord's event records
        began = time.time()
        for seq, offset in enumerate(timeline, start=1):
            await asyncio.sleep(max(0.0, began + offset - time.time()))
            stamp = datetime.now(UTC).isoformat()
            body = json.dumps(
                {"sequenceNumber": seq, "createdAt": stamp, "data": padding}, separators=(",", ":")
            )
            await client.publish(channel, body)
        await client.aclose()
        await asyncio.sleep(3)
        cpu = cpu_since(cpu_before, pids)
        received = await listeners.results()
        rss = [(idle[p.pid][0], loaded[p.pid][0], loaded[p.pid][1] - idle[p.pid][1]) for p in procs]
        latencies = [at - created for _, at, created in received]
        expected = len(timeline) * n
        return Row(f"bare ({processes} processes)", len(received), expected, latencies, rss, cpu, [])
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--listeners", type=int, default=1000)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--merges", type=int, default=20)
    parser.add_argument("--gap", type=float, default=0.25, help="seconds between merges")
    parser.add_argument("--clients", type=int, default=4, help="client processes reading the listeners")
    parser.add_argument("--database-url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--sqlite", action="store_true", help="concord serve on SQLite, without Redis")
    args = parser.parse_args()

    run = uuid.uuid4().hex[:8]
    tmp = Path(tempfile.mkdtemp(prefix="concord-bench-"))
    hub_port, docs_port = free_port(), free_port()
    env = {
        **os.environ,
        "CONCORD_DATA_DIR": str(tmp),
        "CONCORD_HUB_PORT": str(hub_port),
        "CONCORD_DOCS_PORT": str(docs_port),
        "CONCORD_LOG_LEVEL": "WARNING",
        "CONCORD_RATE_LIMIT_REGISTER": "100000",
        # Every listener comes from this machine's address without a key: one client to the per-client bound.
        "CONCORD_SSE_MAX_PER_CLIENT": str(args.listeners),
        "CONCORD_QUEUE_NAMESPACE": f"concord-bench-{run}",
    }
    db_name = f"concord_bench_{run}"
    if args.sqlite:
        env["CONCORD_REDIS_URL"] = ""
        env.pop("CONCORD_DATABASE_URL", None)
        argv = [command("concord"), "serve", "--processes", str(args.processes)]
    else:
        await admin_sql(args.database_url, f'CREATE DATABASE "{db_name}"')
        env["CONCORD_DATABASE_URL"] = database_url(args.database_url, db_name)
        env["CONCORD_REDIS_URL"] = args.redis_url
        argv = [command("concord"), "web", "--processes", str(args.processes)]
    subprocess.run([command("concord"), "migrate"], env=env, check=True, stdout=subprocess.DEVNULL)
    server = subprocess.Popen(argv, env=env)
    try:
        hub = f"http://127.0.0.1:{hub_port}"
        await wait_ready(f"{hub}/readyz")
        await wait_processes(f"{hub}/healthz", args.processes)
        web_pids = sorted(_children(server.pid)) if args.processes > 1 else [server.pid]
        if args.sqlite and args.processes > 1:  # serve's background process serves no listener
            web_pids = [p for p in web_pids if sockets(p) > 2][: args.processes]
        concord_row, timeline = await run_concord(
            hub, web_pids, args.listeners, args.clients, args.merges, args.gap
        )
    finally:
        server.terminate()
        server.wait(timeout=90)
        if not args.sqlite:
            await admin_sql(args.database_url, f'DROP DATABASE IF EXISTS "{db_name}"')
            forget_namespace(args.redis_url, env["CONCORD_QUEUE_NAMESPACE"])
    bare_row = await run_bare(args.redis_url, args.processes, args.listeners, args.clients, timeline)
    events = len(timeline)
    mode = "SQLite, no Redis" if args.sqlite else "PostgreSQL + Redis"
    print(
        f"\n{args.listeners} listeners on one topic over {args.processes} web processes ({mode}); "
        f"{args.merges} merges, {events} events, each to every listener; read by "
        f"{args.clients} client processes"
    )
    print(HEADER)
    print(line(bare_row, None))
    print(line(concord_row, bare_row))


if __name__ == "__main__":
    asyncio.run(main())
