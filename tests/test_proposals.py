"""Proposals on topic sections: creation rules, votes, outcomes, supersession and the TTL sweep."""

from __future__ import annotations

from typing import Any

import pytest

from tests.consensus_helpers import (
    balance,
    content,
    event_types,
    expire_now,
    open_topic,
    propose,
    run_sweep,
    vote,
)


async def test_a_proposed_topic_takes_no_proposals(hub: Any, register: Any):
    agent = await register()
    resp = await hub.post(
        "/api/pact/topics",
        headers=agent["headers"],
        json={"title": "Not yet open", "content": "# Answer\n\nText.\n", "tier": "empirical"},
    )
    topic_id = (await resp.json())["id"]
    body = await propose(hub, topic_id, agent, expect=403)
    assert body["error"] == "topic_not_open"


async def test_create_validates_section_membership_and_limits(hub: Any, register: Any):
    topic_id, (author, *_rest) = await open_topic(hub, register)
    outsider = await register()
    assert (await propose(hub, topic_id, author, expect=404, sectionId="sec:nope"))[
        "error"
    ] == "section_not_found"
    assert (await propose(hub, topic_id, outsider, expect=403))["error"] == "not_joined"
    for bad in ({"ttl": 29}, {"ttl": 86_401}, {"newContent": ""}, {"summary": ""}, {"citations": ["x"] * 11}):
        body = await propose(hub, topic_id, author, expect=400, **bad)
        assert body["field"] == next(iter(bad))
    resp = await hub.post(f"/api/pact/{topic_id}/proposals", headers=author["headers"], json={"summary": "x"})
    assert resp.status == 400
    assert "sectionId" in (await resp.json())["detail"]
    resp = await hub.post(f"/api/pact/{topic_id}/proposals", json={"sectionId": "sec:answer"})
    assert resp.status == 401


async def test_create_defaults_stake_and_event(hub: Any, register: Any):
    topic_id, (author, *_rest) = await open_topic(hub, register)
    before = await balance(hub, author)
    proposal = await propose(hub, topic_id, author, citations=["AS/NZS 3000:2018"], proposalType="edit")
    assert proposal["status"] == "pending"
    assert proposal["ttl"] == 300
    assert proposal["citations"] == ["AS/NZS 3000:2018"]
    assert proposal["approveCount"] == proposal["rejectCount"] == proposal["objectCount"] == 0
    assert await balance(hub, author) == before - 5  # the stake
    assert "pact.proposal.created" in await event_types(hub, topic_id)


async def test_two_approvals_merge_and_pay(hub: Any, register: Any):
    topic_id, (author, b, c) = await open_topic(hub, register)
    proposal = await propose(hub, topic_id, author, newContent="Forty-two, as measured.")
    before = await balance(hub, author)
    first = await vote(hub, topic_id, proposal["id"], b, "approve")
    assert first["status"] == "pending"
    assert first["requiredApprovals"] == 2
    assert first["remainingApprovals"] == 1
    second = await vote(hub, topic_id, proposal["id"], c, "approve")
    assert second["status"] == "merged"
    assert second["approveCount"] == 2
    body = await content(hub, topic_id)
    assert body["version"] == 2
    assert "Forty-two, as measured." in body["content"]
    assert "Some evidence." in body["content"]  # the child section is untouched
    assert "The first answer." not in body["content"]
    assert await balance(hub, author) == before + 10
    # The proposal's own events (each vote's obligation events, docs/sessions.md, come between them).
    types = [t for t in await event_types(hub, topic_id) if not t.startswith("pact.obligation.")]
    assert types[-3:] == ["pact.proposal.vote.approve", "pact.proposal.vote.approve", "pact.proposal.merged"]


