"""`concord seed`: the demo market catalogue shipped under domain/data/market/.

Everything here is invented and marked `demo` (retailers on .example domains, EANs in the GS1
restricted-circulation range, fictional fuel brands). Quote-rate item keys are real reference data.
Idempotent: existing rows are left alone; price history is only written for newly created rows, with
times relative to the moment of seeding so that `make run` shows current and stale prices.
"""

from __future__ import annotations

import json
from datetime import timedelta
from importlib import resources
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel.clock import utcnow
from domain.market import fuel, units
from domain.market.catalog import normalise, record_observation
from domain.market.models import FuelStation, Product, QuoteItem, Retailer


def load(name: str) -> dict[str, Any]:
    data = json.loads(resources.files("domain.data.market").joinpath(name).read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"domain/data/market/{name}: expected a JSON object")
    return data


async def seed_quote_items(session: AsyncSession) -> int:
    written = 0
    for row in load("quote_items.json")["items"]:
        if units.canonical(row["unit"]) != row["unit"]:
            raise ValueError(f"quote item {row['key']}: unit {row['unit']} is not canonical")
        item = await session.get(QuoteItem, row["key"])
        if item is None:
            session.add(QuoteItem(**row))
            written += 1
        elif (item.unit, item.description, item.category) != (
            row["unit"],
            row["description"],
            row["category"],
        ):
            item.unit, item.description, item.category = row["unit"], row["description"], row["category"]
            written += 1
    await session.flush()
    return written


async def seed_catalogue(session: AsyncSession) -> int:
    written = await seed_quote_items(session)
    for row in load("retailers.json")["retailers"]:
        if await session.get(Retailer, row["slug"]) is None:
            session.add(
                Retailer(
                    slug=row["slug"],
                    name=row["name"],
                    domain=row["domain"],
                    delivery_fee_cents=row["deliveryFeeCents"],
                    free_delivery_over_cents=row["freeDeliveryOverCents"],
                    pickup_available=row["pickupAvailable"],
                    pickup_fee_cents=row["pickupFeeCents"],
                    demo=True,
                )
            )
            written += 1
    await session.flush()
    existing = set(
        (
            await session.execute(select(Product.retailer_slug, Product.sku).where(Product.demo.is_(True)))
        ).all()
    )
    now = utcnow()
    for row in load("products.json")["products"]:
        if (row["retailer"], row["sku"]) in existing:
            continue
        pack = units.parse_pack(row["pack"])
        product = Product(
            retailer_slug=row["retailer"],
            sku=row["sku"],
            name=row["name"],
            norm_name=normalise(row["name"]),
            brand=row["brand"],
            url=row["url"],
            ean=row["ean"],
            category=row["category"],
            pack_size=pack.amount,
            pack_unit=pack.unit,
            item_key=row["itemKey"],
            tier=row["tier"],
            pickup_available=row["pickup"],
            demo=True,
            scrape_enabled=False,  # invented pages on .example domains: nothing to scrape
        )
        session.add(product)
        await session.flush()
        for days, price in sorted(row["prices"], key=lambda p: -p[0]):
            await record_observation(
                session,
                product,
                price_cents=price,
                in_stock=row["inStock"],
                source="demo",
                observed_at=now - timedelta(days=days, hours=2),
            )
        written += 1
    return written


async def seed_fuel(session: AsyncSession) -> int:
    written = 0
    now = utcnow()
    for row in load("fuel_stations.json")["stations"]:
        if await session.get(FuelStation, row["id"]) is not None:
            continue
        station = fuel.StationRow(
            id=row["id"],
            source="demo",
            brand=row["brand"],
            name=row["name"],
            address=row["address"],
            suburb=row["suburb"],
            state=row["state"],
            postcode=row["postcode"],
            latitude=row["latitude"],
            longitude=row["longitude"],
        )
        prices = [
            fuel.PriceRow(row["id"], fuel_type, cpl, now - timedelta(days=days, hours=1))
            for fuel_type, points in row["prices"].items()
            for days, cpl in points
        ]
        await fuel.store(session, [station], prices, demo=True)
        written += 1
    return written
