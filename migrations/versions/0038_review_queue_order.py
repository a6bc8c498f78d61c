"""review queue order: one escalation priority vocabulary, and the indexes behind the queue's and the
history's order

The hub stored `normal` where the document API stores `medium`; both now store `medium` (domain/consensus/
models.py EscalationPriority: urgent, high, medium, low), so existing hub escalations are rewritten to it.
The reviewers' queue (the desk and GET /api/review/escalations) is ordered by the priority's rank, then age:
expression indexes on that rank (the same CASE the queries write), created_at and id serve it, one after the
status (the open queue) and one without (all); the history (answered, decided and closed, newest answer
first) reads a new index on status, resolved_at and id. The downgrade drops the
two indexes and gives the topics' escalations back their `normal`.

Revision ID: 0038_review_queue_order
Revises: 0037_legislation_import
Create Date: 2026-11-27 07:00:00.000000
"""

import sqlalchemy as sa
from alembic import op

revision = "0038_review_queue_order"
down_revision = "0037_legislation_import"
branch_labels = None
depends_on = None

# The rank as domain/consensus/models.py priority_rank writes it (a migration keeps its own copy: the model
# may change after it).
_RANK = sa.text(
    "(CASE priority WHEN 'urgent' THEN 0 WHEN 'high' THEN 1 WHEN 'medium' THEN 2 WHEN 'low' THEN 3 "
    "ELSE 2 END)"
)


def upgrade() -> None:
    op.execute("UPDATE escalations SET priority = 'medium' WHERE priority = 'normal'")
    op.create_index(
        "ix_escalations_status_priority_created", "escalations", ["status", _RANK, "created_at", "id"]
    )
    op.create_index("ix_escalations_priority_created", "escalations", [_RANK, "created_at", "id"])
    op.create_index("ix_escalations_status_resolved", "escalations", ["status", "resolved_at", "id"])


def downgrade() -> None:
    op.drop_index("ix_escalations_status_resolved", table_name="escalations")
    op.drop_index("ix_escalations_priority_created", table_name="escalations")
    op.drop_index("ix_escalations_status_priority_created", table_name="escalations")
    op.execute(
        "UPDATE escalations SET priority = 'normal' WHERE priority = 'medium' AND resource_type = 'topic'"
    )
