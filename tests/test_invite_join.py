"""Invite tokens on a document (PACT §4.1 join-token, Extended), through HTTP: the owner issues, lists and
revokes; an agent without an account joins with a token and gets a key limited to that one document; every
wrong token gets the same 403; a single-use token raced by many joins admits exactly one."""

from __future__ import annotations

import asyncio
import hashlib
from datetime import timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy import select

from tests.documents_support import make_key, upload_ready

PLAN = b"# Plan\n\n## Budget\n\nTen.\n"


async def _owned(docs: Any, runtime: Any, org: str = "Invite Org") -> tuple[dict, dict]:
    owner = await make_key(runtime, org=org, name="owner")
    doc = await upload_ready(docs, owner, PLAN, "plan.md")
    return owner, doc


async def _invite(docs: Any, owner: dict, doc_id: str, **body: Any) -> dict:
    resp = await docs.post(f"/api/pact/{doc_id}/invites", headers=owner["headers"], json=body)
    assert resp.status == 201, await resp.text()
    return await resp.json()


async def _join(docs: Any, doc_id: str, token: str, name: str = "test-bot") -> Any:
    return await docs.post(f"/api/pact/{doc_id}/join-token", json={"agentName": name, "token": token})


async def test_owner_issues_an_invite_and_an_agent_joins_with_it(docs, runtime):
    from domain.documents.models import DocumentAgent, ServiceKey
    from domain.kernel.models import Invite

    owner, doc = await _owned(docs, runtime)
    invite = await _invite(docs, owner, doc["id"], role="reviewer", label="for the auditor")
    assert invite["status"] == "active"
    assert invite["uses"] == 0
    assert invite["maxUses"] == 1
    assert invite["role"] == "reviewer"
    assert invite["token"].startswith("pact_inv_")

    resp = await _join(docs, doc["id"], invite["token"])
    assert resp.status == 200, await resp.text()
    joined = await resp.json()
    assert joined["agentName"] == "test-bot"
    assert joined["contextMode"] == "scoped"
    assert joined["role"] == "reviewer"
    assert joined["documentId"] == doc["id"]
    assert joined["registrationId"] == joined["agentId"]
    assert joined["apiKey"].startswith("svc_sk_")
    agent = {"X-Api-Key": joined["apiKey"]}

    # The scoped key works as that agent on its document's agent paths...
    resp = await docs.get(f"/api/pact/{doc['id']}/agents", headers=agent)
    assert resp.status == 200, await resp.text()
    assert [a["agentName"] for a in await resp.json()] == ["test-bot"]
    resp = await docs.get(f"/api/tap/{doc['id']}/content", headers=agent)
    assert resp.status == 200
    # ...and nowhere else: not the library, not the document's record, not another document, not MCP.
    other = await upload_ready(docs, owner, b"# Other\n\nText.\n", "other.md")
    for path in ("/api/documents", f"/api/documents/{doc['id']}", f"/api/pact/{other['id']}/agents"):
        resp = await docs.get(path, headers=agent)
        assert resp.status == 403, (path, await resp.text())
        assert (await resp.json())["code"] == "key.scoped"
    resp = await docs.post(
        "/mcp", headers={**agent, "Accept": "application/json, text/event-stream"}, json={"jsonrpc": "2.0"}
    )
    assert resp.status == 403
    # Nor may it manage invites (no documents:write).
    resp = await docs.get(f"/api/pact/{doc['id']}/invites", headers=agent)
    assert resp.status == 403

    # The event of the join, as PACT's vector expects it.
    resp = await docs.get(f"/api/pact/{doc['id']}/events?after=0&limit=50", headers=owner["headers"])
    evts = [e for e in (await resp.json())["events"] if e["type"] == "pact.agent.joined"]
    assert len(evts) == 1
    assert (evts[0]["actorDisplay"], evts[0]["actorKind"], evts[0]["entityType"]) == (
        "test-bot",
        "AiAgent",
        "pact-document",
    )

    # The owner's list: used up now, no token in it.
    resp = await docs.get(f"/api/pact/{doc['id']}/invites", headers=owner["headers"])
    text = await resp.text()
    assert invite["token"] not in text
    listed = (await resp.json())["invites"]
    assert [(i["id"], i["status"], i["uses"]) for i in listed] == [(invite["id"], "spent", 1)]

    # Only hashes are stored: of the invite, of the agent's invite token, of the minted key.
    digest = hashlib.sha256(invite["token"].encode()).hexdigest()
    async with runtime.db.read() as session:
        row = await session.scalar(select(Invite).where(Invite.id == invite["id"]))
        assert row is not None
        assert row.token_hash == digest
        member = await session.scalar(select(DocumentAgent).where(DocumentAgent.id == joined["agentId"]))
        assert member is not None
        assert member.invite_token_hash == digest
        key = await session.scalar(select(ServiceKey).where(ServiceKey.id == member.key_id))
        assert key is not None
        assert key.document_id == doc["id"]
        assert sorted(key.scopes) == ["comments:read", "comments:write", "tap:read", "tap:write"]
        for table in ("invites", "service_keys", "document_agents"):
            dumped = (await session.execute(sa.text(f"SELECT * FROM {table}"))).all()
            assert not any(invite["token"] in str(v) for r in dumped for v in r)


