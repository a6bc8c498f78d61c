"""GET /api/market/quote-rates: the spec's exact shapes (plus `source`), per-unit rates from pack sizes,
staleness, and crowd-sourced prices marked as such."""

from datetime import timedelta

import pytest
from sqlalchemy import select

from domain import wiring
from domain.kernel import sweeps
from domain.kernel.clock import utcnow
from domain.market import seed
from domain.market.catalog import record_observation
from domain.market.models import PriceObservation, Product
from tests.market_fixtures import add_product, add_retailer, seeded  # noqa: F401 - fixture
from web.hub.market.schemas import QuoteRatesResponse

OBS_FIELDS = {
    "retailer",
    "retailer_name",
    "rate_aud",
    "price_aud",
    "product_id",
    "product_name",
    "product_url",
    "observed_at",
    "stale",
    "tier",
    "source",  # Concord's addition: "crowd" for a price an agent submitted, else the recorded source
}


@pytest.fixture
async def rates_rt(runtime):
    async with runtime.db.transaction() as session:
        await seed.seed_quote_items(session)
    await add_retailer(runtime, "alpha")
    await add_retailer(runtime, "beta")
    return runtime


async def test_exact_shapes_and_rates_from_pack_sizes(hub, rates_rt):
    board = await add_product(
        rates_rt,
        "alpha",
        "Plasterboard 10mm 2400x1200",
        price_cents=1790,
        pack="2400x1200 mm",
        item_key="plasterboard_10mm_m2",
        tier="budget",
    )
    await add_product(
        rates_rt,
        "beta",
        "Plasterboard 10mm 3000x1200",
        price_cents=2450,
        pack="3000x1200 mm",
        item_key="plasterboard_10mm_m2",
        tier="standard",
    )
    await add_product(
        rates_rt,
        "beta",
        "Wall paint 4L",
        price_cents=7990,
        pack="4 L",
        item_key="paint_interior_wall_l",
    )
    resp = await hub.get(
        "/api/market/quote-rates?items=plasterboard_10mm_m2,paint_interior_wall_l,paint_ceiling_l"
    )
    assert resp.status == 200, await resp.text()
    body = await resp.json()
    QuoteRatesResponse.model_validate(body)  # the spec's shapes and `source`, no field more or less
    assert set(body) == {"rates", "missing", "generated_at"}
    assert body["missing"] == ["paint_ceiling_l"]
    assert set(body["rates"]) == {"plasterboard_10mm_m2", "paint_interior_wall_l", "paint_ceiling_l"}
    for entry in body["rates"].values():
        assert set(entry) == {"unit", "description", "category", "cheapest", "observations"}
        for obs in entry["observations"]:
            assert set(obs) == OBS_FIELDS
            assert isinstance(obs["stale"], bool)
            assert obs["tier"] in ("budget", "standard", "premium")
            assert obs["product_url"].startswith("https://")
    board_entry = body["rates"]["plasterboard_10mm_m2"]
    assert board_entry["unit"] == "m²"
    assert board_entry["category"] == "plaster"
    assert len(board_entry["observations"]) == 2
    cheapest = board_entry["cheapest"]
    assert cheapest["product_id"] == board
    assert cheapest["price_aud"] == 17.90
    assert cheapest["rate_aud"] == pytest.approx(17.90 / 2.88, abs=1e-4)  # per m² of a 2.88 m² sheet
    assert cheapest["retailer"] == "alpha"
    assert cheapest["retailer_name"] == "Alpha"
    assert cheapest["stale"] is False
    paint = body["rates"]["paint_interior_wall_l"]
    assert paint["unit"] == "L"
    assert paint["cheapest"]["rate_aud"] == pytest.approx(79.90 / 4, abs=1e-4)
    empty = body["rates"]["paint_ceiling_l"]
    assert empty["cheapest"] is None
    assert empty["observations"] == []


async def test_stale_observations_are_flagged_and_not_current(hub, rates_rt):
    await add_product(
        rates_rt,
        "alpha",
        "Grout 5kg",
        price_cents=1290,
        pack="5 kg",
        item_key="tile_grout_kg",
        observed_at=utcnow() - timedelta(days=8),
    )
    body = await (await hub.get("/api/market/quote-rates?items=tile_grout_kg")).json()
    entry = body["rates"]["tile_grout_kg"]
    assert entry["observations"][0]["stale"] is True
    assert entry["observations"][0]["rate_aud"] == pytest.approx(2.58)
    assert entry["cheapest"] is None
    assert body["missing"] == ["tile_grout_kg"]
    await add_product(rates_rt, "beta", "Grout 2kg", price_cents=990, pack="2 kg", item_key="tile_grout_kg")
    body = await (await hub.get("/api/market/quote-rates?items=tile_grout_kg")).json()
    entry = body["rates"]["tile_grout_kg"]
    assert body["missing"] == []
    # The fresh 2 kg bag is dearer per kg than the stale 5 kg bag, but only it is current.
    assert entry["cheapest"]["product_name"] == "Grout 2kg"
    assert entry["cheapest"]["rate_aud"] == pytest.approx(4.95)


