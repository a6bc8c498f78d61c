"""The operator issues the tiers Axiom's discovery lists: `concord axiom keys set-tier KEY_ID TIER` and
`concord axiom keys list` through the real command, and the tier's monthly credits applying over HTTP at
once (the period's queries so far still count)."""

from __future__ import annotations

import json

from sqlalchemy import select

from domain.axiom.models import AxiomKey
from domain.kernel.models import AuditEntry
from tests.axiom_helpers import axiom_key
from tests.processes import concord


async def _use_up_the_period(runtime, key_id: str, queries: int) -> None:
    """Stands for a month of calls: the period's count the meter keeps."""
    async with runtime.db.transaction() as session:
        (await session.get(AxiomKey, key_id)).period_queries = queries


async def test_discovery_says_who_issues_each_tier(hub):
    tiers = {t["tier"]: t for t in (await (await hub.get("/api/axiom/keys")).json())["pricing"]["tiers"]}
    assert tiers["free"]["issuedBy"] == "self-service: POST /api/axiom/keys"
    assert tiers["standard"]["issuedBy"] == "the operator: concord axiom keys set-tier KEY_ID standard"


async def test_set_tier_changes_the_credits_that_apply_over_http(hub, runtime):
    key = await axiom_key(hub, "Acme Legal")
    assert (await hub.get("/api/axiom/facts", headers=key["headers"])).status == 200
    await _use_up_the_period(runtime, key["keyId"], 1000)
    resp = await hub.get("/api/axiom/facts", headers=key["headers"])
    assert resp.status == 402  # the free tier's 1,000 credits are spent

    code, out, err = await concord("axiom", "keys", "set-tier", key["keyId"], "standard")
    assert code == 0, err
    changed = json.loads(out)
    assert (changed["tier"], changed["previousTier"]) == ("standard", "free")
    assert (changed["monthlyCredits"], changed["queries"], changed["creditsRemaining"]) == (
        100_000,
        1000,
        99_000,
    )

    assert (await hub.get("/api/axiom/facts", headers=key["headers"])).status == 200
    usage = await (await hub.get("/api/axiom/usage", headers=key["headers"])).json()
    assert (usage["tier"], usage["monthlyCredits"], usage["queries"], usage["creditsRemaining"]) == (
        "standard",
        100_000,
        1001,
        98_999,
    )

    # Back to free mid-period: what was used still counts, so nothing is left until the next period.
    code, out, err = await concord("axiom", "keys", "set-tier", key["keyId"], "free")
    assert code == 0, err
    assert json.loads(out)["creditsRemaining"] == 0
    assert (await hub.get("/api/axiom/facts", headers=key["headers"])).status == 402

    async with runtime.db.read() as session:
        entries = (
            await session.scalars(
                select(AuditEntry).where(AuditEntry.op == "axiom.key.set_tier").order_by(AuditEntry.id)
            )
        ).all()
    assert [(e.entity_id, e.actor_id) for e in entries] == [(key["keyId"], "system")] * 2
    first = (json.loads(entries[0].before_json), json.loads(entries[0].after_json))
    assert [(s["tier"], s["monthlyCredits"], s["queries"]) for s in first] == [
        ("free", 1000, 1000),
        ("standard", 100_000, 1000),
    ]


async def test_list_shows_every_key_with_tier_and_usage_never_a_secret(hub, runtime):
    first = await axiom_key(hub, "First Owner")
    second = await axiom_key(hub, "Second Owner")
    assert (await hub.get("/api/axiom/legislation", headers=second["headers"])).status == 200
    code, out, err = await concord("axiom", "keys", "set-tier", second["keyId"], "enterprise")
    assert code == 0, err

    code, out, err = await concord("axiom", "keys", "list")
    assert code == 0, err
    rows = {r["keyId"]: r for r in map(json.loads, out.strip().splitlines())}
    listed = {k: (r["ownerName"], r["tier"], r["monthlyCredits"], r["queries"]) for k, r in rows.items()}
    assert listed[first["keyId"]] == ("First Owner", "free", 1000, 0)
    assert listed[second["keyId"]] == ("Second Owner", "enterprise", 5_000_000, 1)
    assert first["apiKey"] not in out
    assert second["apiKey"] not in out


async def test_unknown_key_or_tier_is_a_clear_error(hub, runtime):
    key = await axiom_key(hub)
    code, out, err = await concord("axiom", "keys", "set-tier", "no-such-key", "standard")
    assert (code, out) == (2, "")
    assert "no commercial key 'no-such-key'" in err
    code, out, err = await concord("axiom", "keys", "set-tier", key["keyId"], "platinum")
    assert (code, out) == (2, "")
    assert "unknown tier 'platinum'; tiers: free, standard, enterprise" in err
    async with runtime.db.read() as session:
        assert (await session.get(AxiomKey, key["keyId"])).tier == "free"
