"""Approval policies on topics (PACT v2.0.3 §5, §10.4, §10.5, §10.7), over HTTP: set at creation, shown on
reads, changed by the topic's creator; each policy's merges, rejections, objections and TTL; the
self-approval flag; salience 10 holding a silent merge back until the abstention deadline; human-only
proposals decided by a reviewer. The default policy is the seed's rule, tested unchanged elsewhere."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from tests.axiom_helpers import staff_headers
from tests.consensus_helpers import content, event_types, open_topic, propose, run_sweep, vote
from tests.pages.support import sign_in, staff_key

SWEEP = "topics.expire_proposals"


@pytest.fixture
async def reviewer(runtime: Any) -> dict[str, str]:
    return await staff_headers(runtime, "Rey Reviewer", roles=("reviewer",))


async def policy_topic(hub: Any, register: Any, policy: str, n: int = 3, **fields: Any) -> tuple[str, list]:
    topic_id, agents = await open_topic(hub, register, n_agents=n, approvalPolicy=policy, **fields)
    return topic_id, agents


async def one(hub: Any, topic_id: str, proposal_id: str) -> dict[str, Any]:
    resp = await hub.get(f"/api/pact/{topic_id}/proposals/{proposal_id}")
    assert resp.status == 200, await resp.text()
    return dict(await resp.json())


async def patch(hub: Any, topic_id: str, agent: dict, expect: int = 200, **body: Any) -> dict[str, Any]:
    resp = await hub.patch(f"/api/pact/topics/{topic_id}", headers=agent["headers"], json=body)
    assert resp.status == expect, await resp.text()
    return dict(await resp.json())


async def salience(hub: Any, topic_id: str, agent: dict, score: int, section: str = "sec:answer") -> None:
    resp = await hub.post(
        f"/api/pact/{topic_id}/salience",
        headers=agent["headers"],
        json={"sectionId": section, "score": score},
    )
    assert resp.status == 200, await resp.text()


async def events(hub: Any, topic_id: str) -> list[dict[str, Any]]:
    body = await (await hub.get(f"/api/pact/{topic_id}/events", params={"limit": "200"})).json()
    return list(body["events"])


async def test_a_topic_carries_its_policy_and_only_its_creator_changes_it(hub, register):
    topic_id, (creator, other, _c) = await open_topic(hub, register)
    topic = await (await hub.get(f"/api/pact/topics/{topic_id}")).json()
    assert (topic["approvalPolicy"], topic["allowSelfApproval"]) == ("concord-default", False)
    made, _agents = await policy_topic(hub, register, "majority", allowSelfApproval=True)
    listed = await (await hub.get("/api/pact/topics", params={"limit": "200"})).json()
    shown = {t["id"]: (t["approvalPolicy"], t["allowSelfApproval"]) for t in listed["topics"]}
    assert shown[made] == ("majority", True)
    assert shown[topic_id] == ("concord-default", False)

    refused = await patch(hub, topic_id, other, 403, approvalPolicy="single")
    assert refused["error"] == "not_owner"
    changed = await patch(hub, topic_id, creator, approvalPolicy="objection-based")
    assert (changed["approvalPolicy"], changed["allowSelfApproval"]) == ("objection-based", False)
    flag = await hub.patch(
        f"/api/pact/{topic_id}", headers=creator["headers"], json={"allowSelfApproval": True}
    )
    assert flag.status == 200, await flag.text()
    assert ((await flag.json())["approvalPolicy"], (await flag.json())["allowSelfApproval"]) == (
        "objection-based",
        True,
    )
    assert (await patch(hub, topic_id, creator))["approvalPolicy"] == "objection-based"  # nothing to change
    changes = [e for e in await events(hub, topic_id) if e["type"] == "pact.policy.changed"]
    assert [(e["data"]["previousApprovalPolicy"], e["data"]["approvalPolicy"]) for e in changes] == [
        ("concord-default", "objection-based"),
        ("objection-based", "objection-based"),
    ]
    assert changes[1]["data"]["allowSelfApproval"] is True

    for bad, field in (
        ({"approvalPolicy": "quorum"}, "approvalPolicy"),
        ({"approvalPolicy": "Single"}, "approvalPolicy"),
        ({"allowSelfApproval": "yes"}, "allowSelfApproval"),
        ({"allowSelfApproval": 1}, "allowSelfApproval"),
    ):
        body = await patch(hub, topic_id, creator, 400, **bad)
        assert body["field"] == field, bad
        create = {
            "title": "Refused policy topic",
            "content": "# Answer\n\nSome text.\n",
            "tier": "empirical",
            **bad,
        }
        resp = await hub.post("/api/pact/topics", headers=creator["headers"], json=create)
        assert resp.status == 400, bad
        assert (await resp.json())["field"] == field
    missing = await patch(hub, "00000000-0000-4000-8000-000000000000", creator, 404, approvalPolicy="auto")
    assert missing["error"] == "topic_not_found"
    assert (await hub.patch(f"/api/pact/topics/{topic_id}", json={"approvalPolicy": "auto"})).status == 401


async def test_a_silent_proposal_merges_at_its_ttl_under_objection_based_and_never_under_the_default(
    hub, register, runtime, clock
):
    silent, (a, _b, _c) = await policy_topic(hub, register, "objection-based")
    default, (d, _e, _f) = await open_topic(hub, register)
    consented = await propose(hub, silent, a, newContent="Nobody objected.", ttl=60)
    ignored = await propose(hub, default, d, newContent="Nobody approved.", ttl=60)
    assert consented["status"] == ignored["status"] == "pending"
    assert await run_sweep(runtime, SWEEP) == 0  # not due yet
    clock.advance(timedelta(seconds=61))
    assert await run_sweep(runtime, SWEEP) == 2
    assert (await one(hub, silent, consented["id"]))["status"] == "merged"
    assert "Nobody objected." in (await content(hub, silent))["content"]
    merged = [e for e in await events(hub, silent) if e["type"] == "pact.proposal.auto-merged"]
    assert [(e["data"]["proposalId"], e["actorKind"]) for e in merged] == [(consented["id"], "System")]
    assert (await one(hub, default, ignored["id"]))["status"] == "expired"
    assert "Nobody approved." not in (await content(hub, default))["content"]
    assert "pact.proposal.auto-merged" not in await event_types(hub, default)


async def test_objection_based_any_agent_stops_a_proposal(hub, register, runtime, clock, reviewer):
    topic_id, (a, b, c) = await policy_topic(hub, register, "objection-based")
    early = await propose(hub, topic_id, a, newContent="Early.", ttl=60)
    approved = await vote(hub, topic_id, early["id"], b, "approve")
    assert (approved["status"], approved["requiredApprovals"], approved["policy"]) == (
        "pending",
        0,
        "objection-based",
    )  # an approval does not cut the window short
    objected = await vote(hub, topic_id, early["id"], c, "object", reason="Cite the Act")
    assert objected["status"] == "objected"
    # A topic has no proposal desk: the objection puts the proposal before the reviewers as an escalation.
    queue = await (await hub.get("/api/review/escalations", headers=reviewer)).json()
    [raised] = [e for e in queue["escalations"] if e["resourceId"] == topic_id]
    assert raised["proposal"]["proposalId"] == early["id"]
    assert (raised["raisedBy"], raised["sectionText"]) == (c["agentId"], "The first answer.")
    assert "Cite the Act" in raised["question"]
    refused = await propose(hub, topic_id, a, sectionId="sec:discussion", newContent="Refused.", ttl=60)
    assert (await vote(hub, topic_id, refused["id"], b, "reject", reason="No"))["status"] == "rejected"
    clock.advance(timedelta(seconds=61))
    assert await run_sweep(runtime, SWEEP) == 0  # neither is pending any more
    assert "Early." not in (text := (await content(hub, topic_id))["content"])
    assert "Refused." not in text
    answered = await hub.post(
        f"/api/review/escalations/{raised['escalationId']}/answer",
        headers=reviewer,
        json={"answer": "The Act is cited elsewhere.", "decision": "approve"},
    )
    assert answered.status == 200, await answered.text()
    assert (await one(hub, topic_id, early["id"]))["status"] == "merged"


async def test_salience_ten_holds_a_silent_merge_until_approved_or_the_abstention_deadline(
    hub, register, runtime, clock
):
    topic_id, (a, b, critical) = await policy_topic(hub, register, "objection-based")
    await salience(hub, topic_id, critical, 10)
    await salience(hub, topic_id, a, 10)  # the author's own score holds nothing back
    held = await propose(hub, topic_id, a, newContent="Held back.", ttl=60)
    clock.advance(timedelta(seconds=61))
    assert await run_sweep(runtime, SWEEP) == 1
    waiting = await one(hub, topic_id, held["id"])
    assert waiting["status"] == "pending"
    assert waiting["expiresAt"] > held["expiresAt"]  # due again at the abstention deadline (4 TTLs)
    assert (await vote(hub, topic_id, held["id"], b, "approve"))["status"] == "pending"  # b is not critical
    assert (await vote(hub, topic_id, held["id"], critical, "approve"))["status"] == "merged"
    assert "Held back." in (await content(hub, topic_id))["content"]

    abstained = await propose(hub, topic_id, a, newContent="Nobody critical answered.", ttl=60)
    clock.advance(timedelta(seconds=61))
    await run_sweep(runtime, SWEEP)
    assert (await one(hub, topic_id, abstained["id"]))["status"] == "pending"
    clock.advance(timedelta(seconds=3 * 60))  # four TTLs after creation
    assert await run_sweep(runtime, SWEEP) == 1
    assert (await one(hub, topic_id, abstained["id"]))["status"] == "merged"
    demoted = [e for e in await events(hub, topic_id) if e["type"] == "pact.salience.auto-demoted"]
    assert [(e["data"]["agentId"], e["data"]["originalScore"], e["data"]["newScore"]) for e in demoted] == [
        (critical["agentId"], 10, 5)
    ]
    assert demoted[0]["data"]["proposalId"] == abstained["id"]
    # The demotion lasts for that proposal only: the declared score stays 10.
    scores = await (await hub.get(f"/api/pact/{topic_id}/salience")).json()
    answer = next(s for s in scores["sections"] if s["sectionId"] == "sec:answer")
    assert {s["agentId"]: s["score"] for s in answer["scores"]}[critical["agentId"]] == 10


async def test_objection_based_merges_at_once_when_every_other_agent_scored_the_section_zero(hub, register):
    topic_id, (a, b, c) = await policy_topic(hub, register, "objection-based")
    await salience(hub, topic_id, b, 0)
    waits = await propose(hub, topic_id, a, newContent="c has not said.")
    assert waits["status"] == "pending"
    await salience(hub, topic_id, c, 0)
    at_once = await propose(hub, topic_id, a, newContent="Nobody cares.")
    assert at_once["status"] == "merged"
    assert "Nobody cares." in (await content(hub, topic_id))["content"]
    assert (await one(hub, topic_id, waits["id"]))["status"] == "superseded"
    elsewhere = await propose(hub, topic_id, a, sectionId="sec:discussion", newContent="Unscored here.")
    assert elsewhere["status"] == "pending"  # the scores are the section's own


async def test_auto_merges_on_creation_unless_a_critical_agent_must_approve(hub, register):
    topic_id, (a, b, c) = await policy_topic(hub, register, "auto")
    made = await propose(hub, topic_id, a, newContent="Merged at once.")
    assert made["status"] == "merged"
    assert "Merged at once." in (await content(hub, topic_id))["content"]
    types = [t for t in await event_types(hub, topic_id) if t.startswith("pact.proposal.")]
    assert types == ["pact.proposal.created", "pact.proposal.auto-merged"]
    await salience(hub, topic_id, c, 10, section="sec:discussion")
    held = await propose(hub, topic_id, a, sectionId="sec:discussion", newContent="c must see this.")
    assert held["status"] == "pending"
    assert (await vote(hub, topic_id, held["id"], b, "approve"))["status"] == "pending"
    assert (await vote(hub, topic_id, held["id"], c, "approve"))["status"] == "merged"


async def test_single_needs_one_approval_and_counts_the_author_only_when_allowed(hub, register):
    topic_id, (a, b, c) = await policy_topic(hub, register, "single")
    made = await propose(hub, topic_id, a, newContent="One is enough.")
    assert (await vote(hub, topic_id, made["id"], a, "approve", expect=403))["error"] == "self_vote"
    result = await vote(hub, topic_id, made["id"], b, "approve")
    assert (result["status"], result["requiredApprovals"], result["policy"]) == ("merged", 1, "single")
    # Rejected only once every voter has rejected: until then one approval could still merge it.
    doubted = await propose(hub, topic_id, a, sectionId="sec:discussion", newContent="Doubted.")
    assert (await vote(hub, topic_id, doubted["id"], b, "reject"))["status"] == "pending"
    assert (await vote(hub, topic_id, doubted["id"], c, "reject"))["status"] == "rejected"
    objected = await propose(hub, topic_id, c, sectionId="sec:discussion", newContent="Objected.")
    assert (await vote(hub, topic_id, objected["id"], a, "object", reason="No"))["status"] == "objected"

    self_ok, (x, _y, _z) = await policy_topic(hub, register, "single", allowSelfApproval=True)
    mine = await propose(hub, self_ok, x, newContent="I approve my own.")
    assert (await vote(hub, self_ok, mine["id"], x, "approve"))["status"] == "merged"
    # Under the silent and default policies the flag changes nothing: an author never votes.
    silent, (s, _t, _u) = await policy_topic(hub, register, "objection-based", allowSelfApproval=True)
    other = await propose(hub, silent, s)
    assert (await vote(hub, silent, other["id"], s, "approve", expect=403))["error"] == "self_vote"


async def test_majority_counts_more_than_half_of_the_voters(hub, register):
    topic_id, agents = await policy_topic(hub, register, "majority", n=5)
    author, voters = agents[0], agents[1:]  # four voters: three approvals needed
    made = await propose(hub, topic_id, author, newContent="Most agree.")
    first = await vote(hub, topic_id, made["id"], voters[0], "approve")
    assert (first["status"], first["requiredApprovals"], first["remainingApprovals"]) == ("pending", 3, 2)
    assert (await vote(hub, topic_id, made["id"], voters[1], "approve"))["status"] == "pending"
    assert (await vote(hub, topic_id, made["id"], voters[2], "approve"))["status"] == "merged"
    split = await propose(hub, topic_id, author, sectionId="sec:discussion", newContent="Split.")
    assert (await vote(hub, topic_id, split["id"], voters[0], "reject"))["status"] == "pending"
    assert (await vote(hub, topic_id, split["id"], voters[1], "reject"))["status"] == "rejected"

    # With self-approval the author is a voter: five voters, three approvals, the author's among them.
    counted, agents = await policy_topic(hub, register, "majority", n=5, allowSelfApproval=True)
    mine = await propose(hub, counted, agents[0], newContent="Mine counts.")
    assert (await vote(hub, counted, mine["id"], agents[0], "approve"))["requiredApprovals"] == 3
    await vote(hub, counted, mine["id"], agents[1], "approve")
    assert (await vote(hub, counted, mine["id"], agents[2], "approve"))["status"] == "merged"


async def test_unanimous_needs_every_voter_and_silence_is_not_consent(hub, register, runtime, clock):
    topic_id, (a, b, c, d) = await policy_topic(hub, register, "unanimous", n=4)
    made = await propose(hub, topic_id, a, newContent="All agree.")
    await vote(hub, topic_id, made["id"], b, "approve")
    assert (await vote(hub, topic_id, made["id"], c, "approve"))["remainingApprovals"] == 1
    assert (await vote(hub, topic_id, made["id"], d, "approve"))["status"] == "merged"
    vetoed = await propose(hub, topic_id, a, sectionId="sec:discussion", newContent="Vetoed.")
    assert (await vote(hub, topic_id, vetoed["id"], b, "reject"))["status"] == "rejected"
    lapsed = await propose(hub, topic_id, a, sectionId="sec:discussion", newContent="Lapsed.", ttl=60)
    await vote(hub, topic_id, lapsed["id"], b, "approve")
    clock.advance(timedelta(seconds=61))
    await run_sweep(runtime, SWEEP)
    assert (await one(hub, topic_id, lapsed["id"]))["status"] == "expired"  # the default would merge it


async def test_human_only_proposals_wait_for_a_reviewer(hub, register, runtime, clock, reviewer):
    topic_id, (a, b, _c) = await policy_topic(hub, register, "human-only")
    made = await propose(hub, topic_id, a, newContent="A person decides.", ttl=60)
    refused = await vote(hub, topic_id, made["id"], b, "approve", expect=403)
    assert refused["error"] == "human_only"
    clock.advance(timedelta(days=2))
    assert await run_sweep(runtime, SWEEP) == 0
    assert (await one(hub, topic_id, made["id"]))["status"] == "pending"  # the TTL does not end it
    queue = await (await hub.get("/api/review/escalations", headers=reviewer)).json()
    [asked] = [e for e in queue["escalations"] if e["resourceId"] == topic_id]
    assert (asked["sectionText"], asked["proposal"]["newContent"]) == (
        "The first answer.",
        "A person decides.",
    )
    assert asked["raisedBy"] == a["agentId"]
    answered = await hub.post(
        f"/api/review/escalations/{asked['escalationId']}/answer",
        headers=reviewer,
        json={"answer": "Correct, merge it.", "decision": "approve"},
    )
    assert answered.status == 200, await answered.text()
    assert (await one(hub, topic_id, made["id"]))["status"] == "merged"
    assert "A person decides." in (await content(hub, topic_id))["content"]


async def test_a_change_of_policy_applies_to_pending_proposals(hub, register, runtime, clock, reviewer):
    topic_id, (a, _b, _c) = await open_topic(hub, register)
    waiting = await propose(hub, topic_id, a, newContent="Made under the default.", ttl=60)
    await patch(hub, topic_id, a, approvalPolicy="human-only")
    queue = await (await hub.get("/api/review/escalations", headers=reviewer)).json()
    assert [e["proposal"]["proposalId"] for e in queue["escalations"] if e["resourceId"] == topic_id] == [
        waiting["id"]
    ]
    clock.advance(timedelta(hours=1))
    assert await run_sweep(runtime, SWEEP) == 0
    # Back from human-only: a fresh TTL from the change, then the new policy decides.
    await patch(hub, topic_id, a, approvalPolicy="objection-based")
    assert await run_sweep(runtime, SWEEP) == 0
    assert (await one(hub, topic_id, waiting["id"]))["expiresAt"] > waiting["expiresAt"]
    clock.advance(timedelta(seconds=61))
    assert await run_sweep(runtime, SWEEP) == 1
    assert (await one(hub, topic_id, waiting["id"]))["status"] == "merged"


async def test_a_reviewer_decides_a_human_only_proposal_on_its_page(hub, register, runtime, reviewer):
    topic_id, (a, _b, _c) = await policy_topic(hub, register, "human-only")
    made = await propose(hub, topic_id, a, newContent="Decided in a browser.")
    listed = await (await hub.get("/api/review/escalations?source=topic", headers=reviewer)).json()
    [esc] = [e["escalationId"] for e in listed["escalations"] if e["resourceId"] == topic_id]
    csrf = await sign_in(hub, await staff_key(runtime, "Page Reviewer", ("reviewer",)))
    assert f'href="/review/escalations/{esc}"' in await (await hub.get("/review/")).text()  # on the queue
    page = await (await hub.get(f"/review/escalations/{esc}")).text()
    assert "The first answer." in page  # the section as it reads now ...
    assert "Decided in a browser." in page  # ... beside the proposed text
    assert 'value="approve"' in page
    resp = await hub.post(
        f"/review/escalations/{esc}/answer",
        data={"csrf": csrf, "answer": "Fine.", "decision": "approve"},
        allow_redirects=False,
    )
    assert resp.status == 303
    assert (await one(hub, topic_id, made["id"]))["status"] == "merged"
    assert "Decided in a browser." in (await content(hub, topic_id))["content"]
