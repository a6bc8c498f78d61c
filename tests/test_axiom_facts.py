"""Axiom facts: only topics in consensus or stable, provenance, citations, consensus metadata, filters
and full-text search (PostgreSQL full-text or SQLite FTS5)."""

from __future__ import annotations

from sqlalchemy import update

from domain.consensus.models import Proposal
from domain.kernel.clock import utcnow
from domain.topics.models import Topic
from tests.axiom_helpers import axiom_key, make_fact


async def facts(hub, key, status=200, **params):
    resp = await hub.get("/api/axiom/facts", params=params, headers=key["headers"])
    body = await resp.json()
    assert resp.status == status, body
    return body


async def test_only_consensus_and_stable_topics_are_facts(hub, runtime, register):
    agent = await register()
    key = await axiom_key(hub)
    consensus = await make_fact(hub, runtime, agent["headers"], title="Speed limit in NSW school zones")
    stable = await make_fact(
        hub, runtime, agent["headers"], status="stable", title="Standard drink in Australia"
    )
    await make_fact(hub, runtime, agent["headers"], status="challenged", title="A challenged claim")
    resp = await hub.post(
        "/api/pact/topics",
        headers=agent["headers"],
        json={"title": "Only proposed", "content": "# Answer\n\nMaybe.\n", "tier": "empirical"},
    )
    proposed = (await resp.json())["id"]
    body = await facts(hub, key)
    assert {f["id"] for f in body["facts"]} == {consensus, stable}
    assert body["total"] == 2
    assert body["limit"] == 20
    assert body["offset"] == 0
    for topic_id in (proposed,):
        resp = await hub.get(f"/api/axiom/facts/{topic_id}", headers=key["headers"])
        assert resp.status == 404
        assert (await resp.json())["error"] == "fact_not_found"
    resp = await hub.get("/api/axiom/facts/no-such-id", headers=key["headers"])
    assert resp.status == 404


async def test_fact_has_provenance_citations_and_consensus(hub, runtime, register):
    agent = await register()
    key = await axiom_key(hub)
    fact_id = await make_fact(
        hub,
        runtime,
        agent["headers"],
        title="Primary duty of care under the model WHS laws",
        content="# Answer\n\nA PCBU must ensure health and safety so far as is reasonably practicable.\n\n"
        "## Scope\n\nWorkers and others.\n",
        tier="institutional",
        jurisdiction="AU",
        authority="Safe Work Australia",
        sourceRef="https://www.legislation.gov.au/C2011A00137/latest/text",
        canonicalClaim="A PCBU must ensure WHS so far as is reasonably practicable.",
        effectiveDate="2012-01-01",
    )
    async with runtime.db.transaction() as session:
        session.add(
            Proposal(
                resource_type="topic",
                resource_id=fact_id,
                section_id="sec:answer",
                author_id="x",
                author_name="x",
                new_content="text",
                summary="cite the Act",
                citations=["Work Health and Safety Act 2011 (Cth) s 19"],
                status="merged",
                expires_at=utcnow(),
            )
        )
    resp = await hub.get(f"/api/axiom/facts/{fact_id}", headers=key["headers"])
    assert resp.status == 200
    body = await resp.json()
    fact = body["fact"]
    assert fact["provenance"] == {
        "sources": ["https://www.legislation.gov.au/C2011A00137/latest/text"],
        "authority": "Safe Work Australia",
        "jurisdiction": "AU",
        "effectiveDate": "2012-01-01",
        "expiryDate": None,
        "lastVerifiedAt": None,
        "createdAt": fact["createdAt"],
    }
    assert fact["citations"] == ["Work Health and Safety Act 2011 (Cth) s 19"]
    assert fact["consensus"]["status"] == "consensus"
    assert fact["consensus"]["ratio"] == 1.0
    assert fact["consensus"]["voters"] == 3
    assert fact["consensus"]["since"]
    assert body["sections"][0]["sectionId"] == "sec:answer"
    assert body["sections"][0]["children"][0]["sectionId"] == "sec:answer:scope"
    assert body["participation"]["mergedProposals"] == 1
    assert body["creditsRemaining"] == 999


