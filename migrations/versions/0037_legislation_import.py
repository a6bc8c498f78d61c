"""legislation import: provenance on instruments, kept versions, and full-text search over section text

legislation_docs gains the provenance an imported instrument carries (source_register, source, version_date,
licence, attribution; NULL for every existing row). A new table legislation_versions keeps each earlier
compilation of an instrument whole (a JSON snapshot of its facts and sections) so as-at queries and earlier
citations still find it. Section text gets full-text search: on PostgreSQL an expression GIN index, on
SQLite an FTS5 table that triggers keep in step with legislation_sections. The downgrade drops all of it.

Revision ID: 0037_legislation_import
Revises: 0036_pact_principals
Create Date: 2026-11-27 00:00:00.000000
"""

import sqlalchemy as sa
from alembic import op

from domain.kernel.db import JSONType, UTCDateTime

revision = "0037_legislation_import"
down_revision = "0036_pact_principals"
branch_labels = None
depends_on = ("0003_axiom",)  # legislation_docs and legislation_sections

_COLUMNS = (
    sa.Column("source_register", sa.String(length=40), nullable=True),
    sa.Column("source", sa.String(length=1000), nullable=True),
    sa.Column("version_date", sa.Date(), nullable=True),
    sa.Column("licence", sa.String(length=60), nullable=True),
    sa.Column("attribution", sa.String(length=1000), nullable=True),
)

_PG_EXPR = "to_tsvector('english', coalesce(title, '') || ' ' || coalesce(content, ''))"
# The FTS5 row's rowid is the section's id (an INTEGER primary key), so the triggers find a row to delete by
# its rowid, not by scanning the table.
_SQLITE_SYNC = [
    "CREATE VIRTUAL TABLE legislation_sections_fts USING fts5(title, content, tokenize='porter unicode61')",
    "INSERT INTO legislation_sections_fts(rowid, title, content) "
    "SELECT id, title, coalesce(content, '') FROM legislation_sections",
    "CREATE TRIGGER legislation_sections_fts_insert AFTER INSERT ON legislation_sections BEGIN "
    "INSERT INTO legislation_sections_fts(rowid, title, content) "
    "VALUES (new.id, new.title, coalesce(new.content, '')); END",
    "CREATE TRIGGER legislation_sections_fts_delete AFTER DELETE ON legislation_sections BEGIN "
    "DELETE FROM legislation_sections_fts WHERE rowid = old.id; END",
    "CREATE TRIGGER legislation_sections_fts_update AFTER UPDATE OF title, content ON legislation_sections "
    "BEGIN DELETE FROM legislation_sections_fts WHERE rowid = old.id; "
    "INSERT INTO legislation_sections_fts(rowid, title, content) "
    "VALUES (new.id, new.title, coalesce(new.content, '')); END",
]
_TRIGGERS = (
    "legislation_sections_fts_insert",
    "legislation_sections_fts_delete",
    "legislation_sections_fts_update",
)


def upgrade() -> None:
    with op.batch_alter_table("legislation_docs") as batch:
        for column in _COLUMNS:
            batch.add_column(column.copy())
    op.create_table(
        "legislation_versions",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("doc_id", sa.String(length=120), nullable=False),
        sa.Column("version_date", sa.Date(), nullable=True),
        sa.Column("snapshot", JSONType, nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["doc_id"], ["legislation_docs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_legislation_versions_doc_date", "legislation_versions", ["doc_id", "version_date"])
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            f"CREATE INDEX ix_legislation_sections_fulltext ON legislation_sections USING gin ({_PG_EXPR})"
        )
    else:
        for statement in _SQLITE_SYNC:
            op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP INDEX IF EXISTS ix_legislation_sections_fulltext")
    else:
        for name in _TRIGGERS:
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
        op.execute("DROP TABLE IF EXISTS legislation_sections_fts")
    op.drop_index("ix_legislation_versions_doc_date", table_name="legislation_versions")
    op.drop_table("legislation_versions")
    with op.batch_alter_table("legislation_docs") as batch:
        for column in reversed(_COLUMNS):
            batch.drop_column(column.name)
