"""The human layer of PACT Live on both apps (PACT v2.0.3 §7.1, §7.2): an agent asks a person a question
(`ask-human`, exactly as the PACT CLI's `ask` sends it), reads it pending, a person answers it (through the
resource's PACT path, the review API or the review desk's form) and the agent reads the answer; a question
nobody answers times out (at once to readers, recorded by the sweep); a person resolves an escalation
(`resolve`) and the agent reads the resolution (`escalations`). Bad input is a 4xx naming the problem; two
people answering at once leave one answer and a 409."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any

from tests.axiom_helpers import staff_headers
from tests.consensus_helpers import content, open_topic, propose, run_sweep
from tests.documents_support import make_key
from tests.pages.support import csrf_of, sign_in
from tests.people.support import person_headers
from tests.review import fixtures
from tests.review.support import audit_ops, doc_escalate, doc_events, doc_object, doc_propose
from tests.test_mcp import call, connect
from tests.test_query_plans import assert_index_served
from tests.waiting import eventually

# The review suite's fixtures: a reviewer's staff key, a document with a team of agents, the webhook.
reviewer, team, webhook = fixtures.reviewer, fixtures.team, fixtures.webhook

MISSING = "00000000-0000-4000-8000-000000000000"
SWEEP = "escalations.expire_questions"


async def a_person(runtime: Any, email: str, org: str = "Acme") -> dict[str, str]:
    """A signed-in person of `org` who may read and write on its documents' agent paths."""
    return await person_headers(runtime, org=org, scopes=["tap:read", "tap:write"], email=email)


def seconds_between(start: str, end: str) -> float:
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


async def ask(client: Any, base: str, headers: dict, expect: int = 201, **body: Any) -> dict[str, Any]:
    resp = await client.post(f"{base}/ask-human", headers=headers, json=body)
    assert resp.status == expect, await resp.text()
    return dict(await resp.json())


async def queries(client: Any, base: str, headers: dict, **params: str) -> dict[str, Any]:
    resp = await client.get(f"{base}/human-responses", headers=headers, params=params)
    assert resp.status == 200, await resp.text()
    return dict(await resp.json())


async def respond(
    client: Any, base: str, headers: dict, query_id: str, answer: str, expect: int = 200
) -> dict[str, Any]:
    resp = await client.post(
        f"{base}/human-responses/{query_id}/respond", headers=headers, json={"answer": answer}
    )
    assert resp.status == expect, await resp.text()
    return dict(await resp.json())


async def topic_events(hub: Any, topic_id: str) -> list[dict[str, Any]]:
    body = await (await hub.get(f"/api/pact/{topic_id}/events", params={"limit": "200"})).json()
    return list(body["events"])


# ---- topics ------------------------------------------------------------------------------------------


