"""The migrations build the schema the models declare: after `upgrade heads`, alembic's comparison of the
database with the models finds nothing but what the migrations keep on purpose (the full-text search tables
and indexes, which no model maps, and the MCP session table the stateless server retired). A model column
added without its migration, or a migration that differs from its model, fails here on the backend it differs
on.

Runs on its own database (a file on SQLite, a database of its own on PostgreSQL)."""

from __future__ import annotations

from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from domain import tables  # noqa: F401  (registers every model on Base.metadata)
from domain.kernel.db import Base, make_engine
from tests.migration_support import scratch_database

# What the database has on purpose that no model maps.
UNMAPPED = {"mcp_sessions"}  # retired with the stateless MCP server; migration 0015 kept, no model
# SQLite FTS5 virtual tables and their shadow tables: the topics' (migration 0001) and the legislation
# sections' (0037); PostgreSQL's GIN indexes on their tsvector expressions.
FTS_PREFIXES = ("topics_fts", "legislation_sections_fts")
FTS_INDEXES = {"ix_topics_fulltext", "ix_legislation_sections_fulltext"}
# Indexes on an expression (the escalation priority's rank, migration 0038): PostgreSQL keeps the expression
# as it rewrote it (casts added, columns unqualified), which alembic cannot compare with the model's, so it
# reports the index as removed and added again under the same name; that both exist is checked by
# tests/test_review_queue_migration.py.
EXPRESSION_INDEXES = {"ix_escalations_priority_created", "ix_escalations_status_priority_created"}


def _expected(diff: Any) -> bool:
    if diff[0] == "remove_table":
        return diff[1].name in UNMAPPED or diff[1].name.startswith(FTS_PREFIXES)
    if diff[0] == "remove_index":
        return diff[1].table.name in UNMAPPED or diff[1].name in FTS_INDEXES | EXPRESSION_INDEXES
    if diff[0] == "add_index":
        return diff[1].name in EXPRESSION_INDEXES
    return False


# SQLite cannot reflect those indexes at all: SQLAlchemy and alembic each warn that they skip them, which is
# what EXPRESSION_INDEXES stands for on that backend.
@pytest.mark.filterwarnings("ignore:Skipped unsupported reflection of expression-based index")
@pytest.mark.filterwarnings("ignore:autogenerate skipping metadata-specified expression-based index")
async def test_the_migrated_schema_is_the_models_schema() -> None:
    async with scratch_database("drift", ["heads"]) as url:
        engine = make_engine(url, null_pool=True)
        try:
            async with engine.connect() as conn:
                diff = await conn.run_sync(
                    lambda sync: compare_metadata(MigrationContext.configure(sync), Base.metadata)
                )
        finally:
            await engine.dispose()
    unexpected = [d for d in diff if not (isinstance(d, tuple) and _expected(d))]
    assert unexpected == []
