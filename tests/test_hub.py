"""Hub-wide reads (spec §4 Hub): stats with a computed consensus rate, the dependency graph, the agent
directory with limit/offset and agent profiles with participation history; 404s."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest

from domain.consensus.models import Proposal, ProposalVote
from domain.kernel import events
from domain.kernel.clock import utcnow
from domain.topics.models import Topic
from tests.test_topics import create_topic


async def _set_status(runtime: Any, topic_id: str, status: str) -> None:
    """Topic status is the consensus engine's business; the hub only reads it."""
    async with runtime.db.transaction() as session:
        (await session.get(Topic, topic_id)).status = status


async def _proposal(runtime: Any, topic_id: str, author: dict[str, Any], status: str) -> str:
    now = utcnow()
    async with runtime.db.transaction() as session:
        p = Proposal(
            resource_type="topic",
            resource_id=topic_id,
            section_id="sec:answer",
            author_id=author["agentId"],
            author_name=author["agentName"],
            new_content="New answer text",
            summary="s",
            status=status,
            created_at=now,
            expires_at=now + timedelta(minutes=5),
        )
        session.add(p)
        await session.flush()
        return p.id


async def test_stats_on_an_empty_hub(hub):
    resp = await hub.get("/api/hub/stats")
    assert resp.status == 200
    assert await resp.json() == {
        "topicCount": 0,
        "agentCount": 0,
        "proposalCount": 0,
        "consensusRate": 0.0,
        "consensusReached": 0,
        "topicsByStatus": {"proposed": 0, "open": 0, "consensus": 0, "stable": 0, "challenged": 0},
        "proposalsByStatus": {},
        "eventCount": 0,
    }


async def test_stats_count_and_compute_the_consensus_rate(hub, register, runtime):
    alice, bob, carol = await register(), await register(), await register()
    statuses = ["proposed", "proposed", "open", "consensus", "consensus", "stable", "challenged", "open"]
    topics = [await create_topic(hub, alice) for _ in statuses]
    for t, status in zip(topics, statuses, strict=True):
        await _set_status(runtime, t["id"], status)
    await hub.post(f"/api/pact/{topics[0]['id']}/join", headers=bob["headers"])
    async with runtime.db.transaction() as session:  # a document's event is not the hub's
        events.append(session, events.stream_of("document", str(uuid.uuid4())), "pact.agent.joined")
    for status in ("pending", "pending", "merged", "rejected", "expired"):
        await _proposal(runtime, topics[2]["id"], bob, status)

    stats = await (await hub.get("/api/hub/stats")).json()
    assert stats["topicCount"] == 8
    assert stats["agentCount"] == 3
    assert stats["proposalCount"] == 5
    assert stats["proposalsByStatus"] == {"pending": 2, "merged": 1, "rejected": 1, "expired": 1}
    assert stats["topicsByStatus"] == {"proposed": 2, "open": 2, "consensus": 2, "stable": 1, "challenged": 1}
    assert stats["consensusReached"] == 3
    # 3 of the 6 topics past the proposal stage reached consensus (or are stable).
    assert stats["consensusRate"] == 0.5
    assert stats["eventCount"] == 8 + 1  # one creation event per topic and one join
    assert carol["agentId"]


async def test_consensus_rate_is_a_rounded_ratio(hub, register, runtime):
    agent = await register()
    made = [await create_topic(hub, agent) for _ in range(3)]
    for t, status in zip(made, ["consensus", "open", "challenged"], strict=True):
        await _set_status(runtime, t["id"], status)
    stats = await (await hub.get("/api/hub/stats")).json()
    assert stats["consensusRate"] == 0.3333


async def test_graph_has_every_topic_as_a_node_and_each_dependency_as_an_edge(hub, register):
    agent = await register()
    base = await create_topic(hub, agent, title="Base")
    mid = await create_topic(hub, agent, title="Mid", dependsOn=[base["id"]])
    top = await create_topic(hub, agent, title="Top", dependsOn=[mid["id"], base["id"]])
    lone = await create_topic(hub, agent, title="Lone")
    resp = await hub.get("/api/hub/graph")
    assert resp.status == 200
    graph = await resp.json()
    assert {n["id"] for n in graph["nodes"]} == {base["id"], mid["id"], top["id"], lone["id"]}
    node = next(n for n in graph["nodes"] if n["id"] == mid["id"])
    assert node == {"id": mid["id"], "title": "Mid", "tier": "empirical", "status": "proposed"}
    edges = {(e["source"], e["target"], e["relationship"]) for e in graph["edges"]}
    assert edges == {
        (mid["id"], base["id"], "builds_on"),
        (top["id"], mid["id"], "builds_on"),
        (top["id"], base["id"], "builds_on"),
    }
    ids = {n["id"] for n in graph["nodes"]}
    assert all(e["source"] in ids and e["target"] in ids for e in graph["edges"])


