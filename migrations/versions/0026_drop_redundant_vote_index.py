"""drop ix_proposal_votes_proposal_id: the (proposal_id, agent_id) unique key already serves it

Every vote wrote an entry into both indexes; every lookup by proposal (a proposal's votes, the foreign key's
check) is answered by the unique key's leading column. The downgrade creates it again.

Revision ID: 0026_drop_redundant_vote_index
Revises: 0025_proposal_standing_indexes
Create Date: 2026-11-23 22:30:00.000000
"""

from alembic import op

revision = "0026_drop_redundant_vote_index"
down_revision = "0025_proposal_standing_indexes"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index("ix_proposal_votes_proposal_id", table_name="proposal_votes")


def downgrade() -> None:
    op.create_index("ix_proposal_votes_proposal_id", "proposal_votes", ["proposal_id"], unique=False)
