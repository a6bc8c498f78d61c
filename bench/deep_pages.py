"""Deep pages (run on demand: `python -m bench.deep_pages [--database-url URL]`; never part of the tests).

Fills a scratch database with 1,000,000 events and 1,000,000 audit entries (bulk: Core executemany on
SQLite, COPY on PostgreSQL) and five organisations of 10,000 documents, then times, in the same run, the
first page against a page 10,000 deep (50 per page) of the queries the list endpoints run:

- a topic's events (`GET /api/pact/{id}/events?after=`), keyset on (stream, seq);
- the same filtered to one section (`GET /api/tap/{id}/poll?since=&sectionId=`);
- an agent's audit trail (`GET /api/audit/me?cursor=`), keyset on (key_hash, created_at, id);
- the document list (`GET /api/documents?page=&pageSize=20`), first against last page, with and without a
  tag filter, and the same filtered list as it was done before (every document loaded, filtered and paged
  in Python) as a baseline.

Each figure is the median of `--repeat` calls of the domain function the handler calls (HTTP adds the same
constant to both), and the ratio deep/first is printed beside it. `--explain` prints the query plans.

SQLite: a temporary file, deleted afterwards. PostgreSQL: `--database-url` names a server's maintenance
database (postgresql://postgres@127.0.0.1:5432/postgres); the benchmark creates a database of its own
beside it and drops it afterwards. Nothing is written under the repository.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import sqlalchemy as sa
from sqlalchemy.engine import make_url

import migrations
from domain.documents import library
from domain.documents.access import Caller
from domain.documents.models import Document
from domain.kernel import audit, events
from domain.kernel.context import Context
from domain.kernel.db import Database
from domain.kernel.models import AuditEntry
from domain.tables import metadata
from tests.query_plans import captured, explain
from web.docs.schemas import DocumentList, DocumentSummary

TABLES = metadata.tables
T0 = datetime(2026, 1, 1, tzinfo=UTC)
CHUNK = 20_000
DEEP_STREAM = "topic:00000000-0000-4000-8000-00000000deep"
DEEP_KEY = "d" * 64
SECTION = "sec:answer:evidence"
TAG_SETS = [["finance", "q1"], ["Legal"], ["finance", "hr"], ["q2"]]  # "finance" on every other document


# ---- the scratch database ----------------------------------------------------------------------------


class Scratch:
    """A database of the benchmark's own: a temporary SQLite file, or a PostgreSQL database it creates."""

    def __init__(self, admin_url: str | None) -> None:
        self.admin_url = admin_url
        self.tmp = Path(tempfile.mkdtemp(prefix="concord-bench-deep-"))
        self.name = f"concord_bench_{uuid.uuid4().hex[:10]}"
        if admin_url:
            url = make_url(admin_url).set(drivername="postgresql+asyncpg", database=self.name)
            self.url = url.render_as_string(hide_password=False)
        else:
            self.url = f"sqlite+aiosqlite:///{self.tmp / 'bench.db'}"
        self.is_pg = admin_url is not None

    def _admin_dsn(self) -> str:
        assert self.admin_url is not None
        return make_url(self.admin_url).set(drivername="postgresql").render_as_string(hide_password=False)

    def dsn(self) -> str:
        return make_url(self.url).set(drivername="postgresql").render_as_string(hide_password=False)

    async def create(self) -> None:
        if self.is_pg:
            conn = await asyncpg.connect(self._admin_dsn())
            try:
                await conn.execute(f'CREATE DATABASE "{self.name}"')
            finally:
                await conn.close()
        await migrations.upgrade_async(self.url)

    async def drop(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)
        if self.is_pg:
            conn = await asyncpg.connect(self._admin_dsn())
            try:
                await conn.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
            finally:
                await conn.close()


# ---- the data ------------------------------------------------------------------------------------------


def event_rows(total: int, streams: int) -> Iterator[dict[str, Any]]:
    """Events in time order: three in five go to the deep stream (every tenth of those on SECTION), the
    rest round-robin over `streams` other streams, so the deep stream's rows are spread over the table."""
    seqs: dict[str, int] = {}
    for i in range(total):
        if i % 5 < 3:
            stream = DEEP_STREAM
        else:
            stream = f"topic:{uuid.UUID(int=i % streams)}"
        seq = seqs[stream] = seqs.get(stream, 0) + 1
        yield {
            "stream": stream,
            "seq": seq,
            "type": "pact.proposal.created",
            "actor_id": None,
            "actor_name": "bench",
            "actor_kind": "AiAgent",
            "section_id": SECTION if seq % 10 == 0 else "sec:answer",
            "data": {"n": i},
            "created_at": T0 + timedelta(milliseconds=10 * i),
        }


