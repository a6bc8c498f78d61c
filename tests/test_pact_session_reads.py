"""What the PACT CLI 2.0.3 reads and does on a session, on both apps: `pact leave` on a topic (DELETE
/leave), `pact poll` on a topic (the documents' poll: since, changes, cursor), `pact transcript` (GET
/transcript?since=: {events, latestEventId}) on both, and `pact agents` (a bare array on the PACT path)."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.consensus_helpers import event_types, open_topic, propose, vote
from tests.documents_support import make_key, upload_ready

MD = b"# Plan\n\nIntro.\n\n## Budget\n\nMoney.\n"
NO_TOPIC = "/api/pact/00000000-0000-4000-8000-000000000000"


async def _status(hub: Any, topic_id: str) -> str:
    return (await (await hub.get(f"/api/pact/{topic_id}")).json())["status"]


# ---- leave (hub) -----------------------------------------------------------------------------------------


async def test_an_agent_leaves_a_topic_and_may_join_again(hub, register):
    topic_id, (a, b, c) = await open_topic(hub, register)
    base = f"/api/pact/{topic_id}"
    resp = await hub.delete(f"{base}/leave", headers=b["headers"])  # the CLI sends no body
    assert resp.status == 200, await resp.text()
    left = await resp.json()
    assert (left["topicId"], left["agentId"], left["agentName"], left["role"]) == (
        topic_id,
        b["agentId"],
        b["agentName"],
        "collaborator",
    )
    assert left["leftAt"]
    assert left["topicStatus"] == "open"
    agents = await (await hub.get(f"{base}/agents")).json()
    assert {x["agentId"]: x["isActive"] for x in agents} == {
        a["agentId"]: True,
        b["agentId"]: False,
        c["agentId"]: True,
    }
    assert (await hub.get(f"/api/pact/topics/{topic_id}")).status == 200
    assert (await (await hub.get(f"/api/pact/topics/{topic_id}")).json())["participantCount"] == 2

    # Gone: no longer acting on the topic, and a second leave is refused.
    resp = await hub.delete(f"{base}/leave", headers=b["headers"])
    assert resp.status == 403
    assert (await resp.json())["error"] == "not_joined"
    for path, body in (("done", {"status": "aligned"}), ("comments", {"content": "x"})):
        resp = await hub.post(f"{base}/{path}", headers=b["headers"], json=body)
        assert resp.status == 403, path
    await propose(hub, topic_id, b, expect=403)

    resp = await hub.post(f"{base}/join", headers=b["headers"])
    assert resp.status == 200
    assert (await resp.json())["alreadyJoined"] is False
    agents = await (await hub.get(f"{base}/agents")).json()
    assert {x["agentId"]: x["isActive"] for x in agents}[b["agentId"]] is True
    types = await event_types(hub, topic_id)
    assert types.count("pact.agent.left") == 1
    events = (await (await hub.get(f"{base}/events", params={"limit": "200"})).json())["events"]
    gone = next(e for e in events if e["type"] == "pact.agent.left")
    assert (gone["agentId"], gone["data"]) == (b["agentId"], {"role": "collaborator"})


async def test_leave_refusals_and_two_leaves_at_once(hub, register):
    topic_id, (a, b, c) = await open_topic(hub, register)
    base = f"/api/pact/{topic_id}"
    stranger = await register()
    resp = await hub.delete(f"{base}/leave", headers=stranger["headers"])
    assert resp.status == 403
    resp = await hub.delete(f"{base}/leave")
    assert resp.status == 401
    resp = await hub.delete(f"{NO_TOPIC}/leave", headers=b["headers"])
    assert resp.status == 404
    answers = await asyncio.gather(*(hub.delete(f"{base}/leave", headers=c["headers"]) for _ in range(2)))
    assert sorted(r.status for r in answers) == [200, 403]
    assert (await event_types(hub, topic_id)).count("pact.agent.left") == 1


async def test_a_leave_counts_the_topic_again(hub, register):
    """An aligned agent leaving drops below the aligned agents consensus needs: the topic opens again."""
    topic_id, (a, b, c) = await open_topic(hub, register)
    proposal = await propose(hub, topic_id, a)
    await vote(hub, topic_id, proposal["id"], b, "approve")
    await vote(hub, topic_id, proposal["id"], c, "approve")
    for agent in (a, b, c):
        await hub.post(f"/api/pact/{topic_id}/done", headers=agent["headers"], json={"status": "aligned"})
    assert await _status(hub, topic_id) == "consensus"
    left = await (await hub.delete(f"/api/pact/{topic_id}/leave", headers=c["headers"])).json()
    assert left["topicStatus"] == "open"
    assert await _status(hub, topic_id) == "open"
    assert "pact.consensus.broken" in await event_types(hub, topic_id)
    await hub.post(f"/api/pact/{topic_id}/join", headers=c["headers"])  # back, with its aligned signal
    await hub.post(f"/api/pact/{topic_id}/done", headers=c["headers"], json={"status": "aligned"})
    assert await _status(hub, topic_id) == "consensus"


# ---- poll (hub) -------------------------------------------------------------------------------------------


async def test_topic_poll_has_the_document_poll_shape_and_cursor(hub, register):
    topic_id, (a, b, c) = await open_topic(hub, register)
    base = f"/api/pact/{topic_id}"
    await hub.post(
        f"{base}/intents", headers=b["headers"], json={"sectionId": "sec:answer", "goal": "Sharpen"}
    )
    everything = (await (await hub.get(f"{base}/events", params={"limit": "200"})).json())["events"]

    resp = await hub.get(f"{base}/poll")
    assert resp.status == 200
    polled = await resp.json()
    assert polled["since"] == "evt_0"
    assert [x["eventId"] for x in polled["changes"]] == [e["eventId"] for e in everything]
    assert polled["cursor"] == everything[-1]["eventId"]
    assert polled["hasMore"] is False
    intent = polled["changes"][-1]
    assert (intent["type"], intent["agent"], intent["section"], intent["cursor"]) == (
        "pact.intent.declared",
        b["agentName"],
        "sec:answer",
        intent["eventId"],
    )
    # The record is the event list's, plus the three names poll clients read.
    assert {k: v for k, v in intent.items() if k not in ("agent", "section", "cursor")} == everything[-1]

    page = await (await hub.get(f"{base}/poll", params={"since": "evt_1", "limit": "2"})).json()
    assert [x["sequenceNumber"] for x in page["changes"]] == [2, 3]
    assert (page["cursor"], page["hasMore"]) == ("evt_3", True)
    page = await (await hub.get(f"{base}/poll", params={"since": "3", "limit": "200"})).json()
    assert page["changes"][0]["sequenceNumber"] == 4
    assert page["since"] == "3"
    quiet = await (await hub.get(f"{base}/poll", params={"since": polled["cursor"]})).json()
    assert (quiet["changes"], quiet["cursor"]) == ([], polled["cursor"])
    section = await (await hub.get(f"{base}/poll", params={"sectionId": "sec:answer"})).json()
    assert [x["type"] for x in section["changes"]] == ["pact.intent.declared"]

    for bad in ("evt_x", "-1", "evt_99999999999"):
        resp = await hub.get(f"{base}/poll", params={"since": bad})
        assert resp.status == 400, bad
        assert "since" in (await resp.json())["detail"]
    assert (await hub.get(f"{base}/poll", params={"limit": "0"})).status == 400
    assert (await hub.get(f"{NO_TOPIC}/poll")).status == 404


# ---- transcript (both apps) -----------------------------------------------------------------------------


def _check_transcript(body: dict[str, Any], records: list[dict[str, Any]]) -> None:
    assert [e["eventId"] for e in body["events"]] == [r["eventId"] for r in records]
    for entry, record in zip(body["events"], records, strict=True):
        assert (entry["type"], entry["agent"], entry["timestamp"]) == (
            record["type"],
            record["agentName"],
            record["createdAt"],
        )
        assert {k: v for k, v in entry.items() if k not in ("agent", "timestamp", "summary")} == record


async def test_topic_transcript(hub, register):
    topic_id, (a, b, c) = await open_topic(hub, register)
    base = f"/api/pact/{topic_id}"
    await hub.post(
        f"{base}/intents", headers=b["headers"], json={"sectionId": "sec:answer", "goal": "Sharpen it"}
    )
    await hub.post(
        f"{base}/done", headers=c["headers"], json={"status": "partial", "summary": "Read\n the sources"}
    )
    records = (await (await hub.get(f"{base}/events", params={"limit": "200"})).json())["events"]

    resp = await hub.get(f"{base}/transcript")
    assert resp.status == 200
    body = await resp.json()
    _check_transcript(body, records)
    assert body["latestEventId"] == records[-1]["eventId"]
    assert body["hasMore"] is False
    summaries = {e["type"]: e["summary"] for e in body["events"]}
    assert summaries["pact.intent.declared"] == "Sharpen it"
    assert summaries["pact.agent.done"] == "Read the sources"
    assert summaries["pact.topic.vote.approve"] is None  # a vote without a reason says nothing more

    # The CLI keeps latestEventId and sends it back as since: nothing new, the mark stays.
    again = await (await hub.get(f"{base}/transcript", params={"since": body["latestEventId"]})).json()
    assert (again["events"], again["latestEventId"], again["hasMore"]) == ([], body["latestEventId"], False)
    page = await (await hub.get(f"{base}/transcript", params={"since": "evt_2", "limit": "2"})).json()
    assert [e["sequenceNumber"] for e in page["events"]] == [3, 4]
    assert (page["latestEventId"], page["hasMore"]) == ("evt_4", True)
    for bad in ({"since": "x"}, {"limit": "1001"}, {"since": "evt_1", "limit": "0"}):
        assert (await hub.get(f"{base}/transcript", params=bad)).status == 400, bad
    assert (await hub.get(f"{NO_TOPIC}/transcript")).status == 404


async def test_document_transcript_reads_as_the_event_list(docs, runtime):
    alice = await make_key(runtime, org="Acme", name="alice-key")
    doc = await upload_ready(docs, alice, MD, "plan.md")
    base = f"/api/pact/{doc['id']}"
    await docs.post(f"{base}/join", headers=alice["headers"], json={"agentName": "Alice"})
    await docs.post(
        f"{base}/constraints",
        headers=alice["headers"],
        json={"sectionId": "sec:plan:budget", "boundary": "Never above 1M", "type": "must_not"},
    )
    records = (await (await docs.get(f"{base}/events", headers=alice["headers"])).json())["events"]
    for path in (f"{base}/transcript", f"/api/tap/{doc['id']}/transcript"):
        resp = await docs.get(path, headers=alice["headers"])
        assert resp.status == 200, await resp.text()
        body = await resp.json()
        _check_transcript(body, records)
        assert body["latestEventId"] == records[-1]["eventId"]
    assert body["events"][-1]["summary"] == "Never above 1M"
    empty = await (
        await docs.get(
            f"{base}/transcript", params={"since": "evt_0", "limit": "1"}, headers=alice["headers"]
        )
    ).json()
    assert (len(empty["events"]), empty["hasMore"]) == (1, True)

    # Who may read it: as the event list (tap:read, the document's organisation).
    assert (await docs.get(f"{base}/transcript")).status == 401
    writer = await make_key(runtime, org="Acme", scopes="documents:read")
    assert (await docs.get(f"{base}/transcript", headers=writer["headers"])).status == 403
    elsewhere = await make_key(runtime, org="Other")
    assert (await docs.get(f"{base}/transcript", headers=elsewhere["headers"])).status == 404
    reader = await make_key(runtime, org="Acme", scopes="tap:read")
    assert (await docs.get(f"{base}/transcript", headers=reader["headers"])).status == 200
    resp = await docs.get(f"{base}/transcript", params={"since": "evt_"}, headers=alice["headers"])
    assert resp.status == 400
    assert "since" in (await resp.json())["detail"]


# ---- agents as the CLI reads them (both apps) ------------------------------------------------------------


async def test_agents_on_the_pact_path_are_a_bare_array(docs, hub, runtime, register):
    alice = await make_key(runtime, org="Acme", name="alice-key")
    bob = await make_key(runtime, org="Acme", name="bob-key")
    doc = await upload_ready(docs, alice, MD, "plan.md")
    pact, tap = f"/api/pact/{doc['id']}", f"/api/tap/{doc['id']}"
    assert await (await docs.get(f"{pact}/agents", headers=alice["headers"])).json() == []
    await docs.post(f"{pact}/join", headers=alice["headers"], json={"agentName": "Alice"})
    await docs.post(f"{pact}/join", headers=bob["headers"], json={"agentName": "Bob", "role": "reviewer"})
    resp = await docs.get(f"{pact}/agents", headers=bob["headers"])
    assert resp.status == 200
    listed = await resp.json()
    assert [(x["agentName"], x["role"], x["isActive"]) for x in listed] == [
        ("Alice", "editor", True),
        ("Bob", "reviewer", True),
    ]
    assert all(x["agentId"] for x in listed)
    # The reference path keeps the spec's object, with the same agents.
    assert await (await docs.get(f"{tap}/agents", headers=bob["headers"])).json() == {"agents": listed}
    assert (await docs.get(f"{pact}/agents")).status == 401
    assert (
        await docs.get(f"{pact}/agents", headers=(await make_key(runtime, org="Other"))["headers"])
    ).status == 404

    topic_id, (a, b, c) = await open_topic(hub, register)
    resp = await hub.get(f"/api/pact/{topic_id}/agents")
    assert resp.status == 200
    listed = await resp.json()
    assert [(x["agentId"], x["role"], x["isActive"]) for x in listed] == [
        (a["agentId"], "creator", True),
        (b["agentId"], "collaborator", True),
        (c["agentId"], "collaborator", True),
    ]
    assert (await hub.get(f"{NO_TOPIC}/agents")).status == 404
