"""Reviewers decide proposals as people (PACT §9.2): document proposals paused by an objection come to them on
their own, and any open (pending or objected) proposal of a document or a topic may be decided, overriding the
agents' votes. The queue shows the section as it reads now beside the proposed text and who objected why;
approve merges through the consensus engine (the section changes), reject refuses; one decision per proposal,
also when two arrive at once or race the agents' own votes; each decision audited and on the resource's stream
for the agents; an escalation a policy raised for the decided proposal is closed."""

from __future__ import annotations

import asyncio

from tests.axiom_helpers import staff_headers
from tests.consensus_helpers import content, event_types, open_topic, propose, vote
from tests.review.support import (
    asked_about_a_human_only_proposal,
    audit_ops,
    doc_events,
    doc_object,
    doc_propose,
)
from tests.test_event_chain import assert_chained
from tests.test_event_fields import all_events

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
    assert (pending["status"], pending["resource"]) == ("pending", "document")


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
    for query, field in (
        ("status=merge", "status"),
        ("status=", "status"),
        ("resource=agent", "resource"),
        ("resourceId=nope", "resourceId"),
        ("limit=0", "limit"),
        ("offset=-1", "offset"),
    ):
        resp = await hub.get(f"/api/review/proposals?{query}", headers=reviewer)
        assert resp.status == 400, query
        assert (await resp.json())["field"] == field, query
    # Ids of no proposal: malformed, unknown.
    for unknown in ("nope", MISSING, "'; DROP TABLE proposals; --", "\u00e9" * 40):
        resp = await hub.post(f"/api/review/proposals/{unknown}/decide", headers=reviewer, json=body)
        assert resp.status == 404, unknown
        assert (await resp.json())["error"] == "proposal_not_found"
        assert (await hub.get(f"/api/review/proposals/{unknown}", headers=reviewer)).status == 404
    assert (await decide(hub, reviewer, pid, decision="approve", note="x" * 2000))["status"] == "approved"


async def test_a_reviewer_decides_pending_document_proposals_over_the_agents_votes(
    docs, hub, runtime, team, reviewer
):
    (alice, bob, _carol), _doc, base = team["keys"], team["doc"], team["base"]
    liked = await doc_propose(docs, alice, base, text="Liked by an agent.")
    resp = await docs.post(f"{base}/proposals/{liked}/approve", headers=bob["headers"], json={})
    assert resp.status == 200, await resp.text()
    rival = await doc_propose(docs, alice, base, text="A rival on the same section.")
    other = await doc_propose(docs, alice, base, section="sec:plan:risks", text="Fewer.")

    # `open` lists what a person may still decide: these three pending ones, oldest first.
    listed = await (await hub.get("/api/review/proposals?status=open", headers=reviewer)).json()
    assert [p["proposalId"] for p in listed["proposals"]] == [liked, rival, other]
    assert listed["proposals"][0]["votes"] == {"approve": 1, "reject": 0, "object": 0}

    # An agent approved it; the person rejects it all the same.
    refused = await decide(hub, reviewer, liked, decision="reject", note="Not what finance agreed.")
    assert (refused["status"], refused["statusBefore"], refused["currentText"]) == (
        "rejected",
        "pending",
        "Money.",
    )
    approved = await decide(hub, reviewer, other, decision="approve", note="Fine as it is.")
    assert (approved["status"], approved["statusBefore"], approved["currentText"]) == (
        "approved",
        "pending",
        "Fewer.",
    )
    resp = await docs.get(f"{base}/content", headers=alice["headers"])
    assert "## Risks\n\nFewer." in (await resp.json())["content"]
    # The agents can no longer vote on what a person decided.
    resp = await docs.post(f"{base}/proposals/{liked}/approve", headers=team["keys"][2]["headers"], json={})
    assert resp.status == 409, await resp.text()

    events = await doc_events(docs, alice, base)
    resolved = [e["data"] for e in events if e["type"] == "pact.human.resolved"]
    assert [(d["proposalId"], d["decision"]) for d in resolved] == [(liked, "reject"), (other, "approve")]
    assert [e["data"]["proposalId"] for e in events if e["type"] == "pact.proposal.merged"] == [other]
    assert [op for op, _ in await audit_ops(runtime, liked) if op.startswith("review.")] == [
        "review.proposal.reject"
    ]
    # The rival is still open: deciding one proposal decides no other on another section.
    still = await (await hub.get("/api/review/proposals?status=open", headers=reviewer)).json()
    assert [p["proposalId"] for p in still["proposals"]] == [rival]


