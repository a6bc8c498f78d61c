"""Hub write-path benchmark (on demand, never in CI): propose + two approvals → merge, PostgreSQL + Redis.

Starts `concord web` and a `dramatiq workers.main` worker on a fresh PostgreSQL database and Redis queue
namespace, and beside it a bare aiohttp + asyncpg server whose handler does one small transaction per
request (lock a row, insert a row, update the locked row). The same client drives both:

- concord: each client owns one topic (with its author and two reviewers) and loops propose → approve →
  approve (the second approval merges);
- bare: each client owns one row and loops three POSTs, each one transaction on that row.

Both are run with 1 client (one topic) and with `--parallel` clients (that many topics), each row after a
VACUUM (ANALYZE) of the database (autovacuum's work, which a machine with it off would not do); it prints
cycles/s (a cycle is three requests), p50/p99 of a request, the server's CPU per cycle, how often its
PostgreSQL backends waited for a lock (clients share nothing, so a wait would be a global serialisation), and
the ratios the issue asks for: concord against bare in the same configuration, and N topics against one.

On loopback one client's cycle already keeps a core busy, so on a machine of few cores N topics cannot run
much faster than one, whatever the server (the bare handler's own ratio shows the bound). With
`--client-latency-ms`, each client waits about that long before every request, as a client across a network
does: one topic's cycle then waits more than it computes, and N topics in parallel show whether the server
lets unrelated writes overlap. Each wait is drawn uniformly within +-`--client-jitter` of it (0.5 by
default; 0 makes every wait equal): equal waits keep the clients in lockstep, so all N send each request
in the same instant and the last one queues behind the others, which independent clients do not do.

Where the disk flushes fast (tens of microseconds), both servers are bound by the machine's CPU. With
`--fsync-ms N` every session of the bench database waits N ms before it flushes the WAL at a commit
(PostgreSQL's `commit_delay`, with `commit_siblings = 0` so that it always applies): the flushes are serial
and each takes with it every commit written while it waited, as group commit does on a disk whose fsync
takes that long: the fsync-bound disk on which a bare handler's throughput is set by its commits (kinder
than such a disk in one way: a commit written while a flush waits joins it, where a real fsync takes only
what was written before it began). Each row also prints the transactions that wrote (given a transaction
id) and the WAL written, per cycle.

    python -m bench.write_path [--seconds 10] [--parallel 8] [--client-latency-ms 0] [--client-jitter 0.5]
        [--fsync-ms 0] [--topic small|realistic] [--rounds 1]
        [--database-url postgresql://postgres@127.0.0.1:5432/postgres] [--redis-url redis://127.0.0.1:6379/0]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import aiohttp
import asyncpg
import redis

from bench import loops
from bench.procstat import PeakRss, cpu_by_pid, cpu_since, machine_idle, rss_by_pid, title
from tests.processes import command, free_port

T = TypeVar("T")

BARE_SERVER = """
import asyncio, json, sys
import asyncpg
from aiohttp import web

async def setup(app):
    app["pool"] = await asyncpg.create_pool(
        sys.argv[2], min_size=4, max_size=20, server_settings={"application_name": "bare"}
    )
    yield
    await app["pool"].close()

async def handler(request):
    if not request.headers.get("Authorization", "").startswith("Bearer "):
        return web.json_response({"error": "unauthorized"}, status=401)
    body = await request.json()
    row = int(request.match_info["row"])
    async with request.app["pool"].acquire() as conn, conn.transaction():
        version = await conn.fetchval("SELECT version FROM bare_rows WHERE id = $1 FOR UPDATE", row)
        await conn.execute(
            "INSERT INTO bare_events (row_id, version, body) VALUES ($1, $2, $3)",
            row, version, json.dumps(body),
        )
        await conn.execute("UPDATE bare_rows SET version = version + 1 WHERE id = $1", row)
    return web.json_response({"row": row, "version": version + 1, "status": "ok"})

