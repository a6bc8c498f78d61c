"""Steps of the review tests: agents propose, object and escalate on a document through the document API."""

from __future__ import annotations

from typing import Any


async def doc_propose(
    docs: Any, key: dict, base: str, section: str = "sec:plan:budget", text: str = "x"
) -> str:
    resp = await docs.post(
        f"{base}/proposals",
        headers=key["headers"],
        json={"sectionId": section, "content": text, "summary": "s"},
    )
    assert resp.status == 201, await resp.text()
    return str((await resp.json())["proposalId"])


async def doc_object(docs: Any, key: dict, base: str, proposal_id: str, reason: str = "legal") -> None:
    resp = await docs.post(
        f"{base}/proposals/{proposal_id}/object", headers=key["headers"], json={"reason": reason}
    )
    assert resp.status == 200, await resp.text()
    assert (await resp.json())["status"] == "objected"


async def doc_escalate(docs: Any, key: dict, base: str, **body: Any) -> dict[str, Any]:
    resp = await docs.post(f"{base}/escalate", headers=key["headers"], json=body)
    assert resp.status == 201, await resp.text()
    return dict(await resp.json())


async def doc_events(docs: Any, key: dict, base: str) -> list[dict[str, Any]]:
    resp = await docs.get(f"{base}/events?after=0&limit=200", headers=key["headers"])
    assert resp.status == 200, await resp.text()
    return list((await resp.json())["events"])


async def audit_ops(runtime: Any, entity_id: str) -> list[tuple[str, str | None]]:
    """(op, actor id) of the audit entries about one entity, oldest first."""
    from sqlalchemy import select

    from domain.kernel.models import AuditEntry

    async with runtime.db.read() as session:
        rows = (
            await session.execute(
                select(AuditEntry.op, AuditEntry.actor_id)
                .where(AuditEntry.entity_id == entity_id)
                .order_by(AuditEntry.id)
            )
        ).all()
    return [(op, actor) for op, actor in rows]


async def asked_about_a_human_only_proposal(hub: Any, register: Any, reviewer: dict) -> dict[str, Any]:
    """A human-only topic: its author proposes (the policy raises an escalation naming the proposal) and
    another agent asks about the proposal itself. The topic id, the author, the proposal, the agent's
    question's id and the policy's escalation as the reviewers' queue lists it."""
    from tests.consensus_helpers import open_topic, propose

    topic_id, (author, asker, _third) = await open_topic(hub, register, approvalPolicy="human-only")
    made = await propose(hub, topic_id, author, newContent="Waiting for a person.")
    resp = await hub.post(
        f"/api/pact/{topic_id}/escalate",
        headers=asker["headers"],
        json={"question": "Is this one sourced?", "proposalId": made["id"]},
    )
    assert resp.status == 201, await resp.text()
    asked = (await resp.json())["escalationId"]
    queue = await (await hub.get("/api/review/escalations", headers=reviewer)).json()
    [raised] = [e for e in queue["escalations"] if e["escalationId"] != asked]
    assert raised["proposal"]["proposalId"] == made["id"]
    return {"topic_id": topic_id, "author": author, "proposal": made, "asked": asked, "raised": raised}
