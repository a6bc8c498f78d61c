"""escalation decision: what a reviewer's answer decided on the proposal the escalation names

escalations.decision (approve | reject, nullable) is written with the answer, so the reviewers' queue, the
escalation's page and the answer webhook show the decision later, not only in the answer's response.
Escalations answered before this migration keep NULL (their decision is in the audit trail). The
downgrade drops the column.

Revision ID: 0024_escalation_decision
Revises: 0002_consensus
Create Date: 2026-11-23 09:30:00.000000
"""

import sqlalchemy as sa
from alembic import op

revision = "0024_escalation_decision"
down_revision = "0002_consensus"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("escalations", schema=None) as batch_op:
        batch_op.add_column(sa.Column("decision", sa.String(length=16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("escalations", schema=None) as batch_op:
        batch_op.drop_column("decision")
