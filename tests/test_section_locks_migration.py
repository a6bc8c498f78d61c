"""Migration 0030 turns the documents' section locks into the shared table of topics and documents: a lock
held before the upgrade is served as the same document's lock after it (and still refuses others); the
downgrade moves the documents' locks back and drops the topics'.

Runs on its own database (a file on SQLite, a database of its own on PostgreSQL), migrated step by step."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from alembic import command

import migrations
from domain.kernel.db import JSONType, UTCDateTime, make_engine
from tests.migration_support import scratch_database

BEFORE = "0029_approval_policy"
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

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


def _lock_columns() -> list[sa.Column[object]]:
    """The columns a lock keeps across the migration (a Column belongs to one Table: new ones each time)."""
    return [
        sa.Column("id", sa.String(36)),
        sa.Column("section_id", sa.String(256)),
        sa.Column("agent_id", sa.String(36)),
        sa.Column("agent_name", sa.String(128)),
        sa.Column("ttl_seconds", sa.Integer()),
        sa.Column("created_at", UTCDateTime()),
        sa.Column("expires_at", UTCDateTime()),
    ]


old_locks = sa.Table("section_locks", old, sa.Column("document_id", sa.String(36)), *_lock_columns())
new = sa.MetaData()
new_locks = sa.Table(
    "section_locks",
    new,
    sa.Column("resource_type", sa.String(20)),
    sa.Column("resource_id", sa.String(36)),
    *_lock_columns(),
)

ORG, DOC, TOPIC, LOCK, TOPIC_LOCK = (f"00000000-0000-4000-8000-00000000000{n}" for n in range(1, 6))
HOLDER = "00000000-0000-4000-8000-0000000000aa"
LOCK_ROW = {
    "id": LOCK,
    "section_id": "sec:plan",
    "agent_id": HOLDER,
    "agent_name": "Ada",
    "ttl_seconds": 300,
    "created_at": T0,
    "expires_at": T0 + timedelta(seconds=300),
}


async def _columns(url: str, table: str) -> set[str]:
    engine = make_engine(url, null_pool=True)
    try:
        async with engine.connect() as conn:
            return await conn.run_sync(lambda c: {col["name"] for col in sa.inspect(c).get_columns(table)})
    finally:
        await engine.dispose()


async def _rows(url: str, table: sa.Table) -> list[dict[str, object]]:
    engine = make_engine(url, null_pool=True)
    try:
        async with engine.connect() as conn:
            return [dict(r._mapping) for r in (await conn.execute(sa.select(table))).all()]
    finally:
        await engine.dispose()


async def test_document_locks_become_shared_rows_and_go_back() -> None:
    async with scratch_database("locks", ["heads"]) as url:
        await asyncio.to_thread(command.downgrade, migrations.config(url), BEFORE)
        assert "document_id" in await _columns(url, "section_locks")
        engine = make_engine(url, null_pool=True)
        try:
            async with engine.begin() as conn:
                await conn.execute(
                    organisations.insert(), {"id": ORG, "name": "Acme", "name_key": "acme", "created_at": T0}
                )
                await conn.execute(
                    documents.insert(),
                    {
                        "id": DOC,
                        "org_id": ORG,
                        "owner_key_id": "key",
                        "title": "Plan",
                        "kind": "markdown",
                        "media_type": "text/markdown",
                        "size_bytes": 10,
                        "sha256": "0" * 64,
                        "blob_path": "x",
                        "tags": [],
                        "status": "ready",
                        "version": 1,
                        "created_at": T0,
                        "updated_at": T0,
                    },
                )
                await conn.execute(old_locks.insert(), {**LOCK_ROW, "document_id": DOC})
        finally:
            await engine.dispose()

        await migrations.upgrade_async(url, "heads")
        assert "document_id" not in await _columns(url, "section_locks")
        [row] = await _rows(url, new_locks)
        assert row["resource_type"] == "document"
        assert row["resource_id"] == DOC
        assert (row["section_id"], row["agent_id"], row["ttl_seconds"]) == ("sec:plan", HOLDER, 300)
        assert row["expires_at"] == LOCK_ROW["expires_at"]
        engine = make_engine(url, null_pool=True)
        try:
            async with engine.begin() as conn:
                # A topic's lock on a section of the same id is a row of its own …
                await conn.execute(
                    new_locks.insert(),
                    {**LOCK_ROW, "id": TOPIC_LOCK, "resource_type": "topic", "resource_id": TOPIC},
                )
            # … and a second lock on the document's section is refused by the unique key.
            try:
                async with engine.begin() as conn:
                    await conn.execute(
                        new_locks.insert(),
                        {**LOCK_ROW, "id": TOPIC, "resource_type": "document", "resource_id": DOC},
                    )
                raise AssertionError("a second lock on one section was stored")
            except sa.exc.IntegrityError:
                pass
        finally:
            await engine.dispose()

        await asyncio.to_thread(command.downgrade, migrations.config(url), BEFORE)
        assert {"resource_type", "resource_id"}.isdisjoint(await _columns(url, "section_locks"))
        [back] = await _rows(url, old_locks)
        assert back["document_id"] == DOC
        assert (back["id"], back["section_id"], back["agent_name"]) == (LOCK, "sec:plan", "Ada")

        await migrations.upgrade_async(url, "heads")  # and up again, as a deployment rolled forward would
        assert [r["resource_id"] for r in await _rows(url, new_locks)] == [DOC]
