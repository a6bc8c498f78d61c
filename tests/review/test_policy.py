"""A person sets a topic's approval policy (PACT §9.2): switched to human-only by a reviewer, the topic's
pending proposals are put before the reviewers and the agents' approvals no longer merge them; the change is
on the topic's stream by an Individual and in the audit trail with the note; the same policy again changes
nothing; other roles, other keys, unknown topics and bad bodies are refused clearly."""

from __future__ import annotations

from tests.axiom_helpers import staff_headers
from tests.consensus_helpers import open_topic, propose
from tests.review.support import audit_ops

MISSING = "00000000-0000-4000-8000-000000000000"


async def set_policy(hub, headers, topic_id, expect=200, **body):
    resp = await hub.post(f"/api/review/topics/{topic_id}/approval-policy", headers=headers, json=body)
    assert resp.status == expect, await resp.text()
    return await resp.json()


async def test_a_reviewer_puts_a_topic_in_human_hands_and_back(hub, register, runtime, reviewer):
    topic_id, (author, b, c) = await open_topic(hub, register)
    first = await propose(hub, topic_id, author, newContent="First, now.")
    second = await propose(hub, topic_id, b, sectionId="sec:discussion", newContent="Second, now.")

    done = await set_policy(
        hub, reviewer, topic_id, approvalPolicy="human-only", note="The agents disagree on sources."
    )
    assert (done["topicId"], done["approvalPolicy"], done["previousPolicy"], done["changed"]) == (
        topic_id,
        "human-only",
        "concord-default",
        True,
    )
    assert done["setBy"] == "Rey Reviewer"
    # Both pending proposals now wait for a person, each as an escalation naming it.
    queue = await (await hub.get("/api/review/escalations?resource=topic", headers=reviewer)).json()
    assert sorted(e["proposal"]["proposalId"] for e in queue["escalations"]) == sorted(
        [first["id"], second["id"]]
    )
    # The agents no longer decide: their votes are refused, the proposal waits.
    resp = await hub.post(
        f"/api/pact/{topic_id}/proposals/{first['id']}/approve", headers=c["headers"], json={}
    )
    assert resp.status in (403, 409), await resp.text()
    assert (await resp.json())["error"] == "human_only"
    listed = await (await hub.get(f"/api/review/proposals/{first['id']}", headers=reviewer)).json()
    assert listed["status"] == "pending"

    body = await (await hub.get(f"/api/pact/{topic_id}/events", params={"limit": "200"})).json()
    [changed] = [e for e in body["events"] if e["type"] == "pact.policy.changed"]
    assert changed["actorKind"] == "Individual"
    ops = [op for op, _ in await audit_ops(runtime, topic_id)]
    assert "review.topic.approval_policy" in ops

    again = await set_policy(hub, reviewer, topic_id, approvalPolicy="human-only", note="Still.")
    assert (again["changed"], again["previousPolicy"]) == (False, "human-only")
    back = await set_policy(hub, reviewer, topic_id, approvalPolicy="concord-default", note="Settled.")
    assert (back["changed"], back["approvalPolicy"]) == (True, "concord-default")
    topic = await (await hub.get(f"/api/pact/topics/{topic_id}")).json()
    assert topic["approvalPolicy"] == "concord-default"


async def test_roles_keys_unknown_topics_and_bad_bodies_are_refused(hub, register, runtime, reviewer):
    topic_id, (author, _b, _c) = await open_topic(hub, register)
    url = f"/api/review/topics/{topic_id}/approval-policy"
    body = {"approvalPolicy": "human-only", "note": "x"}
    curator = await staff_headers(runtime, "Cora Curator", roles=("curator",))
    resp = await hub.post(url, headers=curator, json=body)
    assert resp.status == 403
    assert (await resp.json())["error"] == "insufficient_role"
    creator = await hub.post(url, headers=author["headers"], json=body)  # an agent's key, the creator's too
    assert creator.status == 401
    for bad, field in (
        ({"note": "x"}, "approvalPolicy"),
        ({"approvalPolicy": "anarchy", "note": "x"}, "approvalPolicy"),
        ({"approvalPolicy": "human-only"}, "note"),
        ({"approvalPolicy": "human-only", "note": "   "}, "note"),
        ({"approvalPolicy": "human-only", "note": "x" * 2001}, "note"),
    ):
        resp = await hub.post(url, headers=reviewer, json=bad)
        assert resp.status == 400, bad
        assert (await resp.json())["field"] == field, bad
    for unknown in (MISSING, "nope"):
        resp = await hub.post(f"/api/review/topics/{unknown}/approval-policy", headers=reviewer, json=body)
        assert resp.status == 404, unknown
        assert (await resp.json())["error"] == "topic_not_found"
    topic = await (await hub.get(f"/api/pact/topics/{topic_id}")).json()
    assert topic["approvalPolicy"] == "concord-default"  # nothing refused changed anything
