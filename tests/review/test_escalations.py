"""Reviewers answer what agents escalate: the queue with each question's context (the topic's title or
the document's name, the section as it reads now, the proposal in question), one answer per escalation
(also when two arrive at once), an optional decision on the proposal, each audited, on the resource's
stream for the agents and posted to the escalation webhook."""

from __future__ import annotations

import asyncio
from datetime import datetime

from tests.axiom_helpers import staff_headers
from tests.consensus_helpers import content, event_types, open_topic, propose
from tests.review.support import audit_ops, doc_escalate, doc_events, doc_object, doc_propose
from tests.waiting import eventually

MISSING = "00000000-0000-4000-8000-000000000000"


async def topic_escalation(hub, topic_id, agent, expect=201, **body):
    resp = await hub.post(f"/api/pact/{topic_id}/escalate", headers=agent["headers"], json=body)
    assert resp.status == expect, await resp.text()
    return await resp.json()


async def answer(hub, reviewer, escalation_id, expect=200, **body):
    resp = await hub.post(f"/api/review/escalations/{escalation_id}/answer", headers=reviewer, json=body)
    assert resp.status == expect, await resp.text()
    return await resp.json()


async def test_a_reviewer_answers_a_topic_escalation_and_decides_its_proposal(
    hub, runtime, register, reviewer
):
    topic_id, (a, b, _c) = await open_topic(hub, register)
    topic = await (await hub.get(f"/api/pact/{topic_id}")).json()
    question = await topic_escalation(
        hub, topic_id, b, message="Is the evidence current?", sectionId="sec:answer", priority="high"
    )
    made = await propose(hub, topic_id, a, newContent="A reviewed answer.")
    about = await topic_escalation(hub, topic_id, b, message="Merge this?", proposalId=made["id"])

    queue = await (await hub.get("/api/review/escalations", headers=reviewer)).json()
    assert (queue["status"], queue["source"], queue["total"]) == ("open", None, 2)
    first, second = queue["escalations"]
    assert first["escalationId"] == question["escalationId"]
    assert (first["source"], first["resourceId"], first["resourceTitle"]) == (
        "topic",
        topic_id,
        topic["title"],
    )
    assert (first["sectionId"], first["sectionText"]) == ("sec:answer", "The first answer.")
    assert (first["question"], first["priority"], first["status"]) == (
        "Is the evidence current?",
        "high",
        "open",
    )
    assert (first["raisedBy"], first["raisedByName"]) == (b["agentId"], b["agentName"])
    assert (first["proposal"], first["answer"]) == (None, None)
    assert first["url"].endswith(f"/api/review/escalations/{question['escalationId']}")
    assert second["proposal"]["proposalId"] == made["id"]
    assert (second["proposal"]["status"], second["proposal"]["newContent"]) == (
        "pending",
        "A reviewed answer.",
    )
    assert second["proposal"]["authorName"] == a["agentName"]

    # An answer without a decision; the agents read it on the topic's stream.
    done = await answer(hub, reviewer, question["escalationId"], answer="Yes, checked against the 2024 act.")
    assert (done["status"], done["decision"]) == ("answered", None)
    assert done["answer"]["text"] == "Yes, checked against the 2024 act."
    assert done["answer"]["answeredBy"] == "Rey Reviewer"
    assert done["answer"]["decision"] is None
    events = await (await hub.get(f"/api/pact/{topic_id}/events", params={"limit": "200"})).json()
    resolved = [e for e in events["events"] if e["type"] == "pact.human.resolved"]
    assert len(resolved) == 1
    assert resolved[0]["sequenceNumber"] == done["eventSequence"]
    assert resolved[0]["actorKind"] == "Individual"
    assert resolved[0]["agentName"] == "Rey Reviewer"
    assert resolved[0]["sectionId"] == "sec:answer"
    assert resolved[0]["data"]["escalationId"] == question["escalationId"]
    assert resolved[0]["data"]["answer"] == "Yes, checked against the 2024 act."
    assert [op for op, _ in await audit_ops(runtime, question["escalationId"])] == [
        "escalation.create",
        "review.escalation.answer",
    ]
    again = await hub.post(
        f"/api/review/escalations/{question['escalationId']}/answer", headers=reviewer, json={"answer": "No"}
    )
    assert again.status == 409
    assert (await again.json())["error"] == "already_answered"

    # An answer deciding the proposal it names: the topic's section changes.
    decided = await answer(
        hub, reviewer, about["escalationId"], answer="Sound; merge it.", decision="approve"
    )
    assert (decided["decision"], decided["proposal"]["status"]) == ("approve", "merged")
    assert "A reviewed answer." in (await content(hub, topic_id))["content"]
    assert decided["sectionText"] is None  # the escalation named no section
    types = await event_types(hub, topic_id)
    assert types.index("pact.proposal.merged") < len(types) - 1 - types[::-1].index("pact.human.resolved")
    one = await (await hub.get(f"/api/review/escalations/{about['escalationId']}", headers=reviewer)).json()
    assert one["answer"]["text"] == "Sound; merge it."
    assert one["answer"]["decision"] == "approve"  # kept with the answer, not only in its response
    answered = await (
        await hub.get("/api/review/escalations?status=answered&source=topic", headers=reviewer)
    ).json()
    assert {e["escalationId"] for e in answered["escalations"]} == {
        question["escalationId"],
        about["escalationId"],
    }
    assert (await (await hub.get("/api/review/escalations", headers=reviewer)).json())["total"] == 0


