"""legislation bulk import: the full-text index is brought up to date once at the end of a corpus import

A new table legislation_bulk_imports holds one row per corpus import under way (its file, the process
running it, a heartbeat), so an import that crashed or was killed is seen afterwards and its unfinished
full-text work is done (domain/axiom/bulk.py).

SQLite: the insert trigger of migration 0037 becomes two, by whether a bulk import is under way: without
one, a new section's row goes into legislation_sections_fts as before; with one, only its id goes into
legislation_sections_fts_pending (the FTS5 write is most of an insert's cost), to be indexed in one
statement later. The delete and update triggers also drop the id from the pending table. The FTS5 table is
unchanged. PostgreSQL: the table only (the bulk import drops and recreates the GIN index itself).

The downgrade indexes whatever is pending, puts 0037's triggers back and drops the tables.

Revision ID: 0039_legislation_bulk_import
Revises: 0038_review_queue_order
Create Date: 2026-11-27 10:20:00.000000
"""

import sqlalchemy as sa
from alembic import op

from domain.kernel.db import UTCDateTime

revision = "0039_legislation_bulk_import"
down_revision = "0038_review_queue_order"
branch_labels = None
depends_on = None

_ACTIVE = "EXISTS (SELECT 1 FROM legislation_bulk_imports)"
_INDEX_NEW = (
    "INSERT INTO legislation_sections_fts(rowid, title, content) "
    "VALUES (new.id, new.title, coalesce(new.content, ''));"
)
_TRIGGERS_0037 = [
    "CREATE TRIGGER legislation_sections_fts_insert AFTER INSERT ON legislation_sections BEGIN "
    f"{_INDEX_NEW} END",
    "CREATE TRIGGER legislation_sections_fts_delete AFTER DELETE ON legislation_sections BEGIN "
    "DELETE FROM legislation_sections_fts WHERE rowid = old.id; END",
    "CREATE TRIGGER legislation_sections_fts_update AFTER UPDATE OF title, content ON legislation_sections "
    f"BEGIN DELETE FROM legislation_sections_fts WHERE rowid = old.id; {_INDEX_NEW} END",
]
_TRIGGERS = [
    "CREATE TRIGGER legislation_sections_fts_insert AFTER INSERT ON legislation_sections "
    f"WHEN NOT {_ACTIVE} BEGIN {_INDEX_NEW} END",
    "CREATE TRIGGER legislation_sections_fts_defer AFTER INSERT ON legislation_sections "
    f"WHEN {_ACTIVE} BEGIN INSERT INTO legislation_sections_fts_pending(section_id) VALUES (new.id); END",
    "CREATE TRIGGER legislation_sections_fts_delete AFTER DELETE ON legislation_sections BEGIN "
    "DELETE FROM legislation_sections_fts WHERE rowid = old.id; "
    "DELETE FROM legislation_sections_fts_pending WHERE section_id = old.id; END",
    "CREATE TRIGGER legislation_sections_fts_update AFTER UPDATE OF title, content ON legislation_sections "
    "BEGIN DELETE FROM legislation_sections_fts WHERE rowid = old.id; "
    f"DELETE FROM legislation_sections_fts_pending WHERE section_id = old.id; {_INDEX_NEW} END",
]
_NAMES = (
    "legislation_sections_fts_insert",
    "legislation_sections_fts_defer",
    "legislation_sections_fts_delete",
    "legislation_sections_fts_update",
)


def upgrade() -> None:
    op.create_table(
        "legislation_bulk_imports",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("path", sa.String(length=1000), nullable=False),
        sa.Column("host", sa.String(length=255), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("started_at", UTCDateTime(), nullable=False),
        sa.Column("heartbeat_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    if op.get_bind().dialect.name == "sqlite":
        op.execute("CREATE TABLE legislation_sections_fts_pending (section_id INTEGER PRIMARY KEY)")
        for name in _NAMES:
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
        for statement in _TRIGGERS:
            op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute(
            "INSERT INTO legislation_sections_fts(rowid, title, content) "
            "SELECT s.id, s.title, coalesce(s.content, '') FROM legislation_sections_fts_pending p "
            "JOIN legislation_sections s ON s.id = p.section_id"
        )
        for name in _NAMES:
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
        for statement in _TRIGGERS_0037:
            op.execute(statement)
        op.execute("DROP TABLE legislation_sections_fts_pending")
    else:
        op.execute(
            "CREATE INDEX IF NOT EXISTS ix_legislation_sections_fulltext ON legislation_sections USING gin "
            "(to_tsvector('english', coalesce(title, '') || ' ' || coalesce(content, '')))"
        )
    op.drop_table("legislation_bulk_imports")
