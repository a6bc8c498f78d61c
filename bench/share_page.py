"""A large document read through its share page while the same process answers /readyz (run on demand:
`python -m bench.share_page`; never part of the test suite).

Starts `concord serve --processes 1` (one process serving both apps, as the issue measured it) on a
temporary data directory, uploads a Markdown document of about 15 MB (128,000 paragraphs, a heading every
50), shares it, and then, in each round:

1. idle: /readyz of the hub, one request after another, for a few seconds (the baseline);
2. busy: the same /readyz requests while a reader fetches every page of the share page (the document's
   new version: each page rendered for the first time, after a parse of the whole text) and every page of
   the section tree;
3. a change merged into one section (propose and two approvals): the next round reads a new version.

It prints /readyz's p50 and p99 in both windows and their ratio (busy / idle: 1.0 means reading the
document costs the rest of the process nothing), how long the share page's first page took cold and
again from the cache, the pages' count and time, the sections' pages, and each merge. Before issue 29 the
share page rendered the whole document on the event loop: 16-28 s for the page, /readyz 14 s meanwhile.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

from bench.read_path import wait_ready
from bench.write_path import median_round
from tests.processes import command, free_port

WORDS = (
    "alpha budget contract delivery estimate forecast growth harbour invoice journal kilowatt ledger".split()
)


def big_markdown(paragraphs: int, per_section: int = 50) -> str:
    rng = random.Random(29)
    out = ["# Annual report", ""]
    for n in range(paragraphs):
        if n % per_section == 0:
            out += [f"{'#' * (2 if (n // per_section) % 5 == 0 else 3)} Part {n // per_section}", ""]
        out += [" ".join(rng.choice(WORDS) for _ in range(15)) + f" (paragraph {n}).", ""]
    return "\n".join(out)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] * 1000


async def readyz(http: aiohttp.ClientSession, url: str, until: asyncio.Event | float) -> list[float]:
    """Latencies of /readyz, one request after another, until the event is set (or for that many s)."""
    samples: list[float] = []
    deadline = time.perf_counter() + until if isinstance(until, float) else None
    while not (until.is_set() if isinstance(until, asyncio.Event) else time.perf_counter() > (deadline or 0)):
        start = time.perf_counter()
        async with http.get(url) as resp:
            await resp.read()
            if resp.status != 200:
                raise SystemExit(f"{url} answered {resp.status}")
        samples.append(time.perf_counter() - start)
        await asyncio.sleep(0.01)
    return samples


async def timed_get(http: aiohttp.ClientSession, url: str, **kw: Any) -> tuple[float, str]:
    start = time.perf_counter()
    async with http.get(url, **kw) as resp:
        text = await resp.text()
        if resp.status != 200:
            raise SystemExit(f"{url} answered {resp.status}: {text[:200]}")
    return time.perf_counter() - start, text


async def read_everything(
    http: aiohttp.ClientSession, docs: str, token: str, doc_id: str, key: str
) -> dict[str, Any]:
    first, page = await timed_get(http, f"{docs}/share/{token}")
    found = re.search(r"Page 1 of (\d+)", page)
    count = int(found[1]) if found else 1
    began = time.perf_counter()
    for number in range(2, count + 1):
        await timed_get(http, f"{docs}/share/{token}", params={"page": str(number)})
    pages_s = time.perf_counter() - began
    cached, _ = await timed_get(http, f"{docs}/share/{token}")
    began, cursor, section_pages = time.perf_counter(), None, 0
    while True:
        params: dict[str, str] = {"cursor": cursor} if cursor else {}
        async with http.get(
            f"{docs}/api/tap/{doc_id}/sections", params=params, headers={"X-Api-Key": key}
        ) as resp:
            body = await resp.json()
        section_pages += 1
        cursor = body.get("nextCursor")
        if not cursor:
            break
    return {
        "first_s": first,
        "pages": count,
        "other_pages_s": pages_s,
        "cached_s": cached,
        "sections_s": time.perf_counter() - began,
        "section_pages": section_pages,
    }


async def merge(http: aiohttp.ClientSession, docs: str, doc_id: str, keys: list[str], n: int) -> float:
    base = f"{docs}/api/tap/{doc_id}"
    start = time.perf_counter()
    async with http.post(
        f"{base}/proposals",
        headers={"X-Api-Key": keys[0]},
        json={
            "sectionId": "sec:annual-report:part-100",
            "content": f"Round {n}'s words.",
            "summary": "bench",
        },
    ) as resp:
        proposal = (await resp.json())["proposalId"]
    for key in keys[1:]:
        async with http.post(f"{base}/proposals/{proposal}/approve", headers={"X-Api-Key": key}) as resp:
            status = (await resp.json())["status"]
    if status != "approved":
        raise SystemExit(f"the merge ended {status}")
    return time.perf_counter() - start


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--paragraphs", type=int, default=128_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--idle-seconds", type=float, default=5.0)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="concord-bench-"))
    hub_port, docs_port = free_port(), free_port()
    env = {
        **os.environ,
        "CONCORD_DATA_DIR": str(tmp),
        "CONCORD_DATABASE_URL": "",
        "CONCORD_REDIS_URL": "",
        "CONCORD_HUB_PORT": str(hub_port),
        "CONCORD_DOCS_PORT": str(docs_port),
        "CONCORD_LOG_LEVEL": "WARNING",
    }
    subprocess.run([command("concord"), "migrate"], env=env, check=True, capture_output=True)
    keys = [
        subprocess.run(
            [command("concord"), "keys", "create", "--org", "Bench", "--name", f"k{n}"],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        for n in range(3)
    ]
    markdown = big_markdown(args.paragraphs)
    serve = subprocess.Popen([command("concord"), "serve", "--processes", "1"], env=env)
    hub, docs = f"http://127.0.0.1:{hub_port}", f"http://127.0.0.1:{docs_port}"
    try:
        await wait_ready(f"{hub}/readyz")
        timeout = aiohttp.ClientTimeout(total=600)
        async with (
            aiohttp.ClientSession(timeout=timeout) as http,
            aiohttp.ClientSession(timeout=timeout) as probe,
        ):
            form = aiohttp.FormData()
            form.add_field("file", markdown.encode(), filename="annual-report.md")
            async with http.post(f"{docs}/api/documents", data=form, headers={"X-Api-Key": keys[0]}) as resp:
                doc_id = (await resp.json())["id"]
            while True:
                async with http.get(f"{docs}/api/documents/{doc_id}", headers={"X-Api-Key": keys[0]}) as resp:
                    status = (await resp.json())["status"]
                if status != "processing":
                    break
                await asyncio.sleep(0.5)
            if status != "ready":
                raise SystemExit(f"the document ended {status}")
            for n, key in enumerate(keys):
                role = "editor" if n == 0 else "reviewer"
                async with http.post(
                    f"{docs}/api/tap/{doc_id}/join",
                    headers={"X-Api-Key": key},
                    json={"agentName": f"a{n}", "role": role},
                ) as resp:
                    assert resp.status == 201, await resp.text()
            async with http.post(
                f"{docs}/api/documents/{doc_id}/share-link",
                headers={"X-Api-Key": keys[0]},
                json={"permission": "ReadOnly", "accessMode": "open"},
            ) as resp:
                token = (await resp.json())["token"]
            print(f"document: {len(markdown) / 1e6:.1f} MB of Markdown, {args.paragraphs:,} paragraphs")
            rows = []
            for n in range(1, args.rounds + 1):
                idle = await readyz(probe, f"{hub}/readyz", args.idle_seconds)
                done = asyncio.Event()
                probing = asyncio.create_task(readyz(probe, f"{hub}/readyz", done))
                try:
                    read = await read_everything(http, docs, token, doc_id, keys[0])
                finally:
                    done.set()
                busy = await probing
                merged = await merge(http, docs, doc_id, keys, n)
                row = {
                    **read,
                    "idle_p50": _pct(idle, 0.5),
                    "idle_p99": _pct(idle, 0.99),
                    "busy_p50": _pct(busy, 0.5),
                    "busy_p99": _pct(busy, 0.99),
                    "busy_max": max(busy) * 1000,
                    "samples": len(busy),
                    "merge_s": merged,
                }
                row["ratio"] = row["busy_p99"] / row["idle_p99"]
                rows.append(row)
                print(
                    f"round {n}: /readyz p99 idle {row['idle_p99']:.1f} ms, "
                    f"while reading {row['busy_p99']:.1f} ms "
                    f"({row['ratio']:.2f}×; p50 {row['idle_p50']:.1f} → {row['busy_p50']:.1f} ms, max "
                    f"{row['busy_max']:.0f} ms, {row['samples']} requests); share page 1 cold "
                    f"{row['first_s']:.2f} s, cached {row['cached_s'] * 1000:.0f} ms; pages 2-{row['pages']} "
                    f"{row['other_pages_s']:.1f} s; sections {row['section_pages']} pages "
                    f"{row['sections_s']:.2f} s; merge {row['merge_s']:.2f} s"
                )
            best = median_round(rows, lambda r: -float(r["ratio"]))
            print(
                f"median round: /readyz p99 {best['idle_p99']:.1f} ms idle, "
                f"{best['busy_p99']:.1f} ms while the "
                f"document is read: {best['ratio']:.2f}× (the cold first page {best['first_s']:.2f} s, "
                f"{statistics.median(r['merge_s'] for r in rows):.2f} s a merge)"
            )
    finally:
        serve.terminate()
        serve.wait(60)


if __name__ == "__main__":
    asyncio.run(main())
