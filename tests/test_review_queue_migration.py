"""Migration 0038 gives the escalations one priority vocabulary (the hub's `normal` becomes `medium`, the
others stay) and adds the indexes behind the reviewers' queue order (priority rank, then age) and the history
order (newest answer first). The downgrade drops those indexes and gives the topics' escalations back their
`normal`, leaving the documents' `medium`.

Runs on its own database (a file on SQLite, a database of its own on PostgreSQL), migrated step by step."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import command

import migrations
from domain.kernel.db import UTCDateTime, make_engine
from tests.migration_support import scratch_database

BEFORE = "0037_legislation_import"
NEW_INDEXES = {
    "ix_escalations_status_priority_created",
    "ix_escalations_priority_created",
    "ix_escalations_status_resolved",
}
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

old = sa.MetaData()
escalations = sa.Table(
    "escalations",
    old,
    sa.Column("id", sa.String(36)),
    sa.Column("resource_type", sa.String(20)),
    sa.Column("resource_id", sa.String(36)),
    sa.Column("message", sa.Text()),
    sa.Column("priority", sa.String(16)),
    sa.Column("status", sa.String(16)),
    sa.Column("kind", sa.String(16)),
    sa.Column("origin", sa.String(16)),
    sa.Column("delivery_status", sa.String(16)),
    sa.Column("delivery_attempts", sa.Integer()),
    sa.Column("is_override", sa.Boolean()),
    sa.Column("created_at", UTCDateTime()),
)
# id -> (resource type, priority as stored before 0038)
ROWS = {
    "00000000-0000-4000-8000-000000000001": ("topic", "normal"),
    "00000000-0000-4000-8000-000000000002": ("topic", "urgent"),
    "00000000-0000-4000-8000-000000000003": ("document", "medium"),
    "00000000-0000-4000-8000-000000000004": ("document", "high"),
    "00000000-0000-4000-8000-000000000005": ("topic", "low"),
}


async def _state(url: str) -> tuple[dict[str, str], set[str]]:
    engine = make_engine(url, null_pool=True)
    try:
        async with engine.connect() as conn:
            priorities = dict(
                (await conn.execute(sa.select(escalations.c.id, escalations.c.priority))).tuples().all()
            )
            # Read from the catalogue: SQLAlchemy's SQLite inspector leaves expression indexes out.
            catalogue = (
                "SELECT indexname FROM pg_indexes WHERE tablename = 'escalations'"
                if conn.dialect.name == "postgresql"
                else "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'escalations'"
            )
            indexes = set((await conn.execute(sa.text(catalogue))).scalars().all())
    finally:
        await engine.dispose()
    return priorities, indexes


async def test_one_priority_vocabulary_and_the_queue_indexes_and_back() -> None:
    async with scratch_database("review_queue", ["heads"]) as url:
        await asyncio.to_thread(command.downgrade, migrations.config(url), BEFORE)
        engine = make_engine(url, null_pool=True)
        try:
            async with engine.begin() as conn:
                for n, (escalation_id, (resource_type, priority)) in enumerate(ROWS.items()):
                    await conn.execute(
                        escalations.insert(),
                        {
                            "id": escalation_id,
                            "resource_type": resource_type,
                            "resource_id": "r",
                            "message": f"Question {n}?",
                            "priority": priority,
                            "status": "open",
                            "kind": "escalation",
                            "origin": "agent",
                            "delivery_status": "delivered",
                            "delivery_attempts": 1,
                            "is_override": False,
                            "created_at": T0,
                        },
                    )
        finally:
            await engine.dispose()
        priorities, indexes = await _state(url)
        assert not NEW_INDEXES & indexes

        await migrations.upgrade_async(url, "heads")
        priorities, indexes = await _state(url)
        assert NEW_INDEXES <= indexes
        assert priorities == {
            escalation_id: "medium" if priority == "normal" else priority
            for escalation_id, (_type, priority) in ROWS.items()
        }

        await asyncio.to_thread(command.downgrade, migrations.config(url), BEFORE)
        priorities, indexes = await _state(url)
        assert not NEW_INDEXES & indexes
        assert priorities == {escalation_id: priority for escalation_id, (_type, priority) in ROWS.items()}
