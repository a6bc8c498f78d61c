"""The bulk path of a corpus import (issue 34, domain/axiom/bulk.py): the full-text index is brought up
to date once at the end of the import, and that is safe. An import killed part-way leaves its sections
stored and its state recorded; the next import of the file (resuming) or the scheduler's sweep finishes the
indexing, after which search finds every imported section. An ordinary ingest during a bulk import is
searchable at once. The corpora are written by the tests (tests/legislation_files.py): invented
instruments only.

Every synthetic instrument has the word "dry" in exactly two sections (s 180 and its subsection (1)) and
nowhere else, so a search for it counts the instruments whose sections the full-text index holds."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select, text

from domain import wiring
from domain.axiom.bulk import FINISH_JOB
from domain.axiom.models import LegislationBulkImport, LegislationDoc
from domain.kernel import sweeps
from domain.kernel.models import OutboxJob
from tests.axiom_helpers import axiom_key, ingest, staff_headers
from tests.legislation_files import write_corpus
from tests.processes import concord
from tests.waiting import eventually

RECORDS = 2400  # "dry" twice each: 4,800 sections, under the search's 5,000 candidates


async def _search_total(hub: Any, key: dict[str, Any], q: str) -> int:
    resp = await hub.get("/api/axiom/legislation/search", params={"q": q, "limit": 1}, headers=key["headers"])
    body = await resp.json()
    assert resp.status == 200, body
    return int(body["total"])


async def _stored(runtime: Any) -> int:
    async with runtime.db.read() as session:
        return await session.scalar(select(func.count()).select_from(LegislationDoc)) or 0


async def _under_way(runtime: Any) -> int:
    async with runtime.db.read() as session:
        return await session.scalar(select(func.count()).select_from(LegislationBulkImport)) or 0


async def _gin_index_exists(runtime: Any) -> bool:
    async with runtime.db.read() as session:
        return bool(
            await session.scalar(text("SELECT to_regclass('ix_legislation_sections_fulltext') IS NOT NULL"))
        )


async def _start_import(corpus: Path, *args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "concord_cli",
        "legislation",
        "import",
        str(corpus),
        *args,
        env=os.environ.copy(),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )


async def _kill_mid_import(runtime: Any, corpus: Path) -> int:
    """`concord legislation import` killed (SIGKILL) once it has committed a batch; the instruments stored."""
    state = corpus.with_name(corpus.name + ".import-state")
    proc = await _start_import(corpus, "--batch", "20")
    try:
        for _ in range(1200):
            if state.exists():
                break
            assert proc.returncode is None, "the import ended before it could be killed"
            await asyncio.sleep(0.05)
        assert state.exists()
    finally:
        proc.send_signal(signal.SIGKILL)
        await proc.wait()
    stored = await _stored(runtime)
    assert 0 < stored < RECORDS
    return stored


async def _assert_left_unfinished(hub: Any, runtime: Any, key: dict[str, Any], stored: int) -> None:
    """What a kill leaves: the import recorded as under way, and its sections not (yet) all indexed."""
    assert await _under_way(runtime) == 1
    if runtime.db.is_sqlite:
        assert await _search_total(hub, key, "dry") < 2 * stored
    else:  # PostgreSQL: the GIN index is gone, search is right without it (only slower)
        assert not await _gin_index_exists(runtime)
        assert await _search_total(hub, key, "dry") == 2 * stored


@pytest.mark.slow
async def test_an_import_killed_mid_way_and_resumed_leaves_every_section_searchable(
    hub, runtime, tmp_path: Path
):
    key = await axiom_key(hub)
    corpus = write_corpus(tmp_path / "corpus.jsonl", RECORDS)
    stored = await _kill_mid_import(runtime, corpus)
    await _assert_left_unfinished(hub, runtime, key, stored)

    code, out, err = await concord("legislation", "import", str(corpus), timeout=300)
    assert code == 0, err
    assert "resumed at byte" in err
    assert "bringing the full-text index up to date" in err  # what the operator sees before the indexing
    assert await _stored(runtime) == RECORDS
    assert await _under_way(runtime) == 0
    assert await _search_total(hub, key, "dry") == 2 * RECORDS
    if runtime.db.is_sqlite:
        assert "sections full-text indexed" in out
    else:
        assert "full-text index rebuilt" in out
        assert await _gin_index_exists(runtime)
    # The resolver finds a section of an instrument stored before the kill and one stored after it.
    for n in (0, RECORDS - 2):
        resp = await hub.get(
            "/api/axiom/resolve",
            params={"citation": f"Synthetic Widget Number {n} Act 2031 (NSW) s 180(1)"},
        )
        body = await resp.json()
        assert resp.status == 200, body
        assert body["sectionRef"] == "s 180(1)", body
        assert body["unverifiedPinpoint"] is None


async def test_the_sweep_finishes_the_indexing_of_an_import_that_died(hub, runtime, tmp_path: Path):
    key = await axiom_key(hub)
    corpus = write_corpus(tmp_path / "corpus.jsonl", RECORDS)
    stored = await _kill_mid_import(runtime, corpus)
    await _assert_left_unfinished(hub, runtime, key, stored)

    item = next(s for s in wiring.SWEEPS if s.name == "axiom.finish_bulk_imports")
    # The sweep drops the dead import's row and hands the indexing to a worker (a chunk a transaction).
    assert await sweeps.run(runtime.db, item, "test") == 2
    assert await _under_way(runtime) == 0

    await eventually(lambda: _job_done(runtime), timeout=60)  # one job (`.one()`), done
    assert await _search_total(hub, key, "dry") == 2 * stored
    if not runtime.db.is_sqlite:
        assert await _gin_index_exists(runtime)
    assert await sweeps.run(runtime.db, item, "test") == 0  # nothing left to do


async def _job_done(runtime: Any) -> bool:
    async with runtime.db.read() as session:
        job = (await session.scalars(select(OutboxJob).where(OutboxJob.actor == FINISH_JOB.name))).one()
    return job.status == "done"


@pytest.mark.slow
async def test_an_ingest_during_a_bulk_import_is_searchable_at_once(hub, runtime, tmp_path: Path):
    staff = await staff_headers(runtime)
    key = await axiom_key(hub)
    corpus = write_corpus(tmp_path / "corpus.jsonl", RECORDS)
    state = corpus.with_name(corpus.name + ".import-state")
    proc = await _start_import(corpus, "--batch", "20")
    try:
        for _ in range(1200):
            if state.exists():
                break
            await asyncio.sleep(0.05)
        assert state.exists()
        await ingest(
            hub,
            staff,
            {
                "title": "Quokka Welfare Act 2031",
                "jurisdiction": "AU-WA",
                "type": "act",
                "sections": [
                    {"sectionId": "s 1", "title": "Short title", "content": "The quokka shall be fed."},
                    {"sectionId": "s 2", "title": "Shade", "content": "A quokka must have marsupial shade."},
                ],
            },
        )
        assert await _search_total(hub, key, "marsupial") == 1
        assert await _search_total(hub, key, "quokka fed") == 1
        assert await _under_way(runtime) == 1  # the bulk import was still under way all along
    finally:
        code = await asyncio.wait_for(proc.wait(), timeout=300)
    assert code == 0
    assert await _under_way(runtime) == 0
    assert await _search_total(hub, key, "marsupial") == 1
    assert await _search_total(hub, key, "dry") == 2 * RECORDS
