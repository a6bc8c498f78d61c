"""Migration 0006 moves the intents, constraints and salience written under 0002/0005 into the shared
section tables: after upgrading, both APIs serve every row as before; downgrading moves them back.

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
from domain.kernel.db import Database, JSONType, UTCDateTime, make_engine
from tests.migration_support import scratch_database

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
topic_intents = sa.Table(
    "topic_intents",
    old,
    sa.Column("id", sa.String(36)),
    sa.Column("topic_id", sa.String(36)),
    sa.Column("agent_id", sa.String(36)),
    sa.Column("section_id", sa.String(256)),
    sa.Column("goal", sa.Text()),
    sa.Column("category", sa.String(60)),
    sa.Column("created_at", UTCDateTime()),
)
topic_constraints = sa.Table(
    "topic_constraints",
    old,
    sa.Column("id", sa.String(36)),
    sa.Column("topic_id", sa.String(36)),
    sa.Column("agent_id", sa.String(36)),
    sa.Column("section_id", sa.String(256)),
    sa.Column("boundary", sa.Text()),
    sa.Column("category", sa.String(60)),
    sa.Column("created_at", UTCDateTime()),
)
topic_salience = sa.Table(
    "topic_salience",
    old,
    sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
    sa.Column("topic_id", sa.String(36)),
    sa.Column("agent_id", sa.String(36)),
    sa.Column("section_id", sa.String(256)),
    sa.Column("score", sa.Integer()),
    sa.Column("updated_at", UTCDateTime()),
)
organisations = sa.Table(
    "organisations",
    old,
    sa.Column("id", sa.String(36)),
    sa.Column("name", sa.String(200)),
    sa.Column("name_key", sa.String(200)),
    sa.Column("created_at", UTCDateTime()),
)
documents = sa.Table(
    "documents",
    old,
    sa.Column("id", sa.String(36)),
    sa.Column("org_id", sa.String(36)),
    sa.Column("owner_key_id", sa.String(36)),
    sa.Column("title", sa.String(500)),
    sa.Column("kind", sa.String(16)),
    sa.Column("media_type", sa.String(120)),
    sa.Column("size_bytes", sa.Integer()),
    sa.Column("sha256", sa.String(64)),
    sa.Column("blob_path", sa.String(500)),
    sa.Column("tags", JSONType),
    sa.Column("status", sa.String(16)),
    sa.Column("content", sa.Text()),
    sa.Column("version", sa.Integer()),
    sa.Column("created_at", UTCDateTime()),
    sa.Column("updated_at", UTCDateTime()),
)
document_intents = sa.Table(
    "document_intents",
    old,
    sa.Column("id", sa.String(36)),
    sa.Column("document_id", sa.String(36)),
    sa.Column("section_id", sa.String(256)),
    sa.Column("agent_id", sa.String(36)),
    sa.Column("agent_name", sa.String(128)),
    sa.Column("goal", sa.Text()),
    sa.Column("category", sa.String(64)),
    sa.Column("created_at", UTCDateTime()),
)
document_constraints = sa.Table(
    "document_constraints",
    old,
    sa.Column("id", sa.String(36)),
    sa.Column("document_id", sa.String(36)),
    sa.Column("section_id", sa.String(256)),
    sa.Column("agent_id", sa.String(36)),
    sa.Column("agent_name", sa.String(128)),
    sa.Column("boundary", sa.Text()),
    sa.Column("type", sa.String(16)),
    sa.Column("created_at", UTCDateTime()),
)
document_salience = sa.Table(
    "document_salience",
    old,
    sa.Column("id", sa.String(36)),
    sa.Column("document_id", sa.String(36)),
    sa.Column("section_id", sa.String(256)),
    sa.Column("agent_id", sa.String(36)),
    sa.Column("agent_name", sa.String(128)),
    sa.Column("score", sa.Integer()),
    sa.Column("created_at", UTCDateTime()),
)

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
TOPIC_MD = "# Answer\n\nThe answer.\n\n## Evidence\n\nSome.\n"
DOC_MD = "# Plan\n\nIntro.\n\n## Budget\n\nMoney.\n"


def _id() -> str:
    return str(uuid.uuid4())


@pytest.fixture
async def scratch_url() -> AsyncIterator[str]:
    """A database of its own, at the schema before 0006 (0001 to 0005)."""
    async with scratch_database(
        "records", ("0002_consensus", "0003_axiom", "0004_market", "0005_documents")
    ) as url:
        yield url


async def _write_old_rows(url: str) -> dict[str, Any]:
    """Records of a topic and a document, written into the 0002/0005 tables as that code wrote them."""
    ada, bob = _id(), _id()
    topic, org, doc = _id(), _id(), _id()
    doc_agent = _id()
    rows: dict[str, Any] = {
        "topic": topic,
        "doc": doc,
        "ada": ada,
        "bob": bob,
        "doc_agent": doc_agent,
        "topic_intent": _id(),
        "topic_constraint": _id(),
        "doc_intent": _id(),
        "doc_constraint": _id(),
        "doc_salience": _id(),
    }
    engine = make_engine(url, null_pool=True)
    async with engine.begin() as conn:
        await conn.execute(
            agents.insert(),
            [
                {"id": ada, "name": "Ada", "name_key": "ada", "key_hash": "a" * 64, "created_at": T0},
                {"id": bob, "name": "Bob", "name_key": "bob", "key_hash": "b" * 64, "created_at": T0},
            ],
        )
        await conn.execute(
            topics.insert().values(
                id=topic,
                title="Old topic",
                title_key="old topic",
                content=TOPIC_MD,
                version=1,
                tier="empirical",
                status="open",
                assumptions=[],
                creator_id=ada,
                created_at=T0,
                updated_at=T0,
            )
        )
        await conn.execute(
            topic_intents.insert().values(
                id=rows["topic_intent"],
                topic_id=topic,
                agent_id=ada,
                section_id="sec:answer",
                goal="Cite the Act",
                category="legal",
                created_at=T0,
            )
        )
        await conn.execute(
            topic_constraints.insert().values(
                id=rows["topic_constraint"],
                topic_id=topic,
                agent_id=bob,
                section_id="sec:answer:evidence",
                boundary="No speculation",
                category="general",
                created_at=T0 + timedelta(minutes=1),
            )
        )
        await conn.execute(
            topic_salience.insert(),
            [
                # Ada scored first, then Bob; Bob's other score is on a section since removed.
                {
                    "topic_id": topic,
                    "agent_id": ada,
                    "section_id": "sec:answer",
                    "score": 8,
                    "updated_at": T0,
                },
                {
                    "topic_id": topic,
                    "agent_id": bob,
                    "section_id": "sec:answer",
                    "score": 3,
                    "updated_at": T0 + timedelta(minutes=2),
                },
                {
                    "topic_id": topic,
                    "agent_id": bob,
                    "section_id": "sec:gone",
                    "score": 5,
                    "updated_at": T0 + timedelta(minutes=3),
                },
            ],
        )
        await conn.execute(
            organisations.insert().values(id=org, name="Oldco", name_key="oldco", created_at=T0)
        )
        await conn.execute(
            documents.insert().values(
                id=doc,
                org_id=org,
                owner_key_id=_id(),
                title="Plan",
                kind="markdown",
                media_type="text/markdown",
                size_bytes=len(DOC_MD),
                sha256="0" * 64,
                blob_path="none",
                tags=[],
                status="ready",
                content=DOC_MD,
                version=1,
                created_at=T0,
                updated_at=T0,
            )
        )
        await conn.execute(
            document_intents.insert().values(
                id=rows["doc_intent"],
                document_id=doc,
                section_id="sec:plan:budget",
                agent_id=doc_agent,
                agent_name="Carol",
                goal="Add a contingency line",
                category="finance",
                created_at=T0,
            )
        )
        await conn.execute(
            document_constraints.insert().values(
                id=rows["doc_constraint"],
                document_id=doc,
                section_id="sec:plan:budget",
                agent_id=doc_agent,
                agent_name="Carol",
                boundary="Never exceed 1M",
                type="must_not",
                created_at=T0,
            )
        )
        await conn.execute(
            document_salience.insert().values(
                id=rows["doc_salience"],
                document_id=doc,
                section_id="sec:plan:budget",
                agent_id=doc_agent,
                agent_name="Carol",
                score=9,
                created_at=T0 + timedelta(minutes=5),
            )
        )
    await engine.dispose()
    return rows


def _iso(moment: datetime) -> str:
    return moment.isoformat()


# Migration 0030: intents declared before anyone could object to one are accepted at their creation.
ACCEPTED_BY_0030: dict[str, Any] = {
    "status": "accepted",
    "expiresAt": None,
    "resolvedAt": _iso(T0),
    "objections": [],
}


async def test_records_written_before_0006_are_served_after_it_and_restored_by_its_downgrade(
    scratch_url: str, runtime: Any, aiohttp_client: Any
) -> None:
    from domain.documents import servicekeys
    from domain.kernel.context import SYSTEM
    from web.app import create_docs_app, create_hub_app

    old_rows = await _write_old_rows(scratch_url)
    await migrations.upgrade_async(scratch_url, "heads")

    db = Database(scratch_url)
    try:
        rt = dataclasses.replace(runtime, db=db, relay=None, worker=None, scheduler=None)
        hub = await aiohttp_client(create_hub_app(rt))
        docs = await aiohttp_client(create_docs_app(rt))
        topic, doc = old_rows["topic"], old_rows["doc"]

        intents = (await (await hub.get(f"/api/pact/{topic}/intents")).json())["intents"]
        assert intents == [
            {
                "id": old_rows["topic_intent"],
                "topicId": topic,
                "sectionId": "sec:answer",
                "goal": "Cite the Act",
                "category": "legal",
                "agentId": old_rows["ada"],
                "agentName": "Ada",
                "createdAt": _iso(T0),
                **ACCEPTED_BY_0030,
            }
        ]
        constraints = (await (await hub.get(f"/api/pact/{topic}/constraints")).json())["constraints"]
        assert [(c["id"], c["boundary"], c["category"], c["agentName"]) for c in constraints] == [
            (old_rows["topic_constraint"], "No speculation", "general", "Bob")
        ]
        salience = await (await hub.get(f"/api/pact/{topic}/salience")).json()
        assert salience["sections"] == [
            {
                "sectionId": "sec:answer",
                "title": "Answer",
                "scores": [
                    {"agentId": old_rows["ada"], "agentName": "Ada", "score": 8},
                    {"agentId": old_rows["bob"], "agentName": "Bob", "score": 3},
                ],
                "average": 5.5,
            },
            {"sectionId": "sec:answer:evidence", "title": "Evidence", "scores": [], "average": None},
            {
                "sectionId": "sec:gone",
                "title": None,
                "stale": True,
                "scores": [{"agentId": old_rows["bob"], "agentName": "Bob", "score": 5}],
                "average": 5.0,
            },
        ]

        async with db.transaction() as session:
            key = await servicekeys.create(
                session, SYSTEM, org_name="Oldco", scopes=servicekeys.parse_scopes("all")
            )
        headers = {"X-Api-Key": key["apiKey"]}
        body = await (await docs.get(f"/api/tap/{doc}/intents", headers=headers)).json()
        assert body == {
            "intents": [
                {
                    "intentId": old_rows["doc_intent"],
                    "sectionId": "sec:plan:budget",
                    "goal": "Add a contingency line",
                    "category": "finance",
                    "agentId": old_rows["doc_agent"],
                    "agentName": "Carol",
                    "createdAt": _iso(T0),
                    **ACCEPTED_BY_0030,
                }
            ]
        }
        body = await (await docs.get(f"/api/pact/{doc}/constraints", headers=headers)).json()
        assert [(c["constraintId"], c["type"], c["boundary"]) for c in body["constraints"]] == [
            (old_rows["doc_constraint"], "must_not", "Never exceed 1M")
        ]
        body = await (await docs.get(f"/api/tap/{doc}/salience", headers=headers)).json()
        assert body == {
            "salience": [
                {
                    "sectionId": "sec:plan:budget",
                    "scores": [{"agentId": old_rows["doc_agent"], "agentName": "Carol", "score": 9}],
                    "average": 9.0,
                }
            ],
            "entries": [
                {
                    "agentId": old_rows["doc_agent"],
                    "agentName": "Carol",
                    "sectionId": "sec:plan:budget",
                    "score": 9,
                }
            ],
        }
    finally:
        await db.dispose()

    # Down again: the rows are back in the tables of 0002 and 0005.
    await asyncio.to_thread(command.downgrade, migrations.config(scratch_url), "0002_consensus")
    engine = make_engine(scratch_url, null_pool=True)
    try:
        async with engine.connect() as conn:
            names = await conn.run_sync(lambda c: set(sa.inspect(c).get_table_names()))
            assert "section_salience" not in names
            assert {"topic_salience", "document_salience"} <= names
            got = (await conn.execute(sa.select(topic_intents))).mappings().all()
            assert [(r["id"], r["agent_id"], r["goal"], r["category"]) for r in got] == [
                (old_rows["topic_intent"], old_rows["ada"], "Cite the Act", "legal")
            ]
            got = (await conn.execute(sa.select(topic_constraints))).mappings().all()
            assert [(r["id"], r["boundary"], r["category"]) for r in got] == [
                (old_rows["topic_constraint"], "No speculation", "general")
            ]
            got = (
                (await conn.execute(sa.select(topic_salience).order_by(topic_salience.c.id))).mappings().all()
            )
            assert [(r["agent_id"], r["section_id"], r["score"], r["updated_at"]) for r in got] == [
                (old_rows["ada"], "sec:answer", 8, T0),
                (old_rows["bob"], "sec:answer", 3, T0 + timedelta(minutes=2)),
                (old_rows["bob"], "sec:gone", 5, T0 + timedelta(minutes=3)),
            ]
            got = (await conn.execute(sa.select(document_intents))).mappings().all()
            assert [(r["id"], r["agent_name"], r["category"]) for r in got] == [
                (old_rows["doc_intent"], "Carol", "finance")
            ]
            got = (await conn.execute(sa.select(document_constraints))).mappings().all()
            assert [(r["id"], r["type"]) for r in got] == [(old_rows["doc_constraint"], "must_not")]
            got = (await conn.execute(sa.select(document_salience))).mappings().all()
            assert [(r["id"], r["score"], r["created_at"]) for r in got] == [
                (old_rows["doc_salience"], 9, T0 + timedelta(minutes=5))
            ]
    finally:
        await engine.dispose()