async def test_a_topic_question_is_answered_by_a_reviewer_and_read_by_its_agent(
    hub, runtime, register, reviewer, webhook
):
    topic_id, (creator, asker, other) = await open_topic(hub, register)
    base = f"/api/pact/{topic_id}"
    asked = await ask(
        hub,
        base,
        asker["headers"],
        question="Is the 2024 figure final?",
        sectionId="sec:answer",
        context="The commission publishes in June.",
        timeoutSeconds=600,
    )
    assert (asked["status"], asked["resourceType"], asked["resourceId"]) == ("pending", "topic", topic_id)
    assert (asked["agentId"], asked["agentName"]) == (asker["agentId"], asker["agentName"])
    assert (asked["sectionId"], asked["context"]) == ("sec:answer", "The commission publishes in June.")
    assert asked["timeoutSeconds"] == 600
    assert seconds_between(asked["askedAt"], asked["timeoutAt"]) == 600
    assert asked["response"] is None
    query_id = asked["queryId"]

    # The asker reads it pending; another agent sees none of it; the topic's creator sees everyone's.
    mine = await queries(hub, base, asker["headers"])
    assert (mine["scope"], mine["total"], mine["queries"][0]["status"]) == ("own", 1, "pending")
    theirs = await queries(hub, base, other["headers"])
    assert (theirs["scope"], theirs["total"]) == ("own", 0)
    assert (await queries(hub, base, creator["headers"]))["scope"] == "all"
    assert (await queries(hub, base, creator["headers"]))["total"] == 1

    # It waits in the reviewers' queue with its context and the section as it reads now.
    queue = await (await hub.get("/api/review/escalations", headers=reviewer)).json()
    item = next(e for e in queue["escalations"] if e["escalationId"] == query_id)
    assert (item["kind"], item["status"], item["question"]) == (
        "question",
        "open",
        "Is the 2024 figure final?",
    )
    assert (item["context"], item["sectionText"]) == (
        "The commission publishes in June.",
        "The first answer.",
    )
    assert item["timeoutAt"] == asked["timeoutAt"]

    # An agent cannot answer (the route takes a reviewer's staff key); the reviewer does, once.
    refused = await hub.post(
        f"{base}/human-responses/{query_id}/respond", headers=other["headers"], json={"answer": "Yes"}
    )
    assert refused.status == 401
    answered = await respond(hub, base, reviewer, query_id, "Final: gazetted on 1 July.")
    assert answered["status"] == "answered"
    assert answered["response"]["answer"] == "Final: gazetted on 1 July."
    assert answered["response"]["responderName"] == "Rey Reviewer"
    again = await respond(hub, base, reviewer, query_id, "No.", expect=409)
    assert again["error"] == "already_answered"

    # The agent reads the answer directly, and on the topic's stream.
    read = (await queries(hub, base, asker["headers"], status="answered"))["queries"]
    assert [q["response"]["answer"] for q in read] == ["Final: gazetted on 1 July."]
    assert (await queries(hub, base, asker["headers"], status="pending"))["total"] == 0
    events = await topic_events(hub, topic_id)
    asked_event = next(e for e in events if e["type"] == "pact.human.asked")
    assert asked_event["data"] == {
        "queryId": query_id,
        "agentId": asker["agentId"],
        "agentName": asker["agentName"],
        "question": "Is the 2024 figure final?",
        "sectionId": "sec:answer",
        "context": "The commission publishes in June.",
        "timeoutAt": asked["timeoutAt"],
    }
    assert (asked_event["actorKind"], asked_event["correlationId"]) == ("AiAgent", query_id)
    responded = [e for e in events if e["type"] == "pact.human.responded"]
    assert len(responded) == 1
    assert responded[0]["actorKind"] == "Individual"
    assert responded[0]["inResponseTo"] == query_id
    assert responded[0]["data"]["answer"] == "Final: gazetted on 1 July."
    assert responded[0]["data"]["agentId"] == asker["agentId"]
    assert responded[0]["data"]["responderName"] == "Rey Reviewer"
    assert "pact.human.resolved" not in [e["type"] for e in events]  # a question is responded to
    assert [op for op, _ in await audit_ops(runtime, query_id)] == ["human.ask", "human.respond"]
    # A question is not an escalation: the agent's escalations stay empty.
    escalations = await (await hub.get(f"{base}/escalations", headers=asker["headers"])).json()
    assert escalations["total"] == 0

    # The reviewers' webhook hears of the question (with its kind and context) and of the answer.
    async def both_posted():
        return len(webhook) >= 2 and webhook

    posted = {b["event"]: b["escalation"] for b in await eventually(both_posted)}
    assert posted["escalation.created"]["kind"] == "question"
    assert posted["escalation.created"]["context"] == "The commission publishes in June."
    assert posted["escalation.answered"]["answer"] == "Final: gazetted on 1 July."


async def test_the_pact_cli_body_is_taken_as_sent(hub, register):
    """`pact ask` sends null for what it was not given, 60 s unless told, and may add authorization_proof."""
    topic_id, (_creator, asker, _other) = await open_topic(hub, register)
    asked = await ask(
        hub,
        f"/api/pact/{topic_id}",
        asker["headers"],
        question="Which year?",
        sectionId=None,
        context=None,
        timeoutSeconds=60,
        authorization_proof={"kind": "ignored"},
    )
    assert (asked["sectionId"], asked["context"], asked["timeoutSeconds"]) == (None, None, 60)
    assert seconds_between(asked["askedAt"], asked["timeoutAt"]) == 60
    default = await ask(hub, f"/api/pact/{topic_id}", asker["headers"], question="And the month?")
    assert default["timeoutSeconds"] == 60


