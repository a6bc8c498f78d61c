"""outbox lease: a job that runs outside any transaction holds its row with a lease (outbox_jobs.lease_until)

Jobs that call another service (the escalation webhook) no longer do so inside the transaction that marks them
done: they record the attempt, commit, call, then record the outcome. While such a job runs, its row's
`lease_until` says until when that run holds it, so a second delivery meanwhile does not run it again and the
re-send of unfinished jobs leaves it alone. A new nullable column: no existing row changes (NULL: no lease);
the downgrade drops it.

Revision ID: 0017_outbox_lease
Revises: 0011_staff_sessions
Create Date: 2026-11-23 11:00:00.000000
"""

import sqlalchemy as sa
from alembic import op

import domain.kernel.db

revision = "0017_outbox_lease"
down_revision = "0011_staff_sessions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("outbox_jobs", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("lease_until", domain.kernel.db.UTCDateTime(timezone=True), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("outbox_jobs", schema=None) as batch_op:
        batch_op.drop_column("lease_until")
