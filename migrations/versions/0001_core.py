"""core: agents, ledger, topics, proposals, events, audit, outbox

Revision ID: 0001_core
Revises:
Create Date: 2026-11-22 11:13:09.700119
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import domain.kernel.db

revision = "0001_core"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:

    op.create_table(
        "agents",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("name_key", sa.String(length=128), nullable=False),
        sa.Column("key_hash", sa.String(length=64), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=True),
        sa.Column("framework", sa.String(length=200), nullable=True),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("created_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("last_seen_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_agents")),
        sa.UniqueConstraint("key_hash", name=op.f("uq_agents_key_hash")),
        sa.UniqueConstraint("name_key", name=op.f("uq_agents_name_key")),
    )
    op.create_table(
        "audit_entries",
        sa.Column(
            "id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False
        ),
        sa.Column("key_hash", sa.String(length=64), nullable=True),
        sa.Column("actor_id", sa.String(length=36), nullable=True),
        sa.Column("op", sa.String(length=80), nullable=False),
        sa.Column("entity_type", sa.String(length=40), nullable=False),
        sa.Column("entity_id", sa.String(length=80), nullable=False),
        sa.Column("before_json", sa.Text(), nullable=True),
        sa.Column("after_json", sa.Text(), nullable=True),
        sa.Column("request_id", sa.String(length=128), nullable=True),
        sa.Column("ip_country", sa.String(length=2), nullable=True),
        sa.Column("created_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_entries")),
    )
    with op.batch_alter_table("audit_entries", schema=None) as batch_op:
        batch_op.create_index("ix_audit_entries_key_order", ["key_hash", "created_at", "id"], unique=False)

    op.create_table(
        "escalations",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("resource_type", sa.String(length=20), nullable=False),
        sa.Column("resource_id", sa.String(length=36), nullable=False),
        sa.Column("section_id", sa.String(length=256), nullable=True),
        sa.Column("proposal_id", sa.String(length=36), nullable=True),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("priority", sa.String(length=16), nullable=False),
        sa.Column("raised_by", sa.String(length=36), nullable=True),
        sa.Column("raised_by_name", sa.String(length=200), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("delivery_status", sa.String(length=16), nullable=False),
        sa.Column("delivery_attempts", sa.Integer(), nullable=False),
        sa.Column("delivery_error", sa.Text(), nullable=True),
        sa.Column("delivered_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("resolution", sa.Text(), nullable=True),
        sa.Column("resolved_by", sa.String(length=200), nullable=True),
        sa.Column("resolved_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("created_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_escalations")),
    )
    with op.batch_alter_table("escalations", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_escalations_resource_id"), ["resource_id"], unique=False)
        batch_op.create_index("ix_escalations_status_created", ["status", "created_at"], unique=False)

    op.create_table(
        "event_streams",
        sa.Column("stream", sa.String(length=80), nullable=False),
        sa.Column("last_seq", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("stream", name=op.f("pk_event_streams")),
    )
    op.create_table(
        "events",
        sa.Column(
            "id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False
        ),
        sa.Column("stream", sa.String(length=80), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("type", sa.String(length=80), nullable=False),
        sa.Column("actor_id", sa.String(length=36), nullable=True),
        sa.Column("actor_name", sa.String(length=200), nullable=True),
        sa.Column("actor_kind", sa.String(length=20), nullable=False),
        sa.Column("section_id", sa.String(length=256), nullable=True),
        sa.Column(
            "data",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("created_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_events")),
        sa.UniqueConstraint("stream", "seq", name="uq_events_stream_seq"),
    )
    op.create_table(
        "outbox_jobs",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("actor", sa.String(length=80), nullable=False),
        sa.Column(
            "payload",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("sent_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("finished_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_outbox_jobs")),
    )
    with op.batch_alter_table("outbox_jobs", schema=None) as batch_op:
        batch_op.create_index("ix_outbox_jobs_status_created", ["status", "created_at"], unique=False)

    op.create_table(
        "proposals",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("resource_type", sa.String(length=20), nullable=False),
        sa.Column("resource_id", sa.String(length=36), nullable=False),
        sa.Column("section_id", sa.String(length=256), nullable=False),
        sa.Column("author_id", sa.String(length=36), nullable=False),
        sa.Column("author_name", sa.String(length=200), nullable=False),
        sa.Column("new_content", sa.Text(), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column(
            "citations",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("proposal_type", sa.String(length=40), nullable=True),
        sa.Column("base_version", sa.Integer(), nullable=False),
        sa.Column("ttl_seconds", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("approve_count", sa.Integer(), nullable=False),
        sa.Column("reject_count", sa.Integer(), nullable=False),
        sa.Column("object_count", sa.Integer(), nullable=False),
        sa.Column("stake", sa.Integer(), nullable=False),
        sa.Column("created_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("expires_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("resolved_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_proposals")),
    )
    with op.batch_alter_table("proposals", schema=None) as batch_op:
        batch_op.create_index(
            "ix_proposals_resource_created", ["resource_type", "resource_id", "created_at"], unique=False
        )
        batch_op.create_index("ix_proposals_status_expires", ["status", "expires_at"], unique=False)

    op.create_table(
        "sweep_runs",
        sa.Column(
            "id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False
        ),
        sa.Column("name", sa.String(length=80), nullable=False),
        sa.Column("holder", sa.String(length=120), nullable=False),
        sa.Column("started_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("finished_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("result", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sweep_runs")),
    )
    with op.batch_alter_table("sweep_runs", schema=None) as batch_op:
        batch_op.create_index("ix_sweep_runs_name_started", ["name", "started_at"], unique=False)

    op.create_table(
        "wallets",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("owner_id", sa.String(length=64), nullable=False),
        sa.Column("balance", sa.BigInteger(), nullable=False),
        sa.Column("created_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.CheckConstraint("balance >= 0 OR kind = 'system'", name=op.f("ck_wallets_non_negative")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_wallets")),
    )
    with op.batch_alter_table("wallets", schema=None) as batch_op:
        batch_op.create_index("ix_wallets_owner", ["kind", "owner_id"], unique=True)

    op.create_table(
        "ledger_entries",
        sa.Column(
            "id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False
        ),
        sa.Column("from_wallet", sa.String(length=36), nullable=False),
        sa.Column("to_wallet", sa.String(length=36), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("reason", sa.String(length=80), nullable=False),
        sa.Column("topic_id", sa.String(length=36), nullable=True),
        sa.Column("created_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.CheckConstraint("amount > 0", name=op.f("ck_ledger_entries_positive")),
        sa.ForeignKeyConstraint(
            ["from_wallet"], ["wallets.id"], name=op.f("fk_ledger_entries_from_wallet_wallets")
        ),
        sa.ForeignKeyConstraint(
            ["to_wallet"], ["wallets.id"], name=op.f("fk_ledger_entries_to_wallet_wallets")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ledger_entries")),
    )
    with op.batch_alter_table("ledger_entries", schema=None) as batch_op:
        batch_op.create_index("ix_ledger_entries_from", ["from_wallet", "id"], unique=False)
        batch_op.create_index("ix_ledger_entries_to", ["to_wallet", "id"], unique=False)

    op.create_table(
        "proposal_votes",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("proposal_id", sa.String(length=36), nullable=False),
        sa.Column("agent_id", sa.String(length=36), nullable=False),
        sa.Column("agent_name", sa.String(length=200), nullable=False),
        sa.Column("kind", sa.String(length=10), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("created_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["proposal_id"], ["proposals.id"], name=op.f("fk_proposal_votes_proposal_id_proposals")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_proposal_votes")),
        sa.UniqueConstraint("proposal_id", "agent_id", name="uq_proposal_votes_pair"),
    )
    with op.batch_alter_table("proposal_votes", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_proposal_votes_agent_id"), ["agent_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_proposal_votes_proposal_id"), ["proposal_id"], unique=False)

    op.create_table(
        "topics",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("title", sa.String(length=500), nullable=False),
        sa.Column("title_key", sa.String(length=500), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("tier", sa.String(length=20), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column(
            "assumptions",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("canonical_claim", sa.Text(), nullable=True),
        sa.Column("jurisdiction", sa.String(length=32), nullable=True),
        sa.Column("authority", sa.String(length=500), nullable=True),
        sa.Column("source_ref", sa.String(length=1000), nullable=True),
        sa.Column("effective_date", sa.Date(), nullable=True),
        sa.Column("expiry_date", sa.Date(), nullable=True),
        sa.Column("creator_id", sa.String(length=36), nullable=False),
        sa.Column("consensus_ratio", sa.Float(), nullable=True),
        sa.Column("consensus_voters", sa.Integer(), nullable=True),
        sa.Column("consensus_since", domain.kernel.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("last_verified_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("created_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["creator_id"], ["agents.id"], name=op.f("fk_topics_creator_id_agents")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_topics")),
        sa.UniqueConstraint("title_key", name=op.f("uq_topics_title_key")),
    )
    with op.batch_alter_table("topics", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_topics_jurisdiction"), ["jurisdiction"], unique=False)
        batch_op.create_index("ix_topics_status_created", ["status", "created_at"], unique=False)

    op.create_table(
        "topic_dependencies",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("topic_id", sa.String(length=36), nullable=False),
        sa.Column("depends_on_id", sa.String(length=36), nullable=False),
        sa.Column("relationship", sa.String(length=40), nullable=False),
        sa.Column("justification", sa.Text(), nullable=True),
        sa.Column("created_by", sa.String(length=36), nullable=True),
        sa.Column("created_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["created_by"], ["agents.id"], name=op.f("fk_topic_dependencies_created_by_agents")
        ),
        sa.ForeignKeyConstraint(
            ["depends_on_id"], ["topics.id"], name=op.f("fk_topic_dependencies_depends_on_id_topics")
        ),
        sa.ForeignKeyConstraint(
            ["topic_id"], ["topics.id"], name=op.f("fk_topic_dependencies_topic_id_topics")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_topic_dependencies")),
        sa.UniqueConstraint("topic_id", "depends_on_id", name="uq_topic_dependencies_pair"),
    )
    with op.batch_alter_table("topic_dependencies", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_topic_dependencies_depends_on_id"), ["depends_on_id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_topic_dependencies_topic_id"), ["topic_id"], unique=False)

    op.create_table(
        "topic_participants",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("topic_id", sa.String(length=36), nullable=False),
        sa.Column("agent_id", sa.String(length=36), nullable=False),
        sa.Column("role", sa.String(length=20), nullable=False),
        sa.Column("joined_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("left_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("done_status", sa.String(length=20), nullable=True),
        sa.Column("done_summary", sa.Text(), nullable=True),
        sa.Column("done_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["agent_id"], ["agents.id"], name=op.f("fk_topic_participants_agent_id_agents")
        ),
        sa.ForeignKeyConstraint(
            ["topic_id"], ["topics.id"], name=op.f("fk_topic_participants_topic_id_topics")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_topic_participants")),
        sa.UniqueConstraint("topic_id", "agent_id", name="uq_topic_participants_pair"),
    )
    with op.batch_alter_table("topic_participants", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_topic_participants_agent_id"), ["agent_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_topic_participants_topic_id"), ["topic_id"], unique=False)


def downgrade() -> None:

    with op.batch_alter_table("topic_participants", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_topic_participants_topic_id"))
        batch_op.drop_index(batch_op.f("ix_topic_participants_agent_id"))

    op.drop_table("topic_participants")
    with op.batch_alter_table("topic_dependencies", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_topic_dependencies_topic_id"))
        batch_op.drop_index(batch_op.f("ix_topic_dependencies_depends_on_id"))

    op.drop_table("topic_dependencies")
    with op.batch_alter_table("topics", schema=None) as batch_op:
        batch_op.drop_index("ix_topics_status_created")
        batch_op.drop_index(batch_op.f("ix_topics_jurisdiction"))

    op.drop_table("topics")
    with op.batch_alter_table("proposal_votes", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_proposal_votes_proposal_id"))
        batch_op.drop_index(batch_op.f("ix_proposal_votes_agent_id"))

    op.drop_table("proposal_votes")
    with op.batch_alter_table("ledger_entries", schema=None) as batch_op:
        batch_op.drop_index("ix_ledger_entries_to")
        batch_op.drop_index("ix_ledger_entries_from")

    op.drop_table("ledger_entries")
    with op.batch_alter_table("wallets", schema=None) as batch_op:
        batch_op.drop_index("ix_wallets_owner")

    op.drop_table("wallets")
    with op.batch_alter_table("sweep_runs", schema=None) as batch_op:
        batch_op.drop_index("ix_sweep_runs_name_started")

    op.drop_table("sweep_runs")
    with op.batch_alter_table("proposals", schema=None) as batch_op:
        batch_op.drop_index("ix_proposals_status_expires")
        batch_op.drop_index("ix_proposals_resource_created")

    op.drop_table("proposals")
    with op.batch_alter_table("outbox_jobs", schema=None) as batch_op:
        batch_op.drop_index("ix_outbox_jobs_status_created")

    op.drop_table("outbox_jobs")
    op.drop_table("events")
    op.drop_table("event_streams")
    with op.batch_alter_table("escalations", schema=None) as batch_op:
        batch_op.drop_index("ix_escalations_status_created")
        batch_op.drop_index(batch_op.f("ix_escalations_resource_id"))

    op.drop_table("escalations")
    with op.batch_alter_table("audit_entries", schema=None) as batch_op:
        batch_op.drop_index("ix_audit_entries_key_order")

    op.drop_table("audit_entries")
    op.drop_table("agents")
