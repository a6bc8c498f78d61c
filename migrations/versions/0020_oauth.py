"""oauth: clients registered by themselves, authorization codes, sessions opened by a client

oauth_clients: an MCP client registered with POST /oauth/register (RFC 7591): its redirect URIs, grant
types, token endpoint auth method and, for a confidential client, its secret's SHA-256. oauth_codes: an
authorization code's SHA-256, bound to its client, redirect URI, PKCE challenge, person, scopes and
resource; single-use and short-lived. user_sessions gains client_id, scopes and audience, set on the
sessions an OAuth client opens (NULL on a person's own sign-in, which keeps working as before). New
tables and nullable columns only: existing rows are untouched; the downgrade drops them.

Revision ID: 0020_oauth
Revises: 0009_people_users
Create Date: 2026-11-23 12:30:00.000000
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import domain.kernel.db

revision = "0020_oauth"
down_revision = "0009_people_users"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "oauth_clients",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("client_name", sa.String(length=200), nullable=True),
        sa.Column("redirect_uris", JSON, nullable=False),
        sa.Column("grant_types", JSON, nullable=False),
        sa.Column("scope", sa.String(length=500), nullable=True),
        sa.Column("token_endpoint_auth_method", sa.String(length=32), nullable=False),
        sa.Column("secret_hash", sa.String(length=64), nullable=True),
        sa.Column("created_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_oauth_clients")),
    )
    op.create_table(
        "oauth_codes",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("code_hash", sa.String(length=64), nullable=False),
        sa.Column("client_id", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.String(length=36), nullable=False),
        sa.Column("redirect_uri", sa.String(length=2000), nullable=False),
        sa.Column("code_challenge", sa.String(length=128), nullable=False),
        sa.Column("scopes", JSON, nullable=False),
        sa.Column("resource", sa.String(length=2000), nullable=False),
        sa.Column("created_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("expires_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("used_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("session_id", sa.String(length=36), nullable=True),
        sa.ForeignKeyConstraint(
            ["client_id"], ["oauth_clients.id"], name=op.f("fk_oauth_codes_client_id_oauth_clients")
        ),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_oauth_codes_user_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_oauth_codes")),
        sa.UniqueConstraint("code_hash", name=op.f("uq_oauth_codes_code_hash")),
    )
    with op.batch_alter_table("oauth_codes", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_oauth_codes_client_id"), ["client_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_oauth_codes_user_id"), ["user_id"], unique=False)
    with op.batch_alter_table("user_sessions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("client_id", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("scopes", JSON, nullable=True))
        batch_op.add_column(sa.Column("audience", sa.String(length=2000), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("user_sessions", schema=None) as batch_op:
        batch_op.drop_column("audience")
        batch_op.drop_column("scopes")
        batch_op.drop_column("client_id")
    op.drop_table("oauth_codes")
    op.drop_table("oauth_clients")
