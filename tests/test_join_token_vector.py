"""PACT v2.0.3's core join vector (§4.1, §7.1: an agent with no account joins a resource with an invite
token), made against both apps through HTTP, written from the spec: status 200, a body naming the agent with
`contextMode: scoped`, a registration id and a key; exactly one event, `pact.agent.joined` by the agent as an
AiAgent; the resource itself unchanged. Then the hub's own invite rules (the documents' are in
tests/test_invite_join.py): owner only, a scoped key, one answer for every wrong token, racers."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.consensus_helpers import open_topic
from tests.documents_support import make_key, upload_ready


def _check_joined(body: dict[str, Any], name: str) -> None:
    assert body["agentName"] == name
    assert body["contextMode"] == "scoped"
    assert body["registrationId"]
    assert body["apiKey"]
    assert "allowedSections" in body


async def _events(client: Any, path: str, headers: dict[str, str] | None = None) -> list[dict[str, Any]]:
    resp = await client.get(path, headers=headers or {}, params={"after": "0", "limit": "200"})
    assert resp.status == 200, await resp.text()
    return (await resp.json())["events"]


async def test_the_join_vector_on_a_document(docs: Any, runtime: Any) -> None:
    owner = await make_key(runtime, org="Vector Org")
    doc = await upload_ready(docs, owner, b"# Terms\n\nText.\n", "terms.md")
    resp = await docs.post(f"/api/pact/{doc['id']}/invites", headers=owner["headers"], json={})
    token = (await resp.json())["token"]
    before = await _events(docs, f"/api/pact/{doc['id']}/events", owner["headers"])
    content = await (await docs.get(f"/api/pact/{doc['id']}/content", headers=owner["headers"])).json()

    resp = await docs.post(
        f"/api/pact/{doc['id']}/join-token", json={"agentName": "test-bot", "token": token}
    )  # no credential at all
    assert resp.status == 200, await resp.text()
    _check_joined(await resp.json(), "test-bot")

    after = await _events(docs, f"/api/pact/{doc['id']}/events", owner["headers"])
    added = after[len(before) :]
    assert [e["type"] for e in added] == ["pact.agent.joined"]
    assert (added[0]["actorDisplay"], added[0]["actorKind"], added[0]["entityType"]) == (
        "test-bot",
        "AiAgent",
        "pact-document",
    )
    unchanged = await (await docs.get(f"/api/pact/{doc['id']}/content", headers=owner["headers"])).json()
    assert unchanged == content


async def test_the_join_vector_on_a_topic(hub: Any, register: Any) -> None:
    topic_id, (owner, *_) = await open_topic(hub, register)
    resp = await hub.post(f"/api/pact/{topic_id}/invites", headers=owner["headers"], json={"maxUses": 2})
    assert resp.status == 201, await resp.text()
    invite = await resp.json()
    assert invite["topicId"] == topic_id
    assert invite["status"] == "active"
    before = await _events(hub, f"/api/pact/{topic_id}/events")
    content = await (await hub.get(f"/api/pact/{topic_id}/content")).json()

    resp = await hub.post(
        f"/api/pact/{topic_id}/join-token", json={"agentName": "test-bot", "token": invite["token"]}
    )
    assert resp.status == 200, await resp.text()
    joined = await resp.json()
    _check_joined(joined, "test-bot")
    assert joined["topicId"] == topic_id
    assert joined["registrationId"] == joined["agentId"]

    after = await _events(hub, f"/api/pact/{topic_id}/events")
    added = after[len(before) :]
    assert [e["type"] for e in added] == ["pact.agent.joined"]
    assert (added[0]["actorDisplay"], added[0]["actorKind"]) == ("test-bot", "AiAgent")
    assert await (await hub.get(f"/api/pact/{topic_id}/content")).json() == content

    # The scoped key acts on its topic (a proposal) and nowhere else (its wallet, another topic).
    agent = {"Authorization": f"Bearer {joined['apiKey']}"}
    body = {"sectionId": "sec:answer", "newContent": "A better answer.", "summary": "Clarify"}
    resp = await hub.post(f"/api/pact/{topic_id}/proposals", headers=agent, json=body)
    assert resp.status == 201, await resp.text()
    other_id, _ = await open_topic(hub, register)
    for method, path in (("GET", "/api/pact/wallet"), ("POST", f"/api/pact/{other_id}/join")):
        resp = await hub.request(method, path, headers=agent)
        assert resp.status == 403, (path, await resp.text())
        assert (await resp.json())["error"] == "key_scoped"


async def test_topic_invites_owner_only_uniform_refusals_and_racers(
    hub: Any, register: Any, settings: Any, monkeypatch: Any
) -> None:
    monkeypatch.setattr(settings, "rate_limit_register", 1000)  # registrations and joins share the budget
    topic_id, (owner, member, *_) = await open_topic(hub, register)
    base = f"/api/pact/{topic_id}"
    # Only the creator manages invites.
    for method in ("POST", "GET"):
        resp = await hub.request(method, f"{base}/invites", headers=member["headers"], json={})
        assert resp.status == 403, await resp.text()
    resp = await hub.post(f"{base}/invites", headers=owner["headers"], json={"expiresInSeconds": 5})
    assert resp.status == 400, await resp.text()
    assert "expiresInSeconds" in await resp.text()

    spent = await (await hub.post(f"{base}/invites", headers=owner["headers"], json={})).json()
    resp = await hub.post(f"{base}/join-token", json={"agentName": "first-bot", "token": spent["token"]})
    assert resp.status == 200
    revoked = await (await hub.post(f"{base}/invites", headers=owner["headers"], json={})).json()
    resp = await hub.delete(f"{base}/invites/{revoked['id']}", headers=owner["headers"])
    assert (await resp.json())["status"] == "revoked"
    other_id, _ = await open_topic(hub, register)
    answers = set()
    for topic, token in (
        (topic_id, spent["token"]),
        (topic_id, revoked["token"]),
        (topic_id, "pact_inv_unknown"),
        (other_id, spent["token"]),
        ("not-a-topic", spent["token"]),
    ):
        resp = await hub.post(f"/api/pact/{topic}/join-token", json={"agentName": "probe", "token": token})
        answers.add((resp.status, await resp.text()))
    assert len(answers) == 1, answers
    status, text = answers.pop()
    assert status == 403
    assert "invite_token.invalid" in text

    # A taken name: 409, the use given back. Racers for the last uses: exactly that many get in.
    racing = await (await hub.post(f"{base}/invites", headers=owner["headers"], json={"maxUses": 2})).json()
    resp = await hub.post(f"{base}/join-token", json={"agentName": "first-bot", "token": racing["token"]})
    assert resp.status == 409
    statuses = await asyncio.gather(
        *(
            hub.post(
                f"{base}/join-token",
                json={"agentName": f"racer-{n}-{topic_id[:6]}", "token": racing["token"]},
            )
            for n in range(5)
        )
    )
    assert sorted(r.status for r in statuses) == [200, 200, 403, 403, 403]
    listed = await (await hub.get(f"{base}/invites", headers=owner["headers"])).json()
    assert {i["id"]: i["uses"] for i in listed["invites"]}[racing["id"]] == 2
    assert racing["token"] not in str(listed)
