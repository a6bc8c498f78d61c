"""Citation resolver benchmark (run on demand: `python -m bench.resolve`).

Loads 10,000 synthetic instruments (plus the real seeded sample) and prints
1. resolutions per second of the in-process resolver (parse + in-memory index lookup), and
2. latency percentiles of GET /api/axiom/resolve over HTTP against a real hub on loopback
   (SQLite in a temporary directory, or CONCORD_BENCH_DATABASE_URL).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import socket
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from domain.axiom import citations, legislation
from domain.kernel.context import SYSTEM
from domain.kernel.errors import NotFound

# An instrument as the legislation upload takes it (JSON).
Doc = dict[str, Any]

WORDS = (
    "Aviation Banking Building Charities Coastal Customs Dairy Energy Fisheries Forestry Gaming Heritage "
    "Housing Industrial Land Liquor Maritime Mining Motor Native Nursing Parks Pharmacy Pipelines Planning "
    "Port Racing Rail Road Sea Security Shipping Stock Surveying Tobacco Tourism Transport Valuation Water"
).split()
KINDS = ("Act", "Regulation", "Amendment Act", "(Miscellaneous Provisions) Act", "Rules")
JURS = ("AU", "AU-NSW", "AU-VIC", "AU-QLD", "AU-WA", "AU-SA", "AU-TAS", "AU-ACT", "AU-NT")


def synthetic(n: int, seed: int = 7) -> list[Doc]:
    rng = random.Random(seed)
    docs: list[Doc] = []
    seen: set[tuple[str, str]] = set()
    while len(docs) < n:
        title = f"{rng.choice(WORDS)} {rng.choice(WORDS)} {rng.choice(KINDS)} {rng.randint(1901, 2025)}"
        # about one title in ten exists in two jurisdictions (as the real uniform Acts do)
        for jur in rng.sample(JURS, 2 if rng.random() < 0.1 else 1):
            if (title, jur) in seen or len(docs) >= n:
                continue
            seen.add((title, jur))
            docs.append(
                {
                    "id": f"bench-{len(docs)}",
                    "title": title,
                    "jurisdiction": jur,
                    "type": "regulation" if "Regulation" in title else "act",
                    "sections": [{"sectionId": f"s {i}", "title": f"Section {i}"} for i in range(1, 6)],
                }
            )
    return docs


def citations_for(docs: list[Doc], count: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    from domain.kernel.jurisdictions import abbreviation

    out = []
    for _ in range(count):
        d = rng.choice(docs)
        r = rng.random()
        if r < 0.5:
            out.append(f"{d['title']} ({abbreviation(d['jurisdiction'])}) s {rng.randint(1, 8)}(2)")
        elif r < 0.7:
            out.append(d["title"].upper() + f" ({d['jurisdiction']})")
        elif r < 0.8:
            out.append(d["title"])  # may be ambiguous
        elif r < 0.9:
            out.append(rng.choice(["AS/NZS 3000:2018", "AS 1170.4-2007", "AS ISO 31000:2018 cl 1.1"]))
        else:
            out.append(f"Nonexistent {d['title']}")
    return out


def in_process(docs: list[Doc], sample: list[Doc], queries: list[str]) -> float:
    models = legislation.parse_documents(docs[:1000]) + [
        m for i in range(1000, len(docs), 1000) for m in legislation.parse_documents(docs[i : i + 1000])
    ]
    entries = [
        citations.Entry(
            doc_id=m.id or legislation.default_id(m),
            type=m.type,
            title=m.title,
            designation=m.designation,
            jurisdiction=m.jurisdiction,
            status=m.status,
            in_force_date=m.inForceDate,
            last_amended_date=m.lastAmendedDate,
            repealed_date=m.repealedDate,
            version_date=None,
            sections=citations.section_map([s.sectionId for s in m.sections]),
        )
        for m in models + legislation.parse_documents(sample)
    ]
    index = citations.CitationIndex.build(entries)
    started = time.perf_counter()
    for q in queries:
        try:
            citations.resolve_legislation(index, citations.parse(q))
        except NotFound:
            pass
    elapsed = time.perf_counter() - started
    return len(queries) / elapsed


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


async def over_http(docs: list[Doc], sample: list[Doc], queries: list[str]) -> list[float]:
    import aiohttp
    from aiohttp import web

    from domain.kernel.settings import Settings
    from migrations import upgrade_async
    from runtime.process import Runtime
    from web.app import create_hub_app

    tmp = Path(tempfile.mkdtemp(prefix="concord-bench-"))
    settings = Settings(
        data_dir=tmp, database_url=os.environ.get("CONCORD_BENCH_DATABASE_URL"), redis_url=None
    )
    await upgrade_async(settings.db_url)
    rt = await Runtime.start(settings, relay=False, scheduler=False, worker=False)
    try:
        for i in range(0, len(docs), 1000):
            async with rt.db.transaction() as session:
                await legislation.ingest(session, SYSTEM, legislation.parse_documents(docs[i : i + 1000]))
        async with rt.db.transaction() as session:
            await legislation.ingest(session, SYSTEM, legislation.parse_documents(sample))
        runner = web.AppRunner(create_hub_app(rt), access_log=None)
        await runner.setup()
        port = _free_port()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        url = f"http://127.0.0.1:{port}/api/axiom/resolve"
        latencies = []
        async with aiohttp.ClientSession() as client:
            async with client.get(url, params={"citation": queries[0]}) as resp:  # warm the index
                await resp.read()
            for q in queries:
                started = time.perf_counter()
                async with client.get(url, params={"citation": q}) as resp:
                    await resp.read()
                    assert resp.status in (200, 404), await resp.text()
                latencies.append((time.perf_counter() - started) * 1000)
        await runner.cleanup()
        return latencies
    finally:
        await rt.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--instruments", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=20_000, help="in-process resolutions")
    parser.add_argument("--requests", type=int, default=2_000, help="HTTP requests")
    args = parser.parse_args()

    import json
    from importlib import resources

    sample = json.loads(resources.files("domain").joinpath("data", "legislation_sample.json").read_text())[
        "documents"
    ]
    docs = synthetic(args.instruments)
    rate = in_process(docs, sample, citations_for(docs, args.queries))
    print(f"in process: {rate:,.0f} resolutions/s against {len(docs):,} instruments (+{len(sample)} sample)")
    latencies = asyncio.run(over_http(docs, sample, citations_for(docs, args.requests, seed=13)))
    q = statistics.quantiles(latencies, n=100)
    print(
        f"over HTTP: {len(latencies):,} sequential requests; p50 {q[49]:.2f} ms, p95 {q[94]:.2f} ms, "
        f"p99 {q[98]:.2f} ms, max {max(latencies):.2f} ms"
    )


if __name__ == "__main__":
    main()