async def test_a_crowd_price_is_marked_crowd(hub, rates_rt):
    """The newest observation's source is the product's: a crowd price recorded after a scraped one marks
    the rate "crowd"; an older crowd price than the current one changes nothing."""
    crowd = await add_product(
        rates_rt, "alpha", "Grout 5kg", price_cents=1290, pack="5 kg", item_key="tile_grout_kg"
    )
    scraped = await add_product(
        rates_rt, "beta", "Grout 2kg", price_cents=990, pack="2 kg", item_key="tile_grout_kg"
    )
    async with rates_rt.db.transaction() as session:
        product = await session.get_one(Product, crowd)
        await record_observation(session, product, price_cents=1190, in_stock=True, source="crowd")
        product = await session.get_one(Product, scraped)
        await record_observation(
            session, product, price_cents=950, in_stock=True, source="scrape", observed_at=utcnow()
        )
        await record_observation(
            session,
            product,
            price_cents=10,
            in_stock=True,
            source="crowd",
            observed_at=utcnow() - timedelta(days=2),
        )
    resp = await hub.get("/api/market/quote-rates?items=tile_grout_kg")
    assert resp.status == 200, await resp.text()
    entry = (await resp.json())["rates"]["tile_grout_kg"]
    by_product = {obs["product_id"]: obs for obs in entry["observations"]}
    assert by_product[crowd]["source"] == "crowd"
    assert by_product[crowd]["price_aud"] == 11.90
    assert by_product[scraped]["source"] == "scrape"
    assert by_product[scraped]["price_aud"] == 9.50
    assert entry["cheapest"]["product_id"] == crowd  # 2.38 a kg against 4.75
    assert entry["cheapest"]["source"] == "crowd"

    # Product search and comparison carry it too, as priceSource.
    resp = await hub.get("/api/market/products/search", params={"query": "grout"})
    assert resp.status == 200, await resp.text()
    sources = {p["id"]: p["priceSource"] for p in (await resp.json())["results"]}
    assert sources == {crowd: "crowd", scraped: "scrape"}
    resp = await hub.get("/api/market/products/compare", params={"productId": crowd})
    assert resp.status == 200, await resp.text()
    assert (await resp.json())["product"]["priceSource"] == "crowd"


async def test_out_of_dimension_pack_gives_no_rate(hub, rates_rt):
    await add_product(
        rates_rt, "alpha", "Odd tile lot", price_cents=5000, pack="4 L", item_key="tile_floor_ceramic_m2"
    )
    body = await (await hub.get("/api/market/quote-rates?items=tile_floor_ceramic_m2")).json()
    assert body["rates"]["tile_floor_ceramic_m2"]["observations"] == []
    assert body["missing"] == ["tile_floor_ceramic_m2"]


@pytest.mark.parametrize(
    ("query", "needle"),
    [
        ("", "items"),
        ("?items=", "items"),
        ("?items=,,", "items"),
        ("?items=paint_ceiling_l,bogus_key,other_bad", "bogus_key, other_bad"),
    ],
)
async def test_bad_items_are_400_naming_them(hub, rates_rt, query, needle):
    resp = await hub.get(f"/api/market/quote-rates{query}")
    assert resp.status == 400
    body = await resp.json()
    assert needle in body["detail"]
    assert body["field"] == "items"
    if "bogus" in needle:
        assert body["unknown"] == ["bogus_key", "other_bad"]
        assert body["error"] == "unknown_item_keys"


async def test_more_than_64_keys_is_400(hub, rates_rt):
    keys = ",".join(f"key_{i}" for i in range(65))
    resp = await hub.get(f"/api/market/quote-rates?items={keys}")
    assert resp.status == 400
    assert "at most 64" in (await resp.json())["detail"]


@pytest.mark.usefixtures("seeded")
async def test_seeded_keys_cover_all_six_categories(hub):
    items = (await (await hub.get("/api/market/quote-rates/items")).json())["items"]
    assert {i["category"] for i in items} == {"tiling", "paint", "timber", "roofing", "plaster", "finishing"}
    assert {i["unit"] for i in items} == {"m²", "lm", "L", "item", "kg"}
    keys = ",".join(i["key"] for i in items)
    body = await (await hub.get(f"/api/market/quote-rates?items={keys}")).json()
    QuoteRatesResponse.model_validate(body)
    assert set(body["rates"]) == {i["key"] for i in items}
    assert len(body["missing"]) < len(items) / 2
    for key, entry in body["rates"].items():
        if entry["cheapest"] is not None:
            current = [o["rate_aud"] for o in entry["observations"] if not o["stale"]]
            assert entry["cheapest"]["rate_aud"] == min(current), key


async def test_staleness_sweep_marks_stored_flags(rates_rt):
    pid = await add_product(
        rates_rt,
        "alpha",
        "Sealant",
        price_cents=690,
        item_key="sealant_silicone_item",
        observed_at=utcnow() - timedelta(days=9),
    )
    async with rates_rt.db.transaction() as session:
        obs = await session.scalar(select(PriceObservation).where(PriceObservation.product_id == pid))
        obs.stale = False  # as written before it aged
    sweep = next(s for s in wiring.SWEEPS if s.name == "market.mark_stale_observations")
    assert await sweeps.run(rates_rt.db, sweep, "test") == 1
    async with rates_rt.db.read() as session:
        obs = await session.scalar(select(PriceObservation).where(PriceObservation.product_id == pid))
        assert obs.stale is True
    assert await sweeps.run(rates_rt.db, sweep, "test") == 0


async def test_openapi_lists_market_paths_and_quote_shapes(hub, runtime):
    spec = await (await hub.get("/openapi.json")).json()
    for path in (
        "/api/market/products/search",
        "/api/market/products/compare",
        "/api/market/products/history",
        "/api/market/cart/optimise",
        "/api/market/catalog/stats",
        "/api/market/fuel/near-me",
        "/api/market/fuel/cheapest",
        "/api/market/fuel/search",
        "/api/market/fuel/summary",
        "/api/market/fuel/history",
        "/api/market/fuel/stations/{stationId}",
        "/api/market/quote-rates",
    ):
        assert path in spec["paths"], path
    obs = QuoteRatesResponse.model_json_schema()["$defs"]["QuoteRateObservation"]
    assert set(obs["required"]) == OBS_FIELDS
    assert obs["properties"]["product_url"]["format"] == "uri"