async def test_every_wrong_token_gets_the_same_answer(docs, runtime, clock):
    owner, doc = await _owned(docs, runtime)
    _, elsewhere = await _owned(docs, runtime, org="Other Org")
    spent = await _invite(docs, owner, doc["id"])
    assert (await _join(docs, doc["id"], spent["token"], "first")).status == 200
    revoked = await _invite(docs, owner, doc["id"])
    resp = await docs.delete(f"/api/pact/{doc['id']}/invites/{revoked['id']}", headers=owner["headers"])
    assert resp.status == 200
    assert (await resp.json())["status"] == "revoked"
    expiring = await _invite(docs, owner, doc["id"], expiresInSeconds=60)
    clock.advance(timedelta(seconds=61))

    answers = []
    for doc_id, token in (
        (doc["id"], spent["token"]),  # used up
        (doc["id"], revoked["token"]),  # revoked
        (doc["id"], expiring["token"]),  # expired
        (doc["id"], "pact_inv_" + "0" * 48),  # unknown
        (elsewhere["id"], spent["token"]),  # another document's
        ("no-such-document", spent["token"]),  # no such document
        ("x" * 300, spent["token"]),  # an id too long to be any
    ):
        resp = await _join(docs, doc_id, token)
        body = await resp.json()
        answers.append((resp.status, body["code"], body["detail"]))
    assert len(set(answers)) == 1, answers
    assert answers[0][:2] == (403, "invite_token.invalid")

    # Nothing half-written: one agent (the first join), no key minted by the refused ones.
    resp = await docs.get(f"/api/pact/{doc['id']}/agents", headers=owner["headers"])
    assert [a["agentName"] for a in await resp.json()] == ["first"]


async def test_bad_requests_and_owner_checks(docs, runtime):
    owner, doc = await _owned(docs, runtime)
    stranger = await make_key(runtime, org="Stranger Org", name="stranger")
    reader = await make_key(runtime, org="Invite Org", scopes="documents:read,tap:read,tap:write")
    base = f"/api/pact/{doc['id']}"
    # Another organisation's key sees no such document; a key without documents:write cannot issue.
    assert (await docs.post(f"{base}/invites", headers=stranger["headers"], json={})).status == 404
    assert (await docs.post(f"{base}/invites", headers=reader["headers"], json={})).status == 403
    for body, field in (
        ({"expiresInSeconds": 10}, "expiresInSeconds"),
        ({"maxUses": 0}, "maxUses"),
        ({"role": "owner"}, "role"),
    ):
        resp = await docs.post(f"{base}/invites", headers=owner["headers"], json=body)
        assert resp.status in (400, 422), await resp.text()
        assert field in await resp.text()
    resp = await docs.delete(f"{base}/invites/not-an-invite", headers=owner["headers"])
    assert resp.status == 404
    for body in ({"agentName": "", "token": "t"}, {"agentName": "bot"}, {"token": "t"}, {"agentName": "--"}):
        resp = await docs.post(f"{base}/join-token", json={**body})
        assert resp.status in (400, 422), await resp.text()
    # A name already on the document: 409, and the invite's use is given back.
    invite = await _invite(docs, owner, doc["id"], maxUses=2)
    assert (await _join(docs, doc["id"], invite["token"], "Twin")).status == 200
    assert (await _join(docs, doc["id"], invite["token"], "Twin")).status == 409
    resp = await docs.get(f"{base}/invites", headers=owner["headers"])
    assert (await resp.json())["invites"][0]["uses"] == 1
    assert (await _join(docs, doc["id"], invite["token"], "Other")).status == 200


