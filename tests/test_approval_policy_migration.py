"""Migration 0029 gives the topics and documents already there the default approval policy, in place: rows
of other tables that reference them (a topic's participants and proposals, a document's agents) stay, and
the downgrade drops the two columns and keeps every row.

Runs on its own database (a file on SQLite, a database of its own on PostgreSQL), migrated step by step."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import command

import migrations
from domain.kernel.db import JSONType, UTCDateTime, make_engine
from tests.migration_support import scratch_database

BEFORE = "0026_drop_redundant_vote_index"
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

old = sa.MetaData()
agents = sa.Table(
    "agents",
    old,
    sa.Column("id", sa.String(36)),
    sa.Column("name", sa.String(128)),
    sa.Column("name_key", sa.String(128)),
    sa.Column("key_hash", sa.String(64)),
    sa.Column("created_at", UTCDateTime()),
)
topics = sa.Table(
    "topics",
    old,
    sa.Column("id", sa.String(36)),
    sa.Column("title", sa.String(500)),
    sa.Column("title_key", sa.String(500)),
    sa.Column("content", sa.Text()),
    sa.Column("version", sa.Integer()),
    sa.Column("tier", sa.String(20)),
    sa.Column("status", sa.String(20)),
    sa.Column("assumptions", JSONType),
    sa.Column("creator_id", sa.String(36)),
    sa.Column("created_at", UTCDateTime()),
    sa.Column("updated_at", UTCDateTime()),
)
participants = sa.Table(
    "topic_participants",
    old,
    sa.Column("topic_id", sa.String(36)),
    sa.Column("agent_id", sa.String(36)),
    sa.Column("role", sa.String(20)),
    sa.Column("joined_at", UTCDateTime()),
    sa.Column("aligned_rewarded", sa.Boolean()),
)
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
document_agents = sa.Table(
    "document_agents",
    old,
    sa.Column("id", sa.String(36)),
    sa.Column("document_id", sa.String(36)),
    sa.Column("key_id", sa.String(36)),
    sa.Column("agent_name", sa.String(128)),
    sa.Column("role", sa.String(16)),
    sa.Column("capabilities", JSONType),
    sa.Column("status", sa.String(16)),
    sa.Column("joined_at", UTCDateTime()),
)

AGENT, TOPIC, ORG, DOC = (f"00000000-0000-4000-8000-00000000000{n}" for n in range(1, 5))


async def _columns(url: str, table: str) -> set[str]:
    engine = make_engine(url, null_pool=True)
    try:
        async with engine.connect() as conn:
            return await conn.run_sync(lambda c: {col["name"] for col in sa.inspect(c).get_columns(table)})
    finally:
        await engine.dispose()


async def test_existing_topics_and_documents_take_the_default_and_keep_their_rows() -> None:
    async with scratch_database("approval", ["heads"]) as url:
        await asyncio.to_thread(command.downgrade, migrations.config(url), BEFORE)
        assert "approval_policy" not in await _columns(url, "topics")
        engine = make_engine(url, null_pool=True)
        try:
            async with engine.begin() as conn:
                await conn.execute(
                    agents.insert(),
                    {"id": AGENT, "name": "ada", "name_key": "ada", "key_hash": "h" * 64, "created_at": T0},
                )
                await conn.execute(
                    topics.insert(),
                    {
                        "id": TOPIC,
                        "title": "Old topic",
                        "title_key": "old topic",
                        "content": "# Answer\n\nOld.\n",
                        "version": 1,
                        "tier": "empirical",
                        "status": "open",
                        "assumptions": [],
                        "creator_id": AGENT,
                        "created_at": T0,
                        "updated_at": T0,
                    },
                )
                await conn.execute(
                    participants.insert(),
                    {
                        "topic_id": TOPIC,
                        "agent_id": AGENT,
                        "role": "creator",
                        "joined_at": T0,
                        "aligned_rewarded": False,
                    },
                )
                await conn.execute(
                    organisations.insert(), {"id": ORG, "name": "Acme", "name_key": "acme", "created_at": T0}
                )
                await conn.execute(
                    documents.insert(),
                    {
                        "id": DOC,
                        "org_id": ORG,
                        "owner_key_id": "key",
                        "title": "Old document",
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
                await conn.execute(
                    document_agents.insert(),
                    {
                        "id": AGENT,
                        "document_id": DOC,
                        "key_id": "key",
                        "agent_name": "ada",
                        "role": "editor",
                        "capabilities": ["propose", "vote"],
                        "status": "active",
                        "joined_at": T0,
                    },
                )
        finally:
            await engine.dispose()

        await migrations.upgrade_async(url, "heads")
        engine = make_engine(url, null_pool=True)
        try:
            async with engine.connect() as conn:
                for table, key in (("topics", TOPIC), ("documents", DOC)):
                    row = (
                        await conn.execute(
                            sa.text(
                                f"SELECT approval_policy, allow_self_approval FROM {table} WHERE id = :id"
                            ),
                            {"id": key},
                        )
                    ).one()
                    assert (row[0], bool(row[1])) == ("concord-default", False), table
                assert (
                    await conn.execute(sa.select(sa.func.count()).select_from(participants))
                ).scalar() == 1
        finally:
            await engine.dispose()

        await asyncio.to_thread(command.downgrade, migrations.config(url), BEFORE)
        for name in ("topics", "documents"):
            assert {"approval_policy", "allow_self_approval"}.isdisjoint(await _columns(url, name))
        engine = make_engine(url, null_pool=True)
        try:
            async with engine.connect() as conn:
                for kept in (topics, participants, documents, document_agents):
                    assert (await conn.execute(sa.select(sa.func.count()).select_from(kept))).scalar() == 1
        finally:
            await engine.dispose()
