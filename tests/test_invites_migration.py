"""Migration 0035: `invites` and the two scope columns come and go with upgrade and downgrade, and keys and
agents made before it keep working (their scope is NULL: no limit)."""

from __future__ import annotations

import asyncio

import sqlalchemy as sa
from alembic import command

import migrations
from domain.kernel.db import make_engine
from tests.migration_support import scratch_database

BEFORE = "0034_sessions"


def _shape(sync: sa.Connection) -> tuple[bool, set[str], set[str]]:
    inspector = sa.inspect(sync)
    return (
        "invites" in inspector.get_table_names(),
        {c["name"] for c in inspector.get_columns("service_keys")},
        {c["name"] for c in inspector.get_columns("agents")},
    )


async def test_upgrade_and_downgrade() -> None:
    async with scratch_database("invites", ["heads"]) as url:
        engine = make_engine(url, null_pool=True)
        try:
            async with engine.connect() as conn:
                has_table, key_columns, agent_columns = await conn.run_sync(_shape)
            assert has_table
            assert "document_id" in key_columns
            assert "scope_topic_id" in agent_columns

            await asyncio.to_thread(command.downgrade, migrations.config(url), BEFORE)
            async with engine.begin() as conn:
                has_table, key_columns, agent_columns = await conn.run_sync(_shape)
                assert not has_table
                assert "document_id" not in key_columns
                assert "scope_topic_id" not in agent_columns
                await conn.execute(
                    sa.text(
                        "INSERT INTO agents (id, name, name_key, key_hash, created_at) "
                        "VALUES ('a1', 'Old', 'old', 'h1', CURRENT_TIMESTAMP)"
                    )
                )

            await asyncio.to_thread(command.upgrade, migrations.config(url), "heads")
            async with engine.connect() as conn:
                scope = await conn.scalar(sa.text("SELECT scope_topic_id FROM agents WHERE id = 'a1'"))
            assert scope is None
        finally:
            await engine.dispose()
