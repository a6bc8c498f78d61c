"""PACT done signals and completions (v2.0.3 §7.1 `POST /done`, `GET /completions`) on both apps, through one
implementation (domain/consensus/completions.py): a joined agent signals aligned, dissenting, partial or
abstained (the hub's `abstain` too), its next signal replaces it, and the completions list one per agent."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.consensus_helpers import balance, event_types, open_topic
from tests.documents_support import make_key, upload_ready

MD = b"# Plan\n\nIntro.\n\n## Budget\n\nMoney.\n"


async def _events(client: Any, path: str, headers: dict[str, str] | None = None) -> list[dict[str, Any]]:
    resp = await client.get(f"{path}/events", params={"limit": "200"}, headers=headers or {})
    assert resp.status == 200, await resp.text()
    return (await resp.json())["events"]


# ---- hub -----------------------------------------------------------------------------------------------


async def test_topic_done_takes_the_pact_statuses_and_lists_completions(hub, register):
    topic_id, (a, b, c) = await open_topic(hub, register)
    base = f"/api/pact/{topic_id}"
    before = await balance(hub, b)
    resp = await hub.post(
        f"{base}/done", headers=b["headers"], json={"status": "partial", "summary": " Half "}
    )
    assert resp.status == 200, await resp.text()
    first = await resp.json()
    assert (first["status"], first["previousStatus"], first["changed"]) == ("partial", None, True)
    assert (first["agentId"], first["agentName"], first["summary"]) == (b["agentId"], b["agentName"], "Half")
    assert first["topicId"] == topic_id
    assert first["topicStatus"] == "open"
    assert first["completedAt"]
    for status in ("abstained", "abstain", "dissenting", "aligned"):
        resp = await hub.post(f"{base}/done", headers=b["headers"], json={"status": status})
        assert resp.status == 200, (status, await resp.text())
        assert (await resp.json())["status"] == status
    assert await balance(hub, b) == before + 2  # the aligned reward, once
    await hub.post(f"{base}/done", headers=c["headers"], json={"status": "dissenting", "summary": "No."})

    resp = await hub.get(f"{base}/completions")
    assert resp.status == 200
    listed = (await resp.json())["completions"]
    assert [(x["agentName"], x["status"], x["summary"], x["isActive"]) for x in listed] == [
        (b["agentName"], "aligned", None, True),  # a signal without a summary clears the earlier one
        (c["agentName"], "dissenting", "No.", True),
    ]
    assert listed[0]["agentId"] == b["agentId"]

    types = [e["type"] for e in await _events(hub, base)]
    assert types.count("pact.agent.done") == 2
    assert types.count("pact.agent.vote-changed") == 4
    done = next(e for e in await _events(hub, base) if e["type"] == "pact.agent.done")
    assert done["data"] == {"status": "partial", "previousStatus": None, "summary": "Half"}
    assert done["agentId"] == b["agentId"]


async def test_topic_done_refusals(hub, register):
    topic_id, (a, b, c) = await open_topic(hub, register)
    base = f"/api/pact/{topic_id}"
    stranger = await register()
    resp = await hub.post(f"{base}/done", headers=stranger["headers"], json={"status": "aligned"})
    assert resp.status == 403
    assert (await resp.json())["error"] == "not_joined"
    for bad in (
        {"status": "blocked"},
        {"status": "ALIGNED"},
        {},
        {"status": "aligned", "summary": "x" * 2001},
    ):
        resp = await hub.post(f"{base}/done", headers=b["headers"], json=bad)
        assert resp.status == 400, bad
        body = await resp.json()
        assert ("summary" if "summary" in bad else "status") in body["detail"], body
    resp = await hub.post(f"{base}/done", json={"status": "aligned"})
    assert resp.status == 401
    resp = await hub.post(
        "/api/pact/00000000-0000-4000-8000-000000000000/done",
        headers=b["headers"],
        json={"status": "aligned"},
    )
    assert resp.status == 404
    resp = await hub.get("/api/pact/00000000-0000-4000-8000-000000000000/completions")
    assert resp.status == 404
    assert (await (await hub.get(f"{base}/completions")).json()) == {"completions": []}


async def test_two_done_signals_of_one_agent_at_once_on_a_topic_are_taken_in_turn(hub, register):
    topic_id, (a, b, c) = await open_topic(hub, register)
    base = f"/api/pact/{topic_id}"
    answers = await asyncio.gather(
        *(
            hub.post(f"{base}/done", headers=b["headers"], json={"status": s})
            for s in ("aligned", "dissenting")
        )
    )
    bodies = [await r.json() for r in answers]
    assert [r.status for r in answers] == [200, 200], bodies
    firsts = [x for x in bodies if x["previousStatus"] is None]
    seconds = [x for x in bodies if x["previousStatus"] is not None]
    assert (len(firsts), len(seconds)) == (1, 1), bodies
    assert seconds[0]["previousStatus"] == firsts[0]["status"]
    listed = (await (await hub.get(f"{base}/completions")).json())["completions"]
    assert [(x["agentId"], x["status"]) for x in listed] == [(b["agentId"], seconds[0]["status"])]
    types = await event_types(hub, topic_id)
    assert (types.count("pact.agent.done"), types.count("pact.agent.vote-changed")) == (1, 1)


# ---- documents -----------------------------------------------------------------------------------------


async def _document(docs: Any, runtime: Any) -> tuple[dict, dict, dict]:
    alice = await make_key(runtime, org="Acme", name="alice-key")
    bob = await make_key(runtime, org="Acme", name="bob-key")
    doc = await upload_ready(docs, alice, MD, "plan.md")
    return alice, bob, doc


async def test_document_done_and_completions_on_both_path_forms(docs, runtime):
    alice, bob, doc = await _document(docs, runtime)
    base = f"/api/pact/{doc['id']}"
    joined = await (
        await docs.post(f"{base}/join", headers=alice["headers"], json={"agentName": "Alice"})
    ).json()
    await docs.post(f"{base}/join", headers=bob["headers"], json={"agentName": "Bob", "role": "observer"})

    # The PACT CLI's body: {status, summary}, and authorization_proof, which is not read.
    resp = await docs.post(
        f"{base}/done",
        headers=alice["headers"],
        json={"status": "aligned", "summary": "Review complete", "authorization_proof": {"kind": "none"}},
    )
    assert resp.status == 200, await resp.text()
    first = await resp.json()
    assert first["documentId"] == doc["id"]
    assert (first["agentId"], first["agentName"]) == (joined["agentId"], "Alice")
    assert (first["status"], first["previousStatus"], first["changed"]) == ("aligned", None, True)
    assert first["summary"] == "Review complete"
    again = await (
        await docs.post(f"/api/tap/{doc['id']}/done", headers=alice["headers"], json={"status": "dissenting"})
    ).json()
    assert (again["status"], again["previousStatus"], again["changed"], again["summary"]) == (
        "dissenting",
        "aligned",
        True,
        None,
    )
    same = await (
        await docs.post(f"{base}/done", headers=alice["headers"], json={"status": "dissenting"})
    ).json()
    assert (same["previousStatus"], same["changed"]) == ("dissenting", False)
    # An observer may say where it stands too.
    resp = await docs.post(f"{base}/done", headers=bob["headers"], json={"status": "abstained"})
    assert resp.status == 200, await resp.text()

    for path in (f"{base}/completions", f"/api/tap/{doc['id']}/completions"):
        resp = await docs.get(path, headers=bob["headers"])
        assert resp.status == 200, await resp.text()
        listed = (await resp.json())["completions"]
        assert [(x["agentName"], x["status"], x["isActive"]) for x in listed] == [
            ("Alice", "dissenting", True),
            ("Bob", "abstained", True),
        ]

    events = await _events(docs, base, alice["headers"])
    done = [e for e in events if e["type"] in ("pact.agent.done", "pact.agent.vote-changed")]
    assert [(e["type"], e["agentName"], e["data"]["status"]) for e in done] == [
        ("pact.agent.done", "Alice", "aligned"),
        ("pact.agent.vote-changed", "Alice", "dissenting"),
        ("pact.agent.vote-changed", "Alice", "dissenting"),
        ("pact.agent.done", "Bob", "abstained"),
    ]
    assert done[0]["agentId"] == joined["agentId"]
    assert done[0]["entityType"] == "pact-document"

    # An agent that left keeps its completion, listed as inactive; joining again is a new agent.
    await docs.delete(f"{base}/leave", headers=alice["headers"])
    listed = (await (await docs.get(f"{base}/completions", headers=bob["headers"])).json())["completions"]
    assert [(x["agentName"], x["isActive"]) for x in listed] == [("Alice", False), ("Bob", True)]
    await docs.post(f"{base}/join", headers=alice["headers"], json={"agentName": "Alice"})
    first_again = await (
        await docs.post(f"{base}/done", headers=alice["headers"], json={"status": "partial"})
    ).json()
    assert first_again["previousStatus"] is None


async def test_document_done_refusals(docs, runtime):
    alice, bob, doc = await _document(docs, runtime)
    base = f"/api/pact/{doc['id']}"
    resp = await docs.post(f"{base}/done", headers=bob["headers"], json={"status": "aligned"})
    assert resp.status == 403
    assert (await resp.json())["code"] == "agent.not_joined"
    await docs.post(f"{base}/join", headers=alice["headers"], json={"agentName": "Alice"})
    for bad in (
        {"status": "blocked"},
        {"status": "withdrawn"},
        {},
        {"status": 1},
        {"status": "aligned", "summary": 5},
    ):
        resp = await docs.post(f"{base}/done", headers=alice["headers"], json=bad)
        assert resp.status == 400, bad
        body = await resp.json()
        assert ("summary" if "summary" in bad else "status") in body["detail"], body
    resp = await docs.post(f"{base}/done", headers=alice["headers"])
    assert resp.status == 400
    resp = await docs.post(f"{base}/done", json={"status": "aligned"})
    assert resp.status == 401
    reader = await make_key(runtime, org="Acme", scopes="tap:read")
    resp = await docs.post(f"{base}/done", headers=reader["headers"], json={"status": "aligned"})
    assert resp.status == 403
    assert (await resp.json())["code"] == "insufficient_scope"
    assert (await (await docs.get(f"{base}/completions", headers=reader["headers"])).json()) == {
        "completions": []
    }
    elsewhere = await make_key(runtime, org="Other")
    resp = await docs.post(f"{base}/done", headers=elsewhere["headers"], json={"status": "aligned"})
    assert resp.status == 404
    resp = await docs.get(f"{base}/completions", headers=elsewhere["headers"])
    assert resp.status == 404
    commenter = await make_key(runtime, org="Acme", scopes="comments:read")
    resp = await docs.get(f"{base}/completions", headers=commenter["headers"])
    assert resp.status == 403


async def test_two_done_signals_at_once_on_a_document_leave_one_completion_per_agent(docs, runtime):
    alice, bob, doc = await _document(docs, runtime)
    base = f"/api/pact/{doc['id']}"
    for key, name in ((alice, "Alice"), (bob, "Bob")):
        await docs.post(f"{base}/join", headers=key["headers"], json={"agentName": name})

    # One agent, two signals at once: taken one after the other under the document's lock.
    answers = await asyncio.gather(
        *(
            docs.post(f"{base}/done", headers=alice["headers"], json={"status": s})
            for s in ("aligned", "partial")
        )
    )
    bodies = [await r.json() for r in answers]
    assert [r.status for r in answers] == [200, 200], bodies
    firsts = [x for x in bodies if x["previousStatus"] is None]
    seconds = [x for x in bodies if x["previousStatus"] is not None]
    assert (len(firsts), len(seconds)) == (1, 1), bodies
    assert seconds[0]["previousStatus"] == firsts[0]["status"]

    # Two agents at once: each its own first signal.
    answers = await asyncio.gather(
        *(
            docs.post(f"{base}/done", headers=k["headers"], json={"status": "aligned"})
            for k in (bob, bob, alice)
        )
    )
    assert [r.status for r in answers] == [200, 200, 200]

    listed = (await (await docs.get(f"{base}/completions", headers=alice["headers"])).json())["completions"]
    assert sorted((x["agentName"], x["status"]) for x in listed) == [("Alice", "aligned"), ("Bob", "aligned")]
    events = await _events(docs, base, alice["headers"])
    by_agent = {
        name: [e["type"] for e in events if e["agentName"] == name and e["type"].startswith("pact.agent.")]
        for name in ("Alice", "Bob")
    }
    assert by_agent["Alice"] == [
        "pact.agent.joined",
        "pact.agent.done",
        "pact.agent.vote-changed",
        "pact.agent.vote-changed",
    ]
    assert by_agent["Bob"] == ["pact.agent.joined", "pact.agent.done", "pact.agent.vote-changed"]
