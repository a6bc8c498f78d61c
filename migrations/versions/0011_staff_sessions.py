"""staff sessions: the review pages' sign-in sessions (staff_sessions)

A staff member signs in to the review pages (`/review/` on the hub) with a staff key once and then holds a
session cookie. The server keeps each session here, so signing out (or revoking the key) really ends it:
the session token's SHA-256 only (never the token), the session's form token (CSRF), and when it expires
or ended. A new table: no existing row changes; the downgrade drops it.

A head of its own after 0008_work (other areas' revisions 0009 and 0010 branch from there too).

Revision ID: 0011_staff_sessions
Revises: 0008_work
Create Date: 2026-12-09 10:00:00.000000
"""

import sqlalchemy as sa
from alembic import op

import domain.kernel.db

revision = "0011_staff_sessions"
down_revision = "0008_work"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "staff_sessions",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("staff_key_id", sa.String(length=36), nullable=False),
        sa.Column("csrf_token", sa.String(length=64), nullable=False),
        sa.Column("created_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("expires_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("ended_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["staff_key_id"],
            ["staff_keys.id"],
            name=op.f("fk_staff_sessions_staff_key_id_staff_keys"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_staff_sessions")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_staff_sessions_token_hash")),
    )
    with op.batch_alter_table("staff_sessions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_staff_sessions_staff_key_id"), ["staff_key_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("staff_sessions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_staff_sessions_staff_key_id"))
    op.drop_table("staff_sessions")
