"""Registration (spec §4 Registration, §5, §7): discovery, keys shown once, balance, 409, 429, 400, 401."""

from __future__ import annotations

import asyncio
import hashlib

import pytest
from sqlalchemy import select

from domain.agents.models import Agent
from domain.kernel.models import AuditEntry


async def test_discovery_lists_endpoints_version_and_capabilities(hub):
    resp = await hub.get("/api/pact/register")
    assert resp.status == 200
    body = await resp.json()
    assert body["protocolVersion"]
    assert body["apiVersion"] == "1.0.0"
    assert {"topics", "sections", "events", "audit"} <= set(body["capabilities"])
    assert "POST /api/pact/register" in body["endpoints"]
    assert "GET /api/audit/me" in body["endpoints"]
    assert body["register"]["body"]["agentName"] == "required"
    assert body["auth"]["keyPrefix"] == "pact_sk_"


async def test_register_returns_key_once_and_stores_only_its_sha256(hub, runtime):
    resp = await hub.post(
        "/api/pact/register",
        json={"agentName": "  Alice  ", "model": "gpt-x", "framework": "langchain", "description": "d"},
    )
    assert resp.status == 201, await resp.text()
    body = await resp.json()
    assert set(body) >= {"agentId", "agentName", "apiKey", "balance"}
    assert body["agentName"] == "Alice"
    key = body["apiKey"]
    assert key.startswith("pact_sk_")
    assert len(key) > len("pact_sk_") + 30
    assert body["balance"] == runtime.settings.starting_balance == 1000

    async with runtime.db.read() as session:
        agent = await session.get(Agent, body["agentId"])
        entries = (await session.scalars(select(AuditEntry))).all()
    assert agent is not None
    assert agent.key_hash == hashlib.sha256(key.encode()).hexdigest()
    assert agent.model == "gpt-x"
    assert agent.framework == "langchain"
    assert agent.description == "d"
    stored = [str(v) for v in vars(agent).values()]
    stored += [str(e.after_json) + str(e.before_json) for e in entries]
    assert not any(key in v for v in stored), "the clear key must not be stored anywhere"
    assert not any(key[len("pact_sk_") :] in v for v in stored)

    # The key works; the profile and wallet show the starting balance.
    me = await hub.get("/api/audit/me", headers={"Authorization": f"Bearer {key}"})
    assert me.status == 200
    profile = await (await hub.get(f"/api/hub/agents/{body['agentId']}")).json()
    assert profile["balance"] == 1000
    assert "apiKey" not in profile


async def test_each_registration_gets_a_distinct_key(register):
    a, b = await register(), await register()
    assert a["apiKey"] != b["apiKey"]
    assert a["agentId"] != b["agentId"]


async def test_starting_balance_follows_the_setting(hub, settings, monkeypatch):
    monkeypatch.setattr(settings, "starting_balance", 250)
    resp = await hub.post("/api/pact/register", json={"agentName": "Budgeted"})
    body = await resp.json()
    assert body["balance"] == 250
    profile = await (await hub.get(f"/api/hub/agents/{body['agentId']}")).json()
    assert profile["balance"] == 250


@pytest.mark.parametrize("second", ["alice", "ALICE", "  Alice ", "ａｌｉｃｅ"])
async def test_duplicate_name_is_409_case_insensitively(hub, register, second):
    await register("Alice")
    resp = await hub.post("/api/pact/register", json={"agentName": second})
    assert resp.status == 409
    body = await resp.json()
    assert body["error"] == "agent_name_taken"
    assert "already registered" in body["detail"]


async def test_concurrent_registrations_of_one_name_give_exactly_one_201(hub, settings, monkeypatch, runtime):
    monkeypatch.setattr(settings, "rate_limit_register", 1000)
    names = ["Racer", "racer", "RACER", "Racer ", "rAcEr"] * 3
    resps = await asyncio.gather(*(hub.post("/api/pact/register", json={"agentName": n}) for n in names))
    statuses = sorted(r.status for r in resps)
    assert statuses == [201] + [409] * (len(names) - 1), statuses
    for r in resps:
        if r.status == 409:
            assert (await r.json())["error"] == "agent_name_taken"
    async with runtime.db.read() as session:
        rows = (await session.scalars(select(Agent).where(Agent.name_key == "racer"))).all()
    assert len(rows) == 1


async def test_rate_limit_gives_429_with_retry_after(hub, settings, monkeypatch):
    monkeypatch.setattr(settings, "rate_limit_register", 3)
    for i in range(3):
        resp = await hub.post("/api/pact/register", json={"agentName": f"limited-{i}"})
        assert resp.status == 201, await resp.text()
    resp = await hub.post("/api/pact/register", json={"agentName": "limited-4"})
    assert resp.status == 429
    retry = int(resp.headers["Retry-After"])
    assert 1 <= retry <= 61
    body = await resp.json()
    assert body["error"] == "rate_limited"
    assert "3 per minute" in body["detail"]
    assert resp.headers["X-Request-Id"]
    # Reads are not limited by the registration limit.
    assert (await hub.get("/api/pact/register")).status == 200