async def test_a_single_use_token_raced_by_many_admits_one(docs, runtime):
    owner, doc = await _owned(docs, runtime)
    invite = await _invite(docs, owner, doc["id"], maxUses=2)
    statuses = await asyncio.gather(
        *(_join(docs, doc["id"], invite["token"], f"racer-{n}") for n in range(6))
    )
    codes = sorted(r.status for r in statuses)
    assert codes == [200, 200, 403, 403, 403, 403], codes
    resp = await docs.get(f"/api/pact/{doc['id']}/agents", headers=owner["headers"])
    assert len(await resp.json()) == 2
    resp = await docs.get(f"/api/pact/{doc['id']}/invites", headers=owner["headers"])
    assert (await resp.json())["invites"][0]["uses"] == 2


async def test_join_token_is_rate_limited_per_client(docs, runtime, settings, monkeypatch):
    monkeypatch.setattr(settings, "rate_limit_register", 2)
    owner, doc = await _owned(docs, runtime)
    invite = await _invite(docs, owner, doc["id"], maxUses=5)
    statuses = [(await _join(docs, doc["id"], invite["token"], f"bot-{n}")).status for n in range(3)]
    assert statuses == [200, 200, 429]
    resp = await docs.get(f"/api/pact/{doc['id']}/invites", headers=owner["headers"])
    assert (await resp.json())["invites"][0]["uses"] == 2  # the refused one took nothing


async def test_leaving_retires_the_key_an_invite_minted_and_no_other(docs, runtime):
    owner, doc = await _owned(docs, runtime)
    invite = await _invite(docs, owner, doc["id"], maxUses=2)
    resp = await _join(docs, doc["id"], invite["token"])
    assert resp.status == 200, await resp.text()
    agent = {"X-Api-Key": (await resp.json())["apiKey"]}

    resp = await docs.delete(f"/api/pact/{doc['id']}/leave", headers=agent)
    assert resp.status == 200, await resp.text()
    assert (await resp.json())["keyRevoked"] is True
    # The key cannot come back on its own: joining again takes the invite (which still has a use).
    resp = await docs.post(f"/api/pact/{doc['id']}/join", headers=agent, json={"agentName": "test-bot"})
    assert resp.status == 401
    assert (await resp.json())["code"] == "revoked_api_key"
    resp = await _join(docs, doc["id"], invite["token"], name="test-bot")
    assert resp.status == 200, await resp.text()

    # The organisation's own key leaves and stays a key: it may join again.
    resp = await docs.post(
        f"/api/pact/{doc['id']}/join", headers=owner["headers"], json={"agentName": "owner"}
    )
    assert resp.status == 201, await resp.text()
    resp = await docs.delete(f"/api/pact/{doc['id']}/leave", headers=owner["headers"])
    assert (await resp.json())["keyRevoked"] is False
    resp = await docs.post(
        f"/api/pact/{doc['id']}/join", headers=owner["headers"], json={"agentName": "owner"}
    )
    assert resp.status == 201, await resp.text()
    resp = await docs.get(f"/api/pact/{doc['id']}/events?after=0&limit=50", headers=owner["headers"])
    left = [e for e in (await resp.json())["events"] if e["type"] == "pact.agent.left"]
    assert [e["data"]["keyRevoked"] for e in left] == [True, False]


