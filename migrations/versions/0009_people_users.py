"""people users: the people of an organisation, their sessions and refresh tokens

users: a person of an organisation (`concord users create`), email lower-case and unique per
organisation, an Argon2id password hash, the document API scopes the person acts with, and when the
person was disabled. user_sessions: one sign-in (POST /api/auth/login); its access tokens name it and
ending it refuses them. refresh_tokens: a session's opaque refresh tokens, SHA-256 only, each used once.
New tables only: existing rows are untouched; the downgrade drops them.

Revision ID: 0009_people_users
Revises: 0008_work
Create Date: 2026-12-03 10:00:00.000000
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import domain.kernel.db

revision = "0009_people_users"
down_revision = "0008_work"
branch_labels = None
depends_on = None  # organisations come from 0005_documents, an ancestor


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("org_id", sa.String(length=36), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("password_hash", sa.String(length=255), nullable=False),
        sa.Column(
            "scopes",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("created_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("last_login_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("disabled_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["org_id"], ["organisations.id"], name=op.f("fk_users_org_id_organisations")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_users")),
        sa.UniqueConstraint("org_id", "email", name="uq_users_org_email"),
    )
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_users_email"), ["email"], unique=False)
        batch_op.create_index(batch_op.f("ix_users_org_id"), ["org_id"], unique=False)

    op.create_table(
        "user_sessions",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("user_id", sa.String(length=36), nullable=False),
        sa.Column("created_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("refreshed_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("ended_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("end_reason", sa.String(length=32), nullable=True),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_user_sessions_user_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_user_sessions")),
    )
    with op.batch_alter_table("user_sessions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_user_sessions_user_id"), ["user_id"], unique=False)

    op.create_table(
        "refresh_tokens",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("session_id", sa.String(length=36), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("expires_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("used_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["user_sessions.id"],
            name=op.f("fk_refresh_tokens_session_id_user_sessions"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_refresh_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_refresh_tokens_token_hash")),
    )
    with op.batch_alter_table("refresh_tokens", schema=None) as batch_op:
        batch_op.create_index("ix_refresh_tokens_session_id", ["session_id"], unique=False)


def downgrade() -> None:
    op.drop_table("refresh_tokens")
    op.drop_table("user_sessions")
    op.drop_table("users")
