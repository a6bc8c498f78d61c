"""Claiming work: supported types, reuse of a live claim, the pool of open assignments the sweep makes from
the quote-rate item keys, leases that run out, and the assignment list."""

from datetime import timedelta

from domain import wiring
from domain.kernel import sweeps
from domain.work.settings import get_work_settings
from tests.market_fixtures import add_product
from tests.work.support import ITEM, claim, observation, submit


async def sweep(runtime, name):
    item = next(s for s in wiring.SWEEPS if s.name == name)
    return await sweeps.run(runtime.db, item, "test")


async def test_claim_validates_its_input(hub, market, register):
    agent = await register()
    cases = [
        ({"workType": "mining"}, "workType", "'price_observation_mining' or 'applicability_spotcheck'"),
        ({"workType": "scrape"}, "workType", "'price_observation_mining' or 'applicability_spotcheck'"),
        ({"workType": " price_observation_mining"}, "workType", "price_observation_mining"),  # exact
        ({"workType": "price_observation_mining", "expiresInMinutes": 0}, "expiresInMinutes", None),
        ({"workType": "price_observation_mining", "expiresInMinutes": 1441}, "expiresInMinutes", None),
        ({"workType": "price_observation_mining", "payload": {"itemKey": "nope"}}, "payload.itemKey", "nope"),
        ({"workType": "price_observation_mining", "payload": {"itemKey": 5}}, "payload.itemKey", None),
        ({}, "workType", None),
    ]
    for body, field, words in cases:
        resp = await hub.post("/api/work/claim", json=body, headers=agent["headers"])
        assert resp.status == 400, (body, await resp.text())
        error = await resp.json()
        assert field in error["detail"], (body, error)
        if words:
            assert words in error["detail"], (body, error)
    resp = await hub.post("/api/work/claim", json={"workType": "price_observation_mining"})
    assert resp.status == 401


async def test_claim_reuses_a_live_claim_and_leases_for_the_asked_time(hub, market, register, clock):
    agent = await register()
    first = await claim(hub, agent)
    assert first["status"] == "claimed"
    assert first["agentId"] == agent["agentId"]
    assert first["rewardCredits"] == get_work_settings().price_reward_credits
    assert first["payload"]["itemKey"] == ITEM
    assert first["payload"]["unit"] == "L"
    resp = await hub.post(
        "/api/work/claim",
        json={"workType": "price_observation_mining", "payload": {"itemKey": ITEM}, "expiresInMinutes": 600},
        headers=agent["headers"],
    )
    again = await resp.json()
    assert again["reused"] is True
    assert again["assignment"]["id"] == first["id"]
    assert again["assignment"]["expiresAt"] > first["expiresAt"]  # the lease was extended to 600 min
    spot = await hub.post(
        "/api/work/claim",
        json={"workType": "applicability_spotcheck", "payload": {"scenario": "bathroom"}},
        headers=agent["headers"],
    )
    assert spot.status == 200
    assert (await spot.json())["assignment"]["id"] != first["id"]


async def test_without_open_work_a_claim_says_so(hub, market, register):
    agent = await register()
    resp = await hub.post(
        "/api/work/claim", json={"workType": "price_observation_mining"}, headers=agent["headers"]
    )
    assert resp.status == 409
    assert (await resp.json())["error"] == "no_work_available"


