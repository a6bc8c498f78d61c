"""Audit (spec §2 audit entry, §4 Audit rules 1-4): every write records one entry; GET /api/audit/me
returns only the caller's entries, newest first, keyset-paged by an opaque base64url cursor."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select

from domain.kernel.models import AuditEntry
from tests.test_topics import create_topic

IPV4 = re.compile(r"\b\d{1,3}(\.\d{1,3}){3}\b")


async def audit_me(hub: Any, agent: dict[str, Any], **params: Any) -> dict[str, Any]:
    resp = await hub.get("/api/audit/me", headers=agent["headers"], params=params)
    assert resp.status == 200, await resp.text()
    return await resp.json()


async def all_pages(hub: Any, agent: dict[str, Any], limit: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    params: dict[str, Any] = {"limit": limit}
    while True:
        page = await audit_me(hub, agent, **params)
        assert len(page["results"]) <= limit
        out.extend(page["results"])
        if not page["has_more"]:
            assert page["next_cursor"] is None
            return out
        assert isinstance(page["next_cursor"], str)
        assert re.fullmatch(r"[A-Za-z0-9_-]+", page["next_cursor"]), "base64url without padding"
        params = {"limit": limit, "cursor": page["next_cursor"]}


async def test_every_write_records_one_entry_with_the_spec_fields(hub, register, settings, monkeypatch):
    monkeypatch.setattr(settings, "country_header", "CF-IPCountry")
    monkeypatch.setattr(settings, "trusted_proxy_header", "X-Forwarded-For")
    net = {"CF-IPCountry": "au", "X-Forwarded-For": "203.0.113.99"}
    resp = await hub.post(
        "/api/pact/register", json={"agentName": "Auditor"}, headers={**net, "X-Request-Id": "req-register-1"}
    )
    agent = await resp.json()
    agent["headers"] = {"Authorization": f"Bearer {agent['apiKey']}"}
    resp = await hub.post(
        "/api/pact/topics",
        headers={**agent["headers"], **net, "X-Request-Id": "req-topic-2"},
        json={"title": "Audited topic", "content": "# A\n\nBody text.", "tier": "derived"},
    )
    topic = await resp.json()
    other = await register()
    other_topic = await create_topic(hub, other)
    resp = await hub.post(
        f"/api/pact/{other_topic['id']}/join",
        headers={**agent["headers"], **net, "X-Request-Id": "req-join-3"},
    )
    assert resp.headers["X-Request-Id"] == "req-join-3"
    resp = await hub.post(
        f"/api/pact/{topic['id']}/escalate",
        headers={**agent["headers"], "X-Request-Id": "req-esc-4", "CF-IPCountry": "XX"},
        json={"message": "Is this right?", "sectionId": "sec:a"},
    )
    esc = await resp.json()
    # A repeated join and failed writes record nothing.
    await hub.post(f"/api/pact/{other_topic['id']}/join", headers=agent["headers"])
    await hub.post(
        "/api/pact/topics",
        headers=agent["headers"],
        json={"title": "audited TOPIC", "content": "# A\n\nBody text.", "tier": "derived"},
    )
    await hub.post("/api/pact/topics", headers=agent["headers"], json={"title": "x"})

    page = await audit_me(hub, agent)
    assert page["has_more"] is False
    assert page["next_cursor"] is None
    entries = page["results"]
    assert [(e["op"], e["entity_type"], e["entity_id"]) for e in entries] == [
        ("escalation.create", "escalation", esc["escalationId"]),
        ("topic.join", "topic", other_topic["id"]),
        ("topic.create", "topic", topic["id"]),
        ("agent.register", "agent", agent["agentId"]),
    ]
    assert [e["request_id"] for e in entries] == ["req-esc-4", "req-join-3", "req-topic-2", "req-register-1"]
    assert [e["ip_country"] for e in entries] == [None, "AU", "AU", "AU"]
    for e in entries:
        assert set(e) == {
            "op",
            "entity_type",
            "entity_id",
            "before_json",
            "after_json",
            "request_id",
            "ip_country",
            "created_at",
        }
        assert re.fullmatch(r"[a-z_]+(\.[a-z_-]+)+", e["op"])
        assert e["before_json"] is None
        assert isinstance(e["after_json"], str)
        assert isinstance(json.loads(e["after_json"]), dict)
        assert datetime.fromisoformat(e["created_at"]).utcoffset() == timedelta(0)
        assert not IPV4.search(json.dumps(e)), e
        assert "::1" not in json.dumps(e)
        assert agent["apiKey"] not in json.dumps(e)
    assert json.loads(entries[2]["after_json"])["title"] == "Audited topic"
    assert json.loads(entries[1]["after_json"]) == {"agentId": agent["agentId"], "role": "collaborator"}
    assert json.loads(entries[3]["after_json"])["agentName"] == "Auditor"


async def test_entries_are_stored_under_the_keys_sha256_without_any_address(hub, register, runtime):
    agent = await register()
    await create_topic(hub, agent)
    async with runtime.db.read() as session:
        rows = (
            await session.scalars(select(AuditEntry).where(AuditEntry.actor_id == agent["agentId"]))
        ).all()
    assert len(rows) == 2
    digest = hashlib.sha256(agent["apiKey"].encode()).hexdigest()
    assert {r.key_hash for r in rows} == {digest}
    assert all(r.ip_country is None for r in rows)  # no trusted country header configured


async def test_generated_request_ids_are_kept_too(hub, register, runtime):
    agent = await register()
    resp = await hub.post(
        "/api/pact/topics",
        headers={**agent["headers"], "X-Request-Id": "has spaces, so it is replaced"},
        json={"title": "Request id topic", "content": "# A\n\nBody text.", "tier": "derived"},
    )
    rid = resp.headers["X-Request-Id"]
    assert uuid.UUID(rid)
    assert (await audit_me(hub, agent))["results"][0]["request_id"] == rid


@pytest.mark.parametrize(
    ("header", "value", "stored"), [("CF-IPCountry", "nz", "NZ"), ("CF-IPCountry", "T1", None)]
)
async def test_country_comes_only_from_the_configured_header(
    hub, settings, monkeypatch, header, value, stored
):
    # Not configured: the header is ignored.
    resp = await hub.post("/api/pact/register", json={"agentName": "Unconfigured"}, headers={header: value})
    first = await resp.json()
    monkeypatch.setattr(settings, "country_header", header)
    resp = await hub.post("/api/pact/register", json={"agentName": "Configured"}, headers={header: value})
    second = await resp.json()
    for body, expected in ((first, None), (second, stored)):
        page = await audit_me(hub, {"headers": {"X-Api-Key": body["apiKey"]}})
        assert page["results"][0]["ip_country"] == expected


async def test_only_the_callers_entries_newest_first(hub, register):
    alice, bob = await register(), await register()
    for _ in range(3):
        await create_topic(hub, alice)
        await create_topic(hub, bob)
    mine = (await audit_me(hub, alice))["results"]
    theirs = (await audit_me(hub, bob))["results"]
    assert len(mine) == 4
    assert len(theirs) == 4
    assert not {e["entity_id"] for e in mine if e["op"] == "topic.create"} & {
        e["entity_id"] for e in theirs if e["op"] == "topic.create"
    }
    assert mine[-1]["entity_id"] == alice["agentId"]
    stamps = [e["created_at"] for e in mine]
    assert stamps == sorted(stamps, reverse=True)


async def test_pages_cover_everything_once_in_order(hub, register, settings, monkeypatch):
    agent = await register()
    topic = await create_topic(hub, agent)
    for i in range(54):
        resp = await hub.post(
            f"/api/pact/{topic['id']}/escalate", headers=agent["headers"], json={"message": f"question {i}"}
        )
        assert resp.status == 201
    default = await audit_me(hub, agent)
    assert len(default["results"]) == 50  # default limit
    assert default["has_more"] is True
    everything = await all_pages(hub, agent, 500)
    assert len(everything) == 56
    assert everything[:50] == default["results"]
    for limit in (1, 7, 55, 56):
        assert await all_pages(hub, agent, limit) == everything
    one = await audit_me(hub, agent, limit=56)
    assert one["has_more"] is False
    assert one["next_cursor"] is None


async def test_ties_on_created_at_are_broken_by_id_descending(hub, register, runtime):
    agent = await register()
    digest = hashlib.sha256(agent["apiKey"].encode()).hexdigest()
    when = datetime(2030, 1, 1, tzinfo=UTC)
    async with runtime.db.transaction() as session:
        for n in range(5):
            session.add(
                AuditEntry(
                    key_hash=digest,
                    actor_id=agent["agentId"],
                    op="test.tie",
                    entity_type="thing",
                    entity_id=str(n),
                    created_at=when,
                )
            )
    pages = await all_pages(hub, agent, 2)
    assert [e["entity_id"] for e in pages[:5]] == ["4", "3", "2", "1", "0"]
    assert pages[5]["op"] == "agent.register"


@pytest.mark.parametrize("limit", ["0", "501", "-1", "abc", "1.5", ""])
async def test_limit_out_of_range_is_400(hub, register, limit):
    agent = await register()
    resp = await hub.get("/api/audit/me", headers=agent["headers"], params={"limit": limit})
    assert resp.status == 400
    body = await resp.json()
    assert body["field"] == "limit"
    assert "limit" in body["detail"]


@pytest.mark.parametrize("limit", ["1", "500"])
async def test_limit_bounds_are_inclusive(hub, register, limit):
    agent = await register()
    assert (await audit_me(hub, agent, limit=limit))["results"]


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _forge(key: str, created: str, entry_id: Any) -> str:
    digest = hashlib.sha256(key.encode()).hexdigest()
    check = hmac.new(digest.encode(), f"{created}|{entry_id}".encode(), hashlib.sha256).hexdigest()[:16]
    return _b64(json.dumps([created, entry_id, check]).encode())


async def test_tampered_garbage_or_foreign_cursors_are_400(hub, register):
    alice, bob = await register(), await register()
    for _ in range(3):
        await create_topic(hub, alice)
        await create_topic(hub, bob)
    cursor = (await audit_me(hub, alice, limit=1))["next_cursor"]
    bob_cursor = (await audit_me(hub, bob, limit=1))["next_cursor"]
    raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    created, entry_id, check = json.loads(raw)
    flipped = cursor[:5] + ("A" if cursor[5] != "A" else "B") + cursor[6:]
    bad = [
        flipped,
        cursor[:-3],
        cursor + "x",
        "not-a-cursor",
        "!!!!",
        "%00",
        "=",
        "a" * 600,
        _b64(b"\xff\xfe\x00"),
        _b64(b"{}"),
        _b64(b"[]"),
        _b64(b"null"),
        _b64(b"[" * 5000),
        _b64(json.dumps([created, entry_id]).encode()),
        _b64(json.dumps([created, entry_id - 1, check]).encode()),
        _b64(json.dumps(["yesterday", entry_id, check]).encode()),
        _b64(json.dumps([created, str(entry_id), check]).encode()),
        _forge(alice["apiKey"], created, 2**70),
        _forge(alice["apiKey"], created, -1),
        _forge(alice["apiKey"], created, True),
        _forge(alice["apiKey"], "2030-01-01T00:00:00", 5),  # no offset
        _forge(alice["apiKey"], "not a date", 5),
        _forge(alice["apiKey"], "0001-01-01T00:00:00+05:00", 5),  # before year 1 in UTC
        _forge(alice["apiKey"], "9999-12-31T23:59:59-14:00", 5),  # after year 9999 in UTC
        bob_cursor,  # another agent's cursor
    ]
    for c in bad:
        resp = await hub.get("/api/audit/me", headers=alice["headers"], params={"cursor": c})
        assert resp.status == 400, (c, await resp.text())
        body = await resp.json()
        assert body["field"] == "cursor", c
        assert body["error"] in ("invalid_cursor", "validation_error")
    # The genuine cursor still works, and an empty one means the first page.
    assert (await audit_me(hub, alice, cursor=cursor))["results"]
    assert len((await audit_me(hub, alice, cursor=""))["results"]) == 4


async def test_audit_needs_a_valid_key_before_anything_else(hub):
    for headers in ({}, {"x-source-agent-key": "pact_sk_nope"}, {"Authorization": "Bearer pact_sk_nope"}):
        resp = await hub.get("/api/audit/me", headers=headers, params={"limit": "9999", "cursor": "garbage"})
        assert resp.status == 401
        assert (await resp.json())["error"] == "unauthorized"
