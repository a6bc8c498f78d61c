"""Agents acting at once never corrupt a vote count, a balance or a section (SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from typing import Any

from domain.kernel import ledger
from tests.consensus_helpers import (
    CONTENT,
    balance,
    content,
    expire_now,
    open_topic,
    propose,
    run_sweep,
    vote,
)


async def _vote(hub: Any, topic_id: str, proposal_id: str, agent: dict, kind: str) -> int:
    body = {"reason": "concurrent"} if kind != "approve" else None
    resp = await hub.post(
        f"/api/pact/{topic_id}/proposals/{proposal_id}/{kind}", headers=agent["headers"], json=body
    )
    await resp.read()
    return resp.status


async def test_many_approvals_at_once_merge_exactly_once(hub: Any, register: Any):
    topic_id, agents = await open_topic(hub, register, n_agents=9)
    author, voters = agents[0], agents[1:]
    proposal = await propose(hub, topic_id, author, newContent="Merged once.")
    statuses = await asyncio.gather(*(_vote(hub, topic_id, proposal["id"], v, "approve") for v in voters))
    assert Counter(statuses) == {200: 2, 409: 6}  # needed is 2: the rest find it merged
    one = await (await hub.get(f"/api/pact/{topic_id}/proposals/{proposal['id']}")).json()
    assert one["status"] == "merged"
    assert one["approveCount"] == 2 == len(one["votes"])
    body = await content(hub, topic_id)
    assert body["version"] == 2
    assert body["content"].count("Merged once.") == 1


async def test_mixed_votes_at_once_give_one_outcome_and_exact_counts(hub: Any, register: Any):
    topic_id, agents = await open_topic(hub, register, n_agents=10)
    author, voters = agents[0], agents[1:]
    proposal = await propose(hub, topic_id, author)
    kinds = ["approve", "reject", "object"] * 3
    statuses = await asyncio.gather(
        *(_vote(hub, topic_id, proposal["id"], v, k) for v, k in zip(voters, kinds, strict=True))
    )
    assert set(statuses) <= {200, 409}
    one = await (await hub.get(f"/api/pact/{topic_id}/proposals/{proposal['id']}")).json()
    recorded = Counter(v["vote"] for v in one["votes"])
    assert (
        recorded
        == Counter(
            {"approve": one["approveCount"], "reject": one["rejectCount"], "object": one["objectCount"]}
        )
        - Counter()
    )
    assert statuses.count(200) == len(one["votes"])
    assert one["status"] in ("merged", "rejected")
    if one["status"] == "rejected":
        assert one["rejectCount"] == 2
    else:
        assert one["approveCount"] - one["objectCount"] == 2


async def test_rival_proposals_approved_at_once_merge_one(hub: Any, register: Any):
    topic_id, (a, b, c, d) = await open_topic(hub, register, n_agents=4)
    first = await propose(hub, topic_id, a, newContent="Version A.")
    second = await propose(hub, topic_id, d, newContent="Version D.")
    await asyncio.gather(
        *(_vote(hub, topic_id, p["id"], v, "approve") for p in (first, second) for v in (b, c))
    )
    listed = {
        p["id"]: p["status"]
        for p in (await (await hub.get(f"/api/pact/{topic_id}/proposals")).json())["proposals"]
    }
    assert sorted(listed.values()) == ["merged", "superseded"]
    text = (await content(hub, topic_id))["content"]
    winner = "Version A." if listed[first["id"]] == "merged" else "Version D."
    loser = "Version D." if winner == "Version A." else "Version A."
    assert winner in text
    assert loser not in text


async def test_concurrent_spending_never_overdraws(hub: Any, register: Any, runtime: Any):
    topic_id, (a, *_rest) = await open_topic(hub, register)
    start = await balance(hub, a)  # 1005
    url = f"/api/pact/{topic_id}/bounty"

    async def fund() -> int:
        resp = await hub.post(url, headers=a["headers"], json={"amount": 300})
        await resp.read()
        return resp.status

    async def stake() -> int:
        resp = await hub.post(
            f"/api/pact/{topic_id}/proposals",
            headers=a["headers"],
            json={"sectionId": "sec:discussion", "newContent": "x", "summary": "y"},
        )
        await resp.read()
        return resp.status

    statuses = await asyncio.gather(*([fund() for _ in range(6)] + [stake() for _ in range(6)]))
    funded = statuses[:6].count(200)
    staked = statuses[6:].count(201)
    assert set(statuses[:6]) <= {200, 402}
    assert set(statuses[6:]) <= {201, 402}
    final = await balance(hub, a)
    assert final == start - 300 * funded - 5 * staked
    assert final >= 0
    assert funded == 3  # 3 × 300 fit in 1005, a fourth never does
    assert (await (await hub.get(url)).json())["escrow"] == 300 * funded
    async with runtime.db.read() as session:
        assert await ledger.total_supply(session) == 0


async def _shared_topics(hub: Any, agents: list[dict], n: int) -> list[str]:
    """`n` open topics, each created by a different agent, with every agent joined to every topic."""
    made = []
    for i in range(n):
        resp = await hub.post(
            "/api/pact/topics",
            headers=agents[i]["headers"],
            json={
                "title": f"Shared topic {i} {uuid.uuid4().hex[:12]}",
                "content": CONTENT,
                "tier": "empirical",
            },
        )
        assert resp.status == 201, await resp.text()
        topic_id = (await resp.json())["id"]
        for other in agents:
            if other is not agents[i]:
                await hub.post(
                    f"/api/pact/{topic_id}/vote", headers=other["headers"], json={"vote": "approve"}
                )
            await hub.post(f"/api/pact/{topic_id}/join", headers=other["headers"])
        made.append(topic_id)
    return made


async def test_ledger_traffic_across_topics_never_deadlocks(hub: Any, register: Any, runtime: Any):
    """Merges (review and merge rewards), stakes, bounties and done signals on several topics at once,
    by agents who are authors on one topic and voters on another: no deadlock (no 500), supply kept."""
    agents = [await register() for _ in range(6)]
    topic_ids = await _shared_topics(hub, agents, 4)
    seen: Counter = Counter()

    async def call(path: str, agent: dict, body: dict | None = None) -> None:
        resp = await hub.post(path, headers=agent["headers"], json=body)
        seen[resp.status] += 1
        assert resp.status < 500, await resp.text()

    for rnd in range(4):
        ready = []
        for i, topic_id in enumerate(topic_ids):
            author = agents[(i + rnd) % 6]
            made = await propose(hub, topic_id, author, newContent=f"Round {rnd}.")
            await call(f"/api/pact/{topic_id}/proposals/{made['id']}/approve", agents[(i + rnd + 1) % 6])
            ready.append((topic_id, made["id"], agents[(i + rnd + 2) % 6]))
        jobs = [call(f"/api/pact/{t}/proposals/{p}/approve", v) for t, p, v in ready]
        jobs += [
            call(
                f"/api/pact/{topic_ids[(k + 1) % 4]}/proposals",
                agents[k],
                {"sectionId": "sec:discussion", "newContent": "x", "summary": "y"},
            )
            for k in range(6)
        ]
        jobs += [call(f"/api/pact/{topic_ids[k % 4]}/bounty", agents[k], {"amount": 10}) for k in range(6)]
        signal = "aligned" if rnd % 2 else "dissenting"
        jobs += [call(f"/api/pact/{topic_ids[k % 4]}/done", agents[k], {"status": signal}) for k in range(6)]
        await asyncio.gather(*jobs)
    assert seen[200] + seen[201] == sum(seen.values())
    async with runtime.db.read() as session:
        assert await ledger.total_supply(session) == 0
    for topic_id in topic_ids:
        assert (await content(hub, topic_id))["version"] == 5  # one merge per round


async def test_ttl_sweep_across_topics_while_agents_vote(hub: Any, register: Any, runtime: Any):
    """The TTL sweep locks every topic it touches before its first change, so it never deadlocks with
    votes (which lock their topic, then wallets) on the same topics."""
    agents = [await register() for _ in range(5)]
    topic_ids = await _shared_topics(hub, agents, 4)
    due, live = [], []
    for i, topic_id in enumerate(topic_ids):
        author, voter, last = agents[i], agents[(i + 1) % 5], agents[(i + 2) % 5]
        expiring = await propose(hub, topic_id, author, sectionId="sec:answer", ttl=30, newContent="Auto.")
        await vote(hub, topic_id, expiring["id"], voter, "approve")
        await expire_now(runtime, expiring["id"])
        due.append((topic_id, expiring["id"]))
        other = await propose(hub, topic_id, voter, sectionId="sec:discussion", newContent="Voted.")
        await vote(hub, topic_id, other["id"], author, "approve")
        live.append((topic_id, other["id"], last))
    results = await asyncio.gather(
        run_sweep(runtime, "topics.expire_proposals"),
        *(_vote(hub, t, p, v, "approve") for t, p, v in reversed(live)),
    )
    assert results[0] == 4
    assert results[1:] == [200] * 4
    for topic_id, proposal_id in due:
        one = await (await hub.get(f"/api/pact/{topic_id}/proposals/{proposal_id}")).json()
        assert one["status"] == "merged"
        text = (await content(hub, topic_id))["content"]
        assert "Auto." in text
        assert "Voted." in text
    async with runtime.db.read() as session:
        assert await ledger.total_supply(session) == 0


async def test_concurrent_dependencies_never_close_a_cycle(hub: Any, register: Any):
    """X→A→B→X with every edge added at once: whichever commit order, one edge is refused."""
    agents = [await register() for _ in range(3)]
    x, a, b = await _shared_topics(hub, agents, 3)
    body = {"relationship": "builds_on", "justification": "concurrent"}

    async def add(src: str, dst: str) -> int:
        resp = await hub.post(
            f"/api/pact/{src}/dependencies", headers=agents[0]["headers"], json={**body, "dependsOn": dst}
        )
        text = await resp.text()
        assert resp.status in (201, 409), text
        return resp.status

    for _ in range(3):
        statuses = await asyncio.gather(add(x, a), add(a, b), add(b, x))
        assert sorted(statuses) == [201, 201, 409]
        x, a, b = await _shared_topics(hub, agents, 3)
    pair = await asyncio.gather(add(x, a), add(a, x))
    assert sorted(pair) == [201, 409]


async def test_topic_votes_at_once_open_the_topic_once(hub: Any, register: Any):
    creator = await register()
    voters = [await register() for _ in range(6)]
    resp = await hub.post(
        "/api/pact/topics",
        headers=creator["headers"],
        json={"title": f"Voted at once {uuid.uuid4().hex[:8]}", "content": CONTENT, "tier": "empirical"},
    )
    topic_id = (await resp.json())["id"]

    async def cast(agent: dict) -> int:
        resp = await hub.post(
            f"/api/pact/{topic_id}/vote", headers=agent["headers"], json={"vote": "approve"}
        )
        await resp.read()
        return resp.status

    statuses = await asyncio.gather(*(cast(v) for v in voters))
    assert Counter(statuses) == {200: 2, 409: 4}  # the creator's vote and two more open it
    tally = await (await hub.get(f"/api/pact/{topic_id}/vote")).json()
    assert tally["status"] == "open"
    assert tally["tally"]["approve"] == 3 == len(tally["votes"])
    events = await (await hub.get(f"/api/pact/{topic_id}/events", params={"limit": "200"})).json()
    assert [e["type"] for e in events["events"]].count("pact.topic.approved") == 1


async def test_one_agent_voting_twice_at_once_counts_once(hub: Any, register: Any):
    topic_id, (author, b, *_rest) = await open_topic(hub, register, n_agents=5)
    proposal = await propose(hub, topic_id, author)
    statuses = await asyncio.gather(
        *(
            _vote(hub, topic_id, proposal["id"], b, kind)
            for kind in ("approve", "reject", "object", "approve")
        )
    )
    assert Counter(statuses) == {200: 1, 409: 3}
    one = await (await hub.get(f"/api/pact/{topic_id}/proposals/{proposal['id']}")).json()
    assert one["approveCount"] + one["rejectCount"] + one["objectCount"] == 1 == len(one["votes"])


async def test_done_signals_at_once_reach_consensus_and_pay_the_bounty_once(
    hub: Any, register: Any, runtime: Any
):
    topic_id, agents = await open_topic(hub, register, n_agents=5)
    author, b, c = agents[0], agents[1], agents[2]
    assert (
        await hub.post(f"/api/pact/{topic_id}/bounty", headers=b["headers"], json={"amount": 100})
    ).status == 200
    proposal = await propose(hub, topic_id, author)
    await vote(hub, topic_id, proposal["id"], b, "approve")
    await vote(hub, topic_id, proposal["id"], c, "approve")

    async def signal(agent: dict) -> int:
        resp = await hub.post(
            f"/api/pact/{topic_id}/done", headers=agent["headers"], json={"status": "aligned"}
        )
        await resp.read()
        return resp.status

    assert await asyncio.gather(*(signal(x) for x in agents)) == [200] * 5
    assert (await (await hub.get(f"/api/pact/{topic_id}")).json())["status"] == "consensus"
    pool = await (await hub.get(f"/api/pact/{topic_id}/bounty")).json()
    assert (pool["escrow"], pool["paid"]) == (0, 100)
    body = await (await hub.get(f"/api/pact/{topic_id}/events", params={"limit": "200"})).json()
    types = [e["type"] for e in body["events"]]
    assert types.count("pact.topic.consensus-reached") == 1
    assert types.count("pact.bounty.distributed") == 1
    async with runtime.db.read() as session:
        assert await ledger.total_supply(session) == 0


async def test_one_agent_setting_salience_at_once_keeps_one_score(hub: Any, register: Any):
    topic_id, (a, *_rest) = await open_topic(hub, register)

    async def score(n: int) -> int:
        resp = await hub.post(
            f"/api/pact/{topic_id}/salience",
            headers=a["headers"],
            json={"sectionId": "sec:answer", "score": n},
        )
        await resp.read()
        return resp.status

    assert await asyncio.gather(*(score(n) for n in range(6))) == [200] * 6
    body = await (await hub.get(f"/api/pact/{topic_id}/salience")).json()
    answer = next(s for s in body["sections"] if s["sectionId"] == "sec:answer")
    assert len(answer["scores"]) == 1
    assert answer["scores"][0]["score"] in range(6)


async def test_need_info_naming_one_new_prerequisite_at_once(hub: Any, register: Any):
    creator = await register()
    voters = [await register() for _ in range(4)]
    topic_ids = []
    for n in range(4):
        resp = await hub.post(
            "/api/pact/topics",
            headers=creator["headers"],
            json={"title": f"Needs info {n} {uuid.uuid4().hex[:8]}", "content": CONTENT, "tier": "empirical"},
        )
        topic_ids.append((await resp.json())["id"])
    title = f"Shared prerequisite {uuid.uuid4().hex[:8]}"

    async def ask(topic_id: str, agent: dict) -> tuple[int, Any]:
        resp = await hub.post(
            f"/api/pact/{topic_id}/vote",
            headers=agent["headers"],
            json={"vote": "need_info", "reason": "Which rule applies here?", "dependencyTitle": title},
        )
        return resp.status, await resp.json()

    answers = await asyncio.gather(*(ask(t, v) for t, v in zip(topic_ids, voters, strict=True)))
    assert all(status < 500 for status, _ in answers), answers
    linked = {body["dependencyTopicId"] for status, body in answers if status == 200}
    assert len(linked) == 1  # one prerequisite topic, however many asked for it at once
