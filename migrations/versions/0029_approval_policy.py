"""approval policy: how a topic's or a document's proposals merge (PACT v2.0.3 §5)

topics and documents gain approval_policy (concord-default, objection-based, single, majority, unanimous,
human-only, auto; domain/consensus/policies.py) and allow_self_approval. Existing rows take concord-default
and false, the rules they were decided by before. The downgrade drops both columns.

Revision ID: 0029_approval_policy
Revises: 0026_drop_redundant_vote_index
Create Date: 2026-12-02 10:00:00.000000
"""

import sqlalchemy as sa
from alembic import op

revision = "0029_approval_policy"
down_revision = "0026_drop_redundant_vote_index"
branch_labels = None
depends_on = None

TABLES = ("topics", "documents")


# Plain ALTER TABLE on both databases, not batch mode: on SQLite a batch operation with a non-string server
# default copies the table, and dropping the old topics or documents table fails while rows of other tables
# reference it (the engine turns foreign keys on). SQLite adds a column with a constant default in place, and
# drops a plain column in place since 3.35.


def upgrade() -> None:
    for table in TABLES:
        op.add_column(
            table,
            sa.Column(
                "approval_policy", sa.String(length=24), nullable=False, server_default="concord-default"
            ),
        )
        op.add_column(
            table, sa.Column("allow_self_approval", sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    for table in TABLES:
        op.drop_column(table, "allow_self_approval")
        op.drop_column(table, "approval_policy")