def stream_rows(total: int, streams: int) -> list[dict[str, Any]]:
    counts: dict[str, int] = {}
    for i in range(total):
        stream = DEEP_STREAM if i % 5 < 3 else f"topic:{uuid.UUID(int=i % streams)}"
        counts[stream] = counts.get(stream, 0) + 1
    return [{"stream": s, "last_seq": n} for s, n in counts.items()]


def audit_rows(total: int, keys: int) -> Iterator[dict[str, Any]]:
    """Entries in time order, three in five under DEEP_KEY; every two share a timestamp (ties)."""
    for i in range(total):
        key = DEEP_KEY if i % 5 < 3 else f"{i % keys:064x}"
        yield {
            "key_hash": key,
            "actor_id": None,
            "op": "topic.create",
            "entity_type": "topic",
            "entity_id": str(uuid.UUID(int=i)),
            "before_json": None,
            "after_json": '{"title":"bench"}',
            "request_id": None,
            "ip_country": None,
            "created_at": T0 + timedelta(milliseconds=i // 2),
        }


def document_rows(org_id: str, total: int) -> Iterator[dict[str, Any]]:
    for i in range(total):
        yield {
            "id": str(uuid.uuid4()),
            "org_id": org_id,
            "owner_key_id": "bench",
            "title": f"Document {i}",
            "filename": f"document-{i}.md",
            "kind": "markdown",
            "media_type": "text/markdown",
            "size_bytes": 100,
            "sha256": "0" * 64,
            "blob_path": f"bench/{i}",
            "tags": TAG_SETS[i % len(TAG_SETS)],
            "status": "ready",
            "error": None,
            "content": f"# Document {i}\n",
            "version": 1,
            "conversion_ms": 1,
            "created_at": T0 + timedelta(seconds=i),
            "updated_at": T0 + timedelta(seconds=i),
        }


def tag_rows(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "document_id": d["id"],
            "tag_key": library.tag_key(t),
            "org_id": d["org_id"],
            "created_at": d["created_at"],
        }
        for d in docs
        for t in dict.fromkeys(d["tags"])
    ]


def chunks(rows: Iterator[dict[str, Any]], size: int = CHUNK) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    for row in rows:
        batch.append(row)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


async def bulk_insert(
    scratch: Scratch, db: Database, table: sa.Table, rows: Iterator[dict[str, Any]]
) -> None:
    """Core executemany on SQLite; COPY on PostgreSQL (JSON columns as text, which COPY parses)."""
    if not scratch.is_pg:
        for batch in chunks(rows):
            async with db.engine.begin() as conn:
                await conn.execute(table.insert(), batch)
        return
    raw = await asyncpg.connect(scratch.dsn())
    try:
        for batch in chunks(rows):
            columns = list(batch[0])
            records = [
                tuple(json.dumps(v) if isinstance(v, dict | list) else v for v in row.values())
                for row in batch
            ]
            await raw.copy_records_to_table(table.name, records=records, columns=columns)
    finally:
        await raw.close()


async def fill(scratch: Scratch, db: Database, args: argparse.Namespace) -> dict[str, str]:
    orgs = {"bench": str(uuid.uuid4()), **{f"other {n}": str(uuid.uuid4()) for n in range(args.other_orgs)}}
    began = time.perf_counter()
    await bulk_insert(scratch, db, TABLES["events"], event_rows(args.events, args.streams))
    await bulk_insert(scratch, db, TABLES["event_streams"], iter(stream_rows(args.events, args.streams)))
    print(f"  {args.events:,} events in {time.perf_counter() - began:.0f} s", flush=True)
    began = time.perf_counter()
    await bulk_insert(scratch, db, TABLES["audit_entries"], audit_rows(args.audit, args.keys))
    print(f"  {args.audit:,} audit entries in {time.perf_counter() - began:.0f} s", flush=True)
    began = time.perf_counter()
    org_rows = [{"id": i, "name": n, "name_key": n, "created_at": T0} for n, i in orgs.items()]
    await bulk_insert(scratch, db, TABLES["organisations"], iter(org_rows))
    for org_id in orgs.values():
        docs = list(document_rows(org_id, args.documents))
        await bulk_insert(scratch, db, TABLES["documents"], iter(docs))
        await bulk_insert(scratch, db, TABLES["document_tags"], iter(tag_rows(docs)))
    print(f"  {len(orgs) * args.documents:,} documents in {time.perf_counter() - began:.0f} s", flush=True)
    began = time.perf_counter()
    # Statistics (and on PostgreSQL the visibility map that index-only scans read), as a database that has
    # been running for a while has them from autovacuum.
    if scratch.is_pg:
        conn = await asyncpg.connect(scratch.dsn())
        try:
            await conn.execute("VACUUM ANALYZE")
        finally:
            await conn.close()
    else:
        async with db.engine.connect() as sqlite:
            await sqlite.exec_driver_sql("ANALYZE")
            await sqlite.commit()
    print(f"  statistics in {time.perf_counter() - began:.0f} s", flush=True)
    return orgs