async def test_a_question_nobody_answers_times_out(
    hub, runtime, register, reviewer, clock, settings, monkeypatch
):
    topic_id, (creator, asker, _other) = await open_topic(hub, register)
    base = f"/api/pact/{topic_id}"
    # A wait longer than the operator allows is cut to it, and the answer says so.
    monkeypatch.setattr(settings, "human_query_max_seconds", 30)
    capped = await ask(hub, base, asker["headers"], question="Long wait?", timeoutSeconds=3600)
    assert capped["timeoutSeconds"] == 30
    assert seconds_between(capped["askedAt"], capped["timeoutAt"]) == 30
    short = await ask(hub, base, asker["headers"], question="Quick?", timeoutSeconds=10)
    assert await run_sweep(runtime, SWEEP) == 0  # nothing is due yet

    clock.advance(timedelta(seconds=11))
    # Readers see it timed out at once, before any sweep has recorded it.
    statuses = {q["queryId"]: q["status"] for q in (await queries(hub, base, asker["headers"]))["queries"]}
    assert statuses == {short["queryId"]: "timed-out", capped["queryId"]: "pending"}
    assert [
        q["queryId"] for q in (await queries(hub, base, asker["headers"], status="timed-out"))["queries"]
    ] == [short["queryId"]]
    open_queue = await (await hub.get("/api/review/escalations", headers=reviewer)).json()
    assert [e["escalationId"] for e in open_queue["escalations"]] == [capped["queryId"]]
    timed_out = await (await hub.get("/api/review/escalations?status=timed-out", headers=reviewer)).json()
    assert [(e["escalationId"], e["status"]) for e in timed_out["escalations"]] == [
        (short["queryId"], "timed-out")
    ]
    late = await respond(hub, base, reviewer, short["queryId"], "Yes", expect=409)
    assert (late["error"], late["timeoutAt"]) == ("timed_out", short["timeoutAt"])
    late_desk = await hub.post(
        f"/api/review/escalations/{short['queryId']}/answer", headers=reviewer, json={"answer": "Yes"}
    )
    assert late_desk.status == 409

    # The sweep records it once, on the topic's stream for the waiting agent.
    assert await run_sweep(runtime, SWEEP) == 1
    assert await run_sweep(runtime, SWEEP) == 0
    expired = [e for e in await topic_events(hub, topic_id) if e["type"] == "pact.human.timed-out"]
    assert len(expired) == 1
    assert expired[0]["actorKind"] == "System"
    assert expired[0]["data"]["queryId"] == short["queryId"]
    assert expired[0]["data"]["agentId"] == asker["agentId"]
    assert (await queries(hub, base, creator["headers"], status="timed-out"))["total"] == 1

    clock.advance(timedelta(seconds=20))
    assert await run_sweep(runtime, SWEEP) == 1
    assert (await queries(hub, base, asker["headers"], status="pending"))["total"] == 0