async def test_rate_limit_is_per_client_address(hub, settings, monkeypatch):
    monkeypatch.setattr(settings, "rate_limit_register", 1)
    monkeypatch.setattr(settings, "trusted_proxy_header", "X-Forwarded-For")
    one = {"X-Forwarded-For": "203.0.113.7"}
    two = {"X-Forwarded-For": "spoofed, 198.51.100.9"}
    assert (await hub.post("/api/pact/register", json={"agentName": "p1"}, headers=one)).status == 201
    assert (await hub.post("/api/pact/register", json={"agentName": "p2"}, headers=one)).status == 429
    assert (await hub.post("/api/pact/register", json={"agentName": "p3"}, headers=two)).status == 201


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({}, "agentName"),
        ({"model": "x"}, "agentName"),
        ({"agentName": ""}, "agentName"),
        ({"agentName": "   "}, "agentName"),
        ({"agentName": "!!!"}, "agentName"),
        ({"agentName": 42}, "agentName"),
        ({"agentName": None}, "agentName"),
        ({"agentName": ["a"]}, "agentName"),
        ({"agentName": "x" * 129}, "agentName"),
        ({"agentName": "ok", "model": 3}, "model"),
        ({"agentName": "ok", "framework": {"a": 1}}, "framework"),
        ({"agentName": "ok", "description": "d" * 2001}, "description"),
        ({"agentName": "nul\x00byte"}, "agentName"),
        ({"agentName": "ok", "model": "nul\x00"}, "model"),
    ],
)
async def test_bad_fields_are_400_naming_the_field(hub, payload, field):
    resp = await hub.post("/api/pact/register", json=payload)
    assert resp.status == 400, await resp.text()
    body = await resp.json()
    assert body["field"] == field
    assert field in body["detail"]
    assert body["error"] in ("validation_error", "invalid_field")


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        (b"", "JSON object"),
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "JSON object"),
        (b'"Alice"', "JSON object"),
        (b"null", "JSON object"),
        (b"\xff\xfe", "not valid JSON"),
        (b"[" * 100_000, "nested too deeply"),
    ],
)
async def test_unparseable_bodies_are_400(hub, raw, fragment):
    resp = await hub.post("/api/pact/register", data=raw, headers={"Content-Type": "application/json"})
    assert resp.status == 400
    body = await resp.json()
    assert body["error"] == "invalid_json"
    assert fragment in body["detail"]


async def test_unknown_fields_are_ignored(hub):
    resp = await hub.post("/api/pact/register", json={"agentName": "Extra", "colour": "blue"})
    assert resp.status == 201


# --- agent key authentication (spec §5) -------------------------------------------------------------
# Missing, malformed and other-kind keys on every protected operation: tests/test_access.py (the matrix).


async def test_a_key_of_another_agent_shape_is_refused_even_with_valid_body(hub):
    resp = await hub.post(
        "/api/pact/topics",
        headers={"Authorization": "Bearer not-a-key"},
        json={"title": "Valid title", "content": "Valid content body", "tier": "empirical"},
    )
    assert resp.status == 401


@pytest.mark.parametrize("style", ["bearer", "lowercase-bearer", "x-api-key", "x-source-agent-key"])
async def test_each_accepted_header_authenticates(hub, register, style):
    agent = await register()
    key = agent["apiKey"]
    headers = {
        "bearer": {"Authorization": f"Bearer {key}"},
        "lowercase-bearer": {"authorization": f"bearer {key}"},
        "x-api-key": {"X-Api-Key": key},
        "x-source-agent-key": {"x-source-agent-key": key},
    }[style]
    resp = await hub.get("/api/audit/me", headers=headers)
    assert resp.status == 200, await resp.text()
    entries = (await resp.json())["results"]
    assert [e["entity_id"] for e in entries] == [agent["agentId"]]
    resp = await hub.post(
        "/api/pact/topics",
        headers=headers,
        json={"title": f"Topic via {style}", "content": "Some Markdown body", "tier": "derived"},
    )
    assert resp.status == 201, await resp.text()


async def test_x_api_key_wins_over_bearer(hub, register):
    agent = await register()
    resp = await hub.get(
        "/api/audit/me",
        headers={"X-Api-Key": "pact_sk_wrong", "Authorization": f"Bearer {agent['apiKey']}"},
    )
    assert resp.status == 401
