"""withdraw and the intent lifecycle: withdrawn constraints, intents' status and objections, and who
raised an escalation (PACT v2.0.3 §7.1, §10.2)

- section_constraints gains status (active | withdrawn) and withdrawn_at, withdrawn_by, withdrawn_by_name:
  a withdrawn constraint is kept, with who withdrew it and when. Existing constraints are active.
- section_intents gains status (proposed | accepted | objected | superseded), expires_at (the end of the
  window for objections) and resolved_at, with an index for the acceptance sweep; intent_objections holds
  one objection per (intent, agent). Existing intents were declared when nobody could object to one: they
  become accepted at their creation (expires_at NULL), so no acceptance event is invented for them.
- escalations gains origin (agent | policy): withdrawing a proposal closes the escalations its approval
  policy raised for it (human-only, a topic's objection), not the questions agents asked about it. Existing
  escalations are the agents' unless their text is the one the engine writes for a proposal.

The downgrade drops the table and the columns (withdrawn constraints, intent statuses and objections are
lost; every constraint, intent and escalation row stays).

Revision ID: 0031_withdraw_intent_lifecycle
Revises: 0029_approval_policy (and needs 0006_section_records)
Create Date: 2026-12-05 10:00:00.000000
"""

import sqlalchemy as sa
from alembic import op

import domain.kernel.db

revision = "0031_withdraw_intent_lifecycle"
down_revision = "0030_section_locks_shared"
branch_labels = None
depends_on = "0006_section_records"  # section_intents and section_constraints

STAMP = domain.kernel.db.UTCDateTime(timezone=True)

# Plain ALTER TABLE on both databases, as 0029: SQLite adds a column with a constant default in place, and
# drops a plain (unindexed) column in place since 3.35.


def upgrade() -> None:
    op.add_column(
        "section_constraints",
        sa.Column("status", sa.String(length=16), nullable=False, server_default="active"),
    )
    op.add_column("section_constraints", sa.Column("withdrawn_at", STAMP, nullable=True))
    op.add_column("section_constraints", sa.Column("withdrawn_by", sa.String(length=36), nullable=True))
    op.add_column("section_constraints", sa.Column("withdrawn_by_name", sa.String(length=200), nullable=True))

    op.add_column(
        "section_intents",
        sa.Column("status", sa.String(length=16), nullable=False, server_default="proposed"),
    )
    op.add_column("section_intents", sa.Column("expires_at", STAMP, nullable=True))
    op.add_column("section_intents", sa.Column("resolved_at", STAMP, nullable=True))
    op.execute("UPDATE section_intents SET status = 'accepted', resolved_at = created_at")
    op.create_index(
        "ix_section_intents_status_expires", "section_intents", ["status", "expires_at"], unique=False
    )
    op.create_table(
        "intent_objections",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("intent_id", sa.String(length=36), nullable=False),
        sa.Column("agent_id", sa.String(length=36), nullable=False),
        sa.Column("agent_name", sa.String(length=200), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("created_at", STAMP, nullable=False),
        sa.ForeignKeyConstraint(
            ["intent_id"], ["section_intents.id"], name=op.f("fk_intent_objections_intent_id_section_intents")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_intent_objections")),
        sa.UniqueConstraint("intent_id", "agent_id", name="uq_intent_objections_pair"),
    )

    op.add_column(
        "escalations", sa.Column("origin", sa.String(length=16), nullable=False, server_default="agent")
    )
    # The texts domain/consensus/engine.py writes when a policy puts a proposal before the reviewers.
    op.execute(
        "UPDATE escalations SET origin = 'policy' WHERE proposal_id IS NOT NULL AND "
        "(message LIKE 'Approve or reject proposal %' OR message LIKE 'Proposal % was objected to%')"
    )


def downgrade() -> None:
    op.drop_column("escalations", "origin")
    op.drop_table("intent_objections")
    op.drop_index("ix_section_intents_status_expires", table_name="section_intents")
    for column in ("resolved_at", "expires_at", "status"):
        op.drop_column("section_intents", column)
    for column in ("withdrawn_by_name", "withdrawn_by", "withdrawn_at", "status"):
        op.drop_column("section_constraints", column)