async def test_bad_input_is_refused_naming_the_problem(hub, docs, runtime, register, reviewer, team):
    topic_id, (_creator, asker, _other) = await open_topic(hub, register)
    base = f"/api/pact/{topic_id}"
    for body, field in (
        ({}, "question"),
        ({"question": "   "}, "question"),
        ({"question": 5}, "question"),
        ({"question": "Q?", "timeoutSeconds": 5}, "timeoutSeconds"),
        ({"question": "Q?", "timeoutSeconds": 86_401}, "timeoutSeconds"),
        ({"question": "Q?", "timeoutSeconds": "60"}, "timeoutSeconds"),
        ({"question": "Q?", "context": "x" * 10_001}, "context"),
    ):
        refused = await ask(hub, base, asker["headers"], expect=400, **body)
        assert refused["field"] == field, (body, refused)
    missing_section = await ask(hub, base, asker["headers"], expect=404, question="Q?", sectionId="sec:nope")
    assert missing_section["error"] == "section_not_found"
    assert (await ask(hub, f"/api/pact/{MISSING}", asker["headers"], expect=404, question="Q?"))[
        "error"
    ] == "topic_not_found"
    unauthenticated = await hub.post(f"{base}/ask-human", json={"question": "Q?"})
    assert unauthenticated.status == 401
    for status in ("waiting", ""):
        bad = await hub.get(f"{base}/human-responses", headers=asker["headers"], params={"status": status})
        assert bad.status == 400, status

    # Answers: an unknown question, another topic's, an escalation (not a question), an empty answer.
    asked = await ask(hub, base, asker["headers"], question="Q?")
    assert (await respond(hub, base, reviewer, MISSING, "A", expect=404))["error"] == "question_not_found"
    assert (await respond(hub, base, reviewer, "not-an-id", "A", expect=404))["error"] == "question_not_found"
    other_topic, _agents = await open_topic(hub, register)
    assert (await respond(hub, f"/api/pact/{other_topic}", reviewer, asked["queryId"], "A", expect=404))[
        "error"
    ] == "question_not_found"
    escalated = await hub.post(f"{base}/escalate", headers=asker["headers"], json={"question": "Escalated"})
    esc_id = (await escalated.json())["escalationId"]
    assert (await respond(hub, base, reviewer, esc_id, "A", expect=404))["error"] == "question_not_found"
    assert (await respond(hub, base, reviewer, asked["queryId"], " ", expect=400))["field"] == "answer"
    curator = await staff_headers(runtime, "Cora Curator", roles=("curator",))
    assert (await respond(hub, base, curator, asked["queryId"], "A", expect=403))[
        "error"
    ] == "insufficient_role"

    # Resolve: a question is answered with respond; an unknown escalation; a blank decision.
    as_question = await hub.post(
        f"{base}/resolve", headers=reviewer, json={"escalationId": asked["queryId"], "decision": "No"}
    )
    assert as_question.status == 409
    assert (await as_question.json())["error"] == "is_a_question"
    unknown = await hub.post(
        f"{base}/resolve", headers=reviewer, json={"escalationId": MISSING, "decision": "No"}
    )
    assert (unknown.status, (await unknown.json())["error"]) == (404, "escalation_not_found")
    blank = await hub.post(f"{base}/resolve", headers=reviewer, json={"escalationId": esc_id, "decision": ""})
    assert (blank.status, (await blank.json())["field"]) == (400, "decision")
    bad_choice = await hub.post(
        f"{base}/resolve",
        headers=reviewer,
        json={"escalationId": esc_id, "decision": "Yes", "proposalDecision": "merge"},
    )
    assert (bad_choice.status, (await bad_choice.json())["field"]) == (400, "proposalDecision")
    no_proposal = await hub.post(
        f"{base}/resolve",
        headers=reviewer,
        json={"escalationId": esc_id, "decision": "Yes", "proposalDecision": "approve"},
    )
    assert (no_proposal.status, (await no_proposal.json())["error"]) == (409, "no_proposal")

    # Documents: an agent must have joined; a section must exist; a key of another organisation sees nothing.
    (alice, _bob, _carol), doc_base = team["keys"], team["base"]
    outsider = await make_key(runtime, org="Acme", name="outsider")
    not_joined = await ask(docs, doc_base, outsider["headers"], expect=403, question="Q?")
    assert not_joined["code"] == "agent.not_joined"
    no_section = await ask(docs, doc_base, alice["headers"], expect=404, question="Q?", sectionId="sec:nope")
    assert no_section["code"] == "section.not_found"
    elsewhere = await make_key(runtime, org="Elsewhere")
    assert (await docs.get(f"{doc_base}/human-responses", headers=elsewhere["headers"])).status == 404
    reader = await make_key(runtime, org="Acme", scopes="tap:read", name="reader")
    assert (await ask(docs, doc_base, reader["headers"], expect=403, question="Q?"))[
        "code"
    ] == "insufficient_scope"


async def test_two_reviewers_answering_at_once_leave_one_answer(hub, runtime, register, reviewer):
    topic_id, (_creator, asker, _other) = await open_topic(hub, register)
    base = f"/api/pact/{topic_id}"
    second = await staff_headers(runtime, "Second Reviewer", roles=("reviewer",))
    for round_ in range(3):
        asked = await ask(hub, base, asker["headers"], question=f"Round {round_}?")
        both = await asyncio.gather(
            *(
                hub.post(f"{base}/human-responses/{asked['queryId']}/respond", headers=h, json={"answer": t})
                for h, t in ((reviewer, "Yes."), (second, "No."))
            )
        )
        assert sorted(r.status for r in both) == [200, 409]
        kept = next([await r.json() for r in both if r.status == 200].__iter__())
        refused = next([await r.json() for r in both if r.status == 409].__iter__())
        assert refused["error"] == "already_answered"
        read = (await queries(hub, base, asker["headers"]))["queries"][0]
        assert read["response"]["answer"] == kept["response"]["answer"]
        assert [op for op, _ in await audit_ops(runtime, asked["queryId"])].count("human.respond") == 1
    responded = [e for e in await topic_events(hub, topic_id) if e["type"] == "pact.human.responded"]
    assert len(responded) == 3


