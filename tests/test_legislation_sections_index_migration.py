"""Migration 0040: the index on legislation_sections.doc_id alone goes and comes back with the downgrade;
the sections of an instrument are still found by the unique constraint's index, and on SQLite the full-text
triggers are untouched (a new section is still searchable at once)."""

from __future__ import annotations

import asyncio

import sqlalchemy as sa
from alembic import command
from sqlalchemy.ext.asyncio import AsyncConnection

import migrations
from domain.kernel.db import make_engine
from tests.migration_support import scratch_database

BEFORE = "0039_legislation_bulk_import"
OWN = "0040_legislation_doc_index"
INDEX = "ix_legislation_sections_doc_id"


def _indexes(sync: sa.Connection) -> set[str]:
    return {ix["name"] for ix in sa.inspect(sync).get_indexes("legislation_sections") if ix["name"]}


async def _plan(conn: AsyncConnection) -> str:
    query = "SELECT section_id FROM legislation_sections WHERE doc_id = 'act'"
    if conn.dialect.name == "sqlite":
        rows = await conn.execute(sa.text(f"EXPLAIN QUERY PLAN {query}"))
        return " ".join(str(row[-1]) for row in rows)
    await conn.execute(sa.text("SET LOCAL enable_seqscan = off"))  # a tiny table: ask for the index path
    rows = await conn.execute(sa.text(f"EXPLAIN {query}"))
    return " ".join(str(row[0]) for row in rows)


async def test_upgrade_and_downgrade() -> None:
    async with scratch_database("legislation_doc_index", [OWN]) as url:
        engine = make_engine(url, null_pool=True)
        try:
            async with engine.begin() as conn:
                assert INDEX not in await conn.run_sync(_indexes)
                await conn.execute(
                    sa.text(
                        "INSERT INTO legislation_docs (id, jurisdiction, type, title, status, created_at, "
                        "updated_at) VALUES ('act', 'AU', 'act', 'Index Act 2031', 'in_force', "
                        "CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
                    )
                )
                await conn.execute(
                    sa.text(
                        "INSERT INTO legislation_sections (doc_id, section_id, title, content, depth, "
                        "\"order\", status, cross_references) VALUES ('act', 's 1', 'Heading', "
                        "'The wombat clause.', 1, 1, 'in_force', '[]')"
                    )
                )
                plan = await _plan(conn)
                assert "uq_legislation_sections_doc_section" in plan or "autoindex" in plan, plan
                if conn.dialect.name == "sqlite":
                    found = await conn.scalar(
                        sa.text(
                            "SELECT count(*) FROM legislation_sections_fts "
                            "WHERE legislation_sections_fts MATCH 'wombat'"
                        )
                    )
                    assert found == 1

            await asyncio.to_thread(command.downgrade, migrations.config(url), BEFORE)
            async with engine.connect() as conn:
                assert INDEX in await conn.run_sync(_indexes)
            await asyncio.to_thread(command.upgrade, migrations.config(url), OWN)
            async with engine.connect() as conn:
                assert INDEX not in await conn.run_sync(_indexes)
        finally:
            await engine.dispose()
