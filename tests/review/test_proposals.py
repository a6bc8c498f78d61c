"""Reviewers decide document proposals paused by an objection: the queue shows the section as it reads
now beside the proposed text and who objected why; approve merges through the consensus engine (the
section changes), reject refuses; one decision per proposal, also when two arrive at once; each decision
audited and on the document's stream for the agents."""

from __future__ import annotations

import asyncio

from tests.axiom_helpers import staff_headers
from tests.consensus_helpers import open_topic, propose
from tests.review.support import audit_ops, doc_events, doc_object, doc_propose

MISSING = "00000000-0000-4000-8000-000000000000"


async def decide(hub, reviewer, proposal_id, expect=200, **body):
    resp = await hub.post(f"/api/review/proposals/{proposal_id}/decide", headers=reviewer, json=body)
    assert resp.status == expect, await resp.text()
    return await resp.json()


async def test_a_reviewer_approves_one_objected_proposal_and_rejects_another(
    docs, hub, runtime, team, reviewer
):
    (alice, bob, carol), doc, base = team["keys"], team["doc"], team["base"]
    kept = await doc_propose(docs, alice, base, text="More money.")
    await doc_object(docs, bob, base, kept, reason="needs sign-off")
    refused = await doc_propose(docs, alice, base, section="sec:plan:risks", text="None.")
    await doc_object(docs, carol, base, refused, reason="wishful")
    await doc_propose(docs, alice, base, section="sec:plan", text="Intro, shorter.")  # pending: not queued

    queue = await (await hub.get("/api/review/proposals", headers=reviewer)).json()
    assert (queue["status"], queue["total"]) == ("objected", 2)
    first = queue["proposals"][0]
    assert first["proposalId"] == kept
    assert (first["documentId"], first["documentTitle"], first["sectionId"]) == (
        doc["id"],
        doc["title"],
        "sec:plan:budget",
    )
    assert (first["currentText"], first["proposedText"]) == ("Money.", "More money.")
    assert first["authorName"] == "agent0"
    assert [(o["agentName"], o["reason"]) for o in first["objections"]] == [("agent1", "needs sign-off")]
    assert first["votes"] == {"approve": 0, "reject": 0, "object": 1}
    assert first["url"].endswith(f"/api/review/proposals/{kept}")
    one = await (await hub.get(f"/api/review/proposals/{refused}", headers=reviewer)).json()
    assert (one["currentText"], one["proposedText"]) == ("Many.", "None.")

    approved = await decide(hub, reviewer, kept, decision="approve", note="Signed off by finance.")
    assert (approved["status"], approved["decision"], approved["decidedBy"]) == (
        "approved",
        "approve",
        "Rey Reviewer",
    )
    assert approved["currentText"] == "More money."
    assert approved["documentVersion"] == 2
    resp = await docs.get(f"{base}/content", headers=alice["headers"])
    assert "## Budget\n\nMore money.\n\n## Risks" in (await resp.json())["content"]

    rejected = await decide(hub, reviewer, refused, decision="reject", note="Risks remain.")
    assert (rejected["status"], rejected["currentText"]) == ("rejected", "Many.")

    # The agents read both decisions on the document's stream; the audit trail holds them.
    events = await doc_events(docs, alice, base)
    merged = [e for e in events if e["type"] == "pact.proposal.merged"]
    assert [e["data"]["proposalId"] for e in merged] == [kept]
    resolved = [e for e in events if e["type"] == "pact.human.resolved"]
    assert [(e["data"]["proposalId"], e["data"]["decision"], e["data"]["note"]) for e in resolved] == [
        (kept, "approve", "Signed off by finance."),
        (refused, "reject", "Risks remain."),
    ]
    assert {e["actorKind"] for e in resolved} == {"Individual"}
    assert resolved[0]["sequenceNumber"] == approved["eventSequence"]
    assert any(e["type"] == "pact.proposal.rejected" and e["data"].get("byHuman") for e in events)
    ops = [op for op, _ in await audit_ops(runtime, kept)]
    assert "review.proposal.approve" in ops
    assert "review.proposal.reject" in [op for op, _ in await audit_ops(runtime, refused)]

    # A second decision is refused; the queue is empty; decided ones stay readable by status.
    again = await hub.post(
        f"/api/review/proposals/{kept}/decide", headers=reviewer, json={"decision": "reject", "note": "oops"}
    )
    assert again.status == 409
    assert (await again.json())["error"] == "already_decided"
    assert (await (await hub.get("/api/review/proposals", headers=reviewer)).json())["total"] == 0
    listed = await (await hub.get("/api/review/proposals?status=approved", headers=reviewer)).json()
    assert [p["proposalId"] for p in listed["proposals"]] == [kept]
    pending = await (await hub.get("/api/review/proposals?status=pending", headers=reviewer)).json()
    assert pending["total"] == 1
    pid = pending["proposals"][0]["proposalId"]
    resp = await hub.post(
        f"/api/review/proposals/{pid}/decide", headers=reviewer, json={"decision": "approve", "note": "x"}
    )
    assert resp.status == 409
    assert (await resp.json())["error"] == "not_objected"


