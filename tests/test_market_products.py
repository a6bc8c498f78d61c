"""Market product reads: search, comparison across retailers, history and catalogue stats."""

from datetime import timedelta

import pytest

from domain.kernel.clock import utcnow
from tests.market_fixtures import add_product, add_retailer, seeded  # noqa: F401 - fixture


async def test_search_requires_query_and_filters(hub, runtime):
    await add_retailer(runtime, "alpha")
    await add_product(runtime, "alpha", "Full Cream Milk 2L", price_cents=360, pack="2 L", category="dairy")
    await add_product(runtime, "alpha", "Light Milk 2L", price_cents=340, pack="2 L", category="dairy")
    await add_product(
        runtime, "alpha", "Milk Chocolate 200g", price_cents=450, pack="200 g", category="pantry"
    )
    await add_product(runtime, "alpha", "Unpriced Milk", price_cents=None)
    for bad in ("", "?limit=5", "?query=", "?query=%20%20"):
        resp = await hub.get(f"/api/market/products/search{bad}")
        assert resp.status == 400, bad
        assert "query" in (await resp.json())["detail"]
    resp = await hub.get("/api/market/products/search?query=milk&limit=0")
    assert resp.status == 400
    assert "limit" in (await resp.json())["detail"]
    body = await (await hub.get("/api/market/products/search?query=MILK")).json()
    assert body["total"] == 3
    assert [r["name"] for r in body["results"]] == [
        "Light Milk 2L",
        "Full Cream Milk 2L",
        "Milk Chocolate 200g",
    ]
    first = body["results"][0]
    assert first["price"] == 3.40
    assert first["unitPrice"] == {"price": 1.7, "unit": "L"}
    assert first["retailer"] == "alpha"
    body = await (await hub.get("/api/market/products/search?query=milk&category=dairy&limit=1")).json()
    assert body["total"] == 2
    assert len(body["results"]) == 1
    body = await (await hub.get("/api/market/products/search?query=full%20milk")).json()
    assert [r["name"] for r in body["results"]] == ["Full Cream Milk 2L"]
    body = await (await hub.get("/api/market/products/search?query=100%25_milk")).json()
    assert body["total"] == 0
    # What can be bought now comes first, then the cheapest.
    await add_product(runtime, "alpha", "Skim Milk 2L", price_cents=200, pack="2 L", in_stock=False)
    body = await (await hub.get("/api/market/products/search?query=milk")).json()
    assert [(r["name"], r["inStock"]) for r in body["results"]] == [
        ("Light Milk 2L", True),
        ("Full Cream Milk 2L", True),
        ("Milk Chocolate 200g", True),
        ("Skim Milk 2L", False),
    ]


async def test_compare_matches_by_ean_then_name_and_pack(hub, runtime):
    for slug, fee in (("alpha", 500), ("beta", 900), ("gamma", 0)):
        await add_retailer(runtime, slug, delivery_fee_cents=fee)
    me = await add_product(
        runtime, "alpha", "Peanut Butter 375g", price_cents=420, pack="375 g", ean="2900000000017"
    )
    await add_product(
        runtime, "beta", "Smooth Spread (PB) 375 g", price_cents=390, pack="375 g", ean="2900000000017"
    )
    await add_product(runtime, "gamma", "peanut butter 375G", price_cents=450, pack="375 g")
    await add_product(runtime, "gamma", "Peanut Butter 1kg", price_cents=900, pack="1 kg")
    resp = await hub.get(f"/api/market/products/compare?productId={me}")
    assert resp.status == 200, await resp.text()
    body = await resp.json()
    assert [o["retailer"] for o in body["offers"]] == ["beta", "alpha", "gamma"]
    assert {o["retailer"]: o["matchedBy"] for o in body["offers"]} == {
        "alpha": "self",
        "beta": "ean",
        "gamma": "name_pack",
    }
    assert body["cheapest"]["retailer"] == "beta"
    assert body["saving"] == 0.30
    body = await (await hub.get(f"/api/market/products/compare?productId={me}&includeDelivery=true")).json()
    assert [(o["retailer"], o["totalWithDelivery"]) for o in body["offers"]] == [
        ("gamma", 4.50),
        ("alpha", 9.20),
        ("beta", 12.90),
    ]
    resp = await hub.get("/api/market/products/compare?productId=no-such-product")
    assert resp.status == 404
    resp = await hub.get("/api/market/products/compare")
    assert resp.status == 400
    assert "productId" in (await resp.json())["detail"]
    resp = await hub.get(f"/api/market/products/compare?productId={me}&includeDelivery=perhaps")
    assert resp.status == 400
    assert "includeDelivery" in (await resp.json())["detail"]


