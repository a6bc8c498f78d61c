"""section records: one table each for intents, constraints and salience of topics and documents

Moves the rows of topic_intents, topic_constraints, topic_salience (0002) and document_intents,
document_constraints, document_salience (0005) into section_intents, section_constraints and
section_salience, told apart by resource_type as proposals are, and drops the old tables. Every row is
kept: topic rows gain the agent's name (hub agent names never change), topic salience rows gain a UUID id
(they had integers), a constraint's category (topics) or type (documents) becomes its kind, and a
salience row's one timestamp becomes both its created_at and updated_at. The downgrade moves them back.

Revision ID: 0006_section_records
Revises: 0002_consensus, 0005_documents
Create Date: 2026-11-29 10:00:00.000000
"""

import uuid
from typing import Any

import sqlalchemy as sa
from alembic import op

import domain.kernel.db

revision = "0006_section_records"
down_revision = ("0002_consensus", "0005_documents")
branch_labels = None
depends_on = None

STAMP = domain.kernel.db.UTCDateTime(timezone=True)
BATCH = 1000


def _create_section_tables() -> None:
    op.create_table(
        "section_intents",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("resource_type", sa.String(length=20), nullable=False),
        sa.Column("resource_id", sa.String(length=36), nullable=False),
        sa.Column("section_id", sa.String(length=256), nullable=False),
        sa.Column("agent_id", sa.String(length=36), nullable=False),
        sa.Column("agent_name", sa.String(length=200), nullable=False),
        sa.Column("goal", sa.Text(), nullable=False),
        sa.Column("category", sa.String(length=64), nullable=False),
        sa.Column("created_at", STAMP, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_section_intents")),
    )
    op.create_index(
        "ix_section_intents_resource_created",
        "section_intents",
        ["resource_type", "resource_id", "created_at"],
        unique=False,
    )
    op.create_table(
        "section_constraints",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("resource_type", sa.String(length=20), nullable=False),
        sa.Column("resource_id", sa.String(length=36), nullable=False),
        sa.Column("section_id", sa.String(length=256), nullable=False),
        sa.Column("agent_id", sa.String(length=36), nullable=False),
        sa.Column("agent_name", sa.String(length=200), nullable=False),
        sa.Column("boundary", sa.Text(), nullable=False),
        sa.Column("kind", sa.String(length=64), nullable=False),
        sa.Column("created_at", STAMP, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_section_constraints")),
    )
    op.create_index(
        "ix_section_constraints_resource_created",
        "section_constraints",
        ["resource_type", "resource_id", "created_at"],
        unique=False,
    )
    op.create_table(
        "section_salience",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("resource_type", sa.String(length=20), nullable=False),
        sa.Column("resource_id", sa.String(length=36), nullable=False),
        sa.Column("section_id", sa.String(length=256), nullable=False),
        sa.Column("agent_id", sa.String(length=36), nullable=False),
        sa.Column("agent_name", sa.String(length=200), nullable=False),
        sa.Column("score", sa.Integer(), nullable=False),
        sa.Column("created_at", STAMP, nullable=False),
        sa.Column("updated_at", STAMP, nullable=False),
        sa.CheckConstraint("score >= 0 AND score <= 10", name=op.f("ck_section_salience_score_range")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_section_salience")),
        sa.UniqueConstraint(
            "resource_type", "resource_id", "section_id", "agent_id", name="uq_section_salience_score"
        ),
    )


def _create_topic_tables() -> None:
    """The tables of 0002_consensus, as they were."""
    op.create_table(
        "topic_constraints",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("topic_id", sa.String(length=36), nullable=False),
        sa.Column("agent_id", sa.String(length=36), nullable=False),
        sa.Column("section_id", sa.String(length=256), nullable=False),
        sa.Column("boundary", sa.Text(), nullable=False),
        sa.Column("category", sa.String(length=60), nullable=False),
        sa.Column("created_at", STAMP, nullable=False),
        sa.ForeignKeyConstraint(
            ["agent_id"], ["agents.id"], name=op.f("fk_topic_constraints_agent_id_agents")
        ),
        sa.ForeignKeyConstraint(
            ["topic_id"], ["topics.id"], name=op.f("fk_topic_constraints_topic_id_topics")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_topic_constraints")),
    )
    op.create_index(
        "ix_topic_constraints_topic_section", "topic_constraints", ["topic_id", "section_id"], unique=False
    )
    op.create_table(
        "topic_intents",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("topic_id", sa.String(length=36), nullable=False),
        sa.Column("agent_id", sa.String(length=36), nullable=False),
        sa.Column("section_id", sa.String(length=256), nullable=False),
        sa.Column("goal", sa.Text(), nullable=False),
        sa.Column("category", sa.String(length=60), nullable=False),
        sa.Column("created_at", STAMP, nullable=False),
        sa.ForeignKeyConstraint(["agent_id"], ["agents.id"], name=op.f("fk_topic_intents_agent_id_agents")),
        sa.ForeignKeyConstraint(["topic_id"], ["topics.id"], name=op.f("fk_topic_intents_topic_id_topics")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_topic_intents")),
    )
    op.create_index(
        "ix_topic_intents_topic_section", "topic_intents", ["topic_id", "section_id"], unique=False
    )
    op.create_table(
        "topic_salience",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("topic_id", sa.String(length=36), nullable=False),
        sa.Column("agent_id", sa.String(length=36), nullable=False),
        sa.Column("section_id", sa.String(length=256), nullable=False),
        sa.Column("score", sa.Integer(), nullable=False),
        sa.Column("updated_at", STAMP, nullable=False),
        sa.ForeignKeyConstraint(["agent_id"], ["agents.id"], name=op.f("fk_topic_salience_agent_id_agents")),
        sa.ForeignKeyConstraint(["topic_id"], ["topics.id"], name=op.f("fk_topic_salience_topic_id_topics")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_topic_salience")),
        sa.UniqueConstraint("topic_id", "agent_id", "section_id", name="uq_topic_salience_triple"),
    )
    op.create_index(op.f("ix_topic_salience_topic_id"), "topic_salience", ["topic_id"], unique=False)


def _create_document_tables() -> None:
    """The tables of 0005_documents, as they were."""
    op.create_table(
        "document_constraints",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("document_id", sa.String(length=36), nullable=False),
        sa.Column("section_id", sa.String(length=256), nullable=False),
        sa.Column("agent_id", sa.String(length=36), nullable=False),
        sa.Column("agent_name", sa.String(length=128), nullable=False),
        sa.Column("boundary", sa.Text(), nullable=False),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.Column("created_at", STAMP, nullable=False),
        sa.ForeignKeyConstraint(
            ["document_id"], ["documents.id"], name=op.f("fk_document_constraints_document_id_documents")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_document_constraints")),
    )
    op.create_index(
        "ix_document_constraints_doc", "document_constraints", ["document_id", "created_at"], unique=False
    )
    op.create_table(
        "document_intents",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("document_id", sa.String(length=36), nullable=False),
        sa.Column("section_id", sa.String(length=256), nullable=False),
        sa.Column("agent_id", sa.String(length=36), nullable=False),
        sa.Column("agent_name", sa.String(length=128), nullable=False),
        sa.Column("goal", sa.Text(), nullable=False),
        sa.Column("category", sa.String(length=64), nullable=False),
        sa.Column("created_at", STAMP, nullable=False),
        sa.ForeignKeyConstraint(
            ["document_id"], ["documents.id"], name=op.f("fk_document_intents_document_id_documents")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_document_intents")),
    )
    op.create_index(
        "ix_document_intents_doc", "document_intents", ["document_id", "created_at"], unique=False
    )
    op.create_table(
        "document_salience",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("document_id", sa.String(length=36), nullable=False),
        sa.Column("section_id", sa.String(length=256), nullable=False),
        sa.Column("agent_id", sa.String(length=36), nullable=False),
        sa.Column("agent_name", sa.String(length=128), nullable=False),
        sa.Column("score", sa.Integer(), nullable=False),
        sa.Column("created_at", STAMP, nullable=False),
        sa.ForeignKeyConstraint(
            ["document_id"], ["documents.id"], name=op.f("fk_document_salience_document_id_documents")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_document_salience")),
        sa.UniqueConstraint("document_id", "section_id", "agent_id", name="uq_document_salience"),
    )
    op.create_index(
        op.f("ix_document_salience_document_id"), "document_salience", ["document_id"], unique=False
    )


def _copy(select: sa.Select[Any], into: sa.TableClause, columns: list[str]) -> None:
    op.execute(sa.insert(into).from_select(columns, select))


RECORD = ["id", "resource_type", "resource_id", "section_id", "agent_id", "agent_name"]
intents = sa.table(
    "section_intents",
    *(sa.column(c) for c in RECORD),
    sa.column("goal"),
    sa.column("category"),
    sa.column("created_at"),
)
constraints = sa.table(
    "section_constraints",
    *(sa.column(c) for c in RECORD),
    sa.column("boundary"),
    sa.column("kind"),
    sa.column("created_at"),
)
salience = sa.table(
    "section_salience",
    *(sa.column(c) for c in RECORD),
    sa.column("score"),
    sa.column("created_at", STAMP),
    sa.column("updated_at", STAMP),
)
agents = sa.table("agents", sa.column("id"), sa.column("name"))
topic_intents = sa.table(
    "topic_intents",
    sa.column("id"),
    sa.column("topic_id"),
    sa.column("agent_id"),
    sa.column("section_id"),
    sa.column("goal"),
    sa.column("category"),
    sa.column("created_at"),
)
topic_constraints = sa.table(
    "topic_constraints",
    sa.column("id"),
    sa.column("topic_id"),
    sa.column("agent_id"),
    sa.column("section_id"),
    sa.column("boundary"),
    sa.column("category"),
    sa.column("created_at"),
)
topic_salience = sa.table(
    "topic_salience",
    sa.column("id"),
    sa.column("topic_id"),
    sa.column("agent_id"),
    sa.column("section_id"),
    sa.column("score"),
    sa.column("updated_at", STAMP),
)
document_intents = sa.table(
    "document_intents",
    sa.column("id"),
    sa.column("document_id"),
    sa.column("section_id"),
    sa.column("agent_id"),
    sa.column("agent_name"),
    sa.column("goal"),
    sa.column("category"),
    sa.column("created_at"),
)
document_constraints = sa.table(
    "document_constraints",
    sa.column("id"),
    sa.column("document_id"),
    sa.column("section_id"),
    sa.column("agent_id"),
    sa.column("agent_name"),
    sa.column("boundary"),
    sa.column("type"),
    sa.column("created_at"),
)
document_salience = sa.table(
    "document_salience",
    sa.column("id"),
    sa.column("document_id"),
    sa.column("section_id"),
    sa.column("agent_id"),
    sa.column("agent_name"),
    sa.column("score"),
    sa.column("created_at"),
)


def upgrade() -> None:
    _create_section_tables()
    topic: sa.ColumnClause[str] = sa.literal_column("'topic'")
    document: sa.ColumnClause[str] = sa.literal_column("'document'")
    ti, tc, ds = topic_intents, topic_constraints, document_salience
    _copy(
        sa.select(
            ti.c.id,
            topic,
            ti.c.topic_id,
            ti.c.section_id,
            ti.c.agent_id,
            agents.c.name,
            ti.c.goal,
            ti.c.category,
            ti.c.created_at,
        ).join_from(ti, agents, agents.c.id == ti.c.agent_id),
        intents,
        [*RECORD, "goal", "category", "created_at"],
    )
    di = document_intents
    _copy(
        sa.select(
            di.c.id,
            document,
            di.c.document_id,
            di.c.section_id,
            di.c.agent_id,
            di.c.agent_name,
            di.c.goal,
            di.c.category,
            di.c.created_at,
        ),
        intents,
        [*RECORD, "goal", "category", "created_at"],
    )
    _copy(
        sa.select(
            tc.c.id,
            topic,
            tc.c.topic_id,
            tc.c.section_id,
            tc.c.agent_id,
            agents.c.name,
            tc.c.boundary,
            tc.c.category,
            tc.c.created_at,
        ).join_from(tc, agents, agents.c.id == tc.c.agent_id),
        constraints,
        [*RECORD, "boundary", "kind", "created_at"],
    )
    dc = document_constraints
    _copy(
        sa.select(
            dc.c.id,
            document,
            dc.c.document_id,
            dc.c.section_id,
            dc.c.agent_id,
            dc.c.agent_name,
            dc.c.boundary,
            dc.c.type,
            dc.c.created_at,
        ),
        constraints,
        [*RECORD, "boundary", "kind", "created_at"],
    )
    _copy(
        sa.select(
            ds.c.id,
            document,
            ds.c.document_id,
            ds.c.section_id,
            ds.c.agent_id,
            ds.c.agent_name,
            ds.c.score,
            ds.c.created_at,
            ds.c.created_at.label("updated_at"),
        ),
        salience,
        [*RECORD, "score", "created_at", "updated_at"],
    )
    # Topic salience had integer ids: each row gets a UUID, as every other record has.
    bind = op.get_bind()
    ts = topic_salience
    rows = bind.execute(
        sa.select(ts.c.topic_id, ts.c.section_id, ts.c.agent_id, agents.c.name, ts.c.score, ts.c.updated_at)
        .join_from(ts, agents, agents.c.id == ts.c.agent_id)
        .order_by(ts.c.id)
    ).all()
    for start in range(0, len(rows), BATCH):
        bind.execute(
            sa.insert(salience),
            [
                {
                    "id": str(uuid.uuid4()),
                    "resource_type": "topic",
                    "resource_id": topic_id,
                    "section_id": section_id,
                    "agent_id": agent_id,
                    "agent_name": name,
                    "score": score,
                    "created_at": at,
                    "updated_at": at,
                }
                for topic_id, section_id, agent_id, name, score, at in rows[start : start + BATCH]
            ],
        )
    for table in (
        "topic_intents",
        "topic_constraints",
        "topic_salience",
        "document_intents",
        "document_constraints",
        "document_salience",
    ):
        op.drop_table(table)


def downgrade() -> None:
    _create_topic_tables()
    _create_document_tables()
    i, c, s = intents, constraints, salience

    def of(table: sa.TableClause, kind: str) -> sa.ColumnElement[bool]:
        return table.c.resource_type == kind

    _copy(
        sa.select(
            i.c.id, i.c.resource_id, i.c.agent_id, i.c.section_id, i.c.goal, i.c.category, i.c.created_at
        ).where(of(i, "topic")),
        topic_intents,
        ["id", "topic_id", "agent_id", "section_id", "goal", "category", "created_at"],
    )
    _copy(
        sa.select(
            i.c.id,
            i.c.resource_id,
            i.c.section_id,
            i.c.agent_id,
            i.c.agent_name,
            i.c.goal,
            i.c.category,
            i.c.created_at,
        ).where(of(i, "document")),
        document_intents,
        ["id", "document_id", "section_id", "agent_id", "agent_name", "goal", "category", "created_at"],
    )
    _copy(
        sa.select(
            c.c.id, c.c.resource_id, c.c.agent_id, c.c.section_id, c.c.boundary, c.c.kind, c.c.created_at
        ).where(of(c, "topic")),
        topic_constraints,
        ["id", "topic_id", "agent_id", "section_id", "boundary", "category", "created_at"],
    )
    _copy(
        sa.select(
            c.c.id,
            c.c.resource_id,
            c.c.section_id,
            c.c.agent_id,
            c.c.agent_name,
            c.c.boundary,
            c.c.kind,
            c.c.created_at,
        ).where(of(c, "document")),
        document_constraints,
        ["id", "document_id", "section_id", "agent_id", "agent_name", "boundary", "type", "created_at"],
    )
    # The old tables kept one timestamp per score: the time it was last set.
    _copy(
        sa.select(s.c.resource_id, s.c.agent_id, s.c.section_id, s.c.score, s.c.updated_at)
        .where(of(s, "topic"))
        .order_by(s.c.created_at, s.c.id),
        topic_salience,
        ["topic_id", "agent_id", "section_id", "score", "updated_at"],
    )
    _copy(
        sa.select(
            s.c.id, s.c.resource_id, s.c.section_id, s.c.agent_id, s.c.agent_name, s.c.score, s.c.updated_at
        ).where(of(s, "document")),
        document_salience,
        ["id", "document_id", "section_id", "agent_id", "agent_name", "score", "created_at"],
    )
    for table in ("section_intents", "section_constraints", "section_salience"):
        op.drop_table(table)
