"""list indexes: document tags in a table of their own, and indexes in the order each list reads

The document list filtered by tag used to load every document of the organisation and filter and page
in Python (tags are a JSON array, which SQLite and PostgreSQL query differently and neither indexes
portably). document_tags holds one row per (document, case-folded tag) with the document's organisation
and creation time, and its index (org_id, tag_key, created_at, document_id) is the filtered list in its
order; it is backfilled here from documents.tags, which stays as it is (the tags as uploaded).

Indexes that serve a list's filter and order together, so a page is read off the index instead of
sorting every matching row:
- documents (org_id, created_at, id) replaces (org_id, created_at): the document list, ties broken by id;
- document_comments (org_id, created_at, id) replaces (org_id): the organisation-wide comment search;
- agents (created_at, id): the hub's agent directory;
- topics (created_at, id): the topic list without a status filter (with one, (status, created_at) serves);
- proposals (resource_type, status, created_at, id) and (resource_type, created_at, id), escalations
  (created_at, id), work_submissions (created_at, id): the review queues, by status and with status=all.

No row changes; the downgrade drops document_tags and puts the old indexes back.

Revision ID: 0012_list_indexes
Revises: 0011_staff_sessions
Create Date: 2026-11-23 10:00:00.000000
"""

from typing import Any

import sqlalchemy as sa
from alembic import op

import domain.kernel.db

revision = "0012_list_indexes"
down_revision = "0011_staff_sessions"
branch_labels = None
depends_on = None

STAMP = domain.kernel.db.UTCDateTime(timezone=True)
BATCH = 1000

documents = sa.table(
    "documents",
    sa.column("id", sa.String(36)),
    sa.column("org_id", sa.String(36)),
    sa.column("tags", domain.kernel.db.JSONType),
    sa.column("created_at", STAMP),
)

NEW_INDEXES: list[tuple[str, str, list[str]]] = [
    ("ix_documents_org_created_id", "documents", ["org_id", "created_at", "id"]),
    ("ix_document_comments_org_created_id", "document_comments", ["org_id", "created_at", "id"]),
    ("ix_agents_created_id", "agents", ["created_at", "id"]),
    ("ix_topics_created_id", "topics", ["created_at", "id"]),
    ("ix_proposals_type_status_created", "proposals", ["resource_type", "status", "created_at", "id"]),
    ("ix_proposals_type_created_id", "proposals", ["resource_type", "created_at", "id"]),
    ("ix_escalations_created_id", "escalations", ["created_at", "id"]),
    ("ix_work_submissions_created_id", "work_submissions", ["created_at", "id"]),
]
# The indexes the new ones make redundant (each is a prefix of its replacement).
OLD_INDEXES: list[tuple[str, str, list[str]]] = [
    ("ix_documents_org_created", "documents", ["org_id", "created_at"]),
    ("ix_document_comments_org_id", "document_comments", ["org_id"]),
]


def tag_rows(doc: Any) -> list[dict[str, Any]]:
    """document_tags rows of one document: its tags case-folded, each once (the list's filter is
    case-insensitive, and two tags differing only in case are one key)."""
    keys = dict.fromkeys(str(t).casefold() for t in (doc.tags or []) if str(t).strip())
    return [
        {"document_id": doc.id, "tag_key": key, "org_id": doc.org_id, "created_at": doc.created_at}
        for key in keys
    ]


def upgrade() -> None:
    tags = op.create_table(
        "document_tags",
        sa.Column("document_id", sa.String(length=36), nullable=False),
        sa.Column("tag_key", sa.String(length=200), nullable=False),
        sa.Column("org_id", sa.String(length=36), nullable=False),
        sa.Column("created_at", STAMP, nullable=False),
        sa.ForeignKeyConstraint(
            ["document_id"], ["documents.id"], name=op.f("fk_document_tags_document_id_documents")
        ),
        sa.PrimaryKeyConstraint("document_id", "tag_key", name=op.f("pk_document_tags")),
    )
    conn = op.get_bind()
    after = ""
    while True:  # keyset over the documents, a batch at a time, so a large library never sits in memory
        batch = conn.execute(
            sa.select(documents).where(documents.c.id > after).order_by(documents.c.id).limit(BATCH)
        ).all()
        if not batch:
            break
        rows = [row for doc in batch for row in tag_rows(doc)]
        if rows:
            conn.execute(tags.insert(), rows)
        after = batch[-1].id
    # Built after the backfill: one sorted build instead of an insert per row into the index.
    op.create_index(
        "ix_document_tags_org_tag_created",
        "document_tags",
        ["org_id", "tag_key", "created_at", "document_id"],
    )
    for name, table, columns in NEW_INDEXES:
        op.create_index(name, table, columns)
    for name, table, _columns in OLD_INDEXES:
        op.drop_index(name, table_name=table)


def downgrade() -> None:
    for name, table, columns in OLD_INDEXES:
        op.create_index(name, table, columns)
    for name, table, _columns in NEW_INDEXES:
        op.drop_index(name, table_name=table)
    op.drop_index("ix_document_tags_org_tag_created", table_name="document_tags")
    op.drop_table("document_tags")
