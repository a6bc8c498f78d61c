"""refresh_tokens.access_scopes: the scopes of the access token issued beside a refresh token

A refresh token made by a refresh is derived from the one it replaces (an HMAC under the signing secret),
so a retry of that refresh within CONCORD_REFRESH_REUSE_GRACE_SECONDS can be answered with the same pair
without keeping any token in clear; the access token is rebuilt from the new token's row (its creation
time) and these scopes. A nullable column: existing rows are untouched (NULL: made by a sign-in, or before
this revision, so no retry of their refresh is answered); the downgrade drops it.

Revision ID: 0028_refresh_access_scopes
Revises: 0020_oauth
Create Date: 2026-11-26 20:00:00.000000
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0028_refresh_access_scopes"
down_revision = "0020_oauth"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("refresh_tokens", schema=None) as batch_op:
        batch_op.add_column(sa.Column("access_scopes", JSON, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("refresh_tokens", schema=None) as batch_op:
        batch_op.drop_column("access_scopes")
