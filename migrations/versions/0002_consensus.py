"""consensus: topic votes, intents, constraints, salience, verifications

Revision ID: 0002_consensus
Revises: 0001_core
Create Date: 2026-11-22 11:58:21.754056
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import domain.kernel.db

revision = "0002_consensus"
down_revision = "0001_core"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "topic_constraints",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("topic_id", sa.String(length=36), nullable=False),
        sa.Column("agent_id", sa.String(length=36), nullable=False),
        sa.Column("section_id", sa.String(length=256), nullable=False),
        sa.Column("boundary", sa.Text(), nullable=False),
        sa.Column("category", sa.String(length=60), nullable=False),
        sa.Column("created_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["agent_id"], ["agents.id"], name=op.f("fk_topic_constraints_agent_id_agents")
        ),
        sa.ForeignKeyConstraint(
            ["topic_id"], ["topics.id"], name=op.f("fk_topic_constraints_topic_id_topics")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_topic_constraints")),
    )
    with op.batch_alter_table("topic_constraints", schema=None) as batch_op:
        batch_op.create_index("ix_topic_constraints_topic_section", ["topic_id", "section_id"], unique=False)

    op.create_table(
        "topic_intents",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("topic_id", sa.String(length=36), nullable=False),
        sa.Column("agent_id", sa.String(length=36), nullable=False),
        sa.Column("section_id", sa.String(length=256), nullable=False),
        sa.Column("goal", sa.Text(), nullable=False),
        sa.Column("category", sa.String(length=60), nullable=False),
        sa.Column("created_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["agent_id"], ["agents.id"], name=op.f("fk_topic_intents_agent_id_agents")),
        sa.ForeignKeyConstraint(["topic_id"], ["topics.id"], name=op.f("fk_topic_intents_topic_id_topics")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_topic_intents")),
    )
    with op.batch_alter_table("topic_intents", schema=None) as batch_op:
        batch_op.create_index("ix_topic_intents_topic_section", ["topic_id", "section_id"], unique=False)

    op.create_table(
        "topic_salience",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("topic_id", sa.String(length=36), nullable=False),
        sa.Column("agent_id", sa.String(length=36), nullable=False),
        sa.Column("section_id", sa.String(length=256), nullable=False),
        sa.Column("score", sa.Integer(), nullable=False),
        sa.Column("updated_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["agent_id"], ["agents.id"], name=op.f("fk_topic_salience_agent_id_agents")),
        sa.ForeignKeyConstraint(["topic_id"], ["topics.id"], name=op.f("fk_topic_salience_topic_id_topics")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_topic_salience")),
        sa.UniqueConstraint("topic_id", "agent_id", "section_id", name="uq_topic_salience_triple"),
    )
    with op.batch_alter_table("topic_salience", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_topic_salience_topic_id"), ["topic_id"], unique=False)

    op.create_table(
        "topic_verifications",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("topic_id", sa.String(length=36), nullable=False),
        sa.Column("agent_id", sa.String(length=36), nullable=False),
        sa.Column("status", sa.String(length=12), nullable=False),
        sa.Column("notes", sa.Text(), nullable=True),
        sa.Column("created_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["agent_id"], ["agents.id"], name=op.f("fk_topic_verifications_agent_id_agents")
        ),
        sa.ForeignKeyConstraint(
            ["topic_id"], ["topics.id"], name=op.f("fk_topic_verifications_topic_id_topics")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_topic_verifications")),
    )
    with op.batch_alter_table("topic_verifications", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_topic_verifications_topic_id"), ["topic_id"], unique=False)

    op.create_table(
        "topic_votes",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("topic_id", sa.String(length=36), nullable=False),
        sa.Column("agent_id", sa.String(length=36), nullable=False),
        sa.Column("vote", sa.String(length=12), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("dependency_topic_id", sa.String(length=36), nullable=True),
        sa.Column("created_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["agent_id"], ["agents.id"], name=op.f("fk_topic_votes_agent_id_agents")),
        sa.ForeignKeyConstraint(["topic_id"], ["topics.id"], name=op.f("fk_topic_votes_topic_id_topics")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_topic_votes")),
        sa.UniqueConstraint("topic_id", "agent_id", name="uq_topic_votes_pair"),
    )
    with op.batch_alter_table("topic_votes", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_topic_votes_topic_id"), ["topic_id"], unique=False)

    with op.batch_alter_table("topic_participants", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "done_assumptions",
                sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
                nullable=True,
            )
        )
        batch_op.add_column(
            sa.Column("aligned_rewarded", sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    with op.batch_alter_table("topic_participants", schema=None) as batch_op:
        batch_op.drop_column("aligned_rewarded")
        batch_op.drop_column("done_assumptions")

    with op.batch_alter_table("topic_votes", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_topic_votes_topic_id"))

    op.drop_table("topic_votes")
    with op.batch_alter_table("topic_verifications", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_topic_verifications_topic_id"))

    op.drop_table("topic_verifications")
    with op.batch_alter_table("topic_salience", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_topic_salience_topic_id"))

    op.drop_table("topic_salience")
    with op.batch_alter_table("topic_intents", schema=None) as batch_op:
        batch_op.drop_index("ix_topic_intents_topic_section")

    op.drop_table("topic_intents")
    with op.batch_alter_table("topic_constraints", schema=None) as batch_op:
        batch_op.drop_index("ix_topic_constraints_topic_section")

    op.drop_table("topic_constraints")