async def test_the_organisation_removes_an_agent_its_locks_and_its_invite_key_go_with_it(docs, runtime):
    owner, doc = await _owned(docs, runtime)
    base = f"/api/pact/{doc['id']}"
    invite = await _invite(docs, owner, doc["id"])
    resp = await _join(docs, doc["id"], invite["token"], name="rogue-bot")
    joined = await resp.json()
    agent = {"X-Api-Key": joined["apiKey"]}
    resp = await docs.post(f"{base}/sections/sec:plan:budget/lock", headers=agent)
    assert resp.status in (200, 201), await resp.text()
    # A key that may act on the document but not manage it cannot remove anyone.
    helper = await make_key(runtime, org="Invite Org", name="helper", scopes="tap:read,tap:write")
    resp = await docs.delete(f"{base}/agents/{joined['agentId']}", headers=helper["headers"])
    assert resp.status == 403

    resp = await docs.delete(
        f"{base}/agents/{joined['agentId']}", headers=owner["headers"], json={"reason": "Off its brief"}
    )
    assert resp.status == 200, await resp.text()
    removed = await resp.json()
    assert removed["agentId"] == joined["agentId"]
    assert (removed["locksReleased"], removed["keyRevoked"]) == (1, True)
    assert (removed["removedBy"], removed["reason"]) == ("owner", "Off its brief")
    # Gone from the agents, its lock free, its key dead; a second removal finds nobody.
    resp = await docs.get(f"{base}/agents", headers=owner["headers"])
    assert [a["agentName"] for a in await resp.json()] == []
    resp = await docs.post(f"{base}/join", headers=helper["headers"], json={"agentName": "helper"})
    assert resp.status == 201
    resp = await docs.post(f"{base}/sections/sec:plan:budget/lock", headers=helper["headers"])
    assert resp.status in (200, 201), await resp.text()
    resp = await docs.get(f"{base}/agents", headers=agent)
    assert (resp.status, (await resp.json())["code"]) == (401, "revoked_api_key")
    for missing in (joined["agentId"], "no-such-agent"):
        resp = await docs.delete(f"{base}/agents/{missing}", headers=owner["headers"])
        assert (resp.status, (await resp.json())["code"]) == (404, "agent.not_found")
    # Another organisation's key does not see the document at all.
    stranger = await make_key(runtime, org="Elsewhere", name="stranger")
    resp = await docs.delete(f"{base}/agents/{joined['agentId']}", headers=stranger["headers"])
    assert resp.status == 404

    resp = await docs.get(f"{base}/events?after=0&limit=50", headers=owner["headers"])
    found = (await resp.json())["events"]
    left = [e for e in found if e["type"] == "pact.agent.left"]
    assert len(left) == 1
    assert left[0]["agentName"] == "owner"  # the event is the organisation's act, not the agent's
    assert {k: left[0]["data"][k] for k in ("agentName", "removedBy", "reason", "keyRevoked")} == {
        "agentName": "rogue-bot",
        "removedBy": "owner",
        "reason": "Off its brief",
        "keyRevoked": True,
    }
    unlocked = [e for e in found if e["type"] == "pact.section.unlocked"]
    assert [e["data"].get("reason") for e in unlocked] == ["left"]


async def test_an_invited_agent_comments_on_its_document_and_nowhere_else(docs, runtime):
    owner, doc = await _owned(docs, runtime)
    invite = await _invite(docs, owner, doc["id"])
    resp = await _join(docs, doc["id"], invite["token"], name="commenter")
    agent = {"X-Api-Key": (await resp.json())["apiKey"]}
    resp = await docs.post(
        f"/api/pact/{doc['id']}/comments", headers=agent, json={"content": "Budget is tight."}
    )
    assert resp.status == 201, await resp.text()
    assert (await resp.json())["author"] == "commenter"
    listed = await (await docs.get(f"/api/pact/{doc['id']}/comments", headers=agent)).json()
    assert [c["content"] for c in listed["comments"]] == ["Budget is tight."]
    # The document API's own comment paths stay closed to it.
    resp = await docs.get("/api/comments/search", headers=agent)
    assert (resp.status, (await resp.json())["code"]) == (403, "key.scoped")