async def test_a_reviewer_answers_a_document_escalation_once(docs, hub, runtime, team, reviewer, webhook):
    (alice, bob, _carol), doc, base = team["keys"], team["doc"], team["base"]
    esc = await doc_escalate(docs, bob, base, question="Is the budget legal?", sectionId="sec:plan:budget")
    queue = await (await hub.get("/api/review/escalations?source=document", headers=reviewer)).json()
    assert queue["total"] == 1
    item = queue["escalations"][0]
    assert (item["resourceType"], item["resourceId"], item["resourceTitle"]) == (
        "document",
        doc["id"],
        doc["title"],
    )
    assert (item["sectionId"], item["sectionText"], item["priority"]) == (
        "sec:plan:budget",
        "Money.",
        "medium",
    )
    assert item["raisedByName"] == "agent1"
    assert (await (await hub.get("/api/review/escalations?source=topic", headers=reviewer)).json())[
        "total"
    ] == 0

    # Two reviewers answer at once: one answer is kept, the other is told.
    other = await staff_headers(runtime, "Second Reviewer", roles=("reviewer", "curator"))
    both = await asyncio.gather(
        *(
            hub.post(f"/api/review/escalations/{esc['escalationId']}/answer", headers=h, json={"answer": t})
            for h, t in ((reviewer, "Yes."), (other, "No."))
        )
    )
    assert sorted(r.status for r in both) == [200, 409]
    kept = next([await r.json() for r in both if r.status == 200].__iter__())
    refused = next([await r.json() for r in both if r.status == 409].__iter__())
    assert refused["error"] == "already_answered"
    resolved = [e for e in await doc_events(docs, alice, base) if e["type"] == "pact.human.resolved"]
    assert [e["data"]["answer"] for e in resolved] == [kept["answer"]["text"]]
    assert [op for op, _ in await audit_ops(runtime, esc["escalationId"])].count(
        "review.escalation.answer"
    ) == 1

    # The webhook hears of the escalation and of its answer: two jobs, so in either order (an answer given
    # at once can arrive first; the bodies carry their times, docs/review.md).
    async def both_posted():
        return len(webhook) >= 2 and webhook

    posted = {b["event"]: b["escalation"] for b in await eventually(both_posted)}
    assert sorted(posted) == ["escalation.answered", "escalation.created"]
    assert posted["escalation.created"]["escalationId"] == esc["escalationId"]
    assert posted["escalation.answered"]["answer"] == kept["answer"]["text"]
    assert posted["escalation.answered"]["status"] == "answered"
    answered_at = datetime.fromisoformat(posted["escalation.answered"]["answeredAt"])
    assert answered_at >= datetime.fromisoformat(posted["escalation.created"]["createdAt"])


async def test_an_answer_decides_an_objected_document_proposal(docs, hub, runtime, team, reviewer):
    (alice, bob, carol), _doc, base = team["keys"], team["doc"], team["base"]
    pid = await doc_propose(docs, alice, base, text="Less money.")
    await doc_object(docs, bob, base, pid)
    esc = await doc_escalate(docs, bob, base, question="Can we cut it?", proposalId=pid)
    plain = await doc_escalate(docs, carol, base, question="Who owns risks?", sectionId="sec:plan:risks")
    resp = await hub.post(
        f"/api/review/escalations/{plain['escalationId']}/answer",
        headers=reviewer,
        json={"answer": "Legal does", "decision": "approve"},
    )
    # A well-formed answer that the escalation's state refuses (it names no proposal): 409, as for a
    # proposal already decided below, not a 400 (issue 29: a schema-valid body is never a 400 for it).
    assert resp.status == 409
    body = await resp.json()
    assert (body["error"], body["field"]) == ("no_proposal", "decision")
    done = await answer(hub, reviewer, esc["escalationId"], answer="No: it stays.", decision="reject")
    assert done["proposal"]["status"] == "rejected"
    resp = await docs.get(f"{base}/content", headers=alice["headers"])
    assert "Money." in (await resp.json())["content"]
    # The objected proposal is decided: the reviewers' proposal queue no longer holds it.
    assert (await (await hub.get("/api/review/proposals", headers=reviewer)).json())["total"] == 0
    # A decision on a proposal already decided is refused, and the answer is not recorded.
    pid2 = await doc_propose(docs, alice, base, section="sec:plan:risks", text="Few.")
    esc2 = await doc_escalate(docs, bob, base, question="And this?", proposalId=pid2)
    await doc_object(docs, carol, base, pid2)
    decide = await hub.post(
        f"/api/review/proposals/{pid2}/decide", headers=reviewer, json={"decision": "reject", "note": "no"}
    )
    assert decide.status == 200
    resp = await hub.post(
        f"/api/review/escalations/{esc2['escalationId']}/answer",
        headers=reviewer,
        json={"answer": "yes", "decision": "approve"},
    )
    assert resp.status == 409
    assert (await resp.json())["error"] == "proposal_not_pending"
    still = await (await hub.get(f"/api/review/escalations/{esc2['escalationId']}", headers=reviewer)).json()
    assert (still["status"], still["answer"]) == ("open", None)


