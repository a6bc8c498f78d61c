"""invite token hash: a document agent's inviteToken is kept as its SHA-256, never in clear

`POST /api/tap/{docId}/join` takes an optional inviteToken; it was stored as sent in
document_agents.invite_token. Like every other secret (API keys, share links, sessions), only its SHA-256
is kept now, in invite_token_hash. Existing rows are hashed here, in batches, so a token given before the
upgrade still matches the same hash; the clear column is dropped. The downgrade cannot bring clear
tokens back: it recreates invite_token empty (NULL) and drops the hashes.

Revision ID: 0019_invite_token_hash
Revises: 0005_documents
Create Date: 2026-11-23 10:30:00.000000
"""

import hashlib

import sqlalchemy as sa
from alembic import op

revision = "0019_invite_token_hash"
down_revision = "0005_documents"
branch_labels = None
depends_on = None

BATCH = 1_000
agents = sa.table(
    "document_agents",
    sa.column("id", sa.String(36)),
    sa.column("invite_token", sa.String(200)),
    sa.column("invite_token_hash", sa.String(64)),
)


def upgrade() -> None:
    with op.batch_alter_table("document_agents", schema=None) as batch_op:
        batch_op.add_column(sa.Column("invite_token_hash", sa.String(length=64), nullable=True))
    conn = op.get_bind()
    last = ""
    while True:
        rows = conn.execute(
            sa.select(agents.c.id, agents.c.invite_token)
            .where(agents.c.invite_token.is_not(None), agents.c.id > last)
            .order_by(agents.c.id)
            .limit(BATCH)
        ).all()
        if not rows:
            break
        conn.execute(
            agents.update()
            .where(agents.c.id == sa.bindparam("row_id"))
            .values(invite_token_hash=sa.bindparam("digest")),
            [
                {"row_id": row_id, "digest": hashlib.sha256(token.encode("utf-8")).hexdigest()}
                for row_id, token in rows
            ],
        )
        last = rows[-1][0]
    with op.batch_alter_table("document_agents", schema=None) as batch_op:
        batch_op.drop_column("invite_token")


def downgrade() -> None:
    with op.batch_alter_table("document_agents", schema=None) as batch_op:
        batch_op.add_column(sa.Column("invite_token", sa.String(length=200), nullable=True))
    with op.batch_alter_table("document_agents", schema=None) as batch_op:
        batch_op.drop_column("invite_token_hash")