async def test_empty_graph(hub):
    assert await (await hub.get("/api/hub/graph")).json() == {"nodes": [], "edges": []}


async def test_agent_directory_pages_with_limit_and_offset(hub, register, settings, monkeypatch):
    monkeypatch.setattr(settings, "rate_limit_register", 1000)
    made = [await register(f"Directory agent {i:02d}") for i in range(53)]
    first = await (await hub.get("/api/hub/agents")).json()
    assert first["total"] == 53
    assert first["limit"] == 50
    assert first["offset"] == 0
    assert len(first["agents"]) == 50
    rest = await (await hub.get("/api/hub/agents", params={"offset": "50"})).json()
    names = [a["agentName"] for a in first["agents"] + rest["agents"]]
    assert names == [m["agentName"] for m in made]  # registration order
    page = await (await hub.get("/api/hub/agents", params={"limit": "5", "offset": "10"})).json()
    assert [a["agentId"] for a in page["agents"]] == [m["agentId"] for m in made[10:15]]
    entry = page["agents"][0]
    assert set(entry) >= {"agentId", "agentName", "model", "framework", "createdAt", "reputation"}
    assert "apiKey" not in entry
    assert "keyHash" not in entry


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"limit": "0"}, "limit"),
        ({"limit": "201"}, "limit"),
        ({"limit": "x"}, "limit"),
        ({"offset": "-1"}, "offset"),
        ({"offset": str(2**40)}, "offset"),
    ],
)
async def test_agent_directory_rejects_bad_paging(hub, params, field):
    resp = await hub.get("/api/hub/agents", params=params)
    assert resp.status == 400
    assert (await resp.json())["field"] == field


async def test_agent_profile_has_reputation_and_participation_history(hub, register, runtime):
    alice = await register("Alice", model="claude", framework="pact-cli", description="Careful reader")
    bob = await register("Bob")
    mine = await create_topic(hub, alice, title="Alice's topic")
    theirs = await create_topic(hub, bob, title="Bob's topic")
    await hub.post(f"/api/pact/{theirs['id']}/join", headers=alice["headers"])
    merged = await _proposal(runtime, theirs["id"], alice, "merged")
    await _proposal(runtime, theirs["id"], alice, "pending")
    async with runtime.db.transaction() as session:
        session.add(
            ProposalVote(proposal_id=merged, agent_id=bob["agentId"], agent_name="Bob", kind="approve")
        )

    resp = await hub.get(f"/api/hub/agents/{alice['agentId']}")
    assert resp.status == 200
    profile = await resp.json()
    assert profile["agentId"] == alice["agentId"]
    assert profile["agentName"] == "Alice"
    assert profile["model"] == "claude"
    assert profile["framework"] == "pact-cli"
    assert profile["description"] == "Careful reader"
    assert profile["balance"] == 1000 + 5  # starting balance plus the topic-creation reward
    rep = profile["reputation"]
    assert rep["topicsCreated"] == 1
    assert rep["topicsParticipated"] == 2
    assert rep["proposalsMade"] == 2
    assert rep["proposalsMerged"] == 1
    assert rep["reviewsCast"] == 0
    assert rep["score"] == 10 * 1 + 3 * 1
    history = {(p["topicId"], p["role"], p["active"]) for p in profile["participation"]}
    assert history == {(mine["id"], "creator", True), (theirs["id"], "collaborator", True)}
    assert [a["type"] for a in profile["recentActivity"]] == ["pact.agent.joined", "pact.topic.proposed"]
    assert profile["recentActivity"][0]["resource"] == f"topic:{theirs['id']}"

    bob_profile = await (await hub.get(f"/api/hub/agents/{bob['agentId']}")).json()
    assert bob_profile["reputation"]["reviewsCast"] == 1
    listed = await (await hub.get("/api/hub/agents")).json()
    assert {a["agentId"]: a["reputation"] for a in listed["agents"]}[alice["agentId"]] == rep
    # The id is matched case-insensitively, as UUIDs are.
    upper = await hub.get(f"/api/hub/agents/{alice['agentId'].upper()}")
    assert upper.status == 200


@pytest.mark.parametrize(
    "agent_id", ["5f0c2f0e-3b1d-4c8e-9a57-2d1e6b7c4a90", "nobody", "%00", "x" * 100, "%F0%9F%A6%80"]
)
async def test_unknown_agent_is_404(hub, agent_id):
    resp = await hub.get(f"/api/hub/agents/{agent_id}")
    assert resp.status == 404, await resp.text()
    body = await resp.json()
    assert body["error"] == "agent_not_found"
    assert body["detail"]
