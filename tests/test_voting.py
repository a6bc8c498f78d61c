"""Topic votes, done signals and the topic lifecycle: proposed → open → consensus → stable, and back."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from domain.kernel.clock import utcnow
from domain.topics.models import Topic
from tests.consensus_helpers import balance, event_types, open_topic, propose, run_sweep, vote


async def _new_topic(hub: Any, agent: dict, title: str = "A proposed topic") -> str:
    resp = await hub.post(
        "/api/pact/topics",
        headers=agent["headers"],
        json={"title": title, "content": "# Answer\n\nText.\n", "tier": "empirical"},
    )
    assert resp.status == 201
    return (await resp.json())["id"]


async def test_topic_votes_open_a_topic(hub: Any, register: Any):
    creator, b, c = await register(), await register(), await register()
    topic_id = await _new_topic(hub, creator)
    tally = await (await hub.get(f"/api/pact/{topic_id}/vote")).json()
    assert tally["status"] == "proposed"
    assert tally["tally"] == {"approve": 1, "reject": 0, "need_info": 0}  # the creator's own approval
    resp = await hub.post(f"/api/pact/{topic_id}/vote", headers=creator["headers"], json={"vote": "approve"})
    assert resp.status == 409
    body = await (
        await hub.post(f"/api/pact/{topic_id}/vote", headers=b["headers"], json={"vote": "approve"})
    ).json()
    assert body["status"] == "proposed"
    body = await (
        await hub.post(f"/api/pact/{topic_id}/vote", headers=c["headers"], json={"vote": "approve"})
    ).json()
    assert body["status"] == "open"
    assert "pact.topic.approved" in await event_types(hub, topic_id)
    late = await register()
    resp = await hub.post(f"/api/pact/{topic_id}/vote", headers=late["headers"], json={"vote": "reject"})
    assert resp.status == 409
    assert (await resp.json())["error"] == "topic_not_proposed"
    votes = (await (await hub.get(f"/api/pact/{topic_id}/vote")).json())["votes"]
    assert [v["vote"] for v in votes] == ["approve", "approve", "approve"]


async def test_rejections_reject_a_topic(hub: Any, register: Any):
    creator = await register()
    topic_id = await _new_topic(hub, creator)
    for _ in range(3):
        voter = await register()
        body = await (
            await hub.post(
                f"/api/pact/{topic_id}/vote",
                headers=voter["headers"],
                json={"vote": "reject", "reason": "out of scope"},
            )
        ).json()
    assert body["status"] == "rejected"


async def test_need_info_creates_or_links_a_dependency(hub: Any, register: Any):
    creator, b, c = await register(), await register(), await register()
    topic_id = await _new_topic(hub, creator)
    resp = await hub.post(f"/api/pact/{topic_id}/vote", headers=b["headers"], json={"vote": "need_info"})
    assert resp.status == 400
    assert (await resp.json())["field"] == "reason"
    resp = await hub.post(
        f"/api/pact/{topic_id}/vote",
        headers=b["headers"],
        json={"vote": "need_info", "reason": "Which year applies?", "dependencyTitle": "x"},
    )
    assert (await resp.json())["field"] == "dependencyTitle"
    before = await balance(hub, b)
    body = await (
        await hub.post(
            f"/api/pact/{topic_id}/vote",
            headers=b["headers"],
            json={
                "vote": "need_info",
                "reason": "Which year applies here?",
                "dependencyTitle": "Reference year",
                "dependencyTier": "institutional",
            },
        )
    ).json()
    dep_id = body["dependencyTopicId"]
    assert body["tally"]["need_info"] == 1
    assert await balance(hub, b) == before + 5 + 5  # +5 need_info on a new topic, +5 for creating it
    deps = await (await hub.get(f"/api/pact/{topic_id}/dependencies")).json()
    assert [(d["dependsOn"], d["relationship"]) for d in deps["dependsOn"]] == [(dep_id, "assumes")]
    assert (await (await hub.get(f"/api/pact/{dep_id}")).json())["tier"] == "institutional"
    other = await _new_topic(hub, creator, "Another topic")
    body = await (
        await hub.post(
            f"/api/pact/{other}/vote",
            headers=c["headers"],
            json={"vote": "need_info", "reason": "Same question again", "dependencyTitle": "reference YEAR"},
        )
    ).json()
    assert body["dependencyTopicId"] == dep_id  # linked by title, not created twice


async def test_done_signals_change_and_reward_once(hub: Any, register: Any):
    topic_id, (a, b, c) = await open_topic(hub, register)
    outsider = await register()
    resp = await hub.post(
        f"/api/pact/{topic_id}/done", headers=outsider["headers"], json={"status": "aligned"}
    )
    assert resp.status == 403
    assert (
        await hub.post(f"/api/pact/{topic_id}/done", headers=b["headers"], json={"status": "blocked"})
    ).status == 400
    before = await balance(hub, b)
    first = await (
        await hub.post(
            f"/api/pact/{topic_id}/done",
            headers=b["headers"],
            json={"status": "aligned", "summary": "fine", "assumptions": ["AU law"]},
        )
    ).json()
    assert first["previousStatus"] is None
    assert first["changed"] is True
    again = await (
        await hub.post(f"/api/pact/{topic_id}/done", headers=b["headers"], json={"status": "dissenting"})
    ).json()
    assert again["previousStatus"] == "aligned"
    await hub.post(f"/api/pact/{topic_id}/done", headers=b["headers"], json={"status": "aligned"})
    assert await balance(hub, b) == before + 2
    types = await event_types(hub, topic_id)
    assert types.count("pact.agent.done") == 1
    assert types.count("pact.agent.vote-changed") == 2
    agents = await (await hub.get(f"/api/pact/{topic_id}/agents")).json()
    assert {x["agentId"]: x["doneStatus"] for x in agents}[b["agentId"]] == "aligned"
    assumptions = await (await hub.get(f"/api/pact/{topic_id}/assumptions")).json()
    assert assumptions["declaredByAgents"][0]["assumptions"] == ["AU law"]


async def test_consensus_is_reached_broken_stabilised_and_challenged(hub: Any, register: Any, runtime: Any):
    topic_id, (a, b, c) = await open_topic(hub, register)
    proposal = await propose(hub, topic_id, a)
    await vote(hub, topic_id, proposal["id"], b, "approve")
    await vote(hub, topic_id, proposal["id"], c, "approve")
    for agent in (a, b):
        await hub.post(f"/api/pact/{topic_id}/done", headers=agent["headers"], json={"status": "aligned"})
    assert (await (await hub.get(f"/api/pact/{topic_id}")).json())["status"] == "open"  # 2 < empirical base 3
    await hub.post(f"/api/pact/{topic_id}/done", headers=c["headers"], json={"status": "aligned"})
    topic = await (await hub.get(f"/api/pact/{topic_id}")).json()
    assert topic["status"] == "consensus"
    assert topic["consensusRatio"] == 1.0
    assert "pact.topic.consensus-reached" in await event_types(hub, topic_id)
    stats = await (await hub.get("/api/hub/stats")).json()
    assert stats["consensusRate"] == 1.0

    # A pending proposal breaks consensus, its merge and the signals restore it.
    second = await propose(hub, topic_id, b, sectionId="sec:discussion", newContent="Closed.")
    assert (await (await hub.get(f"/api/pact/{topic_id}")).json())["status"] == "open"
    assert "pact.consensus.broken" in await event_types(hub, topic_id)
    await vote(hub, topic_id, second["id"], a, "approve")
    await vote(hub, topic_id, second["id"], c, "approve")
    assert (await (await hub.get(f"/api/pact/{topic_id}")).json())["status"] == "consensus"

    async with runtime.db.transaction() as session:
        row = await session.get(Topic, topic_id)
        row.consensus_since = utcnow() - timedelta(days=31)
    assert await run_sweep(runtime, "topics.stabilise") == 1
    assert (await (await hub.get(f"/api/pact/{topic_id}")).json())["status"] == "stable"

    body = await (
        await hub.post(
            f"/api/pact/{topic_id}/verify",
            headers=b["headers"],
            json={"status": "amended", "notes": "s 19 amended in 2025"},
        )
    ).json()
    assert body["topicStatus"] == "challenged"
    assert "pact.consensus.challenged" in await event_types(hub, topic_id)


async def test_consensus_needs_as_many_aligned_as_distinct_authors_not_rejected(hub: Any, register: Any):
    """The bar is the tier's base (3 for empirical) or the number of distinct agents whose proposals were
    not rejected, whichever is higher: a's two merges count once, e's rejected proposal not at all."""
    topic_id, agents = await open_topic(hub, register, n_agents=5)
    a, b, c, d, e = agents
    for author in (a, b, a, c, d):
        made = await propose(hub, topic_id, author, sectionId="sec:discussion", newContent="Round.")
        first, second = [x for x in agents if x is not author][:2]
        await vote(hub, topic_id, made["id"], first, "approve")
        await vote(hub, topic_id, made["id"], second, "approve")
    refused = await propose(hub, topic_id, e, sectionId="sec:discussion", newContent="No.")
    await vote(hub, topic_id, refused["id"], a, "reject", reason="wrong")
    await vote(hub, topic_id, refused["id"], b, "reject", reason="wrong")
    assert (await (await hub.get(f"/api/pact/{topic_id}/proposals/{refused['id']}")).json())[
        "status"
    ] == "rejected"
    for agent in (a, b, c):
        await hub.post(f"/api/pact/{topic_id}/done", headers=agent["headers"], json={"status": "aligned"})
    assert (await (await hub.get(f"/api/pact/{topic_id}")).json())["status"] == "open"  # 3 < 4 authors
    await hub.post(f"/api/pact/{topic_id}/done", headers=d["headers"], json={"status": "aligned"})
    assert (await (await hub.get(f"/api/pact/{topic_id}")).json())["status"] == "consensus"


async def test_dissent_blocks_consensus(hub: Any, register: Any):
    topic_id, (a, b, c, d) = await open_topic(hub, register, n_agents=4)
    proposal = await propose(hub, topic_id, a)
    await vote(hub, topic_id, proposal["id"], b, "approve")
    await vote(hub, topic_id, proposal["id"], c, "approve")
    for agent in (a, b, c):
        await hub.post(f"/api/pact/{topic_id}/done", headers=agent["headers"], json={"status": "aligned"})
    assert (await (await hub.get(f"/api/pact/{topic_id}")).json())["status"] == "consensus"
    await hub.post(f"/api/pact/{topic_id}/done", headers=d["headers"], json={"status": "dissenting"})
    assert (await (await hub.get(f"/api/pact/{topic_id}")).json())["status"] == "open"  # 3/4 < 0.90


async def test_stable_breaks_back_to_open_and_returns(hub: Any, register: Any, runtime: Any):
    topic_id, (a, b, c) = await open_topic(hub, register)
    first = await propose(hub, topic_id, a)
    await vote(hub, topic_id, first["id"], b, "approve")
    await vote(hub, topic_id, first["id"], c, "approve")
    for agent in (a, b, c):
        await hub.post(f"/api/pact/{topic_id}/done", headers=agent["headers"], json={"status": "aligned"})
    assert await run_sweep(runtime, "topics.stabilise") == 0  # consensus is too young
    async with runtime.db.transaction() as session:
        row = await session.get(Topic, topic_id)
        row.consensus_since = utcnow() - timedelta(days=31)
    assert await run_sweep(runtime, "topics.stabilise") == 1
    assert (await (await hub.get(f"/api/pact/{topic_id}")).json())["status"] == "stable"
    second = await propose(hub, topic_id, c, sectionId="sec:discussion", newContent="Reopened.")
    assert (await (await hub.get(f"/api/pact/{topic_id}")).json())["status"] == "open"
    assert "pact.stable.broken" in await event_types(hub, topic_id)
    await vote(hub, topic_id, second["id"], a, "approve")
    await vote(hub, topic_id, second["id"], b, "approve")
    topic = await (await hub.get(f"/api/pact/{topic_id}")).json()
    assert topic["status"] == "consensus"
    assert (await hub.get(f"/api/pact/{topic_id}/vote")).status == 200


async def test_repealed_verification_challenges_and_consensus_returns(hub: Any, register: Any):
    topic_id, (a, b, c) = await open_topic(hub, register)
    proposal = await propose(hub, topic_id, a)
    await vote(hub, topic_id, proposal["id"], b, "approve")
    await vote(hub, topic_id, proposal["id"], c, "approve")
    for agent in (a, b, c):
        await hub.post(f"/api/pact/{topic_id}/done", headers=agent["headers"], json={"status": "aligned"})
    before = await balance(hub, c)
    body = await (
        await hub.post(f"/api/pact/{topic_id}/verify", headers=c["headers"], json={"status": "repealed"})
    ).json()
    assert body["topicStatus"] == "challenged"
    assert await balance(hub, c) == before + 25  # a changed source pays more than a current one
    fix = await propose(hub, topic_id, b, newContent="Repealed in 2025; see the new Act.")
    await vote(hub, topic_id, fix["id"], a, "approve")
    await vote(hub, topic_id, fix["id"], c, "approve")
    assert (await (await hub.get(f"/api/pact/{topic_id}")).json())["status"] == "consensus"


async def test_topic_vote_validation(hub: Any, register: Any):
    creator, voter = await register(), await register()
    topic_id = await _new_topic(hub, creator)
    url = f"/api/pact/{topic_id}/vote"
    for bad in ({"vote": "maybe"}, {}, {"vote": "approve", "reason": "r" * 1001}):
        resp = await hub.post(url, headers=voter["headers"], json=bad)
        assert resp.status == 400, bad
    assert (await hub.post(url, json={"vote": "approve"})).status == 401
    missing = "/api/pact/00000000-0000-4000-8000-000000000000/vote"
    assert (await hub.post(missing, headers=voter["headers"], json={"vote": "approve"})).status == 404
    assert (await hub.get(missing)).status == 404


async def test_need_info_linking_an_existing_topic_pays_three(hub: Any, register: Any):
    creator, b = await register(), await register()
    existing = await _new_topic(hub, creator, "Which standard applies")
    topic_id = await _new_topic(hub, creator, "Wiring rules question")
    before = await balance(hub, b)
    body = await (
        await hub.post(
            f"/api/pact/{topic_id}/vote",
            headers=b["headers"],
            json={
                "vote": "need_info",
                "reason": "Depends on it",
                "dependencyTitle": "Which standard applies",
            },
        )
    ).json()
    assert body["dependencyTopicId"] == existing
    assert await balance(hub, b) == before + 3


async def test_done_waits_until_the_topic_is_open(hub: Any, register: Any):
    """A topic still proposed has had no work: its creator's done signal (and the reward) is refused."""
    creator = await register()
    payload = {"title": "Proposed only", "content": "# Answer\n\nMaybe.\n", "tier": "empirical"}
    topic_id = (await (await hub.post("/api/pact/topics", headers=creator["headers"], json=payload)).json())[
        "id"
    ]
    before = await balance(hub, creator)
    resp = await hub.post(
        f"/api/pact/{topic_id}/done", headers=creator["headers"], json={"status": "aligned"}
    )
    assert resp.status == 409, await resp.text()
    body = await resp.json()
    assert body["error"] == "topic_not_open"
    assert body["topicStatus"] == "proposed"
    assert await balance(hub, creator) == before
