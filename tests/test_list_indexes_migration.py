"""Migration 0012 backfills document_tags from the tags documents were uploaded with before it: after
upgrading, the document list filters those documents by tag (any case) and pages them in SQL, newest
first; the downgrade drops the table and puts the old indexes back.

Runs on its own database (a file on SQLite, a database of its own on PostgreSQL), migrated step by step."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command

import migrations
from domain.kernel.db import Database, JSONType, UTCDateTime, make_engine
from tests.migration_support import scratch_database

old = sa.MetaData()
organisations = sa.Table(
    "organisations",
    old,
    sa.Column("id", sa.String(36)),
    sa.Column("name", sa.String(200)),
    sa.Column("name_key", sa.String(200)),
    sa.Column("created_at", UTCDateTime()),
)
documents = sa.Table(
    "documents",
    old,
    sa.Column("id", sa.String(36)),
    sa.Column("org_id", sa.String(36)),
    sa.Column("owner_key_id", sa.String(36)),
    sa.Column("title", sa.String(500)),
    sa.Column("kind", sa.String(16)),
    sa.Column("media_type", sa.String(120)),
    sa.Column("size_bytes", sa.Integer()),
    sa.Column("sha256", sa.String(64)),
    sa.Column("blob_path", sa.String(500)),
    sa.Column("tags", JSONType),
    sa.Column("status", sa.String(16)),
    sa.Column("version", sa.Integer()),
    sa.Column("created_at", UTCDateTime()),
    sa.Column("updated_at", UTCDateTime()),
)

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
# More documents than one backfill batch (1,000), so the batching is exercised.
COUNT = 1_203
TAGS = [["Finance", "q1"], [], ["hr"], ["finance", "FINANCE", "Legal"], ["q1"]]


@pytest.fixture
async def scratch_url() -> AsyncIterator[str]:
    """A database of its own, at the schema before 0012."""
    async with scratch_database("lists", ("0011_staff_sessions",)) as url:
        yield url


async def _write_old_rows(url: str) -> tuple[str, list[dict[str, Any]]]:
    """An organisation's documents as the code before 0012 wrote them (tags only in the JSON column)."""
    org = str(uuid.uuid4())
    rows = [
        {
            "id": str(uuid.uuid4()),
            "org_id": org,
            "owner_key_id": "old-key",
            "title": f"Old {n}",
            "kind": "markdown",
            "media_type": "text/markdown",
            "size_bytes": 10,
            "sha256": "0" * 64,
            "blob_path": f"old/{n}",
            "tags": TAGS[n % len(TAGS)],
            "status": "failed",
            "version": 0,
            "created_at": T0 + timedelta(seconds=n // 2),  # pairs share an instant: ties break by id
            "updated_at": T0,
        }
        for n in range(COUNT)
    ]
    engine = make_engine(url, null_pool=True)
    async with engine.begin() as conn:
        await conn.execute(
            organisations.insert().values(id=org, name="Oldco", name_key="oldco", created_at=T0)
        )
        await conn.execute(documents.insert(), rows)
    await engine.dispose()
    return org, rows


def _newest_first(rows: list[dict[str, Any]]) -> list[str]:
    return [r["id"] for r in sorted(rows, key=lambda r: (r["created_at"], r["id"]), reverse=True)]


async def test_documents_uploaded_before_0012_are_listed_by_tag_after_it(
    scratch_url: str, runtime: Any, aiohttp_client: Any
) -> None:
    from domain.documents import servicekeys
    from domain.kernel.context import SYSTEM
    from web.app import create_docs_app

    _org, rows = await _write_old_rows(scratch_url)
    await migrations.upgrade_async(scratch_url, "heads")

    db = Database(scratch_url)
    try:
        rt = dataclasses.replace(runtime, db=db, relay=None, worker=None, scheduler=None)
        docs = await aiohttp_client(create_docs_app(rt))
        async with db.transaction() as session:
            key = await servicekeys.create(
                session, SYSTEM, org_name="Oldco", scopes=servicekeys.parse_scopes("all")
            )
        headers = {"X-Api-Key": key["apiKey"]}

        async def listed(query: str) -> tuple[int, list[str]]:
            ids: list[str] = []
            total = -1
            for page in range(1, 100):
                resp = await docs.get(f"/api/documents?{query}&page={page}&pageSize=100", headers=headers)
                assert resp.status == 200, await resp.text()
                body = await resp.json()
                total = body["total"]
                if not body["data"]:
                    return total, ids
                ids.extend(d["id"] for d in body["data"])
            raise AssertionError("the pages never ended")

        assert await listed("") == (COUNT, _newest_first(rows))
        finance = [r for r in rows if any(t.casefold() == "finance" for t in r["tags"])]
        for tag in ("finance", "FINANCE"):
            assert await listed(f"tag={tag}") == (len(finance), _newest_first(finance))
        q1 = [r for r in rows if "q1" in r["tags"]]
        assert await listed("tag=q1") == (len(q1), _newest_first(q1))
        assert await listed("tag=legal") == (
            len([r for r in rows if "Legal" in r["tags"]]),
            _newest_first([r for r in rows if "Legal" in r["tags"]]),
        )
        body = await (await docs.get("/api/documents?tag=finance&pageSize=1", headers=headers)).json()
        newest = next(r for r in rows if r["id"] == body["data"][0]["id"])
        assert body["data"][0]["tags"] == newest["tags"] == ["Finance", "q1"]  # as uploaded
    finally:
        await db.dispose()

    await asyncio.to_thread(command.downgrade, migrations.config(scratch_url), "0011_staff_sessions")
    engine = make_engine(scratch_url, null_pool=True)
    try:
        async with engine.connect() as conn:

            def schema(c: Any) -> tuple[set[str], set[str], set[str]]:
                inspector = sa.inspect(c)
                return (
                    set(inspector.get_table_names()),
                    {i["name"] for i in inspector.get_indexes("documents")},
                    {i["name"] for i in inspector.get_indexes("document_comments")},
                )

            tables, doc_indexes, comment_indexes = await conn.run_sync(schema)
            assert "document_tags" not in tables
            assert "ix_documents_org_created" in doc_indexes
            assert "ix_documents_org_created_id" not in doc_indexes
            assert "ix_document_comments_org_id" in comment_indexes
            count = await conn.scalar(sa.select(sa.func.count()).select_from(documents))
            assert count == COUNT
    finally:
        await engine.dispose()
