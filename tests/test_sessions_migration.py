"""Migration 0034 adds the session tables (obligations, presence, heartbeat receipts) and nothing else; its
downgrade drops them, and upgrading again restores them (SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio

import sqlalchemy as sa
from alembic import command

import migrations
from domain.kernel.db import make_engine
from tests.migration_support import scratch_database

BEFORE = "0033_human_queries"
THIS = "0034_sessions"  # not "heads": a later migration's tables are not this one's to add or drop
TABLES = {"pact_obligations", "pact_presence", "pact_heartbeats"}


async def _tables(url: str) -> set[str]:
    engine = make_engine(url, null_pool=True)
    try:
        async with engine.connect() as conn:
            return set(await conn.run_sync(lambda c: sa.inspect(c).get_table_names()))
    finally:
        await engine.dispose()


async def test_the_session_tables_come_and_go_with_the_migration() -> None:
    async with scratch_database("sessions", [THIS]) as url:
        upgraded = await _tables(url)
        assert upgraded >= TABLES
        await asyncio.to_thread(command.downgrade, migrations.config(url), BEFORE)
        assert await _tables(url) == upgraded - TABLES
        await migrations.upgrade_async(url, THIS)
        assert await _tables(url) == upgraded