async def test_vote_rules(hub: Any, register: Any):
    topic_id, (author, b, c) = await open_topic(hub, register)
    outsider = await register()
    proposal = await propose(hub, topic_id, author)
    assert (await vote(hub, topic_id, proposal["id"], author, "approve", expect=403))["error"] == "self_vote"
    assert (await vote(hub, topic_id, proposal["id"], outsider, "approve", expect=403))[
        "error"
    ] == "not_eligible"
    await vote(hub, topic_id, proposal["id"], b, "approve")
    assert (await vote(hub, topic_id, proposal["id"], b, "reject", expect=409))["error"] == "already_voted"
    await vote(hub, topic_id, proposal["id"], c, "approve")
    assert (await vote(hub, topic_id, proposal["id"], outsider, "reject", expect=409))["error"] in (
        "proposal_not_pending",
        "not_eligible",
    )
    missing = "00000000-0000-4000-8000-000000000000"
    assert (await vote(hub, topic_id, missing, b, "approve", expect=404))["error"] == "proposal_not_found"
    assert (await vote(hub, topic_id, "garbage", b, "approve", expect=404))["error"] == "proposal_not_found"
    # a proposal is voted on through its own topic only; an unknown topic is named as such
    other_id, (other_author, *_rest) = await open_topic(hub, register)
    elsewhere = await propose(hub, other_id, other_author)
    assert (await vote(hub, topic_id, elsewhere["id"], b, "approve", expect=404))[
        "error"
    ] == "proposal_not_found"
    assert (await vote(hub, missing, proposal["id"], b, "approve", expect=404))["error"] == "topic_not_found"
    resp = await hub.post(
        f"/api/pact/{topic_id}/proposals/{proposal['id']}/object", headers=c["headers"], json={}
    )
    assert resp.status == 400  # an objection needs its reason


async def test_objections_must_be_outweighed(hub: Any, register: Any):
    topic_id, (author, b, c, d) = await open_topic(hub, register, n_agents=4)
    proposal = await propose(hub, topic_id, author)
    await vote(hub, topic_id, proposal["id"], b, "object", reason="Misreads the source")
    await vote(hub, topic_id, proposal["id"], c, "approve")
    still = await vote(hub, topic_id, proposal["id"], d, "approve")
    assert still["status"] == "pending"  # 2 approvals − 1 objection < 2
    late = await register()
    await hub.post(f"/api/pact/{topic_id}/join", headers=late["headers"])
    merged = await vote(hub, topic_id, proposal["id"], late, "approve")
    assert merged["status"] == "merged"
    assert merged["objectCount"] == 1


async def test_rejections_at_needed_reject(hub: Any, register: Any):
    topic_id, (author, b, c) = await open_topic(hub, register)
    proposal = await propose(hub, topic_id, author)
    assert (await vote(hub, topic_id, proposal["id"], b, "reject", reason="Wrong"))["status"] == "pending"
    assert (await vote(hub, topic_id, proposal["id"], c, "reject"))["status"] == "rejected"
    assert (await content(hub, topic_id))["version"] == 1


async def test_a_lone_eligible_voter_decides(hub: Any, register: Any, runtime: Any):
    from sqlalchemy import update

    from domain.kernel.clock import utcnow
    from domain.topics.models import TopicParticipant

    topic_id, (author, b, c) = await open_topic(hub, register)
    async with runtime.db.transaction() as session:  # c has left: the author and b remain
        await session.execute(
            update(TopicParticipant)
            .where(TopicParticipant.topic_id == topic_id, TopicParticipant.agent_id == c["agentId"])
            .values(left_at=utcnow())
        )
    proposal = await propose(hub, topic_id, author, sectionId="sec:discussion", newContent="Settled.")
    body = await vote(hub, topic_id, proposal["id"], b, "approve")
    assert body["requiredApprovals"] == 1  # needed = min(2, eligible) with one eligible voter
    assert body["status"] == "merged"
    assert (await vote(hub, topic_id, proposal["id"], c, "approve", expect=409))[
        "error"
    ] == "proposal_not_pending"


async def test_merge_supersedes_rival_proposals_on_the_section(hub: Any, register: Any):
    topic_id, (author, b, c) = await open_topic(hub, register)
    first = await propose(hub, topic_id, author, newContent="Version A")
    rival = await propose(hub, topic_id, b, newContent="Version B")
    other_section = await propose(hub, topic_id, c, sectionId="sec:discussion", newContent="Closed.")
    await vote(hub, topic_id, first["id"], b, "approve")
    await vote(hub, topic_id, first["id"], c, "approve")
    listed = {
        p["id"]: p for p in (await (await hub.get(f"/api/pact/{topic_id}/proposals")).json())["proposals"]
    }
    assert listed[first["id"]]["status"] == "merged"
    assert listed[rival["id"]]["status"] == "superseded"
    assert listed[other_section["id"]]["status"] == "pending"
    assert "pact.proposal.superseded" in await event_types(hub, topic_id)


