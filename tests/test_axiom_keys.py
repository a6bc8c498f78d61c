"""Axiom commercial keys: discovery, creation (shown once, hashed), rate limit, metering, usage and
the separation of commercial and agent keys."""

from __future__ import annotations

import asyncio

from sqlalchemy import select

from domain.axiom.models import AxiomKey, AxiomUsageDay
from domain.kernel import keys
from tests.axiom_helpers import axiom_key


async def test_discovery_lists_tiers_and_capabilities(hub):
    resp = await hub.get("/api/axiom/keys")
    assert resp.status == 200
    body = await resp.json()
    tiers = {t["tier"]: t for t in body["pricing"]["tiers"]}
    assert tiers["free"]["monthlyCredits"] == 1000
    assert "facts" in body["capabilities"]
    assert "citation.resolve" in body["capabilities"]
    assert body["keyPrefix"] == "pact_ax_"


async def test_create_key_shows_it_once_and_stores_only_its_hash(hub, runtime):
    data = await axiom_key(hub, "Acme Legal")
    assert data["apiKey"].startswith("pact_ax_")
    assert data["ownerName"] == "Acme Legal"
    assert data["creditsRemaining"] == 1000
    async with runtime.db.read() as session:
        row = await session.scalar(select(AxiomKey).where(AxiomKey.id == data["keyId"]))
    assert row.key_hash == keys.hash_key(data["apiKey"])
    assert data["apiKey"] not in repr(row.__dict__)


async def test_create_key_requires_owner_name(hub):
    for body in ({}, {"ownerName": ""}, {"ownerName": "  \x01 "}):
        resp = await hub.post("/api/axiom/keys", json=body)
        assert resp.status == 400, body
        err = await resp.json()
        assert err["error"] in ("validation_error", "invalid_field")
        assert "ownerName" in err["detail"]


async def test_key_creation_is_rate_limited_per_client(hub, settings, monkeypatch):
    monkeypatch.setattr(settings, "rate_limit_keys", 2)
    for i in range(2):
        assert (await hub.post("/api/axiom/keys", json={"ownerName": f"Owner {i}"})).status == 201
    resp = await hub.post("/api/axiom/keys", json={"ownerName": "Owner 3"})
    assert resp.status == 429
    assert int(resp.headers["Retry-After"]) >= 1
    assert (await resp.json())["error"] == "rate_limited"


async def test_usage_counts_every_metered_call(hub):
    key = await axiom_key(hub)
    for _ in range(3):
        assert (await hub.get("/api/axiom/facts", headers=key["headers"])).status == 200
    resp = await hub.get("/api/axiom/usage", headers=key["headers"])
    assert resp.status == 200
    usage = await resp.json()
    assert usage["queries"] == 3
    assert usage["creditsRemaining"] == 997
    assert usage["queriesToday"] == 3
    assert [d["queries"] for d in usage["daily"]] == [3]
    assert usage["billingPeriod"]["start"].endswith("-01")
    # usage itself is free
    again = await (await hub.get("/api/axiom/usage", headers=key["headers"])).json()
    assert again["queries"] == 3


async def test_metering_is_exact_under_concurrency(hub, runtime):
    key = await axiom_key(hub)
    responses = await asyncio.gather(
        *(hub.get("/api/axiom/facts", headers=key["headers"]) for _ in range(25))
    )
    assert [r.status for r in responses] == [200] * 25
    usage = await (await hub.get("/api/axiom/usage", headers=key["headers"])).json()
    assert usage["queries"] == 25
    assert usage["creditsRemaining"] == 975
    assert usage["totalQueries"] == 25
    async with runtime.db.read() as session:
        days = (
            await session.scalars(select(AxiomUsageDay.queries).where(AxiomUsageDay.key_id == key["keyId"]))
        ).all()
    assert list(days) == [25]