async def test_history_over_days(hub, runtime):
    from domain.market.catalog import record_observation
    from domain.market.models import Product

    await add_retailer(runtime, "alpha")
    pid = await add_product(
        runtime, "alpha", "Rice 1kg", price_cents=400, pack="1 kg", observed_at=utcnow() - timedelta(days=40)
    )
    async with runtime.db.transaction() as session:
        product = await session.get(Product, pid)
        for days, price in ((20, 380), (10, 390), (1, 370)):
            await record_observation(
                session,
                product,
                price_cents=price,
                in_stock=True,
                source="test",
                observed_at=utcnow() - timedelta(days=days),
            )
    body = await (await hub.get(f"/api/market/products/history?productId={pid}")).json()
    assert [o["price"] for o in body["observations"]] == [3.80, 3.90, 3.70]
    assert [o["stale"] for o in body["observations"]] == [True, True, False]
    assert body["min"] == 3.70
    assert body["max"] == 3.90
    assert body["product"]["price"] == 3.70
    body = await (await hub.get(f"/api/market/products/history?productId={pid}&days=60")).json()
    assert len(body["observations"]) == 4
    for bad in ("days=0", "days=366", "days=x"):
        resp = await hub.get(f"/api/market/products/history?productId={pid}&{bad}")
        assert resp.status == 400
        assert "days" in (await resp.json())["detail"]
    resp = await hub.get("/api/market/products/history?productId=nope")
    assert resp.status == 404
    # One spelling of an id (domain/kernel/ids.py): in any case, with its hyphens, as every lookup reads it.
    resp = await hub.get("/api/market/products/history", params={"productId": pid.upper()})
    assert resp.status == 200, await resp.text()
    resp = await hub.get("/api/market/products/history", params={"productId": pid.replace("-", "")})
    assert resp.status == 404, await resp.text()


@pytest.mark.usefixtures("seeded")
async def test_seeded_catalogue_and_stats(hub):
    stats = await (await hub.get("/api/market/catalog/stats")).json()
    assert stats["retailers"] >= 5
    assert stats["products"] >= 250
    assert stats["demoProducts"] == stats["products"]
    assert stats["observations"] >= stats["products"]
    assert stats["quoteItemKeys"] == 24
    assert 0 < stats["staleProducts"] < stats["products"]
    assert all(r["demo"] for r in stats["byRetailer"])
    body = await (await hub.get("/api/market/products/search?query=paint&category=paint&limit=100")).json()
    assert body["total"] > 10
    assert all(r["demo"] for r in body["results"])
    order = [(not r["inStock"], r["price"]) for r in body["results"]]
    assert order == sorted(order)  # in stock first, then by price


async def test_seed_is_idempotent(hub, runtime):
    from domain.market import seed

    async with runtime.db.transaction() as session:
        first = await seed.seed_catalogue(session)
    async with runtime.db.transaction() as session:
        assert await seed.seed_fuel(session) > 0
    before = await (await hub.get("/api/market/catalog/stats")).json()
    async with runtime.db.transaction() as session:
        assert await seed.seed_catalogue(session) == 0
    async with runtime.db.transaction() as session:
        assert await seed.seed_fuel(session) == 0
    after = await (await hub.get("/api/market/catalog/stats")).json()
    assert first > 300
    for key in ("retailers", "products", "observations", "quoteItemKeys"):
        assert after[key] == before[key]


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/api/market/products/search?query=milk%00", 400),
        ("/api/market/products/search?query=milk&category=%00", 400),
        ("/api/market/products/compare?productId=%00", 400),
        ("/api/market/products/compare?productId=not-a-uuid", 404),
        ("/api/market/products/history?productId=00000000-0000-0000-0000-00000000000x", 404),
        ("/api/market/cart/optimise/%00", 404),
        ("/api/market/cart/optimise/nope", 404),
        ("/api/market/fuel/stations/%00", 404),
        ("/api/market/fuel/search?suburb=%00", 400),
        ("/api/market/fuel/history?stationId=%00", 400),
        ("/api/market/quote-rates?items=a%00b", 400),
    ],
)
async def test_odd_identifiers_are_4xx_on_both_databases(hub, runtime, path, status):
    from yarl import URL

    resp = await hub.get(URL(path, encoded=True))
    assert resp.status == status, await resp.text()


async def test_an_offer_carries_delivery_fields_only_when_asked(hub, runtime):
    """An offer is the product's fields and how it matched; its delivery fee and total with delivery appear
    only with includeDelivery=true, never as null (issue 32 moved where the shape is written)."""
    await add_retailer(runtime, "alpha", delivery_fee_cents=500)
    me = await add_product(runtime, "alpha", "Rolled Oats 1kg", price_cents=300, pack="1 kg")
    body = await (await hub.get("/api/market/products/compare?productId=" + me)).json()
    assert list(body) == ["product", "includeDelivery", "offers", "cheapest", "saving"]
    product = list(body["product"])
    assert [list(o) for o in body["offers"]] == [[*product, "matchedBy"]]
    assert body["cheapest"] == body["offers"][0]
    body = await (await hub.get(f"/api/market/products/compare?productId={me}&includeDelivery=true")).json()
    assert [list(o) for o in body["offers"]] == [[*product, "matchedBy", "deliveryFee", "totalWithDelivery"]]
    assert (body["offers"][0]["deliveryFee"], body["offers"][0]["totalWithDelivery"]) == (5.0, 8.0)
