"""Helpers shared by the Axiom tests: commercial keys, staff keys, ingest and facts."""

from __future__ import annotations

from typing import Any

from sqlalchemy import update

from domain.kernel.clock import utcnow


async def axiom_key(hub: Any, owner: str = "Acme Research") -> dict[str, Any]:
    resp = await hub.post("/api/axiom/keys", json={"ownerName": owner})
    assert resp.status == 201, await resp.text()
    data = await resp.json()
    data["headers"] = {"Authorization": f"Bearer {data['apiKey']}"}
    return data


async def staff_headers(
    runtime: Any, name: str = "Curator", roles: tuple[str, ...] = ("curator", "reviewer")
) -> dict[str, str]:
    from domain.people import staff

    async with runtime.db.transaction() as session:
        created = await staff.create(session, name=name, roles=roles)
    return {"Authorization": f"Bearer {created['apiKey']}"}


async def ingest(hub: Any, headers: dict[str, str], *docs: dict[str, Any]) -> dict[str, Any]:
    resp = await hub.post("/api/axiom/legislation/ingest", json={"documents": list(docs)}, headers=headers)
    assert resp.status == 200, await resp.text()
    return await resp.json()


def act(title: str, jurisdiction: str, *sections: tuple[str, str], **extra: Any) -> dict[str, Any]:
    return {
        "title": title,
        "jurisdiction": jurisdiction,
        "type": extra.pop("type", "act"),
        "sections": [{"sectionId": sid, "title": heading} for sid, heading in sections],
        **extra,
    }


async def make_fact(
    hub: Any, runtime: Any, headers: dict[str, str], status: str = "consensus", **body: Any
) -> str:
    """Create a topic through the API, then set its status directly (the consensus lifecycle is
    another area's work)."""
    from domain.topics.models import Topic

    payload = {"title": "A fact", "content": "# Answer\n\nAn answer.\n", "tier": "empirical", **body}
    resp = await hub.post("/api/pact/topics", headers=headers, json=payload)
    assert resp.status == 201, await resp.text()
    topic_id = (await resp.json())["id"]
    async with runtime.db.transaction() as session:
        await session.execute(
            update(Topic)
            .where(Topic.id == topic_id)
            .values(
                status=status,
                consensus_ratio=1.0,
                consensus_voters=3,
                consensus_since=utcnow(),
            )
        )
    return topic_id