async def test_exhausted_credits_give_402_and_never_go_negative(hub, runtime):
    key = await axiom_key(hub)
    async with runtime.db.transaction() as session:
        row = await session.get(AxiomKey, key["keyId"])
        row.monthly_credits = 5
    responses = await asyncio.gather(*(hub.get("/api/axiom/facts", headers=key["headers"]) for _ in range(9)))
    statuses = sorted(r.status for r in responses)
    assert statuses == [200] * 5 + [402] * 4
    body = await [r for r in responses if r.status == 402][0].json()
    assert body["error"] == "insufficient_balance"
    usage = await (await hub.get("/api/axiom/usage", headers=key["headers"])).json()
    assert usage["queries"] == 5
    assert usage["creditsRemaining"] == 0


async def test_missing_and_invalid_commercial_keys_give_401(hub):
    for headers in (
        {},
        {"Authorization": "Bearer pact_ax_" + "0" * 48},
        {"Authorization": "Bearer nonsense"},
    ):
        for path in ("/api/axiom/usage", "/api/axiom/facts", "/api/axiom/legislation", "/api/axiom/facts/x"):
            resp = await hub.get(path, headers=headers)
            assert resp.status == 401, (path, headers)
            assert (await resp.json())["error"] == "unauthorized"


async def test_agent_keys_refused_on_axiom_and_axiom_keys_refused_on_agent_endpoints(hub, register):
    agent = await register()
    for path in ("/api/axiom/usage", "/api/axiom/facts", "/api/axiom/legislation"):
        resp = await hub.get(path, headers=agent["headers"])
        assert resp.status == 401, path
        assert "commercial key" in (await resp.json())["detail"]
    key = await axiom_key(hub)
    resp = await hub.post(
        "/api/pact/topics",
        headers=key["headers"],
        json={"title": "Commercial keys cannot write", "content": "# A\n\nbody text\n", "tier": "empirical"},
    )
    assert resp.status == 401
    resp = await hub.get("/api/audit/me", headers=key["headers"])
    assert resp.status == 401


async def test_resolve_and_discovery_need_no_key(hub):
    assert (await hub.get("/api/axiom/keys")).status == 200
    resp = await hub.get("/api/axiom/resolve", params={"citation": "Nothing Act 1999"})
    assert resp.status == 404


async def test_bad_filters_cost_no_credit_and_x_api_key_is_accepted(hub):
    key = await axiom_key(hub)
    headers = {"X-Api-Key": key["apiKey"]}
    assert (await hub.get("/api/axiom/facts", params={"tier": "axiom"}, headers=headers)).status == 400
    assert (await hub.get("/api/axiom/facts", params={"q": "!!!"}, headers=headers)).status == 400
    assert (await hub.get("/api/axiom/legislation/search", params={"q": "an"}, headers=headers)).status == 400
    usage = await (await hub.get("/api/axiom/usage", headers=headers)).json()
    assert usage["queries"] == 0


async def test_openapi_documents_the_axiom_operations(hub):
    spec = await (await hub.get("/openapi.json")).json()
    paths = spec["paths"]
    for path in (
        "/api/axiom/keys",
        "/api/axiom/usage",
        "/api/axiom/facts",
        "/api/axiom/facts/{factId}",
        "/api/axiom/legislation",
        "/api/axiom/legislation/search",
        "/api/axiom/legislation/{docId}",
        "/api/axiom/legislation/ingest",
        "/api/axiom/resolve",
    ):
        assert path in paths, path
    search = paths["/api/axiom/legislation/search"]["get"]
    names = {p["name"] for p in search["parameters"]}
    assert names == {"q", "jurisdiction", "type", "status", "limit", "offset"}
    assert search["security"] == [{"commercialBearer": []}]
    assert paths["/api/axiom/resolve"]["get"].get("security") is None
    assert "staffBearer" in spec["components"]["securitySchemes"]
    ingest = paths["/api/axiom/legislation/ingest"]["post"]
    assert ingest["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "IngestDoc"
    )  # IngestBody, documented strictly
