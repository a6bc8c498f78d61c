"""Running an import: files and corpora into the legislation store, in batches, with progress and (for a
corpus) a checkpoint so an interrupted import resumes at the record after the last batch it committed.

The checkpoint is a small JSON file beside the corpus (`<file>.import-state`, or where the caller says):
the corpus's size and the byte offset after the last committed batch. It is written (atomically) after each
batch commits, and removed when the corpus is done; a checkpoint for a file of another size is ignored.
Re-importing a record already stored writes nothing (the store compares fingerprints), so a crash between
a commit and its checkpoint costs only the re-reading of one batch."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from domain.axiom import bulk, importers, legislation
from domain.axiom.provenance import Register
from domain.kernel.context import Context
from domain.kernel.db import Database

DEFAULT_BATCH = 100


@dataclass
class Progress:
    """Where an import stands (printed as it goes, returned at the end)."""

    path: str
    total_bytes: int
    kind: importers.FileKind = importers.FileKind.JSONL
    bytes_done: int = 0
    records: int = 0
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    versioned: int = 0
    skipped: int = 0
    resumed_from: int = 0
    indexed: int = 0  # sections full-text indexed at the end (the bulk path), -1: the index was rebuilt
    index_seconds: float = 0.0
    indexing: bool = False  # the rows are written; the full-text index is being brought up to date
    started: float = field(default_factory=time.monotonic)
    skip_reasons: list[str] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)  # the first 100 created or updated

    @property
    def elapsed(self) -> float:
        return max(time.monotonic() - self.started, 1e-9)

    def line(self) -> str:
        pct = 100.0 * self.bytes_done / self.total_bytes if self.total_bytes else 100.0
        mb = (self.bytes_done - self.resumed_from) / 1e6
        return (
            f"{self.path}: {pct:5.1f}% {self.records} records, {self.created} created, "
            f"{self.updated} updated, {self.unchanged} unchanged, {self.versioned} versioned, "
            f"{self.skipped} skipped; "
            f"{self.records / self.elapsed:.1f} instruments/s, {mb / self.elapsed:.2f} MB/s"
            + self._index_note()
        )

    def _index_note(self) -> str:
        if self.indexing:
            return "; bringing the full-text index up to date"
        if self.indexed > 0:
            return f"; {self.indexed} sections full-text indexed in {self.index_seconds:.1f} s"
        if self.indexed < 0:
            return f"; full-text index rebuilt in {self.index_seconds:.1f} s"
        return ""

    def add(self, result: legislation.Ingested) -> None:
        self.created += len(result.created)
        self.updated += len(result.updated)
        self.unchanged += len(result.unchanged)
        self.versioned += len(result.versioned)
        for ids in (result.created, result.updated):
            self.ids += ids[: max(0, 100 - len(self.ids))]


def _size(path: Path) -> int:
    return path.stat().st_size


def state_path_for(path: Path) -> Path:
    return path.with_name(path.name + ".import-state")


def _read_state(state: Path, size: int) -> int:
    try:
        data = json.loads(state.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0
    if not isinstance(data, dict) or data.get("size") != size:
        return 0
    offset = data.get("offset")
    return offset if isinstance(offset, int) and 0 <= offset <= size else 0


def _write_state(state: Path, size: int, offset: int) -> None:
    tmp = state.with_name(state.name + ".tmp")
    tmp.write_text(json.dumps({"size": size, "offset": offset}), encoding="utf-8")
    os.replace(tmp, state)


async def _ingest(db: Database, ctx: Context, docs: list[legislation.InstrumentIn]) -> legislation.Ingested:
    async with db.transaction() as session:
        return await legislation.ingest(session, ctx, docs)


async def _ingest_bulk(
    db: Database, ctx: Context, docs: list[legislation.InstrumentIn], run_id: str
) -> legislation.Ingested:
    async with db.transaction() as session:
        await bulk.heartbeat(session, run_id)
        return await legislation.ingest(session, ctx, docs, bulk=True)


async def import_corpus(
    db: Database,
    ctx: Context,
    path: Path,
    facts: importers.FileFacts,
    *,
    state: Path | None = None,
    restart: bool = False,
    batch: int = DEFAULT_BATCH,
    report: Callable[[Progress], None] | None = None,
    report_every: float = 2.0,
    bulk_path: bool = True,
) -> Progress:
    """A corpus JSONL into the store, `batch` instruments a transaction, resuming from its checkpoint, on the
    bulk path (domain/axiom/bulk.py): the full-text index is brought up to date once, at the end (also when
    the import fails; after a crash, by the next import or the scheduler's sweep). Without `bulk_path` each
    batch is indexed as it commits, as an ordinary ingest is (the benchmark's baseline).

    Reading and parsing (JSON, the numbering) run in a worker thread, `batch` lines at a time, so a web
    process importing an upload keeps answering its other requests; only the writes run on the event loop."""
    size = _size(path)
    state = state or state_path_for(path)
    start = 0 if restart else _read_state(state, size)
    progress = Progress(str(path), size, bytes_done=start, resumed_from=start)
    pending: list[legislation.InstrumentIn] = []
    last_report = time.monotonic()

    async def flush(offset: int) -> None:
        if pending:
            if run_id is None:
                progress.add(await _ingest(db, ctx, pending))
            else:
                progress.add(await _ingest_bulk(db, ctx, pending, run_id))
            pending.clear()
        _write_state(state, size, offset)

    async def take(chunk: list[importers.CorpusRecord]) -> None:
        nonlocal last_report
        for record in chunk:
            progress.records += 1
            if record.instrument is None:
                progress.skipped += 1
                if len(progress.skip_reasons) < 20:
                    progress.skip_reasons.append(f"line {record.line_number}: {record.skipped}")
            else:
                pending.append(record.instrument)
            if len(pending) >= batch:
                await flush(record.end_offset)
                progress.bytes_done = record.end_offset
            if report is not None and time.monotonic() - last_report >= report_every:
                progress.bytes_done = record.end_offset
                report(progress)
                last_report = time.monotonic()

    run_id: str | None = await bulk.begin(db, path) if bulk_path else None
    try:
        with path.open("rb") as stream:
            records = importers.read_corpus(stream, facts, start=start)

            def read_batch() -> list[importers.CorpusRecord]:
                return list(itertools.islice(records, batch))

            # The next batch is read while this one is written (the parse is most of an import's time).
            ahead = asyncio.ensure_future(asyncio.to_thread(read_batch))
            try:
                while chunk := await ahead:
                    ahead = asyncio.ensure_future(asyncio.to_thread(read_batch))
                    await take(chunk)
            finally:
                if not ahead.done():  # an error while writing: let the reading thread finish before closing
                    await asyncio.gather(ahead, return_exceptions=True)
        await flush(size)
        progress.bytes_done = size
    finally:
        if run_id is not None:
            progress.indexing = True
            if report is not None:
                report(progress)
            indexing = time.monotonic()
            progress.indexed = await bulk.finish(db, run_id)
            progress.index_seconds = time.monotonic() - indexing
            progress.indexing = False
    progress.bytes_done = size
    state.unlink(missing_ok=True)
    if report is not None:
        report(progress)
    return progress


async def import_file(
    db: Database,
    ctx: Context,
    name: str,
    data: bytes | Path,
    facts: importers.FileFacts,
    *,
    kind: importers.FileKind,
) -> Progress:
    """One register file (DOCX, EPUB, XHTML, PDF) into the store (converted in a thread)."""
    size = len(data) if isinstance(data, bytes) else _size(data)
    doc = await asyncio.to_thread(importers.from_file, name, data, facts)
    progress = Progress(name, size, kind=kind, bytes_done=size, records=1)
    progress.add(await _ingest(db, ctx, [doc]))
    return progress


async def import_path(
    db: Database,
    ctx: Context,
    path: Path,
    facts: importers.FileFacts,
    *,
    name: str | None = None,
    restart: bool = False,
    batch: int = DEFAULT_BATCH,
    report: Callable[[Progress], None] | None = None,
) -> Progress:
    """A file of any importable kind: a corpus JSONL (its register defaulting to the corpus's) or one
    register file; 415 for another kind."""
    name = name or path.name
    kind = await asyncio.to_thread(importers.kind_of_path, path, name)
    if kind is importers.FileKind.JSONL:
        if facts.register is Register.OTHER:
            facts = replace(facts, register=Register.OALC)
        return await import_corpus(db, ctx, path, facts, restart=restart, batch=batch, report=report)
    if kind is None:
        raise importers.UnsupportedFile(f"{name}: not a DOCX, EPUB, XHTML, PDF or JSONL file", field="file")
    return await import_file(db, ctx, name, path, facts, kind=kind)
