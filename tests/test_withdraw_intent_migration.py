"""Migration 0031 gives the rows already there their place in the new lifecycles, in place: intents declared
before anyone could object to one are accepted at their creation, constraints are active, and the escalations
the engine raised for a proposal (human-only, an objection) are the policy's, the agents' questions theirs.
The downgrade drops the new table and columns and keeps every row.

Runs on its own database (a file on SQLite, a database of its own on PostgreSQL), migrated step by step."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from alembic import command

import migrations
from domain.kernel.db import UTCDateTime, make_engine
from tests.migration_support import scratch_database

BEFORE = "0030_section_locks_shared"
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
TOPIC, AGENT, PROPOSAL = (f"00000000-0000-4000-8000-00000000000{n}" for n in range(1, 4))

old = sa.MetaData()
intents = sa.Table(
    "section_intents",
    old,
    sa.Column("id", sa.String(36)),
    sa.Column("resource_type", sa.String(20)),
    sa.Column("resource_id", sa.String(36)),
    sa.Column("section_id", sa.String(256)),
    sa.Column("agent_id", sa.String(36)),
    sa.Column("agent_name", sa.String(200)),
    sa.Column("goal", sa.Text()),
    sa.Column("category", sa.String(64)),
    sa.Column("created_at", UTCDateTime()),
)
constraints = sa.Table(
    "section_constraints",
    old,
    sa.Column("id", sa.String(36)),
    sa.Column("resource_type", sa.String(20)),
    sa.Column("resource_id", sa.String(36)),
    sa.Column("section_id", sa.String(256)),
    sa.Column("agent_id", sa.String(36)),
    sa.Column("agent_name", sa.String(200)),
    sa.Column("boundary", sa.Text()),
    sa.Column("kind", sa.String(64)),
    sa.Column("created_at", UTCDateTime()),
)
escalations = sa.Table(
    "escalations",
    old,
    sa.Column("id", sa.String(36)),
    sa.Column("resource_type", sa.String(20)),
    sa.Column("resource_id", sa.String(36)),
    sa.Column("proposal_id", sa.String(36)),
    sa.Column("message", sa.Text()),
    sa.Column("priority", sa.String(16)),
    sa.Column("status", sa.String(16)),
    sa.Column("delivery_status", sa.String(16)),
    sa.Column("delivery_attempts", sa.Integer()),
    sa.Column("created_at", UTCDateTime()),
)
RECORD = {"resource_type": "topic", "resource_id": TOPIC, "section_id": "sec:answer", "created_at": T0}
ESCALATION = {
    "resource_type": "topic",
    "resource_id": TOPIC,
    "priority": "normal",
    "status": "open",
    "delivery_status": "delivered",
    "delivery_attempts": 1,
    "created_at": T0,
}
# What the engine wrote (domain/consensus/engine.py), and what an agent asked about the same proposal.
MESSAGES = {
    "e-human": f"Approve or reject proposal {PROPOSAL} on sec:answer (s): this topic takes proposals only on "
    "a person's decision (approval policy human-only). Answer with the decision approve or reject.",
    "e-object": f"Proposal {PROPOSAL} on sec:answer (s) was objected to: no. Approve or reject it.",
    "e-agent": "Is this proposal sourced?",
}


async def _columns(url: str, table: str) -> set[str]:
    engine = make_engine(url, null_pool=True)
    try:
        async with engine.connect() as conn:
            return await conn.run_sync(lambda c: {col["name"] for col in sa.inspect(c).get_columns(table)})
    finally:
        await engine.dispose()


async def _rows(url: str, sql: str) -> list[Any]:
    engine = make_engine(url, null_pool=True)
    try:
        async with engine.connect() as conn:
            return list((await conn.execute(sa.text(sql))).all())
    finally:
        await engine.dispose()


async def test_existing_records_take_their_place_in_the_new_lifecycles_and_survive_the_downgrade() -> None:
    async with scratch_database("withdraw", ["heads"]) as url:
        await asyncio.to_thread(command.downgrade, migrations.config(url), BEFORE)
        assert "status" not in await _columns(url, "section_intents")
        engine = make_engine(url, null_pool=True)
        try:
            async with engine.begin() as conn:
                await conn.execute(
                    intents.insert(),
                    {
                        **RECORD,
                        "id": "i-1",
                        "agent_id": AGENT,
                        "agent_name": "Ada",
                        "goal": "g",
                        "category": "c",
                    },
                )
                await conn.execute(
                    constraints.insert(),
                    {
                        **RECORD,
                        "id": "c-1",
                        "agent_id": AGENT,
                        "agent_name": "Ada",
                        "boundary": "b",
                        "kind": "k",
                    },
                )
                for escalation_id, message in MESSAGES.items():
                    await conn.execute(
                        escalations.insert(),
                        {**ESCALATION, "id": escalation_id, "proposal_id": PROPOSAL, "message": message},
                    )
                await conn.execute(
                    escalations.insert(),
                    {**ESCALATION, "id": "e-plain", "proposal_id": None, "message": MESSAGES["e-human"]},
                )
        finally:
            await engine.dispose()

        await migrations.upgrade_async(url, "heads")
        [(status, expires_at, resolved_at)] = await _rows(
            url, "SELECT status, expires_at, resolved_at FROM section_intents"
        )
        assert (status, expires_at) == ("accepted", None)
        assert resolved_at is not None
        [(constraint_status, withdrawn_at)] = await _rows(
            url, "SELECT status, withdrawn_at FROM section_constraints"
        )
        assert (constraint_status, withdrawn_at) == ("active", None)
        origins = dict(await _rows(url, "SELECT id, origin FROM escalations"))
        assert origins == {"e-human": "policy", "e-object": "policy", "e-agent": "agent", "e-plain": "agent"}
        assert await _rows(url, "SELECT count(*) FROM intent_objections") == [(0,)]

        await asyncio.to_thread(command.downgrade, migrations.config(url), BEFORE)
        assert {"status", "expires_at", "resolved_at"}.isdisjoint(await _columns(url, "section_intents"))
        assert {"status", "withdrawn_at", "withdrawn_by", "withdrawn_by_name"}.isdisjoint(
            await _columns(url, "section_constraints")
        )
        assert "origin" not in await _columns(url, "escalations")
        for table, count in (("section_intents", 1), ("section_constraints", 1), ("escalations", 4)):
            assert await _rows(url, f"SELECT count(*) FROM {table}") == [(count,)]
        engine = make_engine(url, null_pool=True)
        try:
            async with engine.connect() as conn:
                names = await conn.run_sync(lambda c: set(sa.inspect(c).get_table_names()))
        finally:
            await engine.dispose()
        assert "intent_objections" not in names
