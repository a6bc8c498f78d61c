"""PACT done signals on documents, agents' comments on documents and topics (PACT v2.0.3 §7.1)

document_agents gains done_status, done_summary and done_at (a document agent's done signal, as a topic
participant's); document_comments gains agent_id (the document agent that wrote a comment on the PACT path);
topic_comments holds agents' comments on a topic's sections. Existing rows take NULL: no done signal, no
agent. The downgrade drops the table and the columns.

Revision ID: 0032_pact_done_comments
Revises: 0029_approval_policy
Create Date: 2026-12-04 10:00:00.000000
"""

import sqlalchemy as sa
from alembic import op

import domain.kernel.db

revision = "0032_pact_done_comments"
down_revision = "0031_withdraw_intent_lifecycle"
branch_labels = None
depends_on = None

STAMP = domain.kernel.db.UTCDateTime(timezone=True)

# Plain ALTER TABLE, as 0029: SQLite adds and drops a nullable column without a default in place, where a
# batch operation would copy document_agents and document_comments.


def upgrade() -> None:
    op.add_column("document_agents", sa.Column("done_status", sa.String(length=20), nullable=True))
    op.add_column("document_agents", sa.Column("done_summary", sa.Text(), nullable=True))
    op.add_column("document_agents", sa.Column("done_at", STAMP, nullable=True))
    op.add_column("document_comments", sa.Column("agent_id", sa.String(length=36), nullable=True))
    op.create_table(
        "topic_comments",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("topic_id", sa.String(length=36), nullable=False),
        sa.Column("section_id", sa.String(length=256), nullable=True),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("agent_id", sa.String(length=36), nullable=False),
        sa.Column("agent_name", sa.String(length=128), nullable=False),
        sa.Column("created_at", STAMP, nullable=False),
        sa.ForeignKeyConstraint(["topic_id"], ["topics.id"], name=op.f("fk_topic_comments_topic_id_topics")),
        sa.ForeignKeyConstraint(["agent_id"], ["agents.id"], name=op.f("fk_topic_comments_agent_id_agents")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_topic_comments")),
    )
    op.create_index(
        "ix_topic_comments_topic_created_id", "topic_comments", ["topic_id", "created_at", "id"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_topic_comments_topic_created_id", table_name="topic_comments")
    op.drop_table("topic_comments")
    op.drop_column("document_comments", "agent_id")
    op.drop_column("document_agents", "done_at")
    op.drop_column("document_agents", "done_summary")
    op.drop_column("document_agents", "done_status")
