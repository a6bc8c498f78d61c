"""section locks of topics and documents: one table, told apart by resource_type

section_locks (0005) held documents' locks only (document_id, a foreign key to documents). Topics take section
locks too (PACT v2.0.3 §4.3), through the same rules (domain/consensus/locks.py), so the table keys its rows
by resource_type and resource_id as the other shared consensus tables do: every existing row becomes a
document's (resource_type 'document', resource_id its document_id) and keeps its holder and expiry; the
unique key becomes (resource_type, resource_id, section_id). The downgrade moves the documents' locks back and
drops the topics' (a lock lives a minute on a topic: the holder locks again).

Revision ID: 0030_section_locks_shared
Revises: 0029_approval_policy
Create Date: 2026-12-04 10:00:00.000000
"""

import sqlalchemy as sa
from alembic import op

revision = "0030_section_locks_shared"
down_revision = "0029_approval_policy"
branch_labels = None
depends_on = None

# Batch mode: SQLite cannot drop a foreign key or a unique constraint in place, so it copies the table
# (nothing references section_locks, so the copy is free to replace it); PostgreSQL alters it in place.


def upgrade() -> None:
    with op.batch_alter_table("section_locks", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("resource_type", sa.String(length=20), nullable=False, server_default="document")
        )
        batch_op.add_column(sa.Column("resource_id", sa.String(length=36), nullable=True))
    op.execute("UPDATE section_locks SET resource_id = document_id")
    with op.batch_alter_table("section_locks", schema=None) as batch_op:
        batch_op.drop_constraint("uq_section_locks_section", type_="unique")
        batch_op.drop_constraint("fk_section_locks_document_id_documents", type_="foreignkey")
        batch_op.drop_column("document_id")
        batch_op.alter_column("resource_id", existing_type=sa.String(length=36), nullable=False)
        batch_op.alter_column(
            "resource_type",
            existing_type=sa.String(length=20),
            existing_nullable=False,
            server_default=None,
        )
        batch_op.create_unique_constraint(
            "uq_section_locks_section", ["resource_type", "resource_id", "section_id"]
        )


def downgrade() -> None:
    op.execute("DELETE FROM section_locks WHERE resource_type <> 'document'")
    with op.batch_alter_table("section_locks", schema=None) as batch_op:
        batch_op.add_column(sa.Column("document_id", sa.String(length=36), nullable=True))
    op.execute("UPDATE section_locks SET document_id = resource_id")
    with op.batch_alter_table("section_locks", schema=None) as batch_op:
        batch_op.drop_constraint("uq_section_locks_section", type_="unique")
        batch_op.drop_column("resource_id")
        batch_op.drop_column("resource_type")
        batch_op.alter_column("document_id", existing_type=sa.String(length=36), nullable=False)
        batch_op.create_foreign_key(
            "fk_section_locks_document_id_documents", "documents", ["document_id"], ["id"]
        )
        batch_op.create_unique_constraint("uq_section_locks_section", ["document_id", "section_id"])
