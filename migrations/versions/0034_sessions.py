"""sessions: PACT v2.0.3 session awareness (§4.4, §6.5) on topics and documents

pact_obligations holds pending obligations (a vote owed on a proposal, …) until they are discharged;
pact_presence holds each member's last heartbeat, attention flag and mark-read cursor on a resource;
pact_heartbeats holds the answer to each (member, client_heartbeat_id), so that a repeated heartbeat is
answered alike and records nothing. New tables only: no existing row changes. The downgrade drops them.

Revision ID: 0034_sessions
Revises: 0029_approval_policy
Create Date: 2026-11-27 00:00:00.000000
"""

import sqlalchemy as sa
from alembic import op

import domain.kernel.db

revision = "0034_sessions"
down_revision = "0033_human_queries"
branch_labels = None
depends_on = None


def _at(name: str, nullable: bool = True) -> sa.Column:  # type: ignore[type-arg]
    return sa.Column(name, domain.kernel.db.UTCDateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "pact_obligations",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("resource_type", sa.String(length=20), nullable=False),
        sa.Column("resource_id", sa.String(length=36), nullable=False),
        sa.Column("member_id", sa.String(length=36), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("event_ref", sa.String(length=80), nullable=False),
        sa.Column("proposal_id", sa.String(length=36), nullable=True),
        _at("created_at", nullable=False),
        _at("due_by"),
        _at("discharged_at"),
        sa.Column("discharge_kind", sa.String(length=16), nullable=True),
        sa.Column("discharge_event_ref", sa.String(length=80), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pact_obligations")),
        sa.UniqueConstraint("kind", "event_ref", "member_id", name="uq_pact_obligations_owed"),
    )
    op.create_index(
        "ix_pact_obligations_open", "pact_obligations", ["resource_type", "resource_id", "discharged_at"]
    )
    op.create_index("ix_pact_obligations_proposal", "pact_obligations", ["proposal_id"])
    op.create_table(
        "pact_presence",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("resource_type", sa.String(length=20), nullable=False),
        sa.Column("resource_id", sa.String(length=36), nullable=False),
        sa.Column("member_id", sa.String(length=36), nullable=False),
        _at("last_seen"),
        sa.Column("last_heartbeat_seq", sa.Integer(), nullable=True),
        sa.Column("attention_required", sa.Boolean(), nullable=False),
        sa.Column("read_from_seq", sa.Integer(), nullable=True),
        sa.Column("read_to_seq", sa.Integer(), nullable=False),
        sa.Column("read_event_seq", sa.Integer(), nullable=True),
        _at("read_at"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pact_presence")),
        sa.UniqueConstraint("resource_type", "resource_id", "member_id", name="uq_pact_presence_member"),
    )
    op.create_table(
        "pact_heartbeats",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("resource_type", sa.String(length=20), nullable=False),
        sa.Column("resource_id", sa.String(length=36), nullable=False),
        sa.Column("member_id", sa.String(length=36), nullable=False),
        sa.Column("client_heartbeat_id", sa.String(length=80), nullable=False),
        _at("received_at", nullable=False),
        sa.Column("response", domain.kernel.db.JSONType, nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pact_heartbeats")),
        sa.UniqueConstraint(
            "resource_type", "resource_id", "member_id", "client_heartbeat_id", name="uq_pact_heartbeats_key"
        ),
    )


def downgrade() -> None:
    op.drop_table("pact_heartbeats")
    op.drop_table("pact_presence")
    op.drop_index("ix_pact_obligations_proposal", table_name="pact_obligations")
    op.drop_index("ix_pact_obligations_open", table_name="pact_obligations")
    op.drop_table("pact_obligations")