async def test_a_reviewer_resolves_a_topic_escalation_and_its_agent_reads_the_resolution(
    hub, runtime, register, reviewer
):
    topic_id, (author, asker, other) = await open_topic(hub, register)
    base = f"/api/pact/{topic_id}"
    made = await propose(hub, topic_id, author, newContent="A reviewed answer.")
    resp = await hub.post(
        f"{base}/escalate",
        headers=asker["headers"],
        json={"question": "Merge this?", "proposalId": made["id"], "sectionId": "sec:answer"},
    )
    esc = await resp.json()
    mine = await (await hub.get(f"{base}/escalations", headers=asker["headers"])).json()
    assert (mine["scope"], mine["total"]) == ("own", 1)
    assert (mine["escalations"][0]["status"], mine["escalations"][0]["resolution"]) == ("open", None)
    assert (await (await hub.get(f"{base}/escalations", headers=other["headers"])).json())["total"] == 0

    for body, status, code in (
        ({"sectionId": "sec:discussion"}, 409, "section_mismatch"),
        ({"resolvedProposalIds": [MISSING], "proposalDecision": "approve"}, 409, "proposal_mismatch"),
        ({"resolvedProposalIds": [made["id"]]}, 400, None),
    ):
        refused = await hub.post(
            f"{base}/resolve",
            headers=reviewer,
            json={"escalationId": esc["escalationId"], "decision": "Go", **body},
        )
        assert refused.status == status, await refused.text()
        if code:
            assert (await refused.json())["error"] == code
        else:
            assert (await refused.json())["field"] == "proposalDecision"

    resolved = await hub.post(
        f"{base}/resolve",
        headers=reviewer,
        json={
            "escalationId": esc["escalationId"],
            "decision": "Merge it: the source checks out.",
            "sectionId": "sec:answer",
            "isOverride": True,
            "resolvedProposalIds": [made["id"].upper()],
            "proposalDecision": "approve",
        },
    )
    assert resolved.status == 200, await resolved.text()
    out = await resolved.json()
    assert (out["resolutionId"], out["escalationId"]) == (esc["escalationId"], esc["escalationId"])
    assert (out["decision"], out["isOverride"], out["proposalDecision"]) == (
        "Merge it: the source checks out.",
        True,
        "approve",
    )
    assert (out["proposalStatus"], out["resolvedProposalIds"], out["resolvedBy"]) == (
        "merged",
        [made["id"]],
        "Rey Reviewer",
    )
    assert "A reviewed answer." in (await content(hub, topic_id))["content"]
    events = await topic_events(hub, topic_id)
    resolution = next(e for e in events if e["type"] == "pact.human.resolved")
    assert resolution["sequenceNumber"] == out["eventSequence"]
    assert (resolution["data"]["resolutionId"], resolution["data"]["isOverride"]) == (
        esc["escalationId"],
        True,
    )
    assert resolution["data"]["resolvedProposalIds"] == [made["id"]]
    assert resolution["sectionId"] == "sec:answer"

    read = (await (await hub.get(f"{base}/escalations?status=answered", headers=asker["headers"])).json())[
        "escalations"
    ]
    assert len(read) == 1
    assert read[0]["resolution"]["decision"] == "Merge it: the source checks out."
    assert (read[0]["resolution"]["proposalDecision"], read[0]["resolution"]["isOverride"]) == (
        "approve",
        True,
    )
    assert (await (await hub.get(f"{base}/escalations?status=open", headers=asker["headers"])).json())[
        "total"
    ] == 0
    creator_view = await (await hub.get(f"{base}/escalations", headers=author["headers"])).json()
    assert (creator_view["scope"], creator_view["total"]) == ("all", 1)
    # The review desk's API shows the same one answer; a second resolution is refused.
    one = await (await hub.get(f"/api/review/escalations/{esc['escalationId']}", headers=reviewer)).json()
    assert (one["status"], one["answer"]["decision"]) == ("answered", "approve")
    twice = await hub.post(
        f"{base}/resolve", headers=reviewer, json={"escalationId": esc["escalationId"], "decision": "No"}
    )
    assert (twice.status, (await twice.json())["error"]) == (409, "already_answered")


