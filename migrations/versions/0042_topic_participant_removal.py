"""topic_participants: removed_at, removed_by, removal_note

A reviewer may remove an agent from a topic (PACT v2.0.3 §9.2, "remove an agent: force agent.leave"). The
participant's row keeps when, by whom and why: an agent a person removed may not join the topic again until
a reviewer readmits it (which clears the three). Nullable columns, added in place on both databases.

Revision ID: 0042_topic_participant_removal
Revises: 0041_events_person_index
Create Date: 2026-11-28 13:45:00.000000
"""

import sqlalchemy as sa
from alembic import op

from domain.kernel.db import UTCDateTime

revision = "0042_topic_participant_removal"
down_revision = "0041_events_person_index"
branch_labels = None
depends_on = None

_COLUMNS = ("removed_at", "removed_by", "removal_note")


def upgrade() -> None:
    op.add_column("topic_participants", sa.Column("removed_at", UTCDateTime(timezone=True), nullable=True))
    op.add_column("topic_participants", sa.Column("removed_by", sa.String(200), nullable=True))
    op.add_column("topic_participants", sa.Column("removal_note", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("topic_participants") as batch:
        for name in _COLUMNS:
            batch.drop_column(name)