# ---- the measurements -----------------------------------------------------------------------------------


async def old_list_documents(db: Database, caller: Caller, *, tag: str, page: int, page_size: int) -> int:
    """The document list as it was before: every document of the organisation loaded, filtered and paged
    in Python."""
    async with db.read() as session:
        stmt = sa.select(Document).where(Document.org_id == caller.org_id)
        rows = list((await session.scalars(stmt.order_by(Document.created_at.desc(), Document.id))).all())
        wanted = tag.casefold()
        rows = [d for d in rows if any(t.casefold() == wanted for t in d.tags or [])]
        start = (page - 1) * page_size
        return len([DocumentSummary.answer(d) for d in rows[start : start + page_size]])


async def old_audit_page(db: Database, *, limit: int, cursor: str | None) -> int:
    """The audit trail's keyset as it was before: `created_at < t OR (created_at = t AND id < i)`, which
    neither database turns into an index range, so the scan starts at the newest entry every time."""
    stmt = sa.select(AuditEntry).where(AuditEntry.key_hash == DEEP_KEY)
    if cursor:
        when, entry_id = audit.decode_cursor(DEEP_KEY, cursor)
        stmt = stmt.where(
            sa.or_(
                AuditEntry.created_at < when,
                sa.and_(AuditEntry.created_at == when, AuditEntry.id < entry_id),
            )
        )
    stmt = stmt.order_by(AuditEntry.created_at.desc(), AuditEntry.id.desc()).limit(limit + 1)
    async with db.read() as session:
        return len((await session.scalars(stmt)).all())


async def timed(
    first: Callable[[], Awaitable[Any]], deep: Callable[[], Awaitable[Any]], repeat: int
) -> tuple[float, float]:
    """Median milliseconds of each call, the two alternating so that load from other work on the machine
    falls on both alike."""
    for _ in range(3):
        await first()
        await deep()
    samples: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeat):
        for call, into in ((first, samples[0]), (deep, samples[1])):
            began = time.perf_counter()
            await call()
            into.append(time.perf_counter() - began)
    return statistics.median(samples[0]) * 1000, statistics.median(samples[1]) * 1000


