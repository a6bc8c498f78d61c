"""Salience scores set at once, on topics and on documents (SQLite and PostgreSQL): one row per agent and
section, no 500, and each score replaces exactly the one before it."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.consensus_helpers import open_topic
from tests.documents_support import make_key, upload_ready

MD = b"# Plan\n\nIntro.\n\n## Budget\n\nMoney.\n"


def _one_chain(scores: list[int], previous: list[int | None], final: int) -> None:
    """The writes were applied one after another: the first found nothing, every other replaced the score
    of exactly one earlier write, and the last one's score is what remains."""
    assert previous.count(None) == 1, previous
    replaced = [p for p in previous if p is not None]
    assert sorted([*replaced, final]) == sorted(scores), (previous, final)


async def test_first_scores_of_one_agent_at_once_on_a_topic(hub: Any, register: Any) -> None:
    topic_id, (a, b, _c) = await open_topic(hub, register)
    scores = list(range(8))

    async def score(agent: dict[str, Any], n: int) -> tuple[int, Any]:
        resp = await hub.post(
            f"/api/pact/{topic_id}/salience",
            headers=agent["headers"],
            json={"sectionId": "sec:answer", "score": n},
        )
        return resp.status, await resp.json()

    results = await asyncio.gather(*(score(a, n) for n in scores), *(score(b, n) for n in (4, 6)))
    assert [status for status, _ in results] == [200] * 10, results
    body = await (await hub.get(f"/api/pact/{topic_id}/salience")).json()
    answer = next(s for s in body["sections"] if s["sectionId"] == "sec:answer")
    final = {s["agentId"]: s["score"] for s in answer["scores"]}
    assert len(answer["scores"]) == 2
    assert set(final) == {a["agentId"], b["agentId"]}
    _one_chain(scores, [r["previousScore"] for _, r in results[:8]], final[a["agentId"]])


async def test_first_scores_of_one_agent_at_once_on_a_document(docs: Any, runtime: Any) -> None:
    alice = await make_key(runtime, org="Acme", name="alice-key")
    bob = await make_key(runtime, org="Acme", name="bob-key")
    doc = await upload_ready(docs, alice, MD, "plan.md")
    base = f"/api/tap/{doc['id']}"
    for key, name in ((alice, "Alice"), (bob, "Bob")):
        resp = await docs.post(f"{base}/join", headers=key["headers"], json={"agentName": name})
        assert resp.status == 201, await resp.text()
    scores = list(range(8))

    async def score(key: dict[str, Any], n: int) -> tuple[int, Any]:
        resp = await docs.post(
            f"{base}/salience", headers=key["headers"], json={"sectionId": "sec:plan:budget", "score": n}
        )
        return resp.status, await resp.json()

    results = await asyncio.gather(*(score(alice, n) for n in scores), *(score(bob, n) for n in (4, 6)))
    assert [status for status, _ in results] == [200] * 10, results
    # Every answer carries the time of the agent's first score, however the writes were ordered.
    assert len({r["createdAt"] for _, r in results[:8]}) == 1
    body = await (await docs.get(f"{base}/salience", headers=alice["headers"])).json()
    assert [s["sectionId"] for s in body["salience"]] == ["sec:plan:budget"]
    final = {s["agentName"]: s["score"] for s in body["salience"][0]["scores"]}
    assert set(final) == {"Alice", "Bob"}
    assert len(body["entries"]) == 2
    resp = await docs.get(f"{base}/events?after=0&limit=200", headers=alice["headers"])
    mine = [
        e["data"]
        for e in (await resp.json())["events"]
        if e["type"] == "pact.salience.set" and e["data"]["agentName"] == "Alice"
    ]
    assert len(mine) == 8
    _one_chain(scores, [d["previous"] for d in mine], final["Alice"])
