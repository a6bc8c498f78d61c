"""Hub write path in instructions (on demand, never in CI): what one propose + two approvals costs the web
process, counted by valgrind's callgrind rather than timed, so that a change can be judged on a machine
whose speed drifts (bench/README.md: the same run of bench/write_path moved by a third between two rounds).

Starts `concord web --processes 1` (one process: everything the server does for a request is in it) and the
bare aiohttp + asyncpg server of bench/write_path.py, each under `valgrind --tool=callgrind` with
instrumentation off, on a fresh PostgreSQL database and Redis queue namespace (no Dramatiq worker: the jobs a
merge adds wait in the queue, and a worker is another process anyway). It seeds a topic, runs warm-up
cycles, then switches counting on (`callgrind_control -i on`), runs `--cycles` cycles from one client, one
request at a time, switches it off and reads the process's count: instructions per cycle of each, and their
ratio. What PostgreSQL, Redis and the client execute is not counted.

A cycle is the one of bench/write_path.py: concord, propose → approve → approve (the second merges); bare,
three POSTs, each one transaction on its row. Counts move by a percent or two between runs (hash seeds,
the order in which the event loop finds things ready, collections); the ratio, and a change's effect on
concord's count, are what to read. Under valgrind each process runs some 50 times slower: a run takes a few
minutes.

    python -m bench.write_instructions [--cycles 30] [--warmup 10] [--topic small|realistic] [--keep DIR]
        [--database-url postgresql://postgres@127.0.0.1:5432/postgres] [--redis-url redis://127.0.0.1:6379/0]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp

from bench import loops
from bench.write_path import (
    BARE_SERVER,
    TOPICS,
    ClientLatency,
    add_topic_option,
    bare_cycle,
    concord_cycle,
    seed_topics,
    stage,
    tear_down,
    wait_ready,
)
from tests.processes import command

NO_DELAY = ClientLatency(0, 0)


def callgrind(out: Path) -> list[str]:
    """valgrind running a program under callgrind, counting nothing until told to."""
    return [
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        f"--callgrind-out-file={out}",
        "--trace-children=no",
    ]


def control(pid: int, *flags: str) -> None:
    """`callgrind_control FLAGS PID`: it waits for the process to run (an idle loop wakes within a second or
    two: the relay's poll, the broker's heartbeat)."""
    subprocess.run(
        ["callgrind_control", *flags, str(pid)], check=True, stdout=subprocess.DEVNULL, timeout=300
    )


def instructions(out: Path) -> int:
    """The instructions a dump of callgrind counted (its `totals:` line)."""
    text = out.read_text()
    found = re.search(r"^totals:\s+(\d+)", text, re.MULTILINE)
    if found is None:
        raise SystemExit(f"{out}: no instruction count")
    return int(found.group(1))


Cycle = Callable[[aiohttp.ClientSession, int, list[float]], Awaitable[None]]  # as bench/write_path's


async def count(
    pid: int, out_prefix: Path, cycle: Cycle, warmup: int, cycles: int, keep: Path | None = None
) -> int:
    """Instructions process `pid` executes over `cycles` cycles, after `warmup` uncounted ones; the dump
    copied into `keep` under the prefix's name when given."""
    async with aiohttp.ClientSession() as http:
        for _ in range(warmup):
            await cycle(http, 0, [])
        control(pid, "--zero")
        control(pid, "-i", "on")
        for _ in range(cycles):
            await cycle(http, 0, [])
        control(pid, "-i", "off")
    control(pid, "--dump=measured")
    dumps = sorted(out_prefix.parent.glob(out_prefix.name + "*"), key=lambda p: p.stat().st_mtime)
    if not dumps:
        raise SystemExit(f"no callgrind dump next to {out_prefix}")
    if keep is not None:
        keep_dump(dumps[-1], keep / out_prefix.name)
    return instructions(dumps[-1])


def keep_dump(dump: Path, to: Path) -> None:
    to.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(dump, to)


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cycles", type=int, default=30, help="cycles counted (default 30)")
    parser.add_argument("--warmup", type=int, default=10, help="cycles run first, uncounted (default 10)")
    parser.add_argument("--database-url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    parser.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="copy the counted dumps there (concord.callgrind, bare.callgrind) for callgrind_annotate",
    )
    add_topic_option(parser)
    loops.add_option(parser)
    args = parser.parse_args()
    if args.cycles < 1 or args.warmup < 1:
        parser.error("--cycles and --warmup are at least 1")
    for tool in ("valgrind", "callgrind_control"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is not installed (Debian: apt-get install valgrind)")

    staged = await stage(args.database_url, args.redis_url, 1)
    tmp, url, env = staged.tmp, staged.url, staged.env
    hub_port, bare_port = staged.hub_port, staged.bare_port
    procs: list[subprocess.Popen[bytes]] = []
    try:
        subprocess.run([command("concord"), "migrate"], env=env, check=True, stdout=subprocess.DEVNULL)
        concord_out, bare_out = tmp / "concord.callgrind", tmp / "bare.callgrind"
        began = time.perf_counter()
        web = subprocess.Popen(
            [*callgrind(concord_out), command("concord"), "web", "--processes", "1"],
            env=env,
            stderr=subprocess.DEVNULL,
        )
        bare = subprocess.Popen(
            [
                *callgrind(bare_out),
                sys.executable,
                "-c",
                loops.bare(BARE_SERVER, args.bare_loop),
                str(bare_port),
                url,
            ],
            stderr=subprocess.DEVNULL,
        )
        procs += [web, bare]
        hub = f"http://127.0.0.1:{hub_port}"
        await wait_ready(f"{hub}/readyz")
        print(f"both servers started under valgrind in {time.perf_counter() - began:.0f} s", file=sys.stderr)
        topics = await seed_topics(hub, 1, TOPICS[args.topic])
        concord = await count(
            web.pid, concord_out, concord_cycle(hub, topics, NO_DELAY), args.warmup, args.cycles, args.keep
        )
        bare_count = await count(
            bare.pid,
            bare_out,
            bare_cycle(f"http://127.0.0.1:{bare_port}", NO_DELAY),
            args.warmup,
            args.cycles,
            args.keep,
        )
    finally:
        await tear_down(args.database_url, staged, procs, timeout=60)  # valgrind writes its last dump
        shutil.rmtree(tmp, ignore_errors=True)

    print(
        f"write path in instructions: {args.cycles} cycles counted after {args.warmup} uncounted, one client,"
        f" {args.topic} topic ({len(TOPICS[args.topic])} bytes)"
    )
    print(f"{'target':<32}{'M instr/cycle':>14}{'vs bare':>10}")
    for label, total in (("bare aiohttp+asyncpg, 1 row", bare_count), ("concord web, 1 topic", concord)):
        print(f"{label:<32}{total / args.cycles / 1e6:14.2f}{total / bare_count:9.2f}x")


if __name__ == "__main__":
    asyncio.run(main())
