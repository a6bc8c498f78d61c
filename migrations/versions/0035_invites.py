"""invites: invite tokens to a document or a topic (PACT §4.1 join-token, Extended), and document-scoped keys

A new table `invites` holds each invite's SHA-256 (never the token), the resource it opens, the role it gives,
when it expires, how many joins it allows and has had, and when it was revoked. service_keys gains
document_id: a key minted by a join with an invite works on that one document only (NULL for every existing
key, which keeps its organisation-wide reach); agents gains scope_topic_id, the same for an agent registered
by joining a topic with an invite. The downgrade drops all three.

Revision ID: 0035_invites
Revises: 0029_approval_policy
Create Date: 2026-11-27 00:00:00.000000
"""

import sqlalchemy as sa
from alembic import op

from domain.kernel.db import UTCDateTime

revision = "0035_invites"
down_revision = "0034_sessions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "invites",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("resource_kind", sa.String(length=16), nullable=False),
        sa.Column("resource_id", sa.String(length=36), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("role", sa.String(length=20), nullable=True),
        sa.Column("label", sa.String(length=200), nullable=True),
        sa.Column("created_by", sa.String(length=36), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("expires_at", UTCDateTime(), nullable=False),
        sa.Column("max_uses", sa.Integer(), nullable=False),
        sa.Column("uses", sa.Integer(), nullable=False),
        sa.Column("revoked_at", UTCDateTime(), nullable=True),
        sa.CheckConstraint("uses >= 0 AND uses <= max_uses", name="ck_invites_uses"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("token_hash"),
    )
    op.create_index("ix_invites_resource", "invites", ["resource_kind", "resource_id", "created_at"])
    # A plain ADD COLUMN (nullable, no default) on both databases, as 0029 does.
    op.add_column("service_keys", sa.Column("document_id", sa.String(length=36), nullable=True))
    op.add_column("agents", sa.Column("scope_topic_id", sa.String(length=36), nullable=True))


def downgrade() -> None:
    op.drop_column("agents", "scope_topic_id")
    op.drop_column("service_keys", "document_id")
    op.drop_index("ix_invites_resource", table_name="invites")
    op.drop_table("invites")
