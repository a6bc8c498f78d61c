"""Migration 0033 makes the escalations already there escalations (not questions): kind `escalation`, no
context, no timeout, not an override, answered ones keeping their answer. The downgrade drops the new
columns and closes the questions that timed out as resolved (the older code knows open and resolved only).

Runs on its own database (a file on SQLite, a database of its own on PostgreSQL), migrated step by step."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from alembic import command

import migrations
from domain.kernel.db import UTCDateTime, make_engine
from tests.migration_support import scratch_database

BEFORE = "0032_pact_done_comments"
NEW_COLUMNS = {"kind", "context", "timeout_at", "resolved_by_id", "is_override"}
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
OPEN, ANSWERED, QUESTION = (f"00000000-0000-4000-8000-00000000000{n}" for n in range(1, 4))

old = sa.MetaData()
escalations = sa.Table(
    "escalations",
    old,
    sa.Column("id", sa.String(36)),
    sa.Column("resource_type", sa.String(20)),
    sa.Column("resource_id", sa.String(36)),
    sa.Column("section_id", sa.String(256)),
    sa.Column("message", sa.Text()),
    sa.Column("priority", sa.String(16)),
    sa.Column("raised_by", sa.String(36)),
    sa.Column("raised_by_name", sa.String(200)),
    sa.Column("status", sa.String(16)),
    sa.Column("delivery_status", sa.String(16)),
    sa.Column("delivery_attempts", sa.Integer()),
    sa.Column("resolution", sa.Text()),
    sa.Column("resolved_by", sa.String(200)),
    sa.Column("resolved_at", UTCDateTime()),
    sa.Column("created_at", UTCDateTime()),
)


def _row(escalation_id: str, **fields: object) -> dict[str, object]:
    return {
        "id": escalation_id,
        "resource_type": "topic",
        "resource_id": "t",
        "section_id": None,
        "message": "Is it right?",
        "priority": "normal",
        "raised_by": "a",
        "raised_by_name": "ada",
        "status": "open",
        "delivery_status": "delivered",
        "delivery_attempts": 1,
        "resolution": None,
        "resolved_by": None,
        "resolved_at": None,
        "created_at": T0,
        **fields,
    }


async def _columns(url: str) -> set[str]:
    engine = make_engine(url, null_pool=True)
    try:
        async with engine.connect() as conn:
            return await conn.run_sync(
                lambda c: {col["name"] for col in sa.inspect(c).get_columns("escalations")}
            )
    finally:
        await engine.dispose()


async def test_existing_escalations_stay_escalations_and_the_downgrade_closes_timed_out_questions() -> None:
    async with scratch_database("human_queries", ["heads"]) as url:
        await asyncio.to_thread(command.downgrade, migrations.config(url), BEFORE)
        assert not NEW_COLUMNS & await _columns(url)
        engine = make_engine(url, null_pool=True)
        try:
            async with engine.begin() as conn:
                await conn.execute(escalations.insert(), _row(OPEN))
                await conn.execute(
                    escalations.insert(),
                    _row(ANSWERED, status="resolved", resolution="Yes.", resolved_by="Rey", resolved_at=T0),
                )
        finally:
            await engine.dispose()

        await migrations.upgrade_async(url, "heads")
        assert NEW_COLUMNS <= await _columns(url)
        engine = make_engine(url, null_pool=True)
        try:
            async with engine.begin() as conn:
                rows = (
                    await conn.execute(
                        sa.text(
                            "SELECT id, kind, context, timeout_at, is_override, resolved_by_id, status, "
                            "resolution FROM escalations ORDER BY id"
                        )
                    )
                ).all()
                assert [(r[0], r[1], r[2], r[3], bool(r[4]), r[5], r[6], r[7]) for r in rows] == [
                    (OPEN, "escalation", None, None, False, None, "open", None),
                    (ANSWERED, "escalation", None, None, False, None, "resolved", "Yes."),
                ]
                await conn.execute(
                    sa.text(
                        "INSERT INTO escalations (id, kind, resource_type, resource_id, message, priority, "
                        "status, delivery_status, delivery_attempts, is_override, timeout_at, created_at) "
                        "VALUES (:id, 'question', 'topic', 't', 'Quick?', 'normal', 'timed-out', "
                        "'delivered', 1, :no, :due, :at)"
                    ).bindparams(
                        sa.bindparam("due", type_=UTCDateTime()), sa.bindparam("at", type_=UTCDateTime())
                    ),
                    {"id": QUESTION, "no": False, "due": T0 + timedelta(seconds=60), "at": T0},
                )
        finally:
            await engine.dispose()

        await asyncio.to_thread(command.downgrade, migrations.config(url), BEFORE)
        assert not NEW_COLUMNS & await _columns(url)
        engine = make_engine(url, null_pool=True)
        try:
            async with engine.connect() as conn:
                statuses = dict(
                    (await conn.execute(sa.select(escalations.c.id, escalations.c.status))).tuples().all()
                )
        finally:
            await engine.dispose()
        assert statuses == {OPEN: "open", ANSWERED: "resolved", QUESTION: "resolved"}
