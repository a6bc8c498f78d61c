"""Hub read-path benchmark (run on demand: `make bench`; never part of the test suite).

Starts `concord serve --processes N` on a temporary data directory and a bare aiohttp server (as many
processes, sharing its port the same way) that returns JSON bodies of the same sizes (one as long as the
topic content, one as long as the topic list), then drives the same concurrent load on loopback against
each, in the same run, and prints requests/s, p50 and p99 for every target and its ratio to the bare handler
answering as many bytes. The load comes from wrk when it is installed (C, one thread by
default: it is not the bottleneck, but it shares the machine's cores with the servers), else from an aiohttp
client in this process, which saturates a core of its own long before the servers do.

Beside the rates it prints the CPU each request cost the server's processes (and, on PostgreSQL, the
database backends serving them): on a machine shared with other work the rates move with the load, the CPU
per request much less, so compare those columns between runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import aiohttp

from bench import loops
from bench.procstat import PeakRss, cpu_by_pid, cpu_since, pss_by_pid, rss_by_pid
from bench.write_path import admin_sql, backend_pids, median_round
from domain.kernel.settings import get_settings
from tests.processes import command, free_port

# One body per file given, each at /bare/<n> (a literal path, as aiohttp matches them fastest).
BARE_SERVER = """
import sys
from aiohttp import web
app = web.Application()
for n, path in enumerate(sys.argv[2:]):
    body = open(path, "rb").read()
    async def handler(request, body=body):
        return web.Response(body=body, content_type="application/json")
    app.router.add_get(f"/bare/{n}", handler)
web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), access_log=None, print=None, reuse_port=True)
"""
# With --database-url: bare handlers that read from PostgreSQL what Concord reads, the database path without
# Concord's layers: the topic's content (one pooled asyncpg query), and the topic list with the statements
# Concord runs for it (the count, the page with its two correlated counts, the page's dependencies), in one
# read-only transaction as Concord's read is.
BARE_DB_SERVER = """
import json, sys
import asyncpg
from aiohttp import web
LISTED = (
    "SELECT id, title, title_key, version, tier, status, assumptions, canonical_claim, jurisdiction,"
    " authority, source_ref, effective_date, expiry_date, creator_id, consensus_ratio, consensus_voters,"
    " consensus_since, last_verified_at, created_at, updated_at,"
    " (SELECT count(*) FROM topic_participants p WHERE p.topic_id = topics.id AND p.left_at IS NULL)"
    " AS participants,"
    " (SELECT count(*) FROM proposals r WHERE r.resource_type = 'topic' AND r.resource_id = topics.id)"
    " AS proposals"
    " FROM topics ORDER BY created_at DESC, id DESC LIMIT $1 OFFSET $2"
)
DEPENDENCIES = (
    "SELECT topic_id, depends_on_id FROM topic_dependencies WHERE topic_id = ANY($1)"
    " ORDER BY created_at, depends_on_id"
)
# The list as Concord reads it on PostgreSQL since 2026-11-27: one statement, the total and each topic's
# dependencies riding on the page.
WHOLE_PAGE = LISTED.replace(
    " AS proposals",
    " AS proposals, count(*) OVER () AS total,"
    " (SELECT array_agg(d.depends_on_id ORDER BY d.created_at, d.depends_on_id) FROM topic_dependencies d"
    " WHERE d.topic_id = topics.id) AS depends_on",
)
async def setup(app):
    app["pool"] = await asyncpg.create_pool(
        sys.argv[2], min_size=2, max_size=10, server_settings={"application_name": "bare"}
    )
    yield
    await app["pool"].close()
async def handler(request):
    async with request.app["pool"].acquire() as conn:
        row = await conn.fetchrow(
            "SELECT id, title, content, version FROM topics WHERE id = $1", request.match_info["id"]
        )
    return web.json_response(dict(row))
