"""Migration 0032 gives the document agents and comments already there no done signal and no agent (NULL),
in place, adds topic_comments, and its downgrade drops them again keeping every other row.

Runs on its own database (a file on SQLite, a database of its own on PostgreSQL), migrated step by step."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import command

import migrations
from domain.kernel.db import make_engine
from tests.migration_support import scratch_database

BEFORE = "0031_withdraw_intent_lifecycle"
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
ORG, DOC, AGENT, COMMENT = (f"00000000-0000-4000-8000-00000000000{n}" for n in range(1, 5))

ROWS = (
    (
        "INSERT INTO organisations (id, name, name_key, created_at) VALUES (:id, 'Acme', 'acme', :t)",
        {"id": ORG},
    ),
    (
        "INSERT INTO documents (id, org_id, owner_key_id, title, kind, media_type, size_bytes, sha256, "
        "blob_path, tags, status, version, created_at, updated_at) "
        "VALUES (:id, :org, 'key', 'Old', 'markdown', 'text/markdown', 1, :sha, 'x', '[]', 'ready', 1, "
        ":t, :t)",
        {"id": DOC, "org": ORG, "sha": "0" * 64},
    ),
    (
        "INSERT INTO document_agents (id, document_id, key_id, agent_name, role, capabilities, status, "
        "joined_at) VALUES (:id, :doc, 'key', 'ada', 'editor', '[]', 'active', :t)",
        {"id": AGENT, "doc": DOC},
    ),
    (
        "INSERT INTO document_comments (id, document_id, org_id, text, author, author_key_id, resolved, "
        "created_at) VALUES (:id, :doc, :org, 'Old note', 'ada', 'key', false, :t)",
        {"id": COMMENT, "doc": DOC, "org": ORG},
    ),
)


async def _columns(url: str, table: str) -> set[str]:
    engine = make_engine(url, null_pool=True)
    try:
        async with engine.connect() as conn:
            return await conn.run_sync(lambda c: {col["name"] for col in sa.inspect(c).get_columns(table)})
    finally:
        await engine.dispose()


async def _tables(url: str) -> set[str]:
    engine = make_engine(url, null_pool=True)
    try:
        async with engine.connect() as conn:
            return set(await conn.run_sync(lambda c: sa.inspect(c).get_table_names()))
    finally:
        await engine.dispose()


async def test_existing_agents_and_comments_take_null_and_the_downgrade_keeps_them() -> None:
    async with scratch_database("pactdone", ["heads"]) as url:
        await asyncio.to_thread(command.downgrade, migrations.config(url), BEFORE)
        assert "done_status" not in await _columns(url, "document_agents")
        assert "topic_comments" not in await _tables(url)
        engine = make_engine(url, null_pool=True)
        try:
            async with engine.begin() as conn:
                for sql, params in ROWS:
                    await conn.execute(sa.text(sql), {**params, "t": T0})
        finally:
            await engine.dispose()

        await migrations.upgrade_async(url, "heads")
        assert {"done_status", "done_summary", "done_at"} <= await _columns(url, "document_agents")
        assert "topic_comments" in await _tables(url)
        engine = make_engine(url, null_pool=True)
        try:
            async with engine.connect() as conn:
                done = (
                    await conn.execute(
                        sa.text(
                            "SELECT done_status, done_summary, done_at FROM document_agents WHERE id = :id"
                        ),
                        {"id": AGENT},
                    )
                ).one()
                assert tuple(done) == (None, None, None)
                agent = await conn.scalar(
                    sa.text("SELECT agent_id FROM document_comments WHERE id = :id"), {"id": COMMENT}
                )
                assert agent is None
        finally:
            await engine.dispose()

        await asyncio.to_thread(command.downgrade, migrations.config(url), BEFORE)
        assert {"done_status", "done_summary", "done_at"}.isdisjoint(await _columns(url, "document_agents"))
        assert "agent_id" not in await _columns(url, "document_comments")
        assert "topic_comments" not in await _tables(url)
        engine = make_engine(url, null_pool=True)
        try:
            async with engine.connect() as conn:
                for table in ("documents", "document_agents", "document_comments"):
                    count = await conn.scalar(sa.text(f"SELECT count(*) FROM {table}"))
                    assert count == 1, table
        finally:
            await engine.dispose()
