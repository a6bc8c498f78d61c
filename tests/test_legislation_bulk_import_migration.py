"""Migration 0039: the bulk imports' table (and on SQLite the pending table and the choosing triggers) come
and go with upgrade and downgrade. While an import is recorded, a new section waits to be indexed (SQLite);
the downgrade indexes whatever waits, so nothing is left unsearchable, and the triggers index again."""

from __future__ import annotations

import asyncio

import sqlalchemy as sa
from alembic import command
from sqlalchemy.ext.asyncio import AsyncConnection

import migrations
from domain.kernel.db import make_engine
from tests.migration_support import scratch_database

BEFORE = "0038_review_queue_order"
OWN = "0039_legislation_bulk_import"


def _tables(sync: sa.Connection) -> set[str]:
    return set(sa.inspect(sync).get_table_names())


async def _matches(conn: AsyncConnection, word: str) -> int:
    if conn.dialect.name == "sqlite":
        query = "SELECT count(*) FROM legislation_sections_fts WHERE legislation_sections_fts MATCH :w"
    else:
        query = (
            "SELECT count(*) FROM legislation_sections WHERE to_tsvector('english', "
            "coalesce(title, '') || ' ' || coalesce(content, '')) @@ to_tsquery('english', :w)"
        )
    return int(await conn.scalar(sa.text(query), {"w": word}) or 0)


async def _add_section(conn: AsyncConnection, number: int, word: str) -> None:
    await conn.execute(
        sa.text(
            "INSERT INTO legislation_sections (doc_id, section_id, title, content, depth, "
            '"order", status, cross_references) '
            "VALUES ('bulk-act', :sid, 'Heading', :content, 1, :n, 'in_force', '[]')"
        ),
        {"sid": f"s {number}", "content": f"The {word} clause.", "n": number},
    )


async def test_upgrade_and_downgrade() -> None:
    async with scratch_database("legislation_bulk", [OWN]) as url:
        engine = make_engine(url, null_pool=True)
        try:
            async with engine.begin() as conn:
                assert "legislation_bulk_imports" in await conn.run_sync(_tables)
                await conn.execute(
                    sa.text(
                        "INSERT INTO legislation_docs (id, jurisdiction, type, title, status, created_at, "
                        "updated_at) VALUES ('bulk-act', 'AU', 'act', 'Bulk Act 2031', 'in_force', "
                        "CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
                    )
                )
                await _add_section(conn, 1, "numbat")  # no import under way: indexed at once
                await conn.execute(
                    sa.text(
                        "INSERT INTO legislation_bulk_imports "
                        "(id, path, host, pid, started_at, heartbeat_at) "
                        "VALUES ('run', 'corpus.jsonl', 'host', 1, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
                    )
                )
                await _add_section(conn, 2, "bilby")  # an import under way: waits (SQLite)
            async with engine.connect() as conn:
                assert await _matches(conn, "numbat") == 1
                sqlite = conn.dialect.name == "sqlite"
                assert await _matches(conn, "bilby") == (0 if sqlite else 1)

            await asyncio.to_thread(command.downgrade, migrations.config(url), BEFORE)
            async with engine.begin() as conn:
                tables = await conn.run_sync(_tables)
                assert "legislation_bulk_imports" not in tables
                assert "legislation_sections_fts_pending" not in tables
                assert await _matches(conn, "bilby") == 1  # what waited was indexed
                await _add_section(conn, 3, "quoll")
            async with engine.connect() as conn:
                assert await _matches(conn, "quoll") == 1  # 0037's trigger again

            await asyncio.to_thread(command.upgrade, migrations.config(url), OWN)
            async with engine.connect() as conn:
                assert "legislation_bulk_imports" in await conn.run_sync(_tables)
                assert await _matches(conn, "numbat") == 1
        finally:
            await engine.dispose()
