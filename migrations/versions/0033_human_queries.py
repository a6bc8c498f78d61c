"""human queries: questions agents ask a person and wait on (PACT v2.0.3 ask-human), and resolutions

escalations gains kind (escalation | question; existing rows are escalations), context (the asking agent's
context for the person), timeout_at (a question's deadline; NULL for escalations), resolved_by_id (the id of
the staff member or person who answered, beside the name kept before) and is_override (a resolution that
overrides the agents' consensus; false for the answers given before). A new index on (status, timeout_at)
serves the sweep that marks open questions whose time is up `timed-out`, and one on (resource_type,
resource_id, kind, created_at, id) the agents' lists of a resource's questions and escalations. The
downgrade drops the indexes and the columns; questions become plain escalations again (their kind, context
and timeout are lost, their text and answer stay) and those that timed out are closed as resolved without
an answer.

Revision ID: 0033_human_queries
Revises: 0031_withdraw_intent_lifecycle
Create Date: 2026-12-04 09:00:00.000000
"""

import sqlalchemy as sa
from alembic import op

import domain.kernel.db

revision = "0033_human_queries"
down_revision = "0032_pact_done_comments"
branch_labels = None
depends_on = None

# Plain ALTER TABLE on both databases (as 0029): SQLite adds a column with a constant default in place and
# drops a plain column in place since 3.35, so no table is copied.


def upgrade() -> None:
    op.add_column(
        "escalations", sa.Column("kind", sa.String(length=16), nullable=False, server_default="escalation")
    )
    op.add_column("escalations", sa.Column("context", sa.Text(), nullable=True))
    op.add_column(
        "escalations", sa.Column("timeout_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=True)
    )
    op.add_column("escalations", sa.Column("resolved_by_id", sa.String(length=36), nullable=True))
    op.add_column(
        "escalations", sa.Column("is_override", sa.Boolean(), nullable=False, server_default=sa.false())
    )
    op.create_index("ix_escalations_status_timeout", "escalations", ["status", "timeout_at"])
    op.create_index(
        "ix_escalations_resource_kind_created",
        "escalations",
        ["resource_type", "resource_id", "kind", "created_at", "id"],
    )


def downgrade() -> None:
    op.drop_index("ix_escalations_resource_kind_created", table_name="escalations")
    op.drop_index("ix_escalations_status_timeout", table_name="escalations")
    # The older code knows open and resolved only: a question whose time ran out stays closed (resolved,
    # without an answer) rather than coming back to the reviewers' queue.
    op.execute("UPDATE escalations SET status = 'resolved' WHERE status = 'timed-out'")
    for column in ("is_override", "resolved_by_id", "timeout_at", "context", "kind"):
        op.drop_column("escalations", column)
