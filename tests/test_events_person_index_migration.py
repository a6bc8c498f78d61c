"""Migration 0041: a partial index of the events people wrote; a stream's latest such event is read through
it (the review desk's "a person last acted here") rather than by walking the stream's events backwards; the
downgrade drops it and the upgrade brings it back."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import command
from sqlalchemy.ext.asyncio import AsyncConnection

import migrations
from domain.kernel.db import make_engine
from tests.migration_support import scratch_database

BEFORE = "0040_legislation_doc_index"
OWN = "0041_events_person_index"
INDEX = "ix_events_person"
LATEST = (
    "SELECT created_at FROM events WHERE stream = 'topic:t' AND actor_kind = 'Individual' "
    "ORDER BY seq DESC LIMIT 1"
)


def _indexes(sync: sa.Connection) -> set[str]:
    return {ix["name"] for ix in sa.inspect(sync).get_indexes("events") if ix["name"]}


async def _plan(conn: AsyncConnection) -> str:
    if conn.dialect.name == "sqlite":
        rows = await conn.execute(sa.text(f"EXPLAIN QUERY PLAN {LATEST}"))
        return " ".join(str(row[-1]) for row in rows)
    await conn.execute(sa.text("SET LOCAL enable_seqscan = off"))  # a tiny table: ask for an index path
    rows = await conn.execute(sa.text(f"EXPLAIN {LATEST}"))
    return " ".join(str(row[0]) for row in rows)


async def test_upgrade_and_downgrade() -> None:
    async with scratch_database("events_person_index", [BEFORE, OWN]) as url:
        engine = make_engine(url, null_pool=True)
        try:
            async with engine.begin() as conn:
                assert INDEX in await conn.run_sync(_indexes)
                for seq, kind in ((1, "AiAgent"), (2, "Individual"), (3, "AiAgent")):
                    await conn.execute(
                        sa.text(
                            "INSERT INTO events (stream, seq, type, actor_kind, data, created_at) VALUES "
                            "('topic:t', :seq, 'x', :kind, '{}', :at)"
                        ),
                        {"seq": seq, "kind": kind, "at": datetime(2026, 11, 28, 10, seq, tzinfo=UTC)},
                    )
                assert INDEX in await _plan(conn)
                assert str(await conn.scalar(sa.text(LATEST))).startswith("2026-11-28 10:02")
            await asyncio.to_thread(command.downgrade, migrations.config(url), BEFORE)
            async with engine.connect() as conn:
                assert INDEX not in await conn.run_sync(_indexes)
            await asyncio.to_thread(command.upgrade, migrations.config(url), OWN)
            async with engine.connect() as conn:
                assert INDEX in await conn.run_sync(_indexes)
        finally:
            await engine.dispose()