app = web.Application()
app.cleanup_ctx.append(setup)
async def topic_list(request):
    limit = int(request.query.get("limit", "50"))
    async with request.app["pool"].acquire() as conn, conn.transaction(readonly=True):
        total = await conn.fetchval("SELECT count(*) FROM topics")
        rows = [dict(r) for r in await conn.fetch(LISTED, limit, 0)]
        deps = {r["id"]: [] for r in rows}
        for r in await conn.fetch(DEPENDENCIES, list(deps)):
            deps[r["topic_id"]].append(r["depends_on_id"])
    for r in rows:
        r["dependsOn"] = deps[r["id"]]
    body = {"topics": rows, "total": total, "limit": limit, "offset": 0}
    return web.Response(text=json.dumps(body, default=str), content_type="application/json")
async def whole_page(request):
    limit = int(request.query.get("limit", "50"))
    async with request.app["pool"].acquire() as conn:
        rows = [dict(r) for r in await conn.fetch(WHOLE_PAGE, limit, 0)]
    total = rows[0].pop("total") if rows else 0
    for r in rows:
        r.pop("total", None)
        r["dependsOn"] = r.pop("depends_on") or []
    body = {"topics": rows, "total": total, "limit": limit, "offset": 0}
    return web.Response(text=json.dumps(body, default=str), content_type="application/json")
