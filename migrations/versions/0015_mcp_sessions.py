"""mcp sessions: the document API's MCP sessions in the database (mcp_sessions)

An MCP client's session (Mcp-Session-Id) was kept in the memory of the process that opened it; with several
web processes sharing a port the client's next request may reach another one, so sessions now live here:
the session id's SHA-256 only, the service key that opened it, the protocol version, and its last use.
A new table: no existing row changes (sessions held in memory by a running server end with its restart, as
before); the downgrade drops it.

Revision ID: 0015_mcp_sessions
Revises: 0011_staff_sessions
Create Date: 2026-11-23 10:00:00.000000
"""

import sqlalchemy as sa
from alembic import op

import domain.kernel.db

revision = "0015_mcp_sessions"
down_revision = "0011_staff_sessions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "mcp_sessions",
        sa.Column("id_hash", sa.String(length=64), nullable=False),
        sa.Column("key_id", sa.String(length=36), nullable=False),
        sa.Column("protocol_version", sa.String(length=32), nullable=False),
        sa.Column("created_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("last_seen_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id_hash", name=op.f("pk_mcp_sessions")),
    )
    with op.batch_alter_table("mcp_sessions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_mcp_sessions_key_id"), ["key_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_mcp_sessions_last_seen_at"), ["last_seen_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("mcp_sessions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_mcp_sessions_last_seen_at"))
        batch_op.drop_index(batch_op.f("ix_mcp_sessions_key_id"))
    op.drop_table("mcp_sessions")
