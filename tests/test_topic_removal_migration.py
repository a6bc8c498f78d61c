"""Migration 0042: the participants of topics gain who removed an agent, when and why (PACT §9.2); rows of
before keep their values and are not removed; the downgrade drops the three columns and the upgrade brings
them back."""

from __future__ import annotations

import asyncio

import sqlalchemy as sa
from alembic import command

import migrations
from domain.kernel.db import make_engine
from tests.migration_support import scratch_database

BEFORE = "0041_events_person_index"
OWN = "0042_topic_participant_removal"
ADDED = {"removed_at", "removed_by", "removal_note"}


def _columns(sync: sa.Connection) -> set[str]:
    return {c["name"] for c in sa.inspect(sync).get_columns("topic_participants")}


async def test_upgrade_and_downgrade() -> None:
    async with scratch_database("topic_participant_removal", [BEFORE]) as url:
        engine = make_engine(url, null_pool=True)
        try:
            async with engine.begin() as conn:
                await conn.execute(
                    sa.text(
                        "INSERT INTO agents (id, name, name_key, key_hash, created_at) "
                        "VALUES ('a1', 'Ada', 'ada', 'h', CURRENT_TIMESTAMP)"
                    )
                )
                await conn.execute(
                    sa.text(
                        "INSERT INTO topics (id, title, title_key, content, version, tier, status,"
                        " assumptions, creator_id, created_at, updated_at) VALUES ('t1', 'T', 't', '# T', 1,"
                        " 'empirical', 'open', '[]', 'a1', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
                    )
                )
                await conn.execute(
                    sa.text(
                        "INSERT INTO topic_participants (topic_id, agent_id, role, joined_at,"
                        " aligned_rewarded) VALUES ('t1', 'a1', 'collaborator', CURRENT_TIMESTAMP, false)"
                    )
                )
            await asyncio.to_thread(command.upgrade, migrations.config(url), OWN)
            async with engine.connect() as conn:
                assert ADDED <= await conn.run_sync(_columns)
                row = (
                    await conn.execute(
                        sa.text("SELECT role, removed_at, removed_by, removal_note FROM topic_participants")
                    )
                ).one()
                assert tuple(row) == ("collaborator", None, None, None)
            await asyncio.to_thread(command.downgrade, migrations.config(url), BEFORE)
            async with engine.connect() as conn:
                assert not ADDED & await conn.run_sync(_columns)
                assert await conn.scalar(sa.text("SELECT count(*) FROM topic_participants")) == 1
            await asyncio.to_thread(command.upgrade, migrations.config(url), OWN)
            async with engine.connect() as conn:
                assert ADDED <= await conn.run_sync(_columns)
        finally:
            await engine.dispose()