async def test_the_sweep_makes_work_for_missing_and_stale_item_keys(
    hub, market, register, monkeypatch, clock
):
    keys = len((await (await hub.get("/api/market/quote-rates?items=" + ITEM)).json())["rates"])
    assert keys == 1
    monkeypatch.setattr(get_work_settings(), "assignment_batch", 5)
    assert await sweep(market, "work.create_price_assignments") == 5  # bounded per run
    made = await sweep(market, "work.create_price_assignments")
    assert made > 0
    while await sweep(market, "work.create_price_assignments"):
        pass
    agent = await register()
    listed = await (await hub.get("/api/work/assignments?status=open", headers=agent["headers"])).json()
    open_keys = {a["payload"]["itemKey"] for a in listed["assignments"]}
    assert ITEM not in open_keys  # it has observations from an hour ago
    assert "tile_grout_kg" in open_keys  # no observation at all
    assert all(a["rewardCredits"] == 2 and a["status"] == "open" for a in listed["assignments"])
    assert len(open_keys) == listed["count"]  # one per key, never two

    # A day later the paint's observations are stale too, and it gets work.
    clock.advance(timedelta(hours=25))
    assert await sweep(market, "work.create_price_assignments") >= 1
    listed = await (await hub.get("/api/work/assignments?status=open", headers=agent["headers"])).json()
    assert ITEM in {a["payload"]["itemKey"] for a in listed["assignments"]}

    # Claiming without a key takes the longest-waiting open assignment.
    taken = await (
        await hub.post(
            "/api/work/claim", json={"workType": "price_observation_mining"}, headers=agent["headers"]
        )
    ).json()
    assert taken["reused"] is False
    assert taken["assignment"]["status"] == "claimed"
    mine = await (await hub.get("/api/work/assignments?status=claimed", headers=agent["headers"])).json()
    assert [a["id"] for a in mine["assignments"]] == [taken["assignment"]["id"]]


async def test_fresh_observations_need_no_work(hub, market, register):
    for key in ("tile_grout_kg",):
        await add_product(market, "localshop", "Grout 5kg", price_cents=2500, pack="5 kg", item_key=key)
    await sweep(market, "work.create_price_assignments")
    agent = await register()
    listed = await (await hub.get("/api/work/assignments?status=open", headers=agent["headers"])).json()
    assert "tile_grout_kg" not in {a["payload"]["itemKey"] for a in listed["assignments"]}


async def test_a_lease_that_runs_out_frees_the_work(hub, market, register, shop, clock):
    first, second = await register(), await register()
    mine = await claim(hub, first, expiresInMinutes=1)
    clock.advance(timedelta(minutes=2))
    resp = await submit(hub, first, mine["id"], observation(shop))
    assert resp.status == 409
    assert (await resp.json())["error"] == "lease_expired"
    listed = await (await hub.get("/api/work/assignments?status=open", headers=second["headers"])).json()
    assert mine["id"] in [a["id"] for a in listed["assignments"]]  # free again at once

    taken = await claim(hub, second)
    assert taken["id"] == mine["id"]
    assert taken["agentId"] == second["agentId"]
    resp = await submit(hub, first, mine["id"], observation(shop))
    assert resp.status == 403
    assert (await resp.json())["error"] == "not_your_assignment"

    # The sweep tidies: a lapsed lease becomes open with a fresh TTL; an unclaimed offer past it goes.
    clock.advance(timedelta(minutes=61))
    assert await sweep(market, "work.expire_leases") == 1
    listed = await (await hub.get("/api/work/assignments?status=open", headers=second["headers"])).json()
    row = next(a for a in listed["assignments"] if a["id"] == mine["id"])
    assert row["agentId"] is None
    assert row["claimedAt"] is None
    clock.advance(timedelta(hours=get_work_settings().assignment_ttl_hours + 1))
    assert await sweep(market, "work.expire_leases") == 1
    listed = await (await hub.get("/api/work/assignments?status=open", headers=second["headers"])).json()
    assert mine["id"] not in [a["id"] for a in listed["assignments"]]


async def test_two_agents_claiming_at_once_get_different_work(hub, market, register):
    import asyncio

    await sweep(market, "work.create_price_assignments")
    agents = [await register() for _ in range(6)]
    answers = await asyncio.gather(
        *(
            hub.post("/api/work/claim", json={"workType": "price_observation_mining"}, headers=a["headers"])
            for a in agents
        )
    )
    ids = []
    for resp in answers:
        assert resp.status == 200, await resp.text()
        ids.append((await resp.json())["assignment"]["id"])
    assert len(set(ids)) == len(ids)
