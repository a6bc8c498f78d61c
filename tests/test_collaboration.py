"""Collaboration records on topics: intents, constraints, salience, dependencies, verification, escalation."""

from __future__ import annotations

from typing import Any

from tests.consensus_helpers import balance, event_types, open_topic


async def _post(hub: Any, path: str, agent: dict, body: dict, expect: int) -> dict[str, Any]:
    resp = await hub.post(path, headers=agent["headers"], json=body)
    assert resp.status == expect, await resp.text()
    return await resp.json()


async def _get(hub: Any, path: str, **params: str) -> dict[str, Any]:
    resp = await hub.get(path, params=params)
    assert resp.status == 200, await resp.text()
    return await resp.json()


async def test_intents_and_constraints_with_section_filter(hub: Any, register: Any):
    topic_id, (a, b, _c) = await open_topic(hub, register)
    outsider = await register()
    base = f"/api/pact/{topic_id}"
    made = await _post(hub, f"{base}/intents", a, {"sectionId": "sec:answer", "goal": "Cite the Act"}, 201)
    assert (made["topicId"], made["category"], made["agentId"], made["agentName"]) == (
        topic_id,
        "general",
        a["agentId"],
        a["agentName"],
    )
    await _post(
        hub,
        f"{base}/intents",
        b,
        {"sectionId": "sec:answer:evidence", "goal": "Add data", "category": "data"},
        201,
    )
    assert (await _post(hub, f"{base}/intents", outsider, {"sectionId": "sec:answer", "goal": "x"}, 403))[
        "error"
    ] == "not_joined"
    assert (await _post(hub, f"{base}/intents", a, {"sectionId": "sec:nope", "goal": "x"}, 404))[
        "error"
    ] == "section_not_found"
    assert (await _post(hub, f"{base}/intents", a, {"sectionId": "sec:answer"}, 400))["field"] == "goal"
    listed = await _get(hub, f"{base}/intents")
    assert listed["intents"][0] == made
    assert [i["goal"] for i in listed["intents"]] == ["Cite the Act", "Add data"]
    only = (await (await hub.get(f"{base}/intents", params={"sectionId": "sec:answer:evidence"})).json())[
        "intents"
    ]
    assert [(i["goal"], i["category"], i["agentName"]) for i in only] == [
        ("Add data", "data", b["agentName"])
    ]

    await _post(hub, f"{base}/constraints", a, {"sectionId": "sec:answer", "boundary": "No speculation"}, 201)
    made = await _post(
        hub,
        f"{base}/constraints",
        b,
        {"sectionId": "sec:discussion", "boundary": "Be brief", "category": "style"},
        201,
    )
    listed = await _get(hub, f"{base}/constraints", sectionId="sec:discussion")
    assert listed == {"topicId": topic_id, "constraints": [made]}
    assert (made["boundary"], made["category"], made["agentName"]) == ("Be brief", "style", b["agentName"])
    assert (await _post(hub, f"{base}/constraints", a, {"sectionId": "sec:answer", "boundary": ""}, 400))[
        "field"
    ] == "boundary"
    types = await event_types(hub, topic_id)
    assert types.count("pact.intent.declared") == 2
    assert types.count("pact.constraint.published") == 2


async def test_salience_upserts_and_maps_every_section(hub: Any, register: Any):
    topic_id, (a, b, _c) = await open_topic(hub, register)
    base = f"/api/pact/{topic_id}/salience"
    # 5.0 is an integer to JSON Schema, and so to the API (tests/test_strict_bodies.py); "5" and true are not.
    for score in (-1, 11, 2.5, "high", True, "5"):
        assert (await _post(hub, base, a, {"sectionId": "sec:answer", "score": score}, 400))[
            "field"
        ] == "score"
    first = await _post(hub, base, a, {"sectionId": "sec:answer", "score": 0}, 200)
    assert first == {
        "topicId": topic_id,
        "sectionId": "sec:answer",
        "agentId": a["agentId"],
        "score": 0,
        "previousScore": None,
    }
    again = await _post(hub, base, a, {"sectionId": "sec:answer", "score": 10}, 200)
    assert again["previousScore"] == 0
    await _post(hub, base, b, {"sectionId": "sec:answer", "score": 5}, 200)
    body = await _get(hub, base)
    by_id = {s["sectionId"]: s for s in body["sections"]}
    assert list(by_id) == ["sec:answer", "sec:answer:evidence", "sec:discussion"]
    assert by_id["sec:answer"]["average"] == 7.5
    # In the order the agents first scored; a new score replaces the agent's old one in place.
    assert [(s["agentName"], s["score"]) for s in by_id["sec:answer"]["scores"]] == [
        (a["agentName"], 10),
        (b["agentName"], 5),
    ]
    assert by_id["sec:discussion"] == {
        "sectionId": "sec:discussion",
        "title": "Discussion",
        "scores": [],
        "average": None,
    }


