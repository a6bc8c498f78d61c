"""The intent lifecycle of PACT v2.0.3 §10.2 on both apps, over HTTP: an intent is declared `proposed`;
another agent objects (`POST …/intents/{id}/object {reason}`, once per agent, never its own) and it is
`objected`, listed with its objections (`pact.intent.objected`); nobody objecting within its TTL
(`CONCORD_INTENT_TTL_SECONDS`, 60 s by default) it is `accepted`, which every read says at once and the
sweep writes as `pact.intent.accepted`; its author's next intent on the section supersedes it. Objections
racing one another are each counted once (SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import datetime, timedelta
from typing import Any

from tests.consensus_helpers import open_topic, run_sweep
from tests.documents_support import make_key, upload_ready
from tests.test_mcp import call, connect, text_of

SWEEP = "intents.accept_due"
MISSING = "00000000-0000-4000-8000-000000000000"
MD = b"# Plan\n\nIntro.\n\n## Budget\n\nMoney.\n\n## Risks\n\nMany.\n"


def _at(value: str) -> datetime:
    return datetime.fromisoformat(value)


async def declare(
    client: Any, base: str, key: dict, section: str, goal: str = "Cite the Act"
) -> dict[str, Any]:
    resp = await client.post(
        f"{base}/intents", headers=key["headers"], json={"sectionId": section, "goal": goal}
    )
    assert resp.status == 201, await resp.text()
    return dict(await resp.json())


async def object_to(
    client: Any, base: str, intent_id: str, key: dict, expect: int = 200, **body: Any
) -> dict[str, Any]:
    payload = body if body else {"reason": "Out of scope"}
    resp = await client.post(f"{base}/intents/{intent_id}/object", headers=key["headers"], json=payload)
    assert resp.status == expect, await resp.text()
    return dict(await resp.json(content_type=None))


async def listed(client: Any, base: str, headers: dict[str, str] | None = None) -> dict[str, dict[str, Any]]:
    resp = await client.get(f"{base}/intents", headers=headers or {})
    assert resp.status == 200, await resp.text()
    items = (await resp.json())["intents"]
    return {i.get("id") or i["intentId"]: i for i in items}


async def topic_events(hub: Any, topic_id: str) -> list[dict[str, Any]]:
    body = await (await hub.get(f"/api/pact/{topic_id}/events", params={"limit": "200"})).json()
    return list(body["events"])


async def doc_team(docs: Any, runtime: Any, roles: tuple[str, ...]) -> tuple[list[dict], str, str]:
    keys = [await make_key(runtime, org="Acme", name=f"k{i}") for i in range(len(roles))]
    doc = await upload_ready(docs, keys[0], MD, "plan.md")
    base = f"/api/tap/{doc['id']}"
    for i, (key, role) in enumerate(zip(keys, roles, strict=True)):
        resp = await docs.post(
            f"{base}/join", headers=key["headers"], json={"agentName": f"a{i}", "role": role}
        )
        assert resp.status == 201, await resp.text()
    return keys, doc["id"], base


# ---- topics ------------------------------------------------------------------------------------------


async def test_objections_to_a_topic_intent(hub, register):
    topic_id, (author, b, c) = await open_topic(hub, register)
    base = f"/api/pact/{topic_id}"
    made = await declare(hub, base, author, "sec:answer")
    assert (made["status"], made["objections"], made["resolvedAt"]) == ("proposed", [], None)
    assert _at(made["expiresAt"]) - _at(made["createdAt"]) == timedelta(seconds=60)

    assert (await object_to(hub, base, made["id"], author, expect=409))["error"] == "own_intent"
    objected = await object_to(hub, base, made["id"], b, reason="  Not this section  ")
    assert objected["status"] == "objected"
    assert objected["resolvedAt"] is not None
    assert [(o["agentId"], o["reason"]) for o in objected["objections"]] == [
        (b["agentId"], "Not this section")
    ]
    assert (await object_to(hub, base, made["id"], b, expect=409))["error"] == "already_objected"
    second = await object_to(hub, base, made["id"], c, reason="Too broad")
    assert [o["agentName"] for o in second["objections"]] == [b["agentName"], c["agentName"]]

    found = (await listed(hub, f"{base}"))[made["id"]]
    assert (found["status"], len(found["objections"])) == ("objected", 2)
    objections = [e for e in await topic_events(hub, topic_id) if e["type"] == "pact.intent.objected"]
    assert [(e["actorId"], e["correlationId"], e["data"]["objectionCount"]) for e in objections] == [
        (b["agentId"], made["id"], 1),
        (c["agentId"], made["id"], 2),
    ]
    assert objections[0]["data"]["reason"] == "Not this section"


async def test_bad_objections_to_a_topic_intent_are_refused(hub, register):
    topic_id, (author, b, _c) = await open_topic(hub, register)
    base = f"/api/pact/{topic_id}"
    made = await declare(hub, base, author, "sec:answer")
    for body in ({}, {"reason": ""}, {"reason": "   "}, {"reason": "x" * 1001}, {"reason": 5}):
        resp = await hub.post(f"{base}/intents/{made['id']}/object", headers=b["headers"], json=body)
        assert resp.status == 400, body
        assert (await resp.json())["field"] == "reason", body
    for missing in (MISSING, "intent-x"):
        assert (await object_to(hub, base, missing, b, expect=404))["error"] == "intent_not_found"
    other, _agents = await open_topic(hub, register)
    elsewhere = await object_to(hub, f"/api/pact/{other}", made["id"], b, expect=403)  # b never joined it
    assert elsewhere["error"] == "not_joined"
    outsider = await register()
    assert (await object_to(hub, base, made["id"], outsider, expect=403))["error"] == "not_joined"
    resp = await hub.post(f"{base}/intents/{made['id']}/object", json={"reason": "No key"})
    assert resp.status == 401
    gone = await object_to(hub, f"/api/pact/{MISSING}", made["id"], b, expect=404)
    assert gone["error"] == "topic_not_found"
    assert (await listed(hub, base))[made["id"]]["objections"] == []


async def test_an_intent_nobody_objects_to_is_accepted_at_its_ttl(hub, register, runtime, clock):
    topic_id, (author, b, _c) = await open_topic(hub, register)
    base = f"/api/pact/{topic_id}"
    made = await declare(hub, base, author, "sec:answer")
    clock.advance(timedelta(seconds=61))

    # Read before the sweep: already accepted, at its deadline
    found = (await listed(hub, base))[made["id"]]
    assert (found["status"], found["resolvedAt"]) == ("accepted", made["expiresAt"])
    refused = await object_to(hub, base, made["id"], b, expect=409)
    assert (refused["error"], refused["intentStatus"]) == ("intent_closed", "accepted")
    assert "pact.intent.accepted" not in [e["type"] for e in await topic_events(hub, topic_id)]

    assert await run_sweep(runtime, SWEEP) == 1
    assert await run_sweep(runtime, SWEEP) == 0
    [event] = [e for e in await topic_events(hub, topic_id) if e["type"] == "pact.intent.accepted"]
    assert (event["actorKind"], event["correlationId"], event["sectionId"]) == (
        "System",
        made["id"],
        "sec:answer",
    )
    assert (event["data"]["acceptedAt"], event["data"]["agentId"]) == (made["expiresAt"], author["agentId"])
    assert (await listed(hub, base))[made["id"]]["status"] == "accepted"


async def test_an_objected_intent_is_never_accepted_and_the_ttl_is_a_setting(
    hub, register, runtime, clock, settings, monkeypatch
):
    monkeypatch.setattr(settings, "intent_ttl_seconds", 5)
    topic_id, (author, b, c) = await open_topic(hub, register)
    base = f"/api/pact/{topic_id}"
    objected = await declare(hub, base, author, "sec:answer")
    quiet = await declare(hub, base, b, "sec:discussion")
    assert _at(quiet["expiresAt"]) - _at(quiet["createdAt"]) == timedelta(seconds=5)
    await object_to(hub, base, objected["id"], b)
    clock.advance(timedelta(seconds=6))
    assert await run_sweep(runtime, SWEEP) == 1
    found = await listed(hub, base)
    assert (found[objected["id"]]["status"], found[quiet["id"]]["status"]) == ("objected", "accepted")
    # An objected intent takes more objections (one per agent) whatever its TTL said.
    third = await object_to(hub, base, objected["id"], c)
    assert len(third["objections"]) == 2


async def test_the_authors_next_intent_on_a_section_supersedes_its_open_ones(hub, register, runtime, clock):
    topic_id, (author, b, c) = await open_topic(hub, register)
    base = f"/api/pact/{topic_id}"
    first = await declare(hub, base, author, "sec:answer", goal="First goal")
    await object_to(hub, base, first["id"], b)
    elsewhere = await declare(hub, base, author, "sec:discussion")
    others = await declare(hub, base, b, "sec:answer")
    second = await declare(hub, base, author, "sec:answer", goal="Revised goal")
    found = await listed(hub, base)
    assert found[first["id"]]["status"] == "superseded"
    assert (
        found[second["id"]]["status"],
        found[elsewhere["id"]]["status"],
        found[others["id"]]["status"],
    ) == (
        "proposed",
        "proposed",
        "proposed",
    )
    refused = await object_to(hub, base, first["id"], c, expect=409)
    assert (refused["error"], refused["intentStatus"]) == ("intent_closed", "superseded")
    [event] = [e for e in await topic_events(hub, topic_id) if e["type"] == "pact.intent.superseded"]
    assert (event["correlationId"], event["data"]["supersededBy"]) == (first["id"], second["id"])

    # An accepted intent is done: a later one does not supersede it; the one due is settled first.
    clock.advance(timedelta(seconds=61))
    third = await declare(hub, base, author, "sec:answer", goal="Third goal")
    found = await listed(hub, base)
    assert (found[second["id"]]["status"], found[third["id"]]["status"]) == ("accepted", "proposed")
    types = [e["type"] for e in await topic_events(hub, topic_id)]
    # second, elsewhere and others, accepted before the new one is declared
    assert types[-4:] == ["pact.intent.accepted"] * 3 + ["pact.intent.declared"]
    assert await run_sweep(runtime, SWEEP) == 0


# ---- documents ---------------------------------------------------------------------------------------


async def test_objections_to_a_document_intent(docs, runtime, clock):
    keys, doc_id, base = await doc_team(docs, runtime, ("editor", "reviewer", "observer"))
    editor, reviewer_key, observer = keys
    made = await declare(docs, base, editor, "sec:plan:budget")
    assert (made["status"], made["objections"]) == ("proposed", [])
    intent_id = made["intentId"]

    assert (await object_to(docs, base, intent_id, observer, expect=403))["code"] == "role.insufficient"
    assert (await object_to(docs, base, intent_id, editor, expect=409))["code"] == "own_intent"
    stranger = await make_key(runtime, org="Elsewhere")
    assert (await object_to(docs, base, intent_id, stranger, expect=404))["code"] == "document_not_found"
    outsider = await make_key(runtime, org="Acme", name="outsider")
    assert (await object_to(docs, base, intent_id, outsider, expect=403))["code"] == "agent.not_joined"

    alias = f"/api/pact/{doc_id}"
    objected = await object_to(docs, alias, intent_id, reviewer_key, reason="Keep the budget")
    assert (objected["status"], objected["objections"][0]["reason"]) == ("objected", "Keep the budget")
    assert (await object_to(docs, base, intent_id, reviewer_key, expect=409))["code"] == "already_objected"
    assert (await object_to(docs, base, MISSING, reviewer_key, expect=404))["code"] == "intent_not_found"
    resp = await docs.post(f"{base}/intents/{intent_id}/object", headers=reviewer_key["headers"], json={})
    assert resp.status == 400

    quiet = await declare(docs, base, reviewer_key, "sec:plan:risks")
    clock.advance(timedelta(seconds=61))
    found = await listed(docs, base, editor["headers"])
    assert (found[intent_id]["status"], found[quiet["intentId"]]["status"]) == ("objected", "accepted")
    assert await run_sweep(runtime, SWEEP) == 1
    events = await (await docs.get(f"{base}/events?after=0&limit=200", headers=editor["headers"])).json()
    types = Counter(e["type"] for e in events["events"])
    assert (types["pact.intent.objected"], types["pact.intent.accepted"]) == (1, 1)


# ---- races -------------------------------------------------------------------------------------------


async def _status(client: Any, url: str, headers: dict[str, str], reason: str) -> int:
    resp = await client.post(url, headers=headers, json={"reason": reason})
    await resp.read()
    return resp.status


async def test_objections_at_once_are_each_counted_once(hub, register, settings, monkeypatch):
    monkeypatch.setattr(settings, "rate_limit_register", 1000)
    topic_id, agents = await open_topic(hub, register, n_agents=7)
    author, objectors = agents[0], agents[1:]
    base = f"/api/pact/{topic_id}"
    made = await declare(hub, base, author, "sec:answer")
    url = f"{base}/intents/{made['id']}/object"
    # Six agents at once, and the first of them twice more
    statuses = await asyncio.gather(
        *(_status(hub, url, a["headers"], f"no {i}") for i, a in enumerate(objectors)),
        _status(hub, url, objectors[0]["headers"], "again"),
        _status(hub, url, objectors[0]["headers"], "and again"),
    )
    assert Counter(statuses) == {200: 6, 409: 2}
    found = (await listed(hub, base))[made["id"]]
    assert (found["status"], len(found["objections"])) == ("objected", 6)
    assert len({o["agentId"] for o in found["objections"]}) == 6
    types = [e["type"] for e in await topic_events(hub, topic_id)]
    assert types.count("pact.intent.objected") == 6


async def test_the_sweep_and_objections_at_once_decide_each_intent_once(hub, register, runtime, clock):
    topic_id, (author, b, _c) = await open_topic(hub, register)
    base = f"/api/pact/{topic_id}"
    sections = ("sec:answer", "sec:answer:evidence", "sec:discussion")
    due = [await declare(hub, base, author, section) for section in sections]
    clock.advance(timedelta(seconds=61))
    fresh = await declare(hub, base, author, "sec:answer")  # settles the three due ones first
    results = await asyncio.gather(
        run_sweep(runtime, SWEEP),
        *(_status(hub, f"{base}/intents/{i['id']}/object", b["headers"], "late") for i in due),
        _status(hub, f"{base}/intents/{fresh['id']}/object", b["headers"], "in time"),
    )
    assert results[0] == 0  # the declaration settled them already
    assert list(results[1:]) == [409, 409, 409, 200]
    found = await listed(hub, base)
    assert [found[i["id"]]["status"] for i in due] == ["accepted"] * 3
    assert found[fresh["id"]]["status"] == "objected"
    types = Counter(e["type"] for e in await topic_events(hub, topic_id))
    assert (types["pact.intent.accepted"], types["pact.intent.objected"]) == (3, 1)


# ---- MCP -----------------------------------------------------------------------------------------------


async def test_pact_intent_object_tool(docs, runtime):
    keys, doc_id, base = await doc_team(docs, runtime, ("editor", "reviewer"))
    made = await declare(docs, base, keys[0], "sec:plan:budget")
    async with connect(docs, keys[1]) as client:
        missing = await client.call_tool(
            "pact_intent_object", {"documentId": doc_id, "intentId": made["intentId"]}
        )
        assert missing.is_error
        assert "reason" in text_of(missing)
        objected = await call(
            client, "pact_intent_object", documentId=doc_id, intentId=made["intentId"], reason="Not yet"
        )
        assert (objected["status"], objected["objections"][0]["reason"]) == ("objected", "Not yet")
        intents = await call(client, "pact_intents", documentId=doc_id)
        assert [i["status"] for i in intents["intents"]] == ["objected"]