async def test_an_author_reads_the_escalations_a_policy_raised_for_its_proposals(hub, register, reviewer):
    """Under human-only each proposal raises an escalation in its author's name: the author reads it, a
    reviewer resolves one through resolve (merging the proposal), and one whose proposal the author withdrew
    reads closed, with the reason."""
    topic_id, (author, _b, _c) = await open_topic(hub, register, approvalPolicy="human-only")
    base = f"/api/pact/{topic_id}"
    kept = await propose(hub, topic_id, author, newContent="Decided by a person.")
    dropped = await propose(hub, topic_id, author, sectionId="sec:discussion", newContent="Never mind.")
    mine = (await (await hub.get(f"{base}/escalations", headers=author["headers"])).json())["escalations"]
    by_proposal = {e["proposalId"]: e for e in mine}
    assert {e["status"] for e in mine} == {"open"}
    assert set(by_proposal) == {kept["id"], dropped["id"]}

    resolved = await hub.post(
        f"{base}/resolve",
        headers=reviewer,
        json={
            "escalationId": by_proposal[kept["id"]]["escalationId"],
            "decision": "Approved: sourced.",
            "proposalDecision": "approve",
        },
    )
    assert resolved.status == 200, await resolved.text()
    assert (await resolved.json())["proposalStatus"] == "merged"
    withdrawn = await hub.delete(f"{base}/proposals/{dropped['id']}", headers=author["headers"])
    assert withdrawn.status == 200, await withdrawn.text()

    after = (await (await hub.get(f"{base}/escalations", headers=author["headers"])).json())["escalations"]
    states = {e["proposalId"]: (e["status"], e["resolution"]["proposalDecision"]) for e in after}
    assert states == {kept["id"]: ("answered", "approve"), dropped["id"]: ("closed", None)}
    closed = next(e for e in after if e["status"] == "closed")
    assert "withdrawn" in closed["resolution"]["decision"]
    only_closed = await (await hub.get(f"{base}/escalations?status=closed", headers=author["headers"])).json()
    assert [e["proposalId"] for e in only_closed["escalations"]] == [dropped["id"]]
    late = await hub.post(
        f"{base}/resolve",
        headers=reviewer,
        json={"escalationId": closed["escalationId"], "decision": "Too late"},
    )
    assert (late.status, (await late.json())["error"]) == (409, "escalation_closed")


# ---- documents -----------------------------------------------------------------------------------------


async def test_a_document_question_is_answered_by_a_person_of_the_organisation(
    docs, hub, runtime, team, reviewer
):
    (alice, bob, carol), doc, base = team["keys"], team["doc"], team["base"]
    pact = f"/api/pact/{doc['id']}"  # the PACT CLI's path: the same operations
    asked = await ask(
        docs,
        pact,
        bob["headers"],
        question="Can the budget rise 5%?",
        sectionId="sec:plan:budget",
        context="Grant terms, clause 4.",
        timeoutSeconds=300,
    )
    assert (asked["resourceType"], asked["resourceId"], asked["agentName"]) == (
        "document",
        doc["id"],
        "agent1",
    )
    assert (asked["status"], asked["timeoutSeconds"]) == ("pending", 300)

    # bob reads his own; carol none; alice (the owner's key) everyone's.
    assert (await queries(docs, base, bob["headers"]))["total"] == 1
    assert (await queries(docs, base, carol["headers"]))["total"] == 0
    owner = await queries(docs, pact, alice["headers"])
    assert (owner["scope"], owner["total"]) == ("all", 1)

    # A service key answers for no one; a person of the organisation does.
    key_answer = await respond(docs, base, alice["headers"], asked["queryId"], "Yes", expect=403)
    assert key_answer["code"] == "person_required"
    person = await a_person(runtime, "pat@acme.test")
    seen = await queries(docs, base, person)
    assert (seen["scope"], seen["total"]) == ("all", 1)
    answered = await respond(docs, pact, person, asked["queryId"], "Yes, up to 5%.")
    assert (answered["status"], answered["response"]["responderName"]) == ("answered", "pat@acme.test")
    read = (await queries(docs, base, bob["headers"]))["queries"][0]
    assert read["response"]["answer"] == "Yes, up to 5%."
    responded = [e for e in await doc_events(docs, bob, base) if e["type"] == "pact.human.responded"]
    assert [(e["actorKind"], e["data"]["answer"]) for e in responded] == [("Individual", "Yes, up to 5%.")]
    # A person of another organisation does not see the document.
    stranger = await a_person(runtime, "x@else.test", org="Elsewhere")
    assert (await respond(docs, base, stranger, asked["queryId"], "No", expect=404))[
        "code"
    ] == "document_not_found"

    # The hub's review desk answers the document's questions too; bob reads that answer the same way.
    second = await ask(docs, base, bob["headers"], question="And the risks section?")
    queue = await (await hub.get("/api/review/escalations?source=document", headers=reviewer)).json()
    assert [(e["escalationId"], e["kind"]) for e in queue["escalations"]] == [(second["queryId"], "question")]
    desk = await hub.post(
        f"/api/review/escalations/{second['queryId']}/answer",
        headers=reviewer,
        json={"answer": "Leave them."},
    )
    assert desk.status == 200, await desk.text()
    latest = (await queries(docs, base, bob["headers"]))["queries"][0]  # newest first
    assert (latest["queryId"], latest["status"]) == (second["queryId"], "answered")
    assert (latest["response"]["answer"], latest["response"]["responderName"]) == (
        "Leave them.",
        "Rey Reviewer",
    )

    # A person who joined as an agent and asked does not answer their own question.
    joined = await docs.post(f"{base}/join", headers=person, json={"agentName": "Pat", "role": "editor"})
    assert joined.status == 201, await joined.text()
    own = await ask(docs, base, person, question="Mine?")
    assert (await respond(docs, base, person, own["queryId"], "Yes", expect=403))["code"] == "own_question"
    assert (await respond(docs, base, person, asked["queryId"], "Again", expect=409))[
        "code"
    ] == "already_answered"