async def test_a_reviewer_lists_and_decides_a_topics_proposals(hub, register, runtime, reviewer):
    topic_id, (author, b, _c) = await open_topic(hub, register)
    made = await propose(hub, topic_id, author, newContent="A person's pick.")
    await vote(hub, topic_id, made["id"], b, "reject", reason="unsourced")
    loser = await propose(hub, topic_id, author, sectionId="sec:answer", newContent="The other pick.")

    # Documents are the default; topics on request, or both.
    default = await (await hub.get("/api/review/proposals?status=open", headers=reviewer)).json()
    assert default["total"] == 0
    topics = await (
        await hub.get("/api/review/proposals?status=open&resource=topic", headers=reviewer)
    ).json()
    assert (topics["resource"], [p["proposalId"] for p in topics["proposals"]]) == (
        "topic",
        [made["id"], loser["id"]],
    )
    url = "/api/review/proposals?status=open&resource=all&resourceId="
    mine = await (await hub.get(url + topic_id, headers=reviewer)).json()
    assert (mine["resourceId"], mine["total"]) == (topic_id, 2)
    elsewhere = await (await hub.get(url + MISSING, headers=reviewer)).json()
    assert elsewhere["total"] == 0
    first = topics["proposals"][0]
    assert (first["resourceType"], first["resourceId"], first["documentId"], first["documentTitle"]) == (
        "topic",
        topic_id,
        None,
        None,
    )
    assert first["resourceTitle"].startswith("Topic ")
    assert (first["currentText"], first["proposedText"]) == ("The first answer.", "A person's pick.")
    assert first["votes"] == {"approve": 0, "reject": 1, "object": 0}
    one = await (await hub.get(f"/api/review/proposals/{made['id']}", headers=reviewer)).json()
    assert one["resourceType"] == "topic"

    merged = await decide(hub, reviewer, made["id"], decision="approve", note="Sourced in the thread.")
    assert (merged["status"], merged["statusBefore"], merged["resourceVersion"]) == ("merged", "pending", 2)
    assert "# Answer\n\nA person's pick." in (await content(hub, topic_id))["content"]
    # Merging superseded the rival on its section: nothing left to decide there.
    again = await hub.post(
        f"/api/review/proposals/{loser['id']}/decide",
        headers=reviewer,
        json={"decision": "approve", "note": "late"},
    )
    assert again.status == 409
    assert (await again.json())["proposalStatus"] == "superseded"
    both = await (await hub.get("/api/review/proposals?status=merged&resource=all", headers=reviewer)).json()
    assert [p["proposalId"] for p in both["proposals"]] == [made["id"]]

    types = await event_types(hub, topic_id)
    assert types.index("pact.proposal.merged") < types.index("pact.human.resolved")
    body = await (await hub.get(f"/api/pact/{topic_id}/events", params={"limit": "200"})).json()
    [resolved] = [e for e in body["events"] if e["type"] == "pact.human.resolved"]
    assert (resolved["actorKind"], resolved["data"]["proposalId"], resolved["data"]["note"]) == (
        "Individual",
        made["id"],
        "Sourced in the thread.",
    )


async def test_deciding_a_human_only_proposal_closes_the_escalation_its_policy_raised(
    hub, register, runtime, reviewer
):
    setup = await asked_about_a_human_only_proposal(hub, register, reviewer)
    topic_id, made, asked = setup["topic_id"], setup["proposal"], setup["asked"]
    raised = setup["raised"]["escalationId"]  # the agent's own question stays open for its answer

    await decide(hub, reviewer, made["id"], decision="reject", note="Not sourced.")
    open_now = await (await hub.get("/api/review/escalations", headers=reviewer)).json()
    assert [e["escalationId"] for e in open_now["escalations"]] == [asked]
    closed = await (await hub.get(f"/api/review/escalations/{raised}", headers=reviewer)).json()
    assert closed["status"] == "closed"
    assert "rejected by Rey Reviewer" in closed["answer"]["text"]
    resp = await hub.post(
        f"/api/review/escalations/{raised}/answer", headers=reviewer, json={"answer": "Too late."}
    )
    assert resp.status == 409
    assert (await resp.json())["error"] == "escalation_closed"
    assert "pact.escalation.closed" in await event_types(hub, topic_id)


async def test_a_reviewer_racing_the_agents_votes_makes_one_outcome(
    hub, register, runtime, reviewer, settings, monkeypatch
):
    """The person's rejection and the two approvals that would merge the proposal arrive at once: whichever
    locks first decides, the rest are told, and the topic and its event chain agree."""
    monkeypatch.setattr(settings, "rate_limit_register", 1000)
    for _ in range(3):
        topic_id, (author, b, c) = await open_topic(hub, register)
        made = await propose(hub, topic_id, author, newContent="Contested.")
        pid = made["id"]
        answers = await asyncio.gather(
            hub.post(
                f"/api/review/proposals/{pid}/decide",
                headers=reviewer,
                json={"decision": "reject", "note": "race"},
            ),
            hub.post(f"/api/pact/{topic_id}/proposals/{pid}/approve", headers=b["headers"], json={}),
            hub.post(f"/api/pact/{topic_id}/proposals/{pid}/approve", headers=c["headers"], json={}),
        )
        reviewer_status = answers[0].status
        assert reviewer_status in (200, 409), await answers[0].text()
        text = (await content(hub, topic_id))["content"]
        types = await event_types(hub, topic_id)
        if reviewer_status == 200:  # the person came first, or between the two approvals
            assert "Contested." not in text
            assert types.count("pact.human.resolved") == 1
            assert "pact.proposal.merged" not in types
        else:  # both approvals came first and merged it
            assert (await answers[0].json())["error"] == "already_decided"
            assert "# Answer\n\nContested." in text
            assert "pact.human.resolved" not in types
        assert types.count("pact.proposal.merged") + types.count("pact.proposal.rejected") == 1
        assert_chained(await all_events(hub, f"/api/pact/{topic_id}/events"))
