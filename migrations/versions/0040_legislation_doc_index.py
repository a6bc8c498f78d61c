"""legislation sections: the index on doc_id alone goes; the (doc_id, section_id) unique constraint's index
already serves every lookup by instrument (its first column), and each section written kept both up to date

A corpus import writes hundreds of thousands of sections; one index fewer to maintain per row. Plain
`op.drop_index` on both databases (SQLite drops an index without rebuilding the table, so the full-text
triggers of migrations 0037 and 0039 stay).

Revision ID: 0040_legislation_doc_index
Revises: 0039_legislation_bulk_import
Create Date: 2026-11-27 18:00:00.000000
"""

from alembic import op

revision = "0040_legislation_doc_index"
down_revision = "0039_legislation_bulk_import"
branch_labels = None
depends_on = None

_INDEX = "ix_legislation_sections_doc_id"


def upgrade() -> None:
    op.drop_index(_INDEX, table_name="legislation_sections")


def downgrade() -> None:
    op.create_index(_INDEX, "legislation_sections", ["doc_id"], unique=False)