app.router.add_get("/bare/{id}", handler)
app.router.add_get("/bare-list", topic_list)
app.router.add_get("/bare-list-one", whole_page)
web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), access_log=None, print=None, reuse_port=True)
"""
BARE = "bare aiohttp handler"
BARE_LIST = "bare, the topic list's size"
BARE_DB = "bare aiohttp+asyncpg, one SELECT"
BARE_DB_LIST = "bare aiohttp+asyncpg, the list's"
BARE_DB_LIST_ONE = "bare aiohttp+asyncpg, list in 1"
CONTENT = "GET /api/pact/{id}/content"
TOPIC_LIST = "GET /api/pact/topics?limit=20"
UNITS = {"us": 1e-3, "ms": 1.0, "s": 1000.0, "m": 60_000.0}


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


async def load(url: str, *, clients: int, seconds: float, max_requests: int) -> dict[str, float]:
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds
    connector = aiohttp.TCPConnector(limit=clients)
    async with aiohttp.ClientSession(connector=connector) as http:

        async def client() -> None:
            while time.perf_counter() < deadline and len(latencies) < max_requests:
                start = time.perf_counter()
                async with http.get(url) as resp:
                    await resp.read()
                    if resp.status != 200:
                        raise SystemExit(f"{url} answered {resp.status}")
                latencies.append(time.perf_counter() - start)

        began = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(clients)))
        elapsed = time.perf_counter() - began
    latencies.sort()
    return {
        "rps": len(latencies) / elapsed,
        "p50_ms": statistics.median(latencies) * 1000,
        "p99_ms": latencies[int(len(latencies) * 0.99) - 1] * 1000,
        "requests": len(latencies),
    }


def _ms(text: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text).groups()  # type: ignore[union-attr]
    return float(number) * UNITS[unit]


async def load_wrk(url: str, *, clients: int, seconds: float, threads: int) -> dict[str, float]:
    """wrk's figures: requests/s over the run and its latency percentiles (not coordinated-omission
    corrected: wrk, not wrk2)."""
    proc = await asyncio.create_subprocess_exec(
        "wrk",
        f"-t{threads}",
        f"-c{clients}",
        f"-d{max(1, round(seconds))}s",
        "--latency",
        url,
        stdout=asyncio.subprocess.PIPE,
    )
    out = (await proc.communicate())[0].decode()
    if proc.returncode != 0 or "Non-2xx" in out:
        raise SystemExit(f"wrk against {url} failed:\n{out}")
    percentiles = dict(re.findall(r"\b(50|99)%\s+([\d.]+(?:us|ms|s|m))\s", out))
    if set(percentiles) != {"50", "99"}:
        raise SystemExit(f"unexpected wrk output:\n{out}")
    return {
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),  # type: ignore[union-attr]
        "p50_ms": _ms(percentiles["50"]),
        "p99_ms": _ms(percentiles["99"]),
        "requests": float(re.search(r"(\d+) requests in", out).group(1)),  # type: ignore[union-attr]
        # Requests wrk gave up on after its 2 s timeout: not in the percentiles, so say so.
        "timeouts": float(m.group(1)) if (m := re.search(r"timeout (\d+)", out)) else 0.0,
    }


async def wait_processes(url: str, processes: int, seconds: float = 180) -> set[int]:
    """Until `processes` distinct web processes have answered /healthz (each on a fresh connection): the
    first to start answers alone for a while. Their process ids."""
    seen: set[int] = set()
    deadline = time.perf_counter() + seconds
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as http:
        while time.perf_counter() < deadline:
            try:
                async with http.get(url) as resp:
                    seen.add((await resp.json())["pid"])
            except aiohttp.ClientError:
                pass
            if len(seen) >= processes:
                return seen
            await asyncio.sleep(0.02)
    raise SystemExit(f"only {len(seen)} of {processes} web processes answered {url}")


async def seed(hub: str, topics: int) -> str:
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{hub}/api/pact/register", json={"agentName": "bench"}) as resp:
            headers = {"Authorization": f"Bearer {(await resp.json())['apiKey']}"}
        first = ""
        for n in range(topics):
            body = "\n\n".join(f"## Part {k}\n\n" + "Evidence and reasoning. " * 20 for k in range(6))
            topic = {"title": f"Benchmark topic {n}", "content": f"# Answer\n\n{body}\n", "tier": "empirical"}
            async with http.post(f"{hub}/api/pact/topics", json=topic, headers=headers) as resp:
                first = first or (await resp.json())["id"]
        return first


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clients", type=int, default=64, help="concurrent connections")
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--max-requests", type=int, default=200_000)
    parser.add_argument("--topics", type=int, default=60)
    parser.add_argument("--no-cache", action="store_true", help="measure the database path (read cache off)")
    parser.add_argument(
        "--processes",
        type=int,
        default=os.cpu_count() or 1,
        help="web processes of each server (default: cores)",
    )
    parser.add_argument("--cache-seconds", type=float, default=1.0, help="CONCORD_READ_CACHE_SECONDS")
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="measure every target this many times, alternating; print medians",
    )
    parser.add_argument("--wrk-threads", type=int, default=1, help="wrk threads (when wrk is installed)")
    parser.add_argument("--python-client", action="store_true", help="use the aiohttp client even with wrk")
    parser.add_argument(
        "--database-url",
        help="run Concord on a scratch database of this PostgreSQL server (postgresql://…/postgres), "
        "and add a bare aiohttp + asyncpg handler reading the same row as a second baseline",
    )
    loops.add_option(parser)
    args = parser.parse_args()
    use_wrk = shutil.which("wrk") is not None and not args.python_client

    tmp = Path(tempfile.mkdtemp(prefix="concord-bench-"))
    hub_port, docs_port, bare_port = free_port(), free_port(), free_port()
    scratch = f"concord_bench_{uuid.uuid4().hex[:8]}" if args.database_url else ""
    pg_url = args.database_url.rsplit("/", 1)[0] + "/" + scratch if args.database_url else ""
    if args.database_url:
        await admin_sql(args.database_url, f'CREATE DATABASE "{scratch}"')
    env = {
        **os.environ,
        "CONCORD_DATA_DIR": str(tmp),
        "CONCORD_DATABASE_URL": pg_url.replace("postgresql://", "postgresql+asyncpg://", 1),
        "CONCORD_REDIS_URL": "",
        "CONCORD_HUB_PORT": str(hub_port),
        "CONCORD_DOCS_PORT": str(docs_port),
        "CONCORD_LOG_LEVEL": "WARNING",
        "CONCORD_RATE_LIMIT_REGISTER": "1000",
        "CONCORD_READ_CACHE_SECONDS": "0" if args.no_cache else str(args.cache_seconds),
    }
    subprocess.run([command("concord"), "migrate"], env=env, check=True)
    serve = subprocess.Popen([command("concord"), "serve", "--processes", str(args.processes)], env=env)
    bare: list[subprocess.Popen[bytes]] = []
    try:
        hub = f"http://127.0.0.1:{hub_port}"
        await wait_ready(f"{hub}/readyz")
        web_pids = sorted(await wait_processes(f"{hub}/healthz", args.processes))
        topic_id = await seed(hub, args.topics)
        at_rest = rss_by_pid(web_pids)  # after the seeding's writes, before any load
        at_rest_pss = pss_by_pid(web_pids)
        content_url, list_url = f"{hub}/api/pact/{topic_id}/content", f"{hub}/api/pact/topics?limit=20"
        body_files = []
        async with aiohttp.ClientSession() as http:
            for n, url in enumerate((content_url, list_url)):
                async with http.get(url) as resp:
                    sample = await resp.read()
                body_files.append(tmp / f"bare-{n}.json")  # as long as the answer it stands beside
                body_files[-1].write_bytes(json.dumps({"content": "x" * max(0, len(sample) - 14)}).encode())
        sizes = [f.stat().st_size for f in body_files]
        bare = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    loops.bare(BARE_SERVER, args.bare_loop),
                    str(bare_port),
                    *map(str, body_files),
                ]
            )
            for _ in range(args.processes)
        ]
        await wait_ready(f"http://127.0.0.1:{bare_port}/bare/0")
        targets = {
            BARE: f"http://127.0.0.1:{bare_port}/bare/0",
            BARE_LIST: f"http://127.0.0.1:{bare_port}/bare/1",
        }
        if pg_url:
            bare_db_port = free_port()
            bare += [
                subprocess.Popen(
                    [
                        sys.executable,
                        "-c",
                        loops.bare(BARE_DB_SERVER, args.bare_loop),
                        str(bare_db_port),
                        pg_url,
                    ]
                )
                for _ in range(args.processes)
            ]
            targets[BARE_DB] = f"http://127.0.0.1:{bare_db_port}/bare/{topic_id}"
            targets[BARE_DB_LIST] = f"http://127.0.0.1:{bare_db_port}/bare-list?limit=20"
            targets[BARE_DB_LIST_ONE] = f"http://127.0.0.1:{bare_db_port}/bare-list-one?limit=20"
            await wait_ready(targets[BARE_DB])
        await asyncio.sleep(3)  # every bare process bound (they start alike; none reports readiness)

        targets |= {CONTENT: content_url, TOPIC_LIST: list_url}
        server_pids = {
            BARE: [p.pid for p in bare[: args.processes]],
            BARE_LIST: [p.pid for p in bare[: args.processes]],
            BARE_DB: [p.pid for p in bare[args.processes :]],
            BARE_DB_LIST: [p.pid for p in bare[args.processes :]],
            BARE_DB_LIST_ONE: [p.pid for p in bare[args.processes :]],
        }

        peak = PeakRss(web_pids)

        async def measure(name: str, url: str) -> dict[str, float]:
            if not name.startswith("bare"):
                async with peak:
                    return await measured(name, url)
            return await measured(name, url)

        async def measured(name: str, url: str) -> dict[str, float]:
            await load(url, clients=args.clients, seconds=1.0, max_requests=2_000)  # warm up
            pids = server_pids.get(name, [serve.pid])
            app_name = "bare" if name.startswith("bare aiohttp+asyncpg") else "concord"
            backends: list[int] = []
            if pg_url and name not in (BARE, BARE_LIST):
                backends = await backend_pids(pg_url, app_name)
            cpu0, db0 = cpu_by_pid(pids), cpu_by_pid(backends)
            if use_wrk:
                result = await load_wrk(
                    url, clients=args.clients, seconds=args.seconds, threads=args.wrk_threads
                )
            else:
                result = await load(
                    url, clients=args.clients, seconds=args.seconds, max_requests=args.max_requests
                )
            served = max(1.0, result["requests"])
            result["server_us"] = cpu_since(cpu0, pids) / served * 1e6
            if backends:
                more = await backend_pids(pg_url, app_name)
                result["db_us"] = cpu_since(db0, sorted(set(backends) | set(more))) / served * 1e6
            return result

        # Rounds alternate the targets, so a drift of the machine's speed falls on all of them alike; each
        # target's row is its median round.
        rounds: dict[str, list[dict[str, float]]] = {name: [] for name in targets}
        for _ in range(args.rounds):
            for name, url in targets.items():
                rounds[name].append(await measure(name, url))
        results = {name: median_round(runs, lambda r: r["rps"]) for name, runs in rounds.items()}
        baseline = {TOPIC_LIST: BARE_LIST, BARE_LIST: BARE_LIST}  # the rest: the content's size
        db_base = BARE_DB in results
        # The rest: the content's read. The one-statement bare list against the three-statement one.
        db_baseline = {TOPIC_LIST: BARE_DB_LIST, BARE_DB_LIST: BARE_DB_LIST, BARE_DB_LIST_ONE: BARE_DB_LIST}
        extra = f" {'vs bare db':>11}" if db_base else ""
        cpu_head = f" {'server us':>10}" + (f" {'db us':>7}" if pg_url else "")
        print(f"{'target':32} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'vs bare':>8}{extra}{cpu_head}")
        for name, r in results.items():
            late = f"  ({r['timeouts']:.0f} timed out)" if r.get("timeouts") else ""
            ratio = r["rps"] / results[baseline.get(name, BARE)]["rps"]
            vs_db = f" {r['rps'] / results[db_baseline.get(name, BARE_DB)]['rps']:11.0%}" if db_base else ""
            figures = f"{r['rps']:9.0f} {r['p50_ms']:8.2f} {r['p99_ms']:8.2f}"
            cpu = f" {r['server_us']:10.0f}"
            if pg_url:
                cpu += f" {r['db_us']:7.0f}" if "db_us" in r else " " * 8
            print(f"{name:32} {figures} {ratio:8.0%}{vs_db}{cpu}{late}")
        memory = ", ".join(
            f"{at_rest.get(pid, 0) / 1024:.0f} -> {peak.peak.get(pid, 0) / 1024:.0f}" for pid in web_pids
        )
        print(f"resident memory per web process, MiB at rest -> highest under load: {memory}")
        shared = ", ".join(f"{at_rest_pss.get(pid, 0) / 1024:.0f}" for pid in web_pids)
        print(f"proportional memory (PSS) per web process at rest, MiB (shared pages split): {shared}")
        client = f"wrk -t{args.wrk_threads}" if use_wrk else "aiohttp client in the benchmark process"
        cache = "off" if args.no_cache else f"{args.cache_seconds:g} s"
        rounds_note = f", median of {args.rounds} alternating rounds" if args.rounds > 1 else ""
        print(
            f"(bodies: content {sizes[0]} bytes, topic list {sizes[1]}; each Concord row against the bare "
            f"handler answering as many bytes; {args.clients} connections from {client}; "
            f"{args.seconds:.0f} s per target{rounds_note}; {args.processes} web process(es) per server on "
            f"{os.cpu_count()} cores, shared with the client; read cache {cache}; "
            f"{'PostgreSQL' if pg_url else 'SQLite'}, in-process broker; bare on {args.bare_loop}, "
            f"concord on {get_settings().event_loop})"
        )
    finally:
        serve.terminate()
        serve.wait(timeout=60)
        for proc in bare:
            proc.terminate()
            proc.wait(timeout=10)
        if args.database_url:
            await admin_sql(args.database_url, f'DROP DATABASE IF EXISTS "{scratch}" WITH (FORCE)')


if __name__ == "__main__":
    asyncio.run(main())