async def test_keys_roles_and_bad_input(hub, runtime, register, reviewer):
    topic_id, (a, _b, _c) = await open_topic(hub, register)
    esc = await topic_escalation(hub, topic_id, a, message="Help")
    url = f"/api/review/escalations/{esc['escalationId']}/answer"
    curator = await staff_headers(runtime, "Cora Curator", roles=("curator",))
    for method, path in (("GET", "/api/review/escalations"), ("POST", url)):
        resp = await hub.request(method, path, headers=curator, json={"answer": "x"})
        assert resp.status == 403, path
        assert (await resp.json())["error"] == "insufficient_role"
        resp = await hub.request(method, path, headers=a["headers"], json={"answer": "x"})
        assert resp.status == 401, path
        assert (await hub.request(method, path, json={"answer": "x"})).status == 401
    for body, field in (
        ({}, "answer"),
        ({"answer": ""}, "answer"),
        ({"answer": "x" * 5001}, "answer"),
        ({"answer": "ok", "decision": "maybe"}, "decision"),
    ):
        resp = await hub.post(url, headers=reviewer, json=body)
        assert resp.status == 400, body
        assert (await resp.json())["field"] == field, body
    for query in ("status=resolved", "source=wiki", "limit=0", "limit=201", "offset=-1"):
        assert (await hub.get(f"/api/review/escalations?{query}", headers=reviewer)).status == 400, query
    for bad in ("nope", MISSING):
        resp = await hub.post(f"/api/review/escalations/{bad}/answer", headers=reviewer, json={"answer": "x"})
        assert resp.status == 404
        assert (await resp.json())["error"] == "escalation_not_found"
        assert (await hub.get(f"/api/review/escalations/{bad}", headers=reviewer)).status == 404
    page = await (
        await hub.get("/api/review/escalations?status=all&limit=1&offset=0", headers=reviewer)
    ).json()
    assert (page["total"], len(page["escalations"]), page["limit"]) == (1, 1, 1)
    assert (await answer(hub, reviewer, esc["escalationId"], answer="x" * 5000))["status"] == "answered"


async def test_one_escalation_naming_a_section_lists_the_proposals_open_on_it(
    hub, runtime, register, reviewer
):
    """GET of one escalation names what is proposed on its section while it waits for an answer (a reviewer's
    tool judges it from the one answer): pending and objected proposals there, oldest first, with their votes
    and objections; not another section's, not decided ones; none once it is answered, and none for an
    escalation that names its proposal (its `proposal` says it)."""
    from tests.pages.support import section_escalation

    esc, ids = await section_escalation(hub, register)
    resp = await hub.get(f"/api/review/escalations/{esc}", headers=reviewer)
    assert resp.status == 200, await resp.text()
    body = await resp.json()
    assert body["proposal"] is None
    opened = body["openProposals"]
    assert [p["proposalId"] for p in opened] == [ids["short"], ids["longer"]]
    short, longer = opened
    assert short["summary"] == "Shorten it"
    assert short["newContent"] == "The answer, <short> & sweet."
    assert short["status"] == "pending"
    assert short["votes"] == {"approve": 0, "reject": 0, "object": 1}
    assert [o["reason"] for o in short["objections"]] == ["drops the <caveat> we agreed"]
    assert longer["objections"] == []
    assert short["sectionId"] == "sec:answer"
    assert short["authorName"].startswith("agent-")
    assert short["authorId"] != short["authorName"]  # the id and the name, as `proposal` gives them
    assert body["sectionText"] == "The first answer."  # the text they would replace
    queue = await (await hub.get("/api/review/escalations", headers=reviewer)).json()
    assert "openProposals" not in queue["escalations"][0]  # the queue stays one statement a page

    await answer(hub, reviewer, esc, answer="Add the caveat.")
    after = await (await hub.get(f"/api/review/escalations/{esc}", headers=reviewer)).json()
    assert after["openProposals"] == []

    topic_id = (await (await hub.get(f"/api/review/escalations/{esc}", headers=reviewer)).json())[
        "resourceId"
    ]
    agent = await register()
    await hub.post(f"/api/pact/{topic_id}/join", headers=agent["headers"])
    named = await topic_escalation(hub, topic_id, agent, message="This one?", proposalId=ids["longer"])
    got = await (await hub.get(f"/api/review/escalations/{named['escalationId']}", headers=reviewer)).json()
    assert got["proposal"]["proposalId"] == ids["longer"]
    assert got["openProposals"] == []
    shared = {key: value for key, value in longer.items() if key not in ("createdAt", "objections")}
    assert got["proposal"] == shared  # an open proposal has the shape of the proposal an escalation names