async def test_dependencies_stay_acyclic(hub: Any, register: Any):
    t1, (a, *_r1) = await open_topic(hub, register)
    t2, _ = await open_topic(hub, register)
    t3, _ = await open_topic(hub, register)
    for tid in (t2, t3):
        await hub.post(f"/api/pact/{tid}/join", headers=a["headers"])
    body = {"relationship": "builds_on", "justification": "Uses its definitions"}
    made = await _post(hub, f"/api/pact/{t1}/dependencies", a, {**body, "dependsOn": t2}, 201)
    assert (made["topicId"], made["dependsOn"], made["relationship"]) == (t1, t2, "builds_on")
    await _post(hub, f"/api/pact/{t2}/dependencies", a, {**body, "dependsOn": t3}, 201)
    cycle = await _post(hub, f"/api/pact/{t3}/dependencies", a, {**body, "dependsOn": t1}, 409)
    assert cycle["error"] == "dependency_cycle"
    assert cycle["cycle"][0] == cycle["cycle"][-1] == t3
    assert (await _post(hub, f"/api/pact/{t1}/dependencies", a, {**body, "dependsOn": t2}, 409))[
        "error"
    ] == "dependency_exists"
    assert (await _post(hub, f"/api/pact/{t1}/dependencies", a, {**body, "dependsOn": t1}, 400))[
        "field"
    ] == "dependsOn"
    missing = "00000000-0000-4000-8000-000000000000"
    assert (await _post(hub, f"/api/pact/{t1}/dependencies", a, {**body, "dependsOn": missing}, 404))[
        "error"
    ] == "topic_not_found"
    assert (await _post(hub, f"/api/pact/{t1}/dependencies", a, {"dependsOn": t3}, 400))[
        "field"
    ] == "justification"
    assert (
        await _post(
            hub, f"/api/pact/{t1}/dependencies", a, {**body, "dependsOn": t3, "relationship": "likes"}, 400
        )
    )["field"] == "relationship"
    deps = await _get(hub, f"/api/pact/{t2}/dependencies")
    assert [d["dependsOn"] for d in deps["dependsOn"]] == [t3]
    assert [d["topicId"] for d in deps["dependedOnBy"]] == [t1]
    graph = await (await hub.get("/api/hub/graph")).json()
    assert {(e["source"], e["target"]) for e in graph["edges"]} >= {(t1, t2), (t2, t3)}


