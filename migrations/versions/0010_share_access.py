"""share access: link revocation, one-time codes, link sessions

Share links can be revoked (revoked_at, revoked_by). A closed link's reviewer proves an address with a
one-time code mailed to it (share_link_codes: a salted SHA-256 of the code, attempts, expiry); a browser
or API client then holds a session on that link (share_link_sessions: the cookie's SHA-256, the proven
address, expiry). A separate branch from 0008_work: `concord migrate` applies all heads.

Revision ID: 0010_share_access
Revises: 0008_work
Create Date: 2026-11-24 10:00:00.000000
"""

import sqlalchemy as sa
from alembic import op

import domain.kernel.db

revision = "0010_share_access"
down_revision = "0008_work"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("share_links", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("revoked_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=True)
        )
        batch_op.add_column(sa.Column("revoked_by", sa.String(length=36), nullable=True))
    op.create_table(
        "share_link_codes",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("link_id", sa.String(length=36), nullable=False),
        sa.Column("email", sa.String(length=254), nullable=False),
        sa.Column("code_hash", sa.String(length=64), nullable=False),
        sa.Column("salt", sa.String(length=32), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("created_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("expires_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("used_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["link_id"], ["share_links.id"], name=op.f("fk_share_link_codes_link_id_share_links")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_share_link_codes")),
    )
    with op.batch_alter_table("share_link_codes", schema=None) as batch_op:
        batch_op.create_index("ix_share_link_codes_link_email", ["link_id", "email"], unique=False)
    op.create_table(
        "share_link_sessions",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("link_id", sa.String(length=36), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("email", sa.String(length=254), nullable=True),
        sa.Column("verified_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("created_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("expires_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["link_id"], ["share_links.id"], name=op.f("fk_share_link_sessions_link_id_share_links")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_share_link_sessions")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_share_link_sessions_token_hash")),
    )
    with op.batch_alter_table("share_link_sessions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_share_link_sessions_link_id"), ["link_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("share_link_sessions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_share_link_sessions_link_id"))
    op.drop_table("share_link_sessions")
    with op.batch_alter_table("share_link_codes", schema=None) as batch_op:
        batch_op.drop_index("ix_share_link_codes_link_email")
    op.drop_table("share_link_codes")
    with op.batch_alter_table("share_links", schema=None) as batch_op:
        batch_op.drop_column("revoked_by")
        batch_op.drop_column("revoked_at")
