"""Hub read-path benchmark (run on demand: `make bench`; never part of the test suite).

Starts `concord serve` on a temporary data directory and a bare aiohttp server that returns a JSON body of the
same size, then drives the same concurrent load on loopback against each, in the same run, and prints
requests/s, p50 and p99 for every target and its ratio to the bare handler.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

from tests.processes import command, free_port

BARE_SERVER = """
import sys
from aiohttp import web
body = open(sys.argv[2], "rb").read()
async def handler(request):
    return web.Response(body=body, content_type="application/json")
app = web.Application()
app.router.add_get("/bare", handler)
web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), access_log=None, print=None)
"""


async def wait_ready(url: str) -> None:
    async with aiohttp.ClientSession() as http:
        for _ in range(300):
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
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--max-requests", type=int, default=200_000)
    parser.add_argument("--topics", type=int, default=60)
    parser.add_argument("--no-cache", action="store_true", help="measure the database path (read cache off)")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="concord-bench-"))
    hub_port, docs_port, bare_port = free_port(), free_port(), free_port()
    env = {
        **os.environ,
        "CONCORD_DATA_DIR": str(tmp),
        "CONCORD_DATABASE_URL": "",
        "CONCORD_REDIS_URL": "",
        "CONCORD_HUB_PORT": str(hub_port),
        "CONCORD_DOCS_PORT": str(docs_port),
        "CONCORD_LOG_LEVEL": "WARNING",
        "CONCORD_RATE_LIMIT_REGISTER": "1000",
        "CONCORD_READ_CACHE_SECONDS": "0" if args.no_cache else "1",
    }
    subprocess.run([command("concord"), "migrate"], env=env, check=True)
    serve = subprocess.Popen([command("concord"), "serve"], env=env)
    bare = None
    try:
        hub = f"http://127.0.0.1:{hub_port}"
        await wait_ready(f"{hub}/readyz")
        topic_id = await seed(hub, args.topics)
        async with aiohttp.ClientSession() as http, http.get(f"{hub}/api/pact/{topic_id}/content") as resp:
            sample = await resp.read()
        body_file = tmp / "bare.json"
        body_file.write_bytes(json.dumps({"content": "x" * max(0, len(sample) - 14)}).encode())
        bare = subprocess.Popen([sys.executable, "-c", BARE_SERVER, str(bare_port), str(body_file)])
        await wait_ready(f"http://127.0.0.1:{bare_port}/bare")

        targets = {
            "bare aiohttp handler": f"http://127.0.0.1:{bare_port}/bare",
            "GET /api/pact/{id}/content": f"{hub}/api/pact/{topic_id}/content",
            "GET /api/pact/topics?limit=20": f"{hub}/api/pact/topics?limit=20",
        }
        results = {}
        for name, url in targets.items():
            await load(url, clients=args.clients, seconds=1.0, max_requests=2_000)  # warm up
            results[name] = await load(
                url, clients=args.clients, seconds=args.seconds, max_requests=args.max_requests
            )
        base = results["bare aiohttp handler"]["rps"]
        print(f"{'target':32} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'vs bare':>8}")
        for name, r in results.items():
            print(f"{name:32} {r['rps']:9.0f} {r['p50_ms']:8.2f} {r['p99_ms']:8.2f} {r['rps'] / base:8.0%}")
        print(
            f"(content body {len(sample)} bytes; {args.clients} clients; {args.seconds:.0f} s per target; "
            f"read cache {'off' if args.no_cache else 'on'}; SQLite, in-process broker)"
        )
    finally:
        serve.terminate()
        serve.wait(timeout=20)
        if bare is not None:
            bare.terminate()
            bare.wait(timeout=10)


if __name__ == "__main__":
    asyncio.run(main())