async def test_verify_rewards_once_and_escalate(hub: Any, register: Any):
    topic_id, (a, b, _c) = await open_topic(hub, register, tier="institutional", jurisdiction="AU")
    before = await balance(hub, b)
    first = await _post(hub, f"/api/pact/{topic_id}/verify", b, {"status": "current"}, 200)
    assert first["rewarded"] is True
    assert (first["verification"], first["topicStatus"]) == ("current", "open")
    second = await _post(hub, f"/api/pact/{topic_id}/verify", b, {"status": "current", "notes": "again"}, 200)
    assert second["rewarded"] is False
    assert await balance(hub, b) == before + 10
    assert (await _post(hub, f"/api/pact/{topic_id}/verify", b, {"status": "stale"}, 400))[
        "field"
    ] == "status"
    topic = await (await hub.get(f"/api/pact/{topic_id}")).json()
    assert topic["lastVerifiedAt"] is not None
    esc = await _post(
        hub,
        f"/api/pact/{topic_id}/escalate",
        a,
        {"message": "Human check please", "sectionId": "sec:answer"},
        201,
    )
    assert esc["status"] == "open"
    assert (esc["escalationId"], esc["sectionId"], esc["priority"]) == (esc["id"], "sec:answer", "medium")
    assert "pact.escalation.created" in await event_types(hub, topic_id)
    # amended: the open topic is challenged (lifecycle moves the status), and the agent is not paid again
    changed = await _post(hub, f"/api/pact/{topic_id}/verify", b, {"status": "amended"}, 200)
    assert (changed["topicStatus"], changed["rewarded"]) == ("challenged", False)
    assert (await (await hub.get(f"/api/pact/{topic_id}")).json())["status"] == "challenged"
    assert "pact.consensus.challenged" in await event_types(hub, topic_id)
    assumptions = await _get(hub, f"/api/pact/{topic_id}/assumptions")
    assert (assumptions["topicId"], assumptions["assumedTopics"]) == (topic_id, [])


async def test_collaboration_edge_inputs(hub: Any, register: Any):
    topic_id, (a, b, _c) = await open_topic(hub, register)
    outsider = await register()
    base = f"/api/pact/{topic_id}"
    missing = "/api/pact/00000000-0000-4000-8000-000000000000"
    assert (await _post(hub, f"{base}/salience", a, {"sectionId": "sec:nope", "score": 3}, 404))[
        "error"
    ] == "section_not_found"
    assert (await _post(hub, f"{base}/salience", outsider, {"sectionId": "sec:answer", "score": 3}, 403))[
        "error"
    ] == "not_joined"
    for path in ("intents", "constraints", "salience", "dependencies", "assumptions", "bounty"):
        assert (await hub.get(f"{missing}/{path}")).status == 404, path
    assert (await hub.get(f"{base}/intents", params={"sectionId": "s" * 257})).status == 400
    dep = {"relationship": "builds_on", "justification": "j"}
    assert (await _post(hub, f"{base}/dependencies", a, {**dep, "dependsOn": "not-a-topic"}, 404))[
        "error"
    ] == "topic_not_found"
    other, _ = await open_topic(hub, register)
    assert (await _post(hub, f"{base}/dependencies", outsider, {**dep, "dependsOn": other}, 403))[
        "error"
    ] == "not_joined"
    assert (await _post(hub, f"{base}/escalate", a, {}, 400))["field"] == "question"
    assert (await _post(hub, f"{base}/escalate", a, {"message": "x", "priority": "now"}, 400))[
        "field"
    ] == "priority"
    bogus = {"message": "About a proposal", "proposalId": "00000000-0000-4000-8000-000000000000"}
    assert (await _post(hub, f"{base}/escalate", a, bogus, 404))["error"] == "proposal_not_found"
    assert (await _post(hub, f"{base}/escalate", a, {"message": "x", "sectionId": "sec:nope"}, 404))[
        "error"
    ] == "section_not_found"
    made = await _post(
        hub,
        f"{base}/proposals",
        a,
        {"sectionId": "sec:answer", "newContent": "n", "summary": "s"},
        201,
    )
    esc = await _post(
        hub,
        f"{base}/escalate",
        b,
        {"message": "Check this", "proposalId": made["id"], "priority": "high"},
        201,
    )
    assert (esc["proposalId"], esc["priority"]) == (made["id"], "high")
    assert (await hub.post(f"{base}/escalate", json={"message": "x"})).status == 401
    funded = await _post(hub, f"{base}/bounty", b, {"amount": 25}, 200)
    pool = await _get(hub, f"{base}/bounty")
    assert pool == funded
    assert (pool["escrow"], pool["paid"]) == (25, 0)
    assert [(c["agentId"], c["amount"]) for c in pool["contributors"]] == [(b["agentId"], 25)]
    assert (await _post(hub, f"{missing}/escalate", a, {"message": "x"}, 404))["error"] == "topic_not_found"