async def test_filters_tier_and_jurisdiction_prefix(hub, runtime, register):
    agent = await register()
    key = await axiom_key(hub)
    nsw = await make_fact(
        hub,
        runtime,
        agent["headers"],
        title="NSW fact title",
        tier="institutional",
        jurisdiction="AU-NSW",
        authority="NSW Parliament",
        sourceRef="https://legislation.nsw.gov.au",
    )
    cth = await make_fact(
        hub,
        runtime,
        agent["headers"],
        title="Cth fact title",
        tier="institutional",
        jurisdiction="AU",
        authority="Parliament",
        sourceRef="https://www.legislation.gov.au",
    )
    emp = await make_fact(hub, runtime, agent["headers"], title="Empirical fact title")
    assert {f["id"] for f in (await facts(hub, key, tier="institutional"))["facts"]} == {nsw, cth}
    assert {f["id"] for f in (await facts(hub, key, tier="empirical"))["facts"]} == {emp}
    assert {f["id"] for f in (await facts(hub, key, jurisdiction="AU-NSW"))["facts"]} == {nsw}
    assert {f["id"] for f in (await facts(hub, key, jurisdiction="AU"))["facts"]} == {nsw, cth}
    assert {f["id"] for f in (await facts(hub, key, jurisdiction="AU-N"))["facts"]} == {nsw}
    assert {f["id"] for f in (await facts(hub, key, jurisdiction="NSW"))["facts"]} == {nsw}
    bad = await facts(hub, key, status=400, tier="axiom")
    assert bad["field"] == "tier"
    # Validated as topic creation validates it, and exactly as written (issue 29).
    for nowhere in ("Mars", "EU", "AU-XYZ", "au-n", "nsw", " AU"):
        bad = await facts(hub, key, status=400, jurisdiction=nowhere)
        assert bad["field"] == "jurisdiction"
    for params in ({"limit": "0"}, {"limit": "101"}, {"offset": "-3"}, {"limit": "x"}):
        resp = await hub.get("/api/axiom/facts", params=params, headers=key["headers"])
        assert resp.status == 400
        assert next(iter(params)) in (await resp.json())["detail"]


async def test_pagination_with_links(hub, runtime, register):
    agent = await register()
    key = await axiom_key(hub)
    ids = [await make_fact(hub, runtime, agent["headers"], title=f"Paged fact number {i}") for i in range(5)]
    first = await facts(hub, key, limit=2)
    second = await facts(hub, key, limit=2, offset=2)
    third = await facts(hub, key, limit=2, offset=4)
    seen = [f["id"] for page in (first, second, third) for f in page["facts"]]
    assert sorted(seen) == sorted(ids)
    assert first["total"] == 5
    assert first["_links"]["next"].endswith("offset=2")
    assert third["_links"]["next"] is None


async def test_full_text_search(hub, runtime, register):
    agent = await register()
    key = await axiom_key(hub)
    wage = await make_fact(
        hub,
        runtime,
        agent["headers"],
        title="National minimum wage",
        content="# Answer\n\nThe Fair Work Commission reviews the national minimum wage every year.\n",
    )
    leave = await make_fact(
        hub,
        runtime,
        agent["headers"],
        title="Annual leave entitlement",
        content="# Answer\n\nFull-time employees accrue four weeks of paid annual leave each year.\n",
    )
    drink = await make_fact(
        hub,
        runtime,
        agent["headers"],
        title="Standard drink",
        content="# Answer\n\nA standard drink contains ten grams of alcohol.\n",
    )
    assert {f["id"] for f in (await facts(hub, key, q="minimum wage"))["facts"]} == {wage}
    assert {f["id"] for f in (await facts(hub, key, q="year"))["facts"]} == {wage, leave}
    assert {f["id"] for f in (await facts(hub, key, q="year -leave"))["facts"]} == {wage}
    assert {f["id"] for f in (await facts(hub, key, q='"paid annual leave"'))["facts"]} == {leave}
    assert {f["id"] for f in (await facts(hub, key, q="alcohol or wage"))["facts"]} == {wage, drink}
    assert {f["id"] for f in (await facts(hub, key, q="grams"))["facts"]} == {drink}
    # stemming: "reviewed" finds "reviews"
    assert {f["id"] for f in (await facts(hub, key, q="reviewed"))["facts"]} == {wage}
    assert (await facts(hub, key, q="nothingmatches"))["total"] == 0
    # odd input is a query, never an error
    assert (await facts(hub, key, q='wage" AND (NEAR'))["total"] >= 0
    # the index follows edits of the topic
    async with runtime.db.transaction() as session:
        await session.execute(
            update(Topic).where(Topic.id == drink).values(content="# Answer\n\nTen grams of ethanol.\n")
        )
    assert (await facts(hub, key, q="alcohol"))["total"] == 0
    assert {f["id"] for f in (await facts(hub, key, q="ethanol"))["facts"]} == {drink}
    # non-facts are never returned by a search
    async with runtime.db.transaction() as session:
        await session.execute(update(Topic).where(Topic.id == drink).values(status="open"))
    assert (await facts(hub, key, q="ethanol"))["total"] == 0
