"""Shared steps for the consensus tests: agents, an open topic, proposals and votes over HTTP."""

from __future__ import annotations

import uuid
from typing import Any

from domain import wiring
from domain.consensus.models import Proposal
from domain.kernel import sweeps

CONTENT = "# Answer\n\nThe first answer.\n\n## Evidence\n\nSome evidence.\n\n# Discussion\n\nOpen points.\n"


async def open_topic(hub: Any, register: Any, n_agents: int = 3, **fields: Any) -> tuple[str, list[dict]]:
    """A topic opened by topic votes, with `n_agents` joined agents (the first is the creator)."""
    agents = [await register() for _ in range(max(n_agents, 3))]
    payload = {"title": f"Topic {uuid.uuid4().hex[:8]}", "content": CONTENT, "tier": "empirical", **fields}
    resp = await hub.post("/api/pact/topics", headers=agents[0]["headers"], json=payload)
    assert resp.status == 201, await resp.text()
    topic_id = (await resp.json())["id"]
    for voter in agents[1:3]:  # the creator's approval counts: two more open it
        resp = await hub.post(
            f"/api/pact/{topic_id}/vote", headers=voter["headers"], json={"vote": "approve"}
        )
        assert resp.status == 200, await resp.text()
    for agent in agents[1:]:
        resp = await hub.post(f"/api/pact/{topic_id}/join", headers=agent["headers"])
        assert resp.status == 200, await resp.text()
    return topic_id, agents[:n_agents] if n_agents >= 3 else agents


async def propose(hub: Any, topic_id: str, agent: dict, expect: int = 201, **fields: Any) -> dict[str, Any]:
    body = {"sectionId": "sec:answer", "newContent": "A better answer.", "summary": "Clarify", **fields}
    resp = await hub.post(f"/api/pact/{topic_id}/proposals", headers=agent["headers"], json=body)
    assert resp.status == expect, await resp.text()
    return await resp.json()


async def vote(
    hub: Any, topic_id: str, proposal_id: str, agent: dict, kind: str, expect: int = 200, **body: Any
) -> dict[str, Any]:
    url = f"/api/pact/{topic_id}/proposals/{proposal_id}/{kind}"
    resp = await hub.post(url, headers=agent["headers"], json=body or None)
    assert resp.status == expect, await resp.text()
    return await resp.json()


async def content(hub: Any, topic_id: str) -> dict[str, Any]:
    return await (await hub.get(f"/api/pact/{topic_id}/content")).json()


async def balance(hub: Any, agent: dict) -> int:
    return (await (await hub.get("/api/pact/wallet", headers=agent["headers"])).json())["balance"]


async def event_types(hub: Any, topic_id: str) -> list[str]:
    body = await (await hub.get(f"/api/pact/{topic_id}/events", params={"limit": "200"})).json()
    return [e["type"] for e in body["events"]]


async def run_sweep(runtime: Any, name: str) -> int:
    item = next(s for s in wiring.SWEEPS if s.name == name)
    return await sweeps.run(runtime.db, item, "test")


async def expire_now(runtime: Any, proposal_id: str) -> None:
    from datetime import timedelta

    from domain.kernel.clock import utcnow

    async with runtime.db.transaction() as session:
        proposal = await session.get(Proposal, proposal_id)
        proposal.expires_at = utcnow() - timedelta(seconds=1)
