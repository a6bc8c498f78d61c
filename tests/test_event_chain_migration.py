"""Migration 0027 on a database with events: the events written before it are served as before (with the
new fields, and no prev_hash), the first event after it is chained from GENESIS-v202, the whole stream
verifies, the first root sweep signs the old history at once, and the downgrade keeps every event.

Runs on its own database (a file on SQLite, a database of its own on PostgreSQL), migrated step by step."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command

import migrations
from domain.kernel import event_verify, log_roots
from domain.kernel.db import Database, JSONType, UTCDateTime, make_engine
from tests.migration_support import scratch_database
from tests.test_event_chain import client_hash
from tests.test_event_fields import all_events

BEFORE = "0022_audit_entity_id_length"
old = sa.MetaData()
agents = sa.Table(
    "agents",
    old,
    sa.Column("id", sa.String(36)),
    sa.Column("name", sa.String(128)),
    sa.Column("name_key", sa.String(128)),
    sa.Column("key_hash", sa.String(64)),
    sa.Column("created_at", UTCDateTime()),
)
topics = sa.Table(
    "topics",
    old,
    sa.Column("id", sa.String(36)),
    sa.Column("title", sa.String(500)),
    sa.Column("title_key", sa.String(500)),
    sa.Column("content", sa.Text()),
    sa.Column("version", sa.Integer()),
    sa.Column("tier", sa.String(20)),
    sa.Column("status", sa.String(20)),
    sa.Column("assumptions", JSONType),
    sa.Column("creator_id", sa.String(36)),
    sa.Column("created_at", UTCDateTime()),
    sa.Column("updated_at", UTCDateTime()),
)
event_streams = sa.Table(
    "event_streams", old, sa.Column("stream", sa.String(80)), sa.Column("last_seq", sa.Integer())
)
events = sa.Table(
    "events",
    old,
    sa.Column("stream", sa.String(80)),
    sa.Column("seq", sa.Integer()),
    sa.Column("type", sa.String(80)),
    sa.Column("actor_id", sa.String(36)),
    sa.Column("actor_name", sa.String(200)),
    sa.Column("actor_kind", sa.String(20)),
    sa.Column("section_id", sa.String(256)),
    sa.Column("data", JSONType),
    sa.Column("created_at", UTCDateTime()),
)
T0 = datetime(2026, 3, 1, 9, 0, 0, 250000, tzinfo=UTC)


@pytest.fixture
async def scratch_url() -> AsyncIterator[str]:
    async with scratch_database("chain", (BEFORE,)) as url:
        yield url


async def _write_old_rows(url: str) -> tuple[str, str]:
    """A topic with three events and a document stream with two, as the code before 0027 wrote them."""
    topic, creator, document = str(uuid.uuid4()), str(uuid.uuid4()), str(uuid.uuid4())
    engine = make_engine(url, null_pool=True)
    async with engine.begin() as conn:
        await conn.execute(
            agents.insert().values(id=creator, name="Old", name_key="old", key_hash="0" * 64, created_at=T0)
        )
        await conn.execute(
            topics.insert().values(
                id=topic,
                title="Old topic",
                title_key="old topic",
                content="# Answer\n\nOld.\n",
                version=1,
                tier="empirical",
                status="open",
                assumptions=[],
                creator_id=creator,
                created_at=T0,
                updated_at=T0,
            )
        )
        rows = [
            ("pact.topic.proposed", creator, "Old", "AiAgent", None, {"title": "Old topic"}),
            ("pact.topic.approved", None, "system", "System", None, {"approve": 3, "ratio": 1.0}),
            ("pact.agent.joined", creator, "Old", "AiAgent", "sec:answer", {"role": "collaborator"}),
        ]
        for seq, (type_, actor, name, kind, section, data) in enumerate(rows, start=1):
            await conn.execute(
                events.insert().values(
                    stream=f"topic:{topic}",
                    seq=seq,
                    type=type_,
                    actor_id=actor,
                    actor_name=name,
                    actor_kind=kind,
                    section_id=section,
                    data=data,
                    created_at=T0 + timedelta(seconds=seq),
                )
            )
        for seq in (1, 2):
            await conn.execute(
                events.insert().values(
                    stream=f"document:{document}",
                    seq=seq,
                    type="pact.document.ready",
                    actor_id=None,
                    actor_name="system",
                    actor_kind="System",
                    section_id=None,
                    data={"status": "ready", "error": None},
                    created_at=T0,
                )
            )
        await conn.execute(
            event_streams.insert(),
            [{"stream": f"topic:{topic}", "last_seq": 3}, {"stream": f"document:{document}", "last_seq": 2}],
        )
    await engine.dispose()
    return topic, document


async def test_events_from_before_the_chain_are_served_kept_verified_and_signed(
    scratch_url: str, runtime: Any, aiohttp_client: Any
) -> None:
    from web.app import create_hub_app

    topic, document = await _write_old_rows(scratch_url)
    await migrations.upgrade_async(scratch_url, "heads")
    db = Database(scratch_url)
    try:
        rt = dataclasses.replace(runtime, db=db, relay=None, worker=None, scheduler=None)
        hub = await aiohttp_client(create_hub_app(rt))
        before = await all_events(hub, f"/api/pact/{topic}/events")
        assert [e["type"] for e in before] == [
            "pact.topic.proposed",
            "pact.topic.approved",
            "pact.agent.joined",
        ]
        assert {e["prev_hash"] for e in before} == {None}
        assert before[1]["data"] == {"approve": 3, "ratio": 1.0}
        assert before[1]["actorKind"] == "System"
        assert before[2]["sectionId"] == "sec:answer"
        assert before[0]["createdAt"] == (T0 + timedelta(seconds=1)).isoformat()
        assert before[0]["epochMs"] == int((T0 + timedelta(seconds=1)).timestamp() * 1000)

        resp = await hub.post("/api/pact/register", json={"agentName": f"new-{uuid.uuid4().hex[:6]}"})
        assert resp.status == 201, await resp.text()
        key = (await resp.json())["apiKey"]
        resp = await hub.post(f"/api/pact/{topic}/join", headers={"Authorization": f"Bearer {key}"})
        assert resp.status == 200, await resp.text()
        after = await all_events(hub, f"/api/pact/{topic}/events")
        assert after[:3] == before  # unchanged
        assert after[3]["type"] == "pact.agent.joined"
        assert after[3]["prev_hash"] == "GENESIS-v202"

        async with db.read() as session:
            report = await event_verify.verify(session, f"topic:{topic}")
        assert report.intact, report.first_break
        assert (report.events, report.unchained) == (4, 3)

        # The first sweep signs the old history at once, chained or not.
        async with db.transaction() as session:
            assert await log_roots.sign_due(session) == 2
        signed = await all_events(hub, f"/api/pact/{topic}/events")
        root = signed[-1]
        assert root["type"] == "pact.log.root"
        assert (root["data"]["window_start_seq"], root["data"]["window_end_seq"]) == (1, 4)
        assert root["data"]["window_end_hash"] == client_hash(after[3]) == root["prev_hash"]
        async with db.read() as session:
            for stream in (f"topic:{topic}", f"document:{document}"):
                report = await event_verify.verify(session, stream)
                assert report.intact, (stream, report.first_break)
                assert report.roots == 1
    finally:
        await db.dispose()

    await asyncio.to_thread(command.downgrade, migrations.config(scratch_url), BEFORE)
    engine = make_engine(scratch_url, null_pool=True)
    try:
        async with engine.connect() as conn:

            def columns(c: Any) -> tuple[set[str], set[str]]:
                inspector = sa.inspect(c)
                return (
                    {col["name"] for col in inspector.get_columns("events")},
                    {col["name"] for col in inspector.get_columns("event_streams")},
                )

            event_columns, stream_columns = await conn.run_sync(columns)
            assert not {"prev_hash", "correlation_id", "in_response_to"} & event_columns
            assert stream_columns == {"stream", "last_seq"}
            count = await conn.scalar(
                sa.select(sa.func.count()).select_from(events).where(events.c.stream == f"topic:{topic}")
            )
            assert count == 5  # three old, the join, the root
    finally:
        await engine.dispose()
