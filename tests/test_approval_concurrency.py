"""Agents voting at once under every approval policy never merge twice nor lose a vote, and the TTL sweep
racing the agents gives each proposal one outcome (SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import timedelta
from typing import Any

from tests.consensus_helpers import content, event_types, open_topic, propose, run_sweep
from tests.documents_support import content as doc_content
from tests.documents_support import make_key, upload_ready

MD = b"# Plan\n\nIntro.\n\n## Budget\n\nMoney.\n\n## Risks\n\nMany.\n"


async def _vote(client: Any, url: str, agent: dict, kind: str) -> int:
    body = {"reason": "concurrent"} if kind != "approve" else None
    resp = await client.post(f"{url}/{kind}", headers=agent["headers"], json=body)
    await resp.read()
    return resp.status


async def _one(hub: Any, topic_id: str, proposal_id: str) -> dict[str, Any]:
    return dict(await (await hub.get(f"/api/pact/{topic_id}/proposals/{proposal_id}")).json())


async def test_majority_approvals_at_once_merge_exactly_once(hub, register):
    topic_id, agents = await open_topic(hub, register, n_agents=9, approvalPolicy="majority")
    author, voters = agents[0], agents[1:]  # eight voters: five approvals merge
    made = await propose(hub, topic_id, author, newContent="Merged once.")
    url = f"/api/pact/{topic_id}/proposals/{made['id']}"
    statuses = await asyncio.gather(*(_vote(hub, url, v, "approve") for v in voters))
    assert Counter(statuses) == {200: 5, 409: 3}
    found = await _one(hub, topic_id, made["id"])
    assert (found["status"], found["approveCount"], len(found["votes"])) == ("merged", 5, 5)
    body = await content(hub, topic_id)
    assert (body["version"], body["content"].count("Merged once.")) == (2, 1)


async def test_mixed_votes_at_once_under_single_give_one_outcome_and_exact_counts(hub, register):
    topic_id, agents = await open_topic(hub, register, n_agents=10, approvalPolicy="single")
    made = await propose(hub, topic_id, agents[0])
    url = f"/api/pact/{topic_id}/proposals/{made['id']}"
    kinds = ["reject", "approve", "object"] * 3
    statuses = await asyncio.gather(*(_vote(hub, url, v, k) for v, k in zip(agents[1:], kinds, strict=True)))
    assert set(statuses) <= {200, 409}
    found = await _one(hub, topic_id, made["id"])
    recorded = Counter(v["vote"] for v in found["votes"])
    assert (
        recorded
        == Counter(
            {"approve": found["approveCount"], "reject": found["rejectCount"], "object": found["objectCount"]}
        )
        - Counter()
    )
    assert statuses.count(200) == len(found["votes"])
    # The first approval or objection decides; nothing is counted after it.
    assert (found["status"], found["approveCount"] + found["objectCount"]) in (("merged", 1), ("objected", 1))
    assert (await content(hub, topic_id))["version"] == (2 if found["status"] == "merged" else 1)


async def test_critical_approvals_at_once_after_the_window_merge_once(hub, register, runtime, clock):
    topic_id, agents = await open_topic(hub, register, n_agents=5, approvalPolicy="objection-based")
    author, critical = agents[0], agents[1:]
    for agent in critical:
        resp = await hub.post(
            f"/api/pact/{topic_id}/salience",
            headers=agent["headers"],
            json={"sectionId": "sec:answer", "score": 10},
        )
        assert resp.status == 200
    made = await propose(hub, topic_id, author, newContent="Held.", ttl=60)
    clock.advance(timedelta(seconds=61))
    assert await run_sweep(runtime, "topics.expire_proposals") == 1  # held for the critical agents
    url = f"/api/pact/{topic_id}/proposals/{made['id']}"
    statuses = await asyncio.gather(*(_vote(hub, url, v, "approve") for v in critical))
    assert statuses == [200] * 4  # each is needed: none finds it merged before its own approval
    found = await _one(hub, topic_id, made["id"])
    assert (found["status"], found["approveCount"]) == ("merged", 4)
    types = await event_types(hub, topic_id)
    assert types.count("pact.proposal.merged") == 1
    assert "pact.proposal.auto-merged" not in types
    assert (await content(hub, topic_id))["version"] == 2


async def test_the_sweep_and_objections_at_once_give_each_proposal_one_outcome(hub, register, runtime, clock):
    made = []
    for _ in range(3):
        topic_id, (author, objector, _c) = await open_topic(hub, register, approvalPolicy="objection-based")
        proposal = await propose(hub, topic_id, author, newContent="Raced.", ttl=60)
        made.append((topic_id, proposal["id"], objector))
    clock.advance(timedelta(seconds=61))
    results = await asyncio.gather(
        run_sweep(runtime, "topics.expire_proposals"),
        *(_vote(hub, f"/api/pact/{t}/proposals/{p}", o, "object") for t, p, o in made),
    )
    for (topic_id, proposal_id, _o), objection in zip(made, results[1:], strict=True):
        found = await _one(hub, topic_id, proposal_id)
        types = await event_types(hub, topic_id)
        merged = "Raced." in (await content(hub, topic_id))["content"]
        if objection == 200:  # the objection came first: paused, never merged
            assert (found["status"], found["objectCount"], merged) == ("objected", 1, False)
            assert "pact.proposal.auto-merged" not in types
        else:  # the sweep came first: merged once, the objection refused
            assert objection == 409
            assert (found["status"], found["objectCount"], merged) == ("merged", 0, True)
            assert types.count("pact.proposal.auto-merged") == 1


async def _doc_team(docs: Any, runtime: Any, n: int, **fields: str) -> tuple[list[dict], dict, str]:
    keys = [await make_key(runtime, org="Acme", name=f"k{i}") for i in range(n)]
    doc = await upload_ready(docs, keys[0], MD, "plan.md", **fields)
    base = f"/api/tap/{doc['id']}"
    for i, key in enumerate(keys):
        role = "editor" if i == 0 else "reviewer"
        resp = await docs.post(
            f"{base}/join", headers=key["headers"], json={"agentName": f"a{i}", "role": role}
        )
        assert resp.status == 201, await resp.text()
    return keys, doc, base


async def _doc_propose(docs: Any, key: dict, base: str) -> str:
    resp = await docs.post(
        f"{base}/proposals",
        headers=key["headers"],
        json={"sectionId": "sec:plan:budget", "content": "Once.", "summary": "s"},
    )
    assert resp.status == 201, await resp.text()
    return str((await resp.json())["proposalId"])


async def test_document_approvals_at_once_under_single_and_unanimous(docs, runtime):
    keys, doc, base = await _doc_team(docs, runtime, 7, approvalPolicy="single")
    pid = await _doc_propose(docs, keys[0], base)
    statuses = await asyncio.gather(*(_vote(docs, f"{base}/proposals/{pid}", k, "approve") for k in keys[1:]))
    assert Counter(statuses) == {200: 1, 409: 5}
    text = await doc_content(docs, keys[0], doc["id"])
    assert text.count("Once.") == 1

    keys, doc, base = await _doc_team(docs, runtime, 6, approvalPolicy="unanimous", allowSelfApproval="true")
    pid = await _doc_propose(docs, keys[0], base)
    statuses = await asyncio.gather(*(_vote(docs, f"{base}/proposals/{pid}", k, "approve") for k in keys))
    assert statuses == [200] * 6  # every voter, the author too, is needed
    listed = await (await docs.get(f"{base}/proposals", headers=keys[0]["headers"])).json()
    [found] = listed["proposals"]
    assert (found["status"], found["votes"]["approve"]) == ("approved", 6)
    events = await (await docs.get(f"{base}/events?after=0&limit=200", headers=keys[0]["headers"])).json()
    assert [e["type"] for e in events["events"]].count("pact.proposal.merged") == 1
