"""proposal standing indexes: a topic's standing costs the same at 10 proposals and at 10,000

After every merge and done signal the topic's standing is read: its pending proposals, whether one merged
and how many distinct agents authored proposals that were not rejected. On the (resource, created_at)
index each of the three read every proposal of the topic from the heap (about 20 ms at 10,000 proposals,
inside the topic's lock). (resource_type, resource_id, status) answers the first two from the index;
(resource_type, resource_id, author_id, status) lets the authors be counted by a skip scan, one index
descent per author. The downgrade drops both.

Revision ID: 0025_proposal_standing_indexes
Revises: 0024_escalation_decision
Create Date: 2026-11-23 19:50:00.000000
"""

from alembic import op

revision = "0025_proposal_standing_indexes"
down_revision = "0024_escalation_decision"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        "ix_proposals_resource_status", "proposals", ["resource_type", "resource_id", "status"], unique=False
    )
    op.create_index(
        "ix_proposals_resource_author",
        "proposals",
        ["resource_type", "resource_id", "author_id", "status"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index("ix_proposals_resource_author", table_name="proposals")
    op.drop_index("ix_proposals_resource_status", table_name="proposals")