async def test_two_people_answering_a_document_question_at_once_leave_one_answer(docs, runtime, team):
    (_alice, bob, _carol), base = team["keys"], team["base"]
    people = [await a_person(runtime, f"p{i}@acme.test") for i in range(2)]
    asked = await ask(docs, base, bob["headers"], question="Who decides?")
    both = await asyncio.gather(
        *(
            docs.post(f"{base}/human-responses/{asked['queryId']}/respond", headers=h, json={"answer": t})
            for h, t in zip(people, ("Me.", "Not me."), strict=True)
        )
    )
    assert sorted(r.status for r in both) == [200, 409]
    responded = [e for e in await doc_events(docs, bob, base) if e["type"] == "pact.human.responded"]
    assert len(responded) == 1


async def test_a_person_resolves_a_document_escalation_and_decides_its_proposal(docs, runtime, team):
    (alice, bob, _carol), base = team["keys"], team["base"]
    pid = await doc_propose(docs, alice, base, text="Half the money.")
    await doc_object(docs, bob, base, pid, reason="too deep a cut")
    esc = await doc_escalate(docs, bob, base, question="Cut or not?", proposalId=pid)
    mine = await (await docs.get(f"{base}/escalations", headers=bob["headers"])).json()
    assert [(e["escalationId"], e["status"], e["proposalId"]) for e in mine["escalations"]] == [
        (esc["escalationId"], "open", pid)
    ]
    key_resolves = await docs.post(
        f"{base}/resolve",
        headers=alice["headers"],
        json={"escalationId": esc["escalationId"], "decision": "Cut"},
    )
    assert (key_resolves.status, (await key_resolves.json())["code"]) == (403, "person_required")
    person = await a_person(runtime, "lee@acme.test")
    resp = await docs.post(
        f"/api/pact/{team['doc']['id']}/resolve",
        headers=person,
        json={
            "escalationId": esc["escalationId"],
            "decision": "Keep the money.",
            "proposalDecision": "reject",
        },
    )
    assert resp.status == 200, await resp.text()
    out = await resp.json()
    assert (out["proposalStatus"], out["isOverride"], out["resolvedBy"]) == (
        "rejected",
        False,
        "lee@acme.test",
    )
    read = (await (await docs.get(f"{base}/escalations", headers=bob["headers"])).json())["escalations"][0]
    assert (read["status"], read["resolution"]["decision"], read["resolution"]["proposalDecision"]) == (
        "answered",
        "Keep the money.",
        "reject",
    )
    resolved = [e for e in await doc_events(docs, bob, base) if e["type"] == "pact.human.resolved"]
    assert [(e["data"]["escalationId"], e["actorKind"]) for e in resolved] == [
        (esc["escalationId"], "Individual")
    ]


