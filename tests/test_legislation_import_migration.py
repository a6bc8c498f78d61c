"""Migration 0037: provenance columns, legislation_versions and the section full-text index come and go
with upgrade and downgrade; an instrument stored before it keeps working (provenance NULL) and its
sections are searchable after it (the SQLite FTS table is filled from the existing rows)."""

from __future__ import annotations

import asyncio

import sqlalchemy as sa
from alembic import command

import migrations
from domain.kernel.db import make_engine
from tests.migration_support import scratch_database

BEFORE = "0036_pact_principals"
OWN = "0037_legislation_import"


def _shape(sync: sa.Connection) -> tuple[bool, set[str]]:
    inspector = sa.inspect(sync)
    return (
        "legislation_versions" in inspector.get_table_names(),
        {c["name"] for c in inspector.get_columns("legislation_docs")},
    )


async def test_upgrade_and_downgrade() -> None:
    async with scratch_database("legislation_import", [OWN]) as url:
        engine = make_engine(url, null_pool=True)
        try:
            async with engine.connect() as conn:
                has_table, columns = await conn.run_sync(_shape)
            assert has_table
            assert {"source_register", "source", "version_date", "licence", "attribution"} <= columns

            await asyncio.to_thread(command.downgrade, migrations.config(url), BEFORE)
            async with engine.begin() as conn:
                has_table, columns = await conn.run_sync(_shape)
                assert not has_table
                assert "source_register" not in columns
                await conn.execute(
                    sa.text(
                        "INSERT INTO legislation_docs (id, jurisdiction, type, title, status, created_at, "
                        "updated_at) VALUES ('old-act', 'AU', 'act', 'Old Act 1999', 'in_force', "
                        "CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
                    )
                )
                await conn.execute(
                    sa.text(
                        "INSERT INTO legislation_sections (doc_id, section_id, title, content, depth, "
                        '"order", status, cross_references) '
                        "VALUES ('old-act', 's 1', 'Short title', 'The quokka clause.', 1, 0, "
                        "'in_force', '[]')"
                    )
                )

            await asyncio.to_thread(command.upgrade, migrations.config(url), OWN)
            async with engine.connect() as conn:
                register = await conn.scalar(
                    sa.text("SELECT source_register FROM legislation_docs WHERE id = 'old-act'")
                )
                if conn.dialect.name == "sqlite":
                    found = await conn.scalar(
                        sa.text(
                            "SELECT count(*) FROM legislation_sections_fts "
                            "WHERE legislation_sections_fts MATCH 'quokka'"
                        )
                    )
                else:
                    found = await conn.scalar(
                        sa.text(
                            "SELECT count(*) FROM legislation_sections WHERE to_tsvector('english', "
                            "coalesce(title, '') || ' ' || coalesce(content, '')) "
                            "@@ to_tsquery('english', 'quokka')"
                        )
                    )
            assert register is None
            assert found == 1
        finally:
            await engine.dispose()