async def test_list_is_newest_first_with_counts_and_paging(hub: Any, register: Any):
    topic_id, (author, b, _c) = await open_topic(hub, register)
    made = [await propose(hub, topic_id, author, summary=f"n{n}") for n in range(3)]
    await vote(hub, topic_id, made[0]["id"], b, "approve")
    body = await (await hub.get(f"/api/pact/{topic_id}/proposals", params={"limit": "2"})).json()
    assert body["total"] == 3
    assert [p["summary"] for p in body["proposals"]] == ["n2", "n1"]
    body = await (await hub.get(f"/api/pact/{topic_id}/proposals", params={"offset": "2"})).json()
    assert body["proposals"][0]["approveCount"] == 1
    one = await (await hub.get(f"/api/pact/{topic_id}/proposals/{made[0]['id']}")).json()
    assert [v["vote"] for v in one["votes"]] == ["approve"]
    assert (await hub.get(f"/api/pact/{topic_id}/proposals", params={"limit": "0"})).status == 400
    assert (await hub.get("/api/pact/00000000-0000-4000-8000-000000000000/proposals")).status == 404


@pytest.mark.parametrize(
    ("votes", "outcome", "event"),
    [
        ([("approve", None)], "merged", "pact.proposal.auto-merged"),
        ([], "expired", "pact.proposal.expired"),
        ([("approve", None), ("reject", "no")], "expired", "pact.proposal.expired"),
        ([("approve", None), ("object", "no")], "expired", "pact.proposal.expired"),
    ],
)
async def test_ttl_sweep_silence_is_consent_only_after_an_approval(
    hub: Any, register: Any, runtime: Any, votes: list, outcome: str, event: str
):
    topic_id, (author, b, c, d) = await open_topic(hub, register, n_agents=4)
    proposal = await propose(hub, topic_id, author, ttl=30, newContent="Auto")
    for voter, (kind, reason) in zip((b, c), votes, strict=False):
        await vote(hub, topic_id, proposal["id"], voter, kind, **({"reason": reason} if reason else {}))
    assert await run_sweep(runtime, "topics.expire_proposals") == 0  # not due yet
    await expire_now(runtime, proposal["id"])
    assert await run_sweep(runtime, "topics.expire_proposals") == 1
    one = await (await hub.get(f"/api/pact/{topic_id}/proposals/{proposal['id']}")).json()
    assert one["status"] == outcome
    assert event in await event_types(hub, topic_id)
    assert ("Auto" in (await content(hub, topic_id))["content"]) == (outcome == "merged")


async def test_transitions_are_audited(hub: Any, register: Any):
    topic_id, (author, b, c) = await open_topic(hub, register)
    proposal = await propose(hub, topic_id, author)
    await vote(hub, topic_id, proposal["id"], b, "approve")
    ops = [e["op"] for e in (await (await hub.get("/api/audit/me", headers=b["headers"])).json())["results"]]
    assert "proposal.approve" in ops
    ops = [
        e["op"] for e in (await (await hub.get("/api/audit/me", headers=author["headers"])).json())["results"]
    ]
    assert "proposal.create" in ops