async def test_an_agent_asks_and_reads_the_answer_through_mcp(docs, runtime, team):
    (_alice, bob, _carol), doc, base = team["keys"], team["doc"], team["base"]
    async with connect(docs, bob) as client:
        asked = await call(
            client,
            "pact_ask_human",
            documentId=doc["id"],
            question="Is the risk list complete?",
            sectionId="sec:plan:risks",
            context="Audit next week.",
            timeoutSeconds=120,
        )
        assert (asked["status"], asked["timeoutSeconds"], asked["agentName"]) == ("pending", 120, "agent1")
        person = await a_person(runtime, "mo@acme.test")
        await respond(docs, base, person, asked["queryId"], "Add supplier risk.")
        read = await call(client, "pact_human_responses", documentId=doc["id"], status="answered")
        assert (read["scope"], read["total"]) == ("own", 1)
        assert read["queries"][0]["response"]["answer"] == "Add supplier risk."
        refused = await client.call_tool(
            "pact_ask_human", {"documentId": doc["id"], "question": "Q?", "timeoutSeconds": 1}
        )
        assert refused.is_error


# ---- the review desk's page --------------------------------------------------------------------------


async def test_a_reviewer_answers_a_question_on_the_review_desk_page(hub, runtime, register):
    topic_id, (_creator, asker, _other) = await open_topic(hub, register)
    base = f"/api/pact/{topic_id}"
    asked = await ask(
        hub,
        base,
        asker["headers"],
        question="Does <this> apply?",
        sectionId="sec:answer",
        context="Clause & more",
    )
    headers = await staff_headers(runtime, "Desk Reviewer", roles=("reviewer",))
    csrf = await sign_in(hub, headers["Authorization"].removeprefix("Bearer "))
    queue = await (await hub.get("/review/")).text()
    assert "Does &lt;this&gt; apply?" in queue
    assert f"/review/escalations/{asked['queryId']}" in queue
    page = await hub.get(f"/review/escalations/{asked['queryId']}")
    html = await page.text()
    assert page.status == 200
    assert "Question from an agent" in html
    assert "Clause &amp; more" in html  # the context, escaped
    assert "The first answer." in html  # the section as it reads now
    assert "Answer by" in html

    # Without the form token the answer is refused; with it, it is the one answer.
    refused = await hub.post(
        f"/review/escalations/{asked['queryId']}/answer", data={"answer": "No token"}, allow_redirects=False
    )
    assert refused.status == 403
    sent = await hub.post(
        f"/review/escalations/{asked['queryId']}/answer",
        data={"answer": "Yes, from July.", "csrf": csrf_of(html)},
        allow_redirects=False,
    )
    assert sent.status == 303, await sent.text()
    assert csrf == csrf_of(html)
    read = (await queries(hub, base, asker["headers"]))["queries"][0]
    assert (read["status"], read["response"]["answer"], read["response"]["responderName"]) == (
        "answered",
        "Yes, from July.",
        "Desk Reviewer",
    )
    answered_page = await (await hub.get(f"/review/escalations/{asked['queryId']}")).text()
    assert "Yes, from July." in answered_page


# ---- the lists read their index in order ----------------------------------------------------------------


async def test_the_agents_lists_read_their_index_in_order(hub, docs, runtime, register, team):
    topic_id, (creator, asker, _other) = await open_topic(hub, register)
    base = f"/api/pact/{topic_id}"
    for n in range(3):
        await ask(hub, base, asker["headers"], question=f"Question {n}?")
        await hub.post(f"{base}/escalate", headers=asker["headers"], json={"question": f"Escalation {n}?"})
    for url, headers in (
        (f"{base}/human-responses?limit=1&offset=1", asker["headers"]),  # the asker's own
        (f"{base}/human-responses?status=pending&limit=1&offset=1", creator["headers"]),  # everyone's
        (f"{base}/escalations?limit=1&offset=1", asker["headers"]),
    ):
        await assert_index_served(runtime, hub, url, headers, "escalations")
    (_alice, bob, _carol), doc_base = team["keys"], team["base"]
    for n in range(2):
        await ask(docs, doc_base, bob["headers"], question=f"Doc question {n}?")
    await assert_index_served(
        runtime, docs, f"{doc_base}/human-responses?limit=1&offset=1", bob["headers"], "escalations"
    )
