"""work economy: assignments, submissions, defects; ledger and crowd observation references

Work assignments agents claim, their submissions (with the validator's findings and the outcome), and
work defects. ledger_entries.ref (unique) is the idempotency reference of a payment that must happen at
most once (a submission's credits); market_price_observations.ref is the public id of a crowd-sourced
observation. Both are nullable: existing rows keep none.

Revision ID: 0008_work
Revises: 0007_staff_roles_price_source
Create Date: 2026-11-23 02:07:50.390130
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import domain.kernel.db

revision = "0008_work"
down_revision = "0007_staff_roles_price_source"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "work_assignments",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("work_type", sa.String(length=40), nullable=False),
        sa.Column(
            "payload",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("item_key", sa.String(length=80), nullable=True),
        sa.Column("reward_credits", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=12), nullable=False),
        sa.Column("agent_id", sa.String(length=36), nullable=True),
        sa.Column("created_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("claimed_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("submitted_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("resolved_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("expires_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_work_assignments")),
    )
    with op.batch_alter_table("work_assignments", schema=None) as batch_op:
        batch_op.create_index("ix_work_assignments_agent_status", ["agent_id", "status"], unique=False)
        batch_op.create_index("ix_work_assignments_item_key", ["item_key", "status"], unique=False)
        batch_op.create_index(
            "ix_work_assignments_type_status", ["work_type", "status", "created_at"], unique=False
        )

    op.create_table(
        "work_submissions",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("assignment_id", sa.String(length=36), nullable=False),
        sa.Column("agent_id", sa.String(length=36), nullable=False),
        sa.Column("agent_name", sa.String(length=200), nullable=False),
        sa.Column("work_type", sa.String(length=40), nullable=False),
        sa.Column(
            "submission",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("item_key", sa.String(length=80), nullable=True),
        sa.Column("retailer_slug", sa.String(length=64), nullable=True),
        sa.Column("product_key", sa.String(length=400), nullable=True),
        sa.Column("status", sa.String(length=12), nullable=False),
        sa.Column("reward_credits", sa.Integer(), nullable=False),
        sa.Column("credits_awarded", sa.Integer(), nullable=False),
        sa.Column("ledger_ref", sa.String(length=36), nullable=False),
        sa.Column("notes", sa.Text(), nullable=False),
        sa.Column(
            "checks",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("price_observation_id", sa.String(length=36), nullable=True),
        sa.Column("price_defect_id", sa.String(length=36), nullable=True),
        sa.Column(
            "defect_ids",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("decided_by", sa.String(length=200), nullable=True),
        sa.Column("decision_note", sa.Text(), nullable=True),
        sa.Column("created_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("decided_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["assignment_id"],
            ["work_assignments.id"],
            name=op.f("fk_work_submissions_assignment_id_work_assignments"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_work_submissions")),
        sa.UniqueConstraint("assignment_id", name="uq_work_submissions_assignment"),
    )
    with op.batch_alter_table("work_submissions", schema=None) as batch_op:
        batch_op.create_index("ix_work_submissions_agent", ["agent_id", "created_at"], unique=False)
        batch_op.create_index(
            "ix_work_submissions_product", ["retailer_slug", "product_key", "created_at"], unique=False
        )
        batch_op.create_index("ix_work_submissions_status_created", ["status", "created_at"], unique=False)

    op.create_table(
        "work_defects",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("submission_id", sa.String(length=36), nullable=False),
        sa.Column("assignment_id", sa.String(length=36), nullable=False),
        sa.Column("agent_id", sa.String(length=36), nullable=False),
        sa.Column("agent_name", sa.String(length=200), nullable=False),
        sa.Column("reason", sa.String(length=40), nullable=False),
        sa.Column("detail", sa.Text(), nullable=False),
        sa.Column("scenario", sa.String(length=200), nullable=True),
        sa.Column("cluster", sa.String(length=200), nullable=True),
        sa.Column(
            "data",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("status", sa.String(length=12), nullable=False),
        sa.Column("created_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("resolved_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("resolved_by", sa.String(length=200), nullable=True),
        sa.Column("resolution_note", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["submission_id"],
            ["work_submissions.id"],
            name=op.f("fk_work_defects_submission_id_work_submissions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_work_defects")),
    )
    with op.batch_alter_table("work_defects", schema=None) as batch_op:
        batch_op.create_index("ix_work_defects_agent", ["agent_id", "created_at"], unique=False)
        batch_op.create_index("ix_work_defects_status_created", ["status", "created_at"], unique=False)

    with op.batch_alter_table("ledger_entries", schema=None) as batch_op:
        batch_op.add_column(sa.Column("ref", sa.String(length=36), nullable=True))
        batch_op.create_unique_constraint(batch_op.f("uq_ledger_entries_ref"), ["ref"])

    with op.batch_alter_table("market_price_observations", schema=None) as batch_op:
        batch_op.add_column(sa.Column("ref", sa.String(length=36), nullable=True))
        batch_op.create_unique_constraint(batch_op.f("uq_market_price_observations_ref"), ["ref"])


def downgrade() -> None:
    with op.batch_alter_table("market_price_observations", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("uq_market_price_observations_ref"), type_="unique")
        batch_op.drop_column("ref")

    with op.batch_alter_table("ledger_entries", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("uq_ledger_entries_ref"), type_="unique")
        batch_op.drop_column("ref")

    with op.batch_alter_table("work_defects", schema=None) as batch_op:
        batch_op.drop_index("ix_work_defects_status_created")
        batch_op.drop_index("ix_work_defects_agent")

    op.drop_table("work_defects")
    with op.batch_alter_table("work_submissions", schema=None) as batch_op:
        batch_op.drop_index("ix_work_submissions_status_created")
        batch_op.drop_index("ix_work_submissions_product")
        batch_op.drop_index("ix_work_submissions_agent")

    op.drop_table("work_submissions")
    with op.batch_alter_table("work_assignments", schema=None) as batch_op:
        batch_op.drop_index("ix_work_assignments_type_status")
        batch_op.drop_index("ix_work_assignments_item_key")
        batch_op.drop_index("ix_work_assignments_agent_status")

    op.drop_table("work_assignments")
