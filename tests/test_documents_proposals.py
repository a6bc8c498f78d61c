"""Proposals on a document through the shared consensus engine (document policy)."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from sqlalchemy import update

from domain.documents.models import Document
from domain.review import resources as review_resources
from tests.conftest import PG_ADMIN_URL
from tests.documents_support import content, make_key, upload_ready

MD = b"# Plan\n\nIntro.\n\n## Budget\n\nMoney.\n\n## Risks\n\nMany.\n"


async def _team(docs, runtime, roles=("editor", "reviewer", "reviewer")):
    keys = [await make_key(runtime, org="Acme", name=f"k{i}") for i in range(len(roles))]
    doc = await upload_ready(docs, keys[0], MD, "plan.md")
    base = f"/api/tap/{doc['id']}"
    for i, (key, role) in enumerate(zip(keys, roles, strict=True)):
        resp = await docs.post(
            f"{base}/join", headers=key["headers"], json={"agentName": f"agent{i}", "role": role}
        )
        assert resp.status == 201
    return keys, doc, base


async def _propose(docs, key, base, section="sec:plan:budget", text="More money."):
    resp = await docs.post(
        f"{base}/proposals",
        headers=key["headers"],
        json={"sectionId": section, "content": text, "summary": "s"},
    )
    assert resp.status == 201, await resp.text()
    return await resp.json()


async def test_two_approvals_merge_and_votes_are_counted(docs, runtime):
    (a, b, c), doc, base = await _team(docs, runtime)
    prop = await _propose(docs, a, base)
    assert prop["status"] == "pending"
    assert prop["sectionId"] == "sec:plan:budget"
    assert prop["createdAt"]
    resp = await docs.post(f"{base}/proposals/{prop['proposalId']}/approve", headers=a["headers"])
    assert resp.status == 403  # an author never votes on its own proposal
    resp = await docs.post(
        f"{base}/proposals/{prop['proposalId']}/approve", headers=b["headers"], json={"reason": "ok"}
    )
    assert resp.status == 200
    vote = await resp.json()
    assert vote["vote"] == "approve"
    assert vote["votedAt"]
    assert vote["status"] == "pending"  # needed = min(2, eligible=2) = 2
    resp = await docs.post(f"{base}/proposals/{prop['proposalId']}/approve", headers=b["headers"])
    assert resp.status == 409
    resp = await docs.post(
        f"/api/pact/{doc['id']}/proposals/{prop['proposalId']}/approve", headers=c["headers"]
    )
    assert (await resp.json())["status"] == "approved"
    md = await content(docs, a, doc["id"])
    assert "## Budget\n\nMore money.\n\n## Risks" in md
    resp = await docs.get(f"{base}/proposals?status=approved&sectionId=sec:plan:budget", headers=a["headers"])
    listed = (await resp.json())["proposals"]
    assert [(p["proposalId"], p["votes"]) for p in listed] == [
        (prop["proposalId"], {"approve": 2, "reject": 0, "object": 0})
    ]
    resp = await docs.get(f"{base}/proposals?status=bogus", headers=a["headers"])
    assert resp.status == 400
    resp = await docs.get(f"{base}/content", headers=a["headers"])
    assert (await resp.json())["version"] == 2


async def test_approvals_needed_count_only_active_voting_agents_but_the_author(docs, runtime):
    (a, b, obs, gone), doc, base = await _team(
        docs, runtime, roles=("editor", "reviewer", "observer", "reviewer")
    )
    resp = await docs.delete(f"{base}/leave", headers=gone["headers"])
    assert resp.status == 200, await resp.text()
    prop = await _propose(docs, a, base)
    resp = await docs.post(f"{base}/proposals/{prop['proposalId']}/approve", headers=gone["headers"])
    assert resp.status == 403  # left: no longer a member
    # Eligible: the one reviewer (the author, the observer and the agent who left do not count): one approval.
    resp = await docs.post(f"{base}/proposals/{prop['proposalId']}/approve", headers=b["headers"])
    vote = await resp.json()
    assert (vote["status"], vote["requiredApprovals"]) == ("approved", 1)
    assert "## Budget\n\nMore money.\n\n## Risks" in await content(docs, a, doc["id"])


async def test_many_approvals_at_once_approve_exactly_once(docs, runtime):
    keys, doc, base = await _team(docs, runtime, roles=("editor", *["reviewer"] * 6))
    prop = await _propose(docs, keys[0], base)
    url = f"{base}/proposals/{prop['proposalId']}/approve"

    async def approve(key):
        resp = await docs.post(url, headers=key["headers"])
        return resp.status, await resp.json()

    answers = await asyncio.gather(*(approve(key) for key in keys[1:]))
    accepted = [body for status, body in answers if status == 200]
    assert sorted(body["status"] for body in accepted) == ["approved", "pending"]
    assert {(status, body.get("code")) for status, body in answers if status != 200} == {
        (409, "proposal_not_pending")
    }
    resp = await docs.get(f"{base}/proposals?status=approved", headers=keys[0]["headers"])
    approved = (await resp.json())["proposals"]
    assert [p["votes"] for p in approved] == [{"approve": 2, "reject": 0, "object": 0}]
    resp = await docs.get(f"{base}/content", headers=keys[0]["headers"])
    merged = await resp.json()
    assert merged["version"] == 2  # merged once
    assert merged["content"].count("More money.") == 1


async def test_reject_needs_a_reason_and_object_pauses(docs, runtime):
    (a, b, c), doc, base = await _team(docs, runtime)
    p1 = await _propose(docs, a, base)
    resp = await docs.post(f"{base}/proposals/{p1['proposalId']}/reject", headers=b["headers"], json={})
    assert resp.status == 400
    assert "reason" in (await resp.json())["detail"]
    for key in (b, c):
        resp = await docs.post(
            f"{base}/proposals/{p1['proposalId']}/reject", headers=key["headers"], json={"reason": "no"}
        )
        assert resp.status == 200
    assert (await resp.json())["status"] == "rejected"
    p2 = await _propose(docs, a, base, section="sec:plan:risks")
    resp = await docs.post(
        f"{base}/proposals/{p2['proposalId']}/object", headers=b["headers"], json={"reason": "legal"}
    )
    assert (await resp.json())["status"] == "objected"
    resp = await docs.post(f"{base}/proposals/{p2['proposalId']}/approve", headers=c["headers"])
    assert resp.status == 409
    problem = await resp.json()
    assert problem["status"] == 409  # the proposal's own status never overwrites the problem's
    assert resp.content_type == "application/problem+json"
    assert "Many." in await content(docs, a, doc["id"])


async def test_locks_block_other_agents_proposals_and_observers_cannot_vote(docs, runtime):
    (a, b, obs), doc, base = await _team(docs, runtime, roles=("editor", "editor", "observer"))
    resp = await docs.post(f"{base}/sections/sec:plan:budget/lock", headers=b["headers"])
    assert resp.status == 200
    resp = await docs.post(
        f"{base}/proposals",
        headers=a["headers"],
        json={"sectionId": "sec:plan:budget", "content": "x", "summary": "s"},
    )
    assert resp.status == 409
    assert (await resp.json())["code"] == "section.locked"
    mine = await _propose(docs, b, base)  # the holder may propose on its own locked section
    resp = await docs.post(f"{base}/proposals/{mine['proposalId']}/approve", headers=obs["headers"])
    assert resp.status == 403
    resp = await docs.post(
        f"{base}/proposals",
        headers=obs["headers"],
        json={"sectionId": "sec:plan", "content": "x", "summary": "s"},
    )
    assert resp.status == 403
    resp = await docs.post(
        f"{base}/proposals",
        headers=a["headers"],
        json={"sectionId": "sec:nope", "content": "x", "summary": "s"},
    )
    assert resp.status == 404


async def test_ttl_sweep_accepts_silence_after_one_approval(docs, runtime):
    from domain import wiring
    from domain.consensus.models import Proposal
    from domain.documents import proposals
    from domain.kernel import sweeps
    from domain.kernel.clock import utcnow

    (a, b, c), doc, base = await _team(docs, runtime)
    p1 = await _propose(docs, a, base)
    await docs.post(f"{base}/proposals/{p1['proposalId']}/approve", headers=b["headers"])
    p2 = await _propose(docs, a, base, section="sec:plan:risks", text="Few.")
    async with runtime.db.transaction() as session:
        await session.execute(update(Proposal).values(expires_at=utcnow() - timedelta(seconds=1)))
    item = next(s for s in wiring.SWEEPS if s.fn is proposals.expire_proposals)
    assert await sweeps.run(runtime.db, item, "test") == 2
    resp = await docs.get(f"{base}/proposals", headers=a["headers"])
    statuses = {p["proposalId"]: p["status"] for p in (await resp.json())["proposals"]}
    assert statuses == {p1["proposalId"]: "approved", p2["proposalId"]: "expired"}
    assert "More money." in await content(docs, a, doc["id"])


async def test_votes_and_outcomes_are_distinct_events(docs, runtime):
    (a, b, c), doc, base = await _team(docs, runtime)

    async def proposal_events(pid):
        page = await (await docs.get(f"{base}/events?limit=200", headers=a["headers"])).json()
        return [
            (e["type"], e["data"].get("vote")) for e in page["events"] if e["data"].get("proposalId") == pid
        ]

    doomed = (await _propose(docs, a, base))["proposalId"]
    resp = await docs.post(f"{base}/proposals/{doomed}/reject", headers=b["headers"], json={"reason": "no"})
    assert (await resp.json())["status"] == "pending"
    # One reject vote of the two needed: a vote event, no rejection yet.
    assert await proposal_events(doomed) == [
        ("pact.proposal.created", None),
        ("pact.proposal.vote.reject", "reject"),
    ]
    resp = await docs.post(f"{base}/proposals/{doomed}/reject", headers=c["headers"], json={"reason": "no"})
    assert (await resp.json())["status"] == "rejected"
    assert (await proposal_events(doomed))[2:] == [
        ("pact.proposal.vote.reject", "reject"),
        ("pact.proposal.rejected", None),
    ]

    paused = (await _propose(docs, a, base, section="sec:plan:risks"))["proposalId"]
    await docs.post(f"{base}/proposals/{paused}/object", headers=b["headers"], json={"reason": "legal"})
    assert (await proposal_events(paused))[1:] == [
        ("pact.proposal.vote.object", "object"),
        ("pact.proposal.objected", None),
    ]

    merged = (await _propose(docs, a, base, section="sec:plan"))["proposalId"]
    for key in (b, c):
        await docs.post(f"{base}/proposals/{merged}/approve", headers=key["headers"], json={})
    assert [t for t, _ in await proposal_events(merged)] == [
        "pact.proposal.created",
        "pact.proposal.vote.approve",
        "pact.proposal.vote.approve",
        "pact.proposal.merged",
    ]


@pytest.mark.skipif(
    not PG_ADMIN_URL, reason="PostgreSQL only: SQLite's one writer rules out a commit between load and lock"
)
async def test_a_document_loaded_before_its_lock_is_merged_into_as_committed(docs, runtime):
    """The review desk loads a proposal's document, then locks it: a merge committed in between must be
    what the decision merges into, never the content read before the lock (a lost update)."""
    key = await make_key(runtime, org="Acme", name="k")
    doc = await upload_ready(docs, key, MD, "plan.md")
    async with runtime.db.transaction() as desk:
        resource, _policy = await review_resources._load(desk, "document", doc["id"])
        _markdown, loaded_version = await resource.read(desk)
        changed = MD.decode().replace("Money.", "Merged meanwhile.")
        async with runtime.db.transaction() as other:
            await other.execute(
                update(Document)
                .where(Document.id == doc["id"])
                .values(content=changed, version=Document.version + 1)
            )
        await resource.lock(desk)
        markdown, version = await resource.read(desk)
    assert "Merged meanwhile." in markdown
    assert version == loaded_version + 1