async def measure(
    db: Database, orgs: dict[str, str], args: argparse.Namespace
) -> list[tuple[str, float, float]]:
    limit, depth = args.limit, args.depth
    deep_after = depth * limit
    caller = Caller(ctx=Context(), org_id=orgs["bench"], key_id="bench", name="bench")

    async def event_page(after: int, section: str | None = None) -> Any:
        async with db.read() as session:
            page = await events.page(session, DEEP_STREAM, after=after, limit=limit, section_id=section)
        assert len(page.events) == limit, "the deep stream is shorter than the deep page"
        return page

    async with db.read() as session:
        row = (
            await session.execute(
                sa.select(AuditEntry.created_at, AuditEntry.id)
                .where(AuditEntry.key_hash == DEEP_KEY)
                .order_by(AuditEntry.created_at.desc(), AuditEntry.id.desc())
                .offset(deep_after - 1)
                .limit(1)
            )
        ).one()
    deep_cursor = audit.encode_cursor(DEEP_KEY, row.created_at, row.id)

    async def audit_page(cursor: str | None) -> Any:
        async with db.read() as session:
            page = await audit.list_for_key(session, DEEP_KEY, limit=limit, cursor=cursor)
        assert len(page["results"]) == limit
        return page

    doc_size = 20
    all_pages = -(-args.documents // doc_size)
    tagged_pages = -(-args.documents // 2 // doc_size)

    async def doc_page(tag: str | None, page: int) -> Any:
        async with db.read() as session:
            found = await library.list_documents(session, caller, tag=tag, page=page, page_size=doc_size)
        body = DocumentList.answer(found)  # the answer as the API writes it, as before
        assert body["data"], (tag, page, body["total"])
        return body

    cases: list[tuple[str, Callable[[], Awaitable[Any]], Callable[[], Awaitable[Any]]]] = [
        (
            f"events of a stream, after= (page {depth:,} of {limit})",
            lambda: event_page(0),
            lambda: event_page(deep_after),
        ),
        (
            f"events of one section (poll sectionId), since={deep_after:,}",
            lambda: event_page(0, SECTION),
            lambda: event_page(deep_after, SECTION),
        ),
        (
            f"audit trail of a key, cursor= (page {depth:,} of {limit})",
            lambda: audit_page(None),
            lambda: audit_page(deep_cursor),
        ),
        (
            f"  as before (keyset condition with OR), page {depth:,}",
            lambda: old_audit_page(db, limit=limit, cursor=None),
            lambda: old_audit_page(db, limit=limit, cursor=deep_cursor),
        ),
        (
            f"document list, page {all_pages} of {all_pages} (20 a page)",
            lambda: doc_page(None, 1),
            lambda: doc_page(None, all_pages),
        ),
        (
            f"document list, tag=finance, page {tagged_pages} of {tagged_pages}",
            lambda: doc_page("finance", 1),
            lambda: doc_page("finance", tagged_pages),
        ),
        (
            f"  as before (loaded and paged in Python), page {tagged_pages}",
            lambda: old_list_documents(db, caller, tag="finance", page=1, page_size=doc_size),
            lambda: old_list_documents(db, caller, tag="finance", page=tagged_pages, page_size=doc_size),
        ),
    ]
    results: list[tuple[str, float, float]] = []
    for name, first, deep in cases:
        repeat = args.repeat if not name.startswith("  as before") else max(3, args.repeat // 10)
        first_ms, deep_ms = await timed(first, deep, repeat)
        results.append((name, first_ms, deep_ms))
        if args.explain and not name.startswith("  as before"):
            with captured(db.engine) as seen:
                await deep()
            for statement, parameters in seen:
                if statement.lstrip().upper().startswith("SELECT"):
                    print(f"\n-- {name}\n{statement}")
                    for line in await explain(db, statement, parameters, strict=False):
                        print(f"   {line}")
    return results


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--database-url", help="PostgreSQL maintenance database URL; default: a SQLite file")
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--audit", type=int, default=1_000_000)
    parser.add_argument("--documents", type=int, default=10_000, help="per organisation")
    parser.add_argument("--other-orgs", type=int, default=4, help="organisations besides the measured one")
    parser.add_argument("--streams", type=int, default=2_000, help="streams besides the deep one")
    parser.add_argument("--keys", type=int, default=1_000, help="agent keys besides the deep one")
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--depth", type=int, default=10_000, help="the deep page's number")
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--explain", action="store_true", help="print the deep queries' plans")
    args = parser.parse_args()
    room = min(args.events, args.audit) * 3 // 5  # the deep stream's and the deep key's share
    if room < (args.depth + 1) * args.limit:
        args.depth = max(1, room // args.limit - 1)
        print(f"note: too few rows for that depth; measuring page {args.depth:,} instead")

    scratch = Scratch(args.database_url)
    kind = "PostgreSQL" if scratch.is_pg else "SQLite"
    print(f"{kind}: scratch database {scratch.name if scratch.is_pg else scratch.url}", flush=True)
    await scratch.create()
    db = Database(scratch.url)
    try:
        orgs = await fill(scratch, db, args)
        results = await measure(db, orgs, args)
        print(f"\n{'query (' + kind + ')':64} {'first ms':>9} {'deep ms':>9} {'deep/first':>10}")
        for name, first, deep in results:
            print(f"{name:64} {first:9.2f} {deep:9.2f} {deep / first:10.2f}")
        print(
            f"({args.events:,} events, {args.audit:,} audit entries, "
            f"{1 + args.other_orgs} x {args.documents:,} documents; "
            f"median of {args.repeat} calls of the domain function, in process)"
        )
    finally:
        await db.dispose()
        await scratch.drop()


if __name__ == "__main__":
    asyncio.run(main())
