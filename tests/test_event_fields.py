"""PACT v2.0.3 §6.1 event fields on every event of both apps, beside the fields served before; the links
between a proposal's events (correlationId); and one cursor form (`n` or `evt_n`) on every endpoint that
takes a cursor."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import rfc8785

from domain.kernel.event_record import link, served
from tests.consensus_helpers import open_topic, propose, vote
from tests.documents_support import make_key, upload_ready

SEED_FIELDS = {
    "id",
    "sequenceNumber",
    "type",
    "agentId",
    "agentName",
    "actorKind",
    "sectionId",
    "data",
    "createdAt",
}
PACT_FIELDS = {
    "eventId",
    "epochMs",
    "actorId",
    "actorDisplay",
    "actorKind",
    "eventType",
    "entityType",
    "entityId",
    "correlationId",
    "inResponseTo",
    "sequenceNumber",
    "sectionId",
    "payloadJson",
    "prev_hash",
}
MD = b"# Plan\n\nIntro.\n\n## Budget\n\nMoney.\n\n## Risks\n\nMany.\n"


async def all_events(client: Any, url: str, headers: dict[str, str] | None = None) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    after = "0"
    while True:
        resp = await client.get(url, params={"after": after, "limit": "200"}, headers=headers or {})
        assert resp.status == 200, await resp.text()
        page = json.loads(await resp.text())
        found.extend(page["events"])
        after = page["nextCursor"]
        if not page["hasMore"]:
            return found


def check_fields(event: dict[str, Any], entity_type: str, entity_id: str) -> None:
    assert set(event) == SEED_FIELDS | PACT_FIELDS, set(event) ^ (SEED_FIELDS | PACT_FIELDS)
    assert event["eventId"] == f"evt_{event['sequenceNumber']}"
    assert event["id"] == event["sequenceNumber"]
    assert event["eventType"] == event["type"]
    assert event["actorId"] == event["agentId"]
    assert event["actorDisplay"] == (event["agentName"] or "")
    assert event["actorKind"] in ("Individual", "AiAgent", "GovernanceGroup", "System")
    assert event["entityType"] == entity_type
    assert event["entityId"] == entity_id
    created = datetime.fromisoformat(event["createdAt"])
    assert event["epochMs"] == (created - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(milliseconds=1)
    assert json.loads(event["payloadJson"]) == event["data"]
    assert event["payloadJson"].encode() == rfc8785.dumps(event["data"])  # canonical text


async def test_topic_events_carry_pact_fields_and_a_proposal_s_events_share_its_id(hub, register):
    topic_id, (author, first, second) = await open_topic(hub, register)
    proposal = await propose(hub, topic_id, author)
    await vote(hub, topic_id, proposal["id"], first, "approve")
    await vote(hub, topic_id, proposal["id"], second, "approve")
    events = await all_events(hub, f"/api/pact/{topic_id}/events")
    for event in events:
        check_fields(event, "pact-fact", topic_id)
    by_type = {e["type"]: e for e in events}
    assert by_type["pact.topic.proposed"]["actorKind"] == "AiAgent"
    assert by_type["pact.topic.proposed"]["actorDisplay"] == author["agentName"]
    about_it = [e for e in events if e["data"].get("proposalId") == proposal["id"]]
    assert {e["type"] for e in about_it} >= {
        "pact.proposal.created",
        "pact.proposal.vote.approve",
        "pact.proposal.merged",
    }
    assert {e["correlationId"] for e in about_it} == {proposal["id"]}
    assert by_type["pact.topic.proposed"]["correlationId"] is None


async def test_document_events_and_poll_changes_carry_pact_fields(docs, runtime):
    keys = [await make_key(runtime, org="Acme", name=f"k{i}") for i in range(3)]
    doc = await upload_ready(docs, keys[0], MD, "plan.md")
    base = f"/api/tap/{doc['id']}"
    for i, (key, role) in enumerate(zip(keys, ("editor", "reviewer", "reviewer"), strict=True)):
        resp = await docs.post(
            f"{base}/join", headers=key["headers"], json={"agentName": f"a{i}", "role": role}
        )
        assert resp.status == 201
    resp = await docs.post(
        f"{base}/proposals",
        headers=keys[0]["headers"],
        json={"sectionId": "sec:plan:budget", "content": "More money.", "summary": "s"},
    )
    assert resp.status == 201, await resp.text()
    pid = (await resp.json())["proposalId"]
    for key in keys[1:]:
        resp = await docs.post(f"{base}/proposals/{pid}/approve", headers=key["headers"])
        assert resp.status == 200, await resp.text()

    events = await all_events(docs, f"/api/pact/{doc['id']}/events", keys[0]["headers"])
    for event in events:
        check_fields(event, "pact-document", doc["id"])
    about_it = [e for e in events if e["data"].get("proposalId") == pid]
    assert "pact.proposal.merged" in {e["type"] for e in about_it}
    assert {e["correlationId"] for e in about_it} == {pid}

    resp = await docs.get(f"{base}/poll", params={"limit": "200"}, headers=keys[0]["headers"])
    poll = await resp.json()
    assert len(poll["changes"]) == len(events)
    for change, event in zip(poll["changes"], events, strict=True):
        # the event's record, plus the names the PACT CLI's poll reads
        assert {k: change[k] for k in event} == event
        assert (change["agent"], change["section"], change["cursor"]) == (
            event["agentName"],
            event["sectionId"],
            event["eventId"],
        )


async def test_the_served_record_and_its_hash_are_pinned():
    """The chain hashes the record as served: a change of its form (a field renamed, dropped, or added to
    events that already exist) changes every stored hash. A field added later goes only on newer events."""
    row = {
        "stream": "topic:5f0c2f0e-3b1d-4c8e-9a57-2d1e6b7c4a90",
        "seq": 7,
        "type": "pact.proposal.merged",
        "actor_id": "0b6d8e0a-54c4-4bd4-9a43-1f0f3b0f8d11",
        "actor_name": "Ada",
        "actor_kind": "AiAgent",
        "section_id": "sec:answer",
        "data": {"proposalId": "p-1", "newVersion": 3, "ratio": 0.5, "note": "é ✓"},
        "created_at": datetime(2026, 11, 24, 9, 30, 15, 123456, tzinfo=UTC),
        "correlation_id": "p-1",
        "in_response_to": None,
        "prev_hash": "GENESIS",
    }
    record = served(row)
    assert record["epochMs"] == 1795512615123
    assert record["payloadJson"] == '{"newVersion":3,"note":"é ✓","proposalId":"p-1","ratio":0.5}'
    assert link(record) == "gQbx_JYT2uhMkPTtPnQO4Tc-UuC2C3jxwjXl558v0K4"


# ---- one cursor form --------------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["{n}", "evt_{n}", "00{n}"])
async def test_hub_event_lists_take_both_cursor_forms(hub, register, form):
    topic_id, (agent, *_rest) = await open_topic(hub, register)
    everything = await all_events(hub, f"/api/pact/{topic_id}/events")
    assert len(everything) >= 4
    resp = await hub.get(f"/api/pact/{topic_id}/events", params={"after": form.format(n=2), "limit": "2"})
    assert resp.status == 200, await resp.text()
    page = await resp.json()
    assert [e["sequenceNumber"] for e in page["events"]] == [3, 4]
    assert page["nextCursor"] == "4"  # answered as it always was
    resp = await hub.get("/api/work/events", params={"after": form.format(n=0)}, headers=agent["headers"])
    assert resp.status == 200, await resp.text()


async def test_document_events_and_poll_take_both_cursor_forms(docs, runtime):
    key = await make_key(runtime)
    doc = await upload_ready(docs, key, MD, "plan.md")
    base = f"/api/tap/{doc['id']}"
    for i in range(3):
        resp = await docs.post(f"{base}/join", headers=key["headers"], json={"agentName": f"a{i}"})
        assert resp.status in (201, 409)
    resp = await docs.post(f"{base}/escalate", headers=key["headers"], json={"message": "help"})
    assert resp.status == 201, await resp.text()
    everything = await all_events(docs, f"{base}/events", key["headers"])
    assert len(everything) >= 3
    for path in (f"{base}/events", f"/api/pact/{doc['id']}/events"):
        pages = []
        for after in ("1", "evt_1"):
            resp = await docs.get(path, params={"after": after}, headers=key["headers"])
            assert resp.status == 200, await resp.text()
            pages.append(await resp.json())
        assert pages[0] == pages[1]
        assert pages[0]["events"][0]["sequenceNumber"] == 2
    polls = []
    for since in ("1", "evt_1"):
        resp = await docs.get(f"{base}/poll", params={"since": since}, headers=key["headers"])
        assert resp.status == 200, await resp.text()
        polls.append(await resp.json())
    assert polls[0]["changes"] == polls[1]["changes"]
    assert polls[0]["changes"][0]["cursor"] == "evt_2"
    assert polls[0]["cursor"] == polls[1]["cursor"] == f"evt_{len(everything)}"


@pytest.mark.parametrize("bad", ["evt_", "event_3", "evt_-1", "3.0", "evt_2147483648", "x" * 20])
async def test_bad_cursors_are_400s_naming_the_field(hub, docs, register, runtime, bad):
    topic_id, (agent, *_rest) = await open_topic(hub, register)
    resp = await hub.get(f"/api/pact/{topic_id}/events", params={"after": bad})
    assert resp.status == 400, await resp.text()
    assert (await resp.json())["field"] == "after"
    resp = await hub.get("/api/work/events", params={"after": bad}, headers=agent["headers"])
    assert resp.status == 400, await resp.text()
    key = await make_key(runtime)
    doc = await upload_ready(docs, key, MD, "plan.md")
    for path, field in ((f"/api/tap/{doc['id']}/events", "after"), (f"/api/tap/{doc['id']}/poll", "since")):
        resp = await docs.get(path, params={field: bad}, headers=key["headers"])
        assert resp.status == 400, await resp.text()
        assert field in await resp.text()


def test_event_data_numbers_the_canonical_form_cannot_carry_are_stored_as_text():
    """RFC 8785 numbers are doubles: an integer beyond 2**53, NaN or an infinity in an event's data would make
    serving and hashing the event fail, so the append stores them as decimal text (nested ones too)."""
    from domain.kernel.event_record import as_stored, canonical

    data = as_stored({"big": 2**60, "items": [1.5, float("inf"), -(2**55)], "flag": True, "n": 2**53 - 1})
    assert data == {
        "big": str(2**60),
        "items": [1.5, "inf", str(-(2**55))],
        "flag": True,
        "n": 2**53 - 1,
    }
    assert canonical(data)  # the record's payload can be canonicalised