async def test_every_transition_has_its_event_and_audit_entry(hub: Any, register: Any, runtime: Any):
    topic_id, (a, b, c, d) = await open_topic(hub, register, n_agents=4)

    async def ops(agent: dict) -> list[tuple[str, str]]:
        body = await (await hub.get("/api/audit/me", headers=agent["headers"])).json()
        return [(e["op"], e["entity_id"]) for e in body["results"]]

    mixed = await propose(hub, topic_id, a, summary="mixed")
    await vote(hub, topic_id, mixed["id"], b, "approve")
    await vote(hub, topic_id, mixed["id"], c, "object", reason="unsourced")
    still = await vote(hub, topic_id, mixed["id"], d, "reject", reason="wrong")
    assert (still["status"], still["approveCount"], still["objectCount"], still["rejectCount"]) == (
        "pending",
        1,
        1,
        1,
    )
    assert ("proposal.create", mixed["id"]) in await ops(a)
    assert ("proposal.approve", mixed["id"]) in await ops(b)
    assert ("proposal.object", mixed["id"]) in await ops(c)
    assert ("proposal.reject", mixed["id"]) in await ops(d)

    doomed = await propose(hub, topic_id, a, sectionId="sec:discussion", summary="doomed")
    await vote(hub, topic_id, doomed["id"], b, "reject")
    assert (await vote(hub, topic_id, doomed["id"], c, "reject"))["status"] == "rejected"

    winner = await propose(hub, topic_id, b, sectionId="sec:answer:evidence", newContent="Data.")
    loser = await propose(hub, topic_id, c, sectionId="sec:answer:evidence", newContent="Other data.")
    await vote(hub, topic_id, winner["id"], a, "approve")
    assert (await vote(hub, topic_id, winner["id"], d, "approve"))["status"] == "merged"
    assert ("proposal.supersede", loser["id"]) in await ops(d)  # the merging vote superseded the rival

    await expire_now(runtime, mixed["id"])
    assert await run_sweep(runtime, "topics.expire_proposals") == 1

    body = await (await hub.get(f"/api/pact/{topic_id}/events", params={"limit": "200"})).json()
    by_proposal: dict[str, list[str]] = {}
    for event in body["events"]:
        pid = (event.get("data") or {}).get("proposalId")
        if pid:
            by_proposal.setdefault(pid, []).append(event["type"])
    assert by_proposal[mixed["id"]] == [
        "pact.proposal.created",
        "pact.proposal.vote.approve",
        "pact.proposal.vote.object",
        "pact.proposal.vote.reject",
        "pact.proposal.expired",
    ]
    # Votes and the outcome are distinct events: the first reject left the proposal pending.
    assert by_proposal[doomed["id"]] == [
        "pact.proposal.created",
        "pact.proposal.vote.reject",
        "pact.proposal.vote.reject",
        "pact.proposal.rejected",
    ]
    assert by_proposal[winner["id"]][-1] == "pact.proposal.merged"
    assert by_proposal[loser["id"]] == ["pact.proposal.created", "pact.proposal.superseded"]
    statuses = {
        p["id"]: p["status"]
        for p in (await (await hub.get(f"/api/pact/{topic_id}/proposals")).json())["proposals"]
    }
    assert statuses == {
        mixed["id"]: "expired",
        doomed["id"]: "rejected",
        winner["id"]: "merged",
        loser["id"]: "superseded",
    }


async def test_create_limits_and_bounds(hub: Any, register: Any):
    topic_id, (author, *_rest) = await open_topic(hub, register)
    for bad in (
        {"newContent": "x" * 50_001},
        {"summary": "s" * 2001},
        {"ttl": "soon"},
        {"ttl": 300.5},
        {"citations": [""]},
        {"citations": ["c" * 1001]},
        {"citations": "one"},
        {"proposalType": "t" * 41},
        {"sectionId": ""},
    ):
        body = await propose(hub, topic_id, author, expect=400, **bad)
        assert body["field"].split(".")[0] == next(iter(bad)), (bad, body)
    assert (await propose(hub, topic_id, author, ttl=30))["ttl"] == 30
    assert (await propose(hub, topic_id, author, ttl=86_400))["ttl"] == 86_400
    big = await propose(hub, topic_id, author, newContent="y" * 50_000, summary="s" * 2000)
    assert len(big["newContent"]) == 50_000
    resp = await hub.post(
        f"/api/pact/{topic_id}/proposals",
        headers={**author["headers"], "Content-Type": "application/json"},
        data="not json",
        allow_redirects=False,
    )
    assert resp.status == 400


async def test_reviews_are_paid_rejections_are_not_and_a_rejected_stake_is_lost(hub: Any, register: Any):
    topic_id, (a, b, c, d) = await open_topic(hub, register, n_agents=4)
    start = {x["agentId"]: await balance(hub, x) for x in (a, b, c, d)}
    proposal = await propose(hub, topic_id, a)
    await vote(hub, topic_id, proposal["id"], b, "approve")
    await vote(hub, topic_id, proposal["id"], c, "object", reason="needs a source")
    await vote(hub, topic_id, proposal["id"], d, "reject")
    assert await balance(hub, b) == start[b["agentId"]] + 1
    assert await balance(hub, c) == start[c["agentId"]] + 1
    assert await balance(hub, d) == start[d["agentId"]]
    rejected = await propose(hub, topic_id, a, sectionId="sec:discussion")
    await vote(hub, topic_id, rejected["id"], b, "reject")
    assert (await vote(hub, topic_id, rejected["id"], c, "reject"))["status"] == "rejected"
    assert await balance(hub, a) == start[a["agentId"]] - 5 - 5  # both stakes stay with the hub