async def test_two_decisions_at_once_make_one(docs, hub, runtime, team, reviewer):
    (alice, bob, _carol), _doc, base = team["keys"], team["doc"], team["base"]
    pid = await doc_propose(docs, alice, base, text="Double money.")
    await doc_object(docs, bob, base, pid)
    other = await staff_headers(runtime, "Second Reviewer", roles=("reviewer",))
    answers = await asyncio.gather(
        *(
            hub.post(f"/api/review/proposals/{pid}/decide", headers=h, json={"decision": d, "note": "race"})
            for h, d in ((reviewer, "approve"), (other, "reject"), (reviewer, "approve"))
        )
    )
    assert sorted(r.status for r in answers) == [200, 409, 409]
    events = await doc_events(docs, alice, base)
    assert len([e for e in events if e["type"] == "pact.human.resolved"]) == 1
    ops = [op for op, _ in await audit_ops(runtime, pid)]
    assert len([op for op in ops if op.startswith("review.proposal.")]) == 1
    assert ops.count("proposal.decide") == 1


async def test_keys_roles_and_bad_input(docs, hub, runtime, register, team, reviewer):
    (alice, bob, _carol), _doc, base = team["keys"], team["doc"], team["base"]
    pid = await doc_propose(docs, alice, base)
    await doc_object(docs, bob, base, pid)
    url = f"/api/review/proposals/{pid}/decide"
    body = {"decision": "approve", "note": "ok"}
    curator = await staff_headers(runtime, "Cora Curator", roles=("curator",))
    agent = await register()
    for method, path in (
        ("GET", "/api/review/proposals"),
        ("GET", f"/api/review/proposals/{pid}"),
        ("POST", url),
    ):
        resp = await hub.request(method, path, headers=curator, json=body)
        assert resp.status == 403, path
        assert (await resp.json())["error"] == "insufficient_role"
        assert (await hub.request(method, path, headers=agent["headers"], json=body)).status == 401
        assert (await hub.request(method, path, headers=alice["headers"], json=body)).status == 401
    for bad, field in (
        ({"note": "x"}, "decision"),
        ({"decision": "merge", "note": "x"}, "decision"),
        ({"decision": "approve"}, "note"),
        ({"decision": "approve", "note": ""}, "note"),
        ({"decision": "approve", "note": "x" * 2001}, "note"),
    ):
        resp = await hub.post(url, headers=reviewer, json=bad)
        assert resp.status == 400, bad
        assert (await resp.json())["field"] == field, bad
    for query in ("status=merged", "limit=0", "offset=-1"):
        assert (await hub.get(f"/api/review/proposals?{query}", headers=reviewer)).status == 400, query
    # Ids that are no document proposal: malformed, unknown, a topic's proposal.
    topic_id, (a, _b, _c) = await open_topic(hub, register)
    topic_proposal = (await propose(hub, topic_id, a))["id"]
    for unknown in ("nope", MISSING, topic_proposal):
        resp = await hub.post(f"/api/review/proposals/{unknown}/decide", headers=reviewer, json=body)
        assert resp.status == 404, unknown
        assert (await resp.json())["error"] == "proposal_not_found"
        assert (await hub.get(f"/api/review/proposals/{unknown}", headers=reviewer)).status == 404
    assert (await decide(hub, reviewer, pid, decision="approve", note="x" * 2000))["status"] == "approved"