app = web.Application()
app.cleanup_ctx.append(setup)
app.router.add_post("/bare/{row}", handler)
web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), access_log=None, print=None)
"""

CONTENT = "# Answer\n\nThe first answer.\n\n## Evidence\n\nSome evidence.\n\n# Discussion\n\nOpen points.\n"
_DETAILS = " ".join(
    f"Detail {n}: what the evidence for this part shows, and where it stops showing it." for n in range(9)
)
# The topics a cycle writes to (`--topic`): the small one every figure before 2026-11-29 used, and one of a
# realistic size (the small one with four parts of details: about 3 KB, as the cached reads' topic).
TOPICS = {
    "small": CONTENT,
    "realistic": CONTENT + "".join(f"\n## Part {n}\n\n{_DETAILS}\n" for n in range(1, 5)),
}


def add_topic_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--topic",
        choices=sorted(TOPICS),
        default="small",
        help="the topic each cycle writes to: small (85 bytes, as before) or realistic (about 3 KB)",
    )


class ClientLatency:
    """How long a client waits before each request (--client-latency-ms, --client-jitter); seeded, so a
    run draws the same waits in the same order."""

    def __init__(self, seconds: float, jitter: float) -> None:
        self.seconds, self.jitter, self._draws = seconds, jitter, random.Random(13)

    def __bool__(self) -> bool:
        return self.seconds > 0

    def draw(self) -> float:
        return self.seconds * self._draws.uniform(1 - self.jitter, 1 + self.jitter)


@dataclass
class Result:
    cycles: int
    seconds: float
    latencies: list[float]
    server_cpu: float  # CPU seconds of the server's processes during the run
    db_cpu: float  # of its PostgreSQL backends
    client_cpu: float  # of this (client) process
    machine_busy: (
        float  # share of the machine's CPU time not idle during the run (every process, any session)
    )
    lock_wait: float  # share of the server's in-transaction backend samples spent waiting for a lock
    writes: int  # transactions given a transaction id (every one that wrote) in the whole cluster
    wal_bytes: int  # WAL written by the whole cluster

    @property
    def rate(self) -> float:
        return self.cycles / self.seconds

    def per_cycle(self, cpu: float) -> float:
        return cpu / max(self.cycles, 1) * 1000

    def line(self, label: str, baseline: Result | None, single: Result | None) -> str:
        lat = sorted(self.latencies)
        p50 = statistics.median(lat) * 1000
        p99 = lat[max(0, int(len(lat) * 0.99) - 1)] * 1000
        vs_bare = f"{self.rate / baseline.rate:6.0%}" if baseline else "  100%"
        scale = f"{self.rate / single.rate:5.2f}x" if single else "1.00x"
        cycles = max(self.cycles, 1)
        return (
            f"{label:<30}{self.rate:8.1f}{p50:8.1f}{p99:8.1f}"
            f"{self.per_cycle(self.server_cpu):8.1f}{self.per_cycle(self.db_cpu):7.1f}"
            f"{self.per_cycle(self.client_cpu):8.1f}{self.machine_busy:7.0%}{self.lock_wait:7.0%}"
            f"{self.writes / cycles:7.2f}{self.wal_bytes / cycles / 1024:7.1f}"
            f"  {vs_bare}  {scale:>6}"
        )


HEADER = (
    f"{'target':<30}{'cyc/s':>8}{'p50 ms':>8}{'p99 ms':>8}{'server':>8}{'db':>7}{'client':>8}"
    f"{'busy':>7}{'locked':>7}{'writes':>7}{'WAL KiB':>8}  {'vs bare':>6}  {'scale':>6}"
)


def median_round(rows: list[T], rate: Callable[[T], float]) -> T:
    """Of one target's alternating rounds, the one of median rate (the lower middle of an even count)."""
    return sorted(rows, key=rate)[(len(rows) - 1) // 2]


async def backend_pids(url: str, application: str) -> list[int]:
    conn = await asyncpg.connect(url)
    try:
        rows = await conn.fetch(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1",
            application,
        )
    finally:
        await conn.close()
    return [r["pid"] for r in rows]


async def lock_waits(url: str, application: str, stop: asyncio.Event) -> float:
    """Every 20 ms, which of the server's backends are in a transaction and which of those wait for a lock:
    the share that waited. Each client owns its topic (or row), so any wait here is a lock two clients'
    unrelated writes share, the global serialisation the write path must not have."""
    conn = await asyncpg.connect(url, server_settings={"application_name": "bench-sampler"})
    in_transaction = waiting = 0
    try:
        while not stop.is_set():
            for row in await conn.fetch(
                "SELECT state, wait_event_type FROM pg_stat_activity"
                " WHERE datname = current_database() AND application_name = $1",
                application,
            ):
                if row["state"] in ("active", "idle in transaction"):
                    in_transaction += 1
                    waiting += row["wait_event_type"] == "Lock"
            await asyncio.sleep(0.02)
    finally:
        await conn.close()
    return waiting / max(in_transaction, 1)


async def wal_position(url: str) -> tuple[int, int]:
    """The cluster's next transaction id (one is given to every transaction that writes, none to a read)
    and its WAL insert position in bytes: read before and after a row, their differences are the write
    transactions and the WAL of the row (the whole cluster's: measure on a quiet machine)."""
    conn = await asyncpg.connect(url)
    try:
        row = await conn.fetchrow(
            "SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS xid,"
            " pg_current_wal_insert_lsn() - '0/0'::pg_lsn AS wal"
        )
    finally:
        await conn.close()
    assert row is not None  # the statement has no FROM: always one row
    return int(row["xid"]), int(row["wal"])


async def drive(
    clients: int,
    seconds: float,
    cycle: Callable[[aiohttp.ClientSession, int, list[float]], Awaitable[None]],
    pids: list[int],
    db: tuple[str, str],
) -> Result:
    latencies: list[float] = []
    done = 0
    connector = aiohttp.TCPConnector(limit=clients * 2)
    async with aiohttp.ClientSession(connector=connector) as http:
        # warm up each client's connection and the server's statement caches
        for n in range(clients):
            await cycle(http, n, [])
        deadline = time.perf_counter() + seconds

        async def client(n: int) -> None:
            nonlocal done
            while time.perf_counter() < deadline:
                await cycle(http, n, latencies)
                done += 1

        backends = await backend_pids(*db)
        xid0, wal0 = await wal_position(db[0])
        cpu0, db0, own0, idle0 = cpu_by_pid(pids), cpu_by_pid(backends), time.process_time(), machine_idle()
        stop = asyncio.Event()
        sampler = asyncio.create_task(lock_waits(*db, stop))
        began = time.perf_counter()
        await asyncio.gather(*(client(n) for n in range(clients)))
        elapsed = time.perf_counter() - began
        stop.set()
        lock_wait = await sampler
        server, own, idle = cpu_since(cpu0, pids), time.process_time() - own0, machine_idle() - idle0
        db_cpu = cpu_since(db0, sorted(set(backends) | set(await backend_pids(*db))))
        xid1, wal1 = await wal_position(db[0])
    busy = 1 - idle / (elapsed * (os.cpu_count() or 1))
    return Result(done, elapsed, latencies, server, db_cpu, own, busy, lock_wait, xid1 - xid0, wal1 - wal0)


async def timed_post(
    http: aiohttp.ClientSession,
    url: str,
    headers: dict[str, str],
    body: Any,
    latencies: list[float],
    expect: int,
    delay: ClientLatency,
) -> Any:
    if delay:
        await asyncio.sleep(delay.draw())  # the round trip of a client across a network
    start = time.perf_counter()
    async with http.post(url, json=body, headers=headers) as resp:
        data = await resp.json()
        if resp.status != expect:
            raise SystemExit(f"{url} answered {resp.status}: {data}")
    latencies.append(time.perf_counter() - start)
    return data


async def wait_ready(url: str) -> None:
    async with aiohttp.ClientSession() as http:
        for _ in range(1800):  # a loaded machine takes long to import and start everything
            try:
                async with http.get(url) as resp:
                    if resp.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
    raise SystemExit(f"{url} never became ready")


async def seed_topics(hub: str, n: int, content: str = CONTENT) -> list[tuple[str, list[dict[str, str]]]]:
    """`n` open topics of `content`, each with its own author and two reviewers joined."""
    made = []
    async with aiohttp.ClientSession() as http:

        async def post(path: str, body: Any = None, headers: dict[str, str] | None = None) -> Any:
            async with http.post(hub + path, json=body, headers=headers) as resp:
                data = await resp.json()
                if resp.status >= 300:
                    raise SystemExit(f"seeding {path}: {resp.status} {data}")
                return data

        for i in range(n):
            agents = []
            for role in ("author", "reviewer-a", "reviewer-b"):
                reg = await post(
                    "/api/pact/register", {"agentName": f"bench-{i}-{role}-{uuid.uuid4().hex[:6]}"}
                )
                agents.append({"Authorization": f"Bearer {reg['apiKey']}"})
            topic = await post(
                "/api/pact/topics",
                {"title": f"Write bench {i} {uuid.uuid4().hex[:8]}", "content": content, "tier": "empirical"},
                agents[0],
            )
            for reviewer in agents[1:]:
                await post(f"/api/pact/{topic['id']}/vote", {"vote": "approve"}, reviewer)
                await post(f"/api/pact/{topic['id']}/join", None, reviewer)
            made.append((topic["id"], agents))
    return made


def concord_cycle(hub: str, topics: list[tuple[str, list[dict[str, str]]]], delay: ClientLatency) -> Any:
    async def cycle(http: aiohttp.ClientSession, n: int, latencies: list[float]) -> None:
        topic_id, (author, first, second) = topics[n]
        made = await timed_post(
            http,
            f"{hub}/api/pact/{topic_id}/proposals",
            author,
            {"sectionId": "sec:answer", "newContent": f"Answer {uuid.uuid4().hex}", "summary": "Sharper"},
            latencies,
            201,
            delay,
        )
        for reviewer in (first, second):
            await timed_post(
                http,
                f"{hub}/api/pact/{topic_id}/proposals/{made['id']}/approve",
                reviewer,
                None,
                latencies,
                200,
                delay,
            )

    return cycle


def bare_cycle(base: str, delay: ClientLatency) -> Any:
    headers = {"Authorization": "Bearer bare"}

    async def cycle(http: aiohttp.ClientSession, n: int, latencies: list[float]) -> None:
        for step in ("propose", "approve", "approve"):
            await timed_post(
                http,
                f"{base}/bare/{n}",
                headers,
                {"step": step, "note": uuid.uuid4().hex},
                latencies,
                200,
                delay,
            )

    return cycle


def process_names(pids: list[int]) -> dict[int, str]:
    """The processes of `concord web` as they name themselves ("web process 0", "background process"); the
    parent is "supervisor" when it has web processes under it, else "web process" (it serves alone)."""
    titles = {pid: title(pid) for pid in pids}
    supervised = any(": web process" in name for name in titles.values())
    return {
        pid: name.split(": ", 1)[1] if ": " in name else "supervisor" if supervised else "web process"
        for pid, name in titles.items()
    }


def database_url(admin: str, name: str) -> str:
    return admin.rsplit("/", 1)[0] + "/" + name


async def vacuum(url: str) -> None:
    """VACUUM (ANALYZE) the bench database before a row, as autovacuum would have between runs: with it off
    (this machine's PostgreSQL) every row would start on the dead rows and stale statistics of the rows
    before it, and a later round would measure more bloat than an earlier one."""
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("VACUUM (ANALYZE)")
    finally:
        await conn.close()


async def admin_sql(admin: str, sql: str) -> None:
    conn = await asyncpg.connect(admin)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


@dataclass
class Stage:
    """A run's fresh PostgreSQL database (with the bare server's tables), data folder, ports and queue
    namespace, and the environment of the `concord` processes on them."""

    db_name: str
    url: str
    tmp: Path
    hub_port: int
    bare_port: int
    env: dict[str, str]


async def stage(admin: str, redis_url: str, bare_rows: int, commit_delay_us: int = 0) -> Stage:
    """A fresh database beside `admin`'s with rows 0..bare_rows-1 for the bare server, and the settings of
    `concord` processes on it and on its own Redis queue namespace. With `commit_delay_us`, every session
    of that database waits that long before it flushes the WAL at a commit (PostgreSQL's `commit_delay`,
    with `commit_siblings = 0` so that it always applies; the flushes are serial and each takes the
    commits written meanwhile with it, as on a disk whose fsync takes that long)."""
    run = uuid.uuid4().hex[:8]
    db_name = f"concord_bench_{run}"
    await admin_sql(admin, f'CREATE DATABASE "{db_name}"')
    tmp = Path(tempfile.mkdtemp(prefix="concord-bench-"))
    hub_port, docs_port, bare_port = free_port(), free_port(), free_port()
    url = database_url(admin, db_name)
    env = {
        **os.environ,
        "CONCORD_DATA_DIR": str(tmp),
        "CONCORD_DATABASE_URL": url,
        "CONCORD_REDIS_URL": redis_url,
        "CONCORD_QUEUE_NAMESPACE": f"concord-bench-{run}",
        "CONCORD_HUB_PORT": str(hub_port),
        "CONCORD_DOCS_PORT": str(docs_port),
        "CONCORD_LOG_LEVEL": "WARNING",
        "CONCORD_RATE_LIMIT_REGISTER": "100000",
    }
    try:
        if commit_delay_us:
            try:
                await admin_sql(
                    admin,
                    f'ALTER DATABASE "{db_name}" SET commit_delay = {int(commit_delay_us)};'
                    f'ALTER DATABASE "{db_name}" SET commit_siblings = 0',
                )
            except asyncpg.InsufficientPrivilegeError as exc:
                raise SystemExit(f"--fsync-ms sets commit_delay, which takes a superuser: {exc}") from exc
        conn = await asyncpg.connect(url)
        await conn.execute(
            "CREATE TABLE bare_rows (id int PRIMARY KEY, version int NOT NULL DEFAULT 0);"
            "CREATE TABLE bare_events (id bigserial PRIMARY KEY, row_id int NOT NULL, version int,"
            " body jsonb);"
        )
        await conn.executemany("INSERT INTO bare_rows (id) VALUES ($1)", [(n,) for n in range(bare_rows)])
        await conn.close()
    except BaseException:
        await admin_sql(admin, f'DROP DATABASE IF EXISTS "{db_name}" WITH (FORCE)')
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return Stage(db_name, url, tmp, hub_port, bare_port, env)


async def tear_down(admin: str, staged: Stage, procs: list[subprocess.Popen[bytes]], timeout: float) -> None:
    """The run's processes stopped (all asked at once; one that outlives `timeout` is killed), then its
    database dropped and its Redis namespace emptied (the queues, and the heartbeats the worker left)."""
    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
    await admin_sql(admin, f'DROP DATABASE IF EXISTS "{staged.db_name}" WITH (FORCE)')
    forget_namespace(staged.env["CONCORD_REDIS_URL"], staged.env["CONCORD_QUEUE_NAMESPACE"])


def forget_namespace(redis_url: str, namespace: str) -> None:
    """A run's keys in Redis gone: its queues, the heartbeats its workers left, its rate limits' counters."""
    client = redis.Redis.from_url(redis_url)
    try:
        keys = list(client.scan_iter(f"{namespace}*"))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--parallel", type=int, default=8)
    parser.add_argument("--database-url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="measure every row this many times, alternating; print each row's median round",
    )
    parser.add_argument("--profile", action="store_true", help="py-spy record the web process (needs py-spy)")
    parser.add_argument(
        "--client-latency-ms",
        type=float,
        default=0.0,
        help="each client waits about this long before every request, as a client across a network would",
    )
    parser.add_argument(
        "--client-jitter",
        type=float,
        default=0.5,
        help="each wait is drawn uniformly within this fraction of --client-latency-ms (0: all equal)",
    )
    parser.add_argument(
        "--fsync-ms",
        type=float,
        default=0.0,
        help="emulate a disk whose WAL flush takes this long (at most 100): PostgreSQL's commit_delay"
        " on the bench database, for both servers",
    )
    add_topic_option(parser)
    loops.add_option(parser)
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds is at least 1")
    if not 0 <= args.client_jitter <= 1:
        parser.error("--client-jitter is a fraction between 0 and 1")
    if not 0 <= args.fsync_ms <= 100:
        parser.error("--fsync-ms is between 0 and 100 (PostgreSQL's commit_delay allows 100,000 us)")
    delay = ClientLatency(args.client_latency_ms / 1000, args.client_jitter)

    staged = await stage(args.database_url, args.redis_url, args.parallel, round(args.fsync_ms * 1000))
    tmp, url, env = staged.tmp, staged.url, staged.env
    hub_port, bare_port = staged.hub_port, staged.bare_port
    procs: list[subprocess.Popen[bytes]] = []
    try:
        subprocess.run([command("concord"), "migrate"], env=env, check=True, stdout=subprocess.DEVNULL)
        web = subprocess.Popen([command("concord"), "web"], env=env)
        worker = subprocess.Popen(
            [command("dramatiq"), "workers.main", "-p", "1", "-t", "2"], env=env, stderr=subprocess.DEVNULL
        )
        bare = subprocess.Popen(
            [sys.executable, "-c", loops.bare(BARE_SERVER, args.bare_loop), str(bare_port), url]
        )
        procs += [web, worker, bare]
        hub = f"http://127.0.0.1:{hub_port}"
        await wait_ready(f"{hub}/readyz")
        topics = await seed_topics(hub, args.parallel, TOPICS[args.topic])
        at_rest = rss_by_pid([web.pid])  # `concord web` and the web processes it supervises
        names = process_names(list(at_rest))
        peak = PeakRss([web.pid])
        bare_base = f"http://127.0.0.1:{bare_port}"
        await asyncio.sleep(0.5)

        spy = None
        if args.profile:
            spy = subprocess.Popen(
                [
                    command("py-spy"),
                    "record",
                    "-p",
                    str(web.pid),
                    "-o",
                    str(tmp / "web.txt"),
                    "-f",
                    "raw",
                    "-r",
                    "250",
                    "--subprocesses",  # `concord web` supervises its web processes
                    "--gil",  # only samples that hold the GIL: running Python, not waiting
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        runs: dict[str, list[Result]] = {}
        for _ in range(args.rounds):
            for clients in (1, args.parallel):
                await vacuum(url)
                bare_run = await drive(
                    clients, args.seconds, bare_cycle(bare_base, delay), [bare.pid], (url, "bare")
                )
                runs.setdefault(f"bare {clients}", []).append(bare_run)
                await vacuum(url)
                async with peak:
                    concord_run = await drive(
                        clients,
                        args.seconds,
                        concord_cycle(hub, topics, delay),
                        [web.pid, worker.pid],
                        (url, "concord"),
                    )
                runs.setdefault(f"concord {clients}", []).append(concord_run)
        # each row its median round by rate: a drift of the machine during the run falls on every row alike
        results = {name: median_round(rows, lambda r: r.rate) for name, rows in runs.items()}
        if spy is not None:
            spy.send_signal(2)
            spy.wait()
            print(f"profile (collapsed stacks): {tmp / 'web.txt'}")
    finally:
        await tear_down(args.database_url, staged, procs, timeout=20)

    p = args.parallel
    print()
    seconds = f"{args.seconds:.0f} s a row" + (
        f", median of {args.rounds} alternating rounds" if args.rounds > 1 else ""
    )
    print(
        f"write path: 1 cycle = propose + 2 approvals (the second merges), 3 requests; {seconds};"
        f" {args.topic} topics ({len(TOPICS[args.topic])} bytes)"
    )
    if delay:
        spread = f" +-{args.client_jitter:.0%}" if args.client_jitter else " (all equal, in lockstep)"
        print(
            f"each client waits {args.client_latency_ms:g} ms{spread} before every request"
            " (p50/p99 leave it out)"
        )
    if args.fsync_ms:
        print(f"an emulated disk: each WAL flush at a commit waits {args.fsync_ms:g} ms first (commit_delay)")
    print("CPU columns: ms per cycle of the server's processes, its PostgreSQL backends and the client;")
    print("busy: share of the whole machine's CPU in use during the row (other sessions' work included);")
    print("locked: share of the server's in-transaction PostgreSQL backends seen waiting for a lock;")
    print("writes, WAL KiB: transactions that wrote and WAL written, per cycle (the whole cluster's)")
    # What served, as the processes name themselves: a run whose environment asked for fewer web processes
    # than cores (CONCORD_WEB_PROCESSES) says so here.
    serving = sum(1 for name in names.values() if name.startswith("web process"))
    print(f"concord web: {serving} web process(es) on {len(os.sched_getaffinity(0))} cores")
    memory = ", ".join(
        f"{at_rest.get(pid, 0) / 1024:.0f} -> {peak.peak.get(pid, 0) / 1024:.0f} ({names.get(pid) or pid})"
        for pid in sorted(set(at_rest) | set(peak.peak))
    )
    print(f"resident memory of `concord web`'s processes, MiB at rest -> highest under load: {memory}")
    print(HEADER)
    print(results["bare 1"].line("bare aiohttp+asyncpg, 1 row", None, None))
    print(results[f"bare {p}"].line(f"bare aiohttp+asyncpg, {p} rows", None, results["bare 1"]))
    print(results["concord 1"].line("concord web, 1 topic", results["bare 1"], None))
    print(
        results[f"concord {p}"].line(f"concord web, {p} topics", results[f"bare {p}"], results["concord 1"])
    )


if __name__ == "__main__":
    asyncio.run(main())
