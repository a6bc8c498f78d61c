"""A document agent's inviteToken is kept only as its SHA-256: joining with one works through HTTP and the
database holds the hash, never the token; migration 0019 hashes the tokens stored in clear before it, and
its downgrade brings back an empty column (clear tokens cannot be recovered)."""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command
from sqlalchemy import select

import migrations
from domain.documents.models import DocumentAgent
from domain.kernel.db import JSONType, UTCDateTime, make_engine
from tests.documents_support import make_key, upload_ready
from tests.migration_support import scratch_database

TOKEN = "pact_invite_" + "a1b2c3" * 8


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


async def test_join_with_an_invite_token_keeps_only_its_hash(docs, runtime):
    alice = await make_key(runtime, org="Invite Org", name="alice-key")
    bob = await make_key(runtime, org="Invite Org", name="bob-key")
    doc = await upload_ready(docs, alice, b"# Plan\n\nText.\n", "plan.md")
    resp = await docs.post(
        f"/api/tap/{doc['id']}/join",
        headers=alice["headers"],
        json={"agentName": "Alice", "role": "editor", "inviteToken": TOKEN},
    )
    assert resp.status == 201, await resp.text()
    joined = await resp.json()
    assert TOKEN not in await resp.text()
    resp = await docs.post(f"/api/tap/{doc['id']}/join", headers=bob["headers"], json={"agentName": "Bob"})
    assert resp.status == 201, await resp.text()
    # The agent works on the document as any other.
    resp = await docs.get(f"/api/tap/{doc['id']}/agents", headers=alice["headers"])
    assert [a["agentName"] for a in (await resp.json())["agents"]] == ["Alice", "Bob"]
    assert TOKEN not in await resp.text()

    async with runtime.db.read() as session:
        rows = {
            a.agent_name: a.invite_token_hash
            for a in await session.scalars(
                select(DocumentAgent).where(DocumentAgent.document_id == doc["id"])
            )
        }
    assert rows == {"Alice": _sha(TOKEN), "Bob": None}
    assert joined["agentId"]
    # Nowhere in the table, in any column, is the token in clear.
    async with runtime.db.read() as session:
        dumped = [
            tuple(map(str, row)) for row in (await session.execute(sa.text("SELECT * FROM document_agents")))
        ]
    assert not any(TOKEN in value for row in dumped for value in row)


old = sa.MetaData()
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
    sa.Column("version", sa.Integer()),
    sa.Column("created_at", UTCDateTime()),
    sa.Column("updated_at", UTCDateTime()),
)
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
COUNT = 1_005  # more than one batch of the migration (1,000)


@pytest.fixture
async def scratch_url() -> AsyncIterator[str]:
    """A database of its own, at the documents schema before 0019."""
    async with scratch_database("invites", ("0005_documents",)) as url:
        yield url


def _agents(with_hash: bool) -> sa.Table:
    columns: list[sa.Column[Any]] = [
        sa.Column("id", sa.String(36)),
        sa.Column("document_id", sa.String(36)),
        sa.Column("key_id", sa.String(36)),
        sa.Column("agent_name", sa.String(128)),
        sa.Column("role", sa.String(16)),
        sa.Column("capabilities", JSONType),
        sa.Column("status", sa.String(16)),
        sa.Column("joined_at", UTCDateTime()),
        sa.Column("invite_token_hash" if with_hash else "invite_token", sa.String(200)),
    ]
    return sa.Table("document_agents", sa.MetaData(), *columns)


async def test_migration_0019_hashes_stored_invite_tokens(scratch_url: str) -> None:
    org, doc = str(uuid.uuid4()), str(uuid.uuid4())
    rows: list[dict[str, Any]] = [
        {
            "id": f"agent-{n:05d}",
            "document_id": doc,
            "key_id": f"key-{n}",
            "agent_name": f"Agent {n}",
            "role": "editor",
            "capabilities": ["propose", "vote"],
            "status": "active",
            "joined_at": T0,
            "invite_token": None if n % 3 == 0 else f"invite-{n}",
        }
        for n in range(COUNT)
    ]
    engine = make_engine(scratch_url, null_pool=True)
    try:
        async with engine.begin() as conn:
            await conn.execute(
                organisations.insert().values(id=org, name="Old", name_key="old", created_at=T0)
            )
            await conn.execute(
                documents.insert().values(
                    id=doc,
                    org_id=org,
                    owner_key_id="k",
                    title="Old",
                    kind="markdown",
                    media_type="text/markdown",
                    size_bytes=1,
                    sha256="0" * 64,
                    blob_path="old",
                    tags=[],
                    status="ready",
                    version=0,
                    created_at=T0,
                    updated_at=T0,
                )
            )
            await conn.execute(_agents(False).insert(), rows)

        await migrations.upgrade_async(scratch_url, "0019_invite_token_hash")
        async with engine.connect() as conn:
            columns = await conn.run_sync(
                lambda c: {col["name"] for col in sa.inspect(c).get_columns("document_agents")}
            )
            assert "invite_token" not in columns
            new = _agents(True)
            stored = dict((await conn.execute(sa.select(new.c.id, new.c.invite_token_hash))).all())
        assert stored == {r["id"]: (_sha(r["invite_token"]) if r["invite_token"] else None) for r in rows}

        cfg = migrations.config(scratch_url)
        await asyncio.to_thread(command.downgrade, cfg, "0005_documents")
        async with engine.connect() as conn:
            columns = await conn.run_sync(
                lambda c: {col["name"] for col in sa.inspect(c).get_columns("document_agents")}
            )
            assert "invite_token" in columns
            assert "invite_token_hash" not in columns
            old_agents = _agents(False)
            tokens = (await conn.execute(sa.select(old_agents.c.invite_token))).scalars().all()
        assert len(tokens) == COUNT
        assert set(tokens) == {None}
    finally:
        await engine.dispose()
