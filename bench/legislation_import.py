"""Legislation import benchmark: writes a synthetic corpus JSONL (invented instruments in the Open
Australian Legal Corpus's shape, never statutory text), reads and parses it plainly (a line at a time,
json.loads), then imports it into a fresh database, and prints both rates (instruments/s, MB/s) and the
import's peak memory (the process's maximum resident set size, checked against --memory-mb).

    .venv/bin/python -m bench.legislation_import [--size-mb 50] [--db sqlite+aiosqlite:///…] [--keep PATH]
        [--update]

`--update` then imports a newer compilation of every instrument over the first (a later date, one
sentence changed in every section), the path of a corpus refresh: each instrument replaced, its old
compilation kept as a version and its changed sections marked amended; it prints that rate and its ratio
to the first import's, measured in the same run.

The issue's measure is a 1 GB corpus within 300 MB: `--size-mb 1000` (minutes on SQLite). By default the
database is a fresh SQLite file in a temporary folder; a PostgreSQL URL (an empty database) may be given.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

from domain.axiom import import_run, importers
from domain.axiom.provenance import Register
from domain.kernel.context import SYSTEM
from domain.kernel.db import Database
from migrations import upgrade

_PARAGRAPH = (
    "A keeper of invented widgets {n} must record each widget, label it, and report the count to the "
    "registrar within {d} days of the end of each quarter."
)


def _text(n: int, sections: int, *, days: int = 0) -> str:
    lines = [f"Synthetic Widget Number {n} Act 2031", "Part 1—Preliminary"]
    for s in range(1, sections + 1):
        lines += [
            f"{s}\tInvented provision {s}",
            f"(1) {_PARAGRAPH.format(n=n, d=s + days)}",
            "(2) The keeper must:",
        ]
        lines += ["(a) count the widgets; and", "(b) keep the count for seven years."]
    return "\n".join(lines)


def write_corpus(
    path: Path, size_bytes: int, sections: int, *, count: int | None = None, newer: bool = False
) -> int:
    """Invented records until the file reaches size_bytes (or `count` of them); the number written. A
    `newer` corpus is a later compilation of the same instruments: a later date, every section changed."""
    n = 0
    written = 0
    with path.open("w", encoding="utf-8") as out:
        while (written < size_bytes) if count is None else (n < count):
            record = {
                "version_id": f"synthetic-{n}",
                "type": "primary_legislation" if n % 10 else "secondary_legislation",
                "jurisdiction": "commonwealth",
                "source": "federal_register_of_legislation",
                "citation": f"Synthetic Widget Number {n} Act 2031 (Cth)",
                "url": f"https://legislation.example/{n}",
                "date": "2032-07-01" if newer else "2031-07-01",
                "text": _text(n, sections, days=7 if newer else 0),
            }
            line = json.dumps(record) + "\n"
            out.write(line)
            written += len(line.encode())
            n += 1
    return n


def plain_read(path: Path) -> tuple[int, float]:
    started = time.perf_counter()
    count = 0
    with path.open("rb") as stream:
        for line in stream:
            if line.strip():
                json.loads(line)
                count += 1
    return count, time.perf_counter() - started


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def rss_mb() -> float:
    """The process's resident set size now."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * resource.getpagesize() / 2**20
    except OSError:
        return float("nan")


def progress_line(p: import_run.Progress) -> None:
    """A progress line (every 30 s and at the end) with the memory, so a partial run is informative."""
    print(
        f"[{time.strftime('%H:%M:%S')}] {p.line()}; RSS {rss_mb():.0f} MB, peak {peak_mb():.0f} MB",
        file=sys.stderr,
        flush=True,
    )


async def run_import(url: str, path: Path, batch: int, *, bulk: bool = True) -> import_run.Progress:
    db = Database(url)
    try:
        return await import_run.import_corpus(
            db,
            SYSTEM,
            path,
            importers.FileFacts(register=Register.OALC),
            restart=True,
            batch=batch,
            report=progress_line,
            report_every=30.0,
            bulk_path=bulk,
        )
    finally:
        await db.dispose()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=50.0, help="corpus size to write (MB)")
    parser.add_argument("--sections", type=int, default=40, help="sections per invented instrument")
    parser.add_argument(
        "--batch", type=int, default=import_run.DEFAULT_BATCH, help="instruments a transaction"
    )
    parser.add_argument("--db", help="database URL (default: a fresh SQLite file)")
    parser.add_argument("--keep", type=Path, help="write the corpus here and keep it")
    parser.add_argument(
        "--per-row-index",
        action="store_true",
        help="index each section as it is written, as an ordinary ingest does (the bulk path's baseline)",
    )
    parser.add_argument("--memory-mb", type=float, default=300.0, help="the memory bound to check")
    parser.add_argument(
        "--update", action="store_true", help="then import a newer compilation of every instrument over it"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="concord-legis-bench-") as tmp:
        path = args.keep or Path(tmp) / "corpus.jsonl"
        written = write_corpus(path, int(args.size_mb * 1e6), args.sections)
        size_mb = path.stat().st_size / 1e6
        count, seconds = plain_read(path)
        print(f"corpus: {written} instruments, {size_mb:.1f} MB")
        print(f"plain read+parse: {count / seconds:.0f} instruments/s, {size_mb / seconds:.1f} MB/s")
        base = peak_mb()
        url = args.db or f"sqlite+aiosqlite:///{tmp}/bench.db"
        upgrade(url)
        started = time.perf_counter()
        progress = asyncio.run(run_import(url, path, args.batch, bulk=not args.per_row_index))
        seconds = time.perf_counter() - started
        peak = peak_mb()
        print(
            f"import: {progress.records / seconds:.1f} instruments/s, {size_mb / seconds:.3f} MB/s "
            f"({progress.created} created, {progress.skipped} skipped, {seconds:.1f} s)"
        )
        writing = seconds - progress.index_seconds
        what = f"{progress.indexed} sections" if progress.indexed >= 0 else "the GIN index rebuilt"
        print(
            f"  of which the full-text index at the end: {progress.index_seconds:.1f} s ({what}); "
            f"the rows alone: {progress.records / writing:.1f} instruments/s, {size_mb / writing:.3f} MB/s"
        )
        print(f"peak memory: {peak:.0f} MB (before the import {base:.0f} MB; bound {args.memory_mb:.0f} MB)")
        if args.update:
            newer = Path(tmp) / "newer.jsonl"
            write_corpus(newer, 0, args.sections, count=written, newer=True)
            first_rate = progress.records / seconds
            started = time.perf_counter()
            again = asyncio.run(run_import(url, newer, args.batch, bulk=not args.per_row_index))
            seconds = time.perf_counter() - started
            rate = again.records / seconds
            print(
                f"re-import, every instrument replaced: {rate:.1f} instruments/s "
                f"({again.updated} updated, {seconds:.1f} s), {rate / first_rate:.2f}x the first import's"
            )
            peak = peak_mb()
            print(f"peak memory after both: {peak:.0f} MB")
        return 0 if peak <= args.memory_mb else 1


if __name__ == "__main__":
    raise SystemExit(main())
