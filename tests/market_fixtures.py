"""Shared set-up for the market tests: the demo seed, and hand-made retailers and products."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from domain.kernel.clock import utcnow
from domain.market import seed, units
from domain.market.catalog import normalise, record_observation
from domain.market.models import Product, Retailer


@pytest.fixture
async def seeded(runtime: Any) -> Any:
    """The demo catalogue and fuel stations, loaded by the same seeders `concord seed` runs."""
    async with runtime.db.transaction() as session:
        await seed.seed_catalogue(session)
    async with runtime.db.transaction() as session:
        await seed.seed_fuel(session)
    return runtime


async def add_retailer(rt: Any, slug: str, **terms: Any) -> None:
    values = {
        "delivery_fee_cents": 1000,
        "free_delivery_over_cents": None,
        "pickup_available": False,
        "pickup_fee_cents": 0,
    } | terms
    async with rt.db.transaction() as session:
        session.add(Retailer(slug=slug, name=slug.title(), domain=f"{slug}.example", **values))


async def add_product(
    rt: Any,
    retailer: str,
    name: str,
    *,
    price_cents: int | None,
    pack: str = "1 each",
    url: str | None = None,
    ean: str | None = None,
    item_key: str | None = None,
    tier: str = "standard",
    category: str = "general",
    observed_at: datetime | None = None,
    in_stock: bool = True,
    pickup: bool = True,
) -> str:
    quantity = units.parse_pack(pack)
    async with rt.db.transaction() as session:
        product = Product(
            retailer_slug=retailer,
            sku=f"{retailer}-{name}"[:120],
            name=name,
            norm_name=normalise(name),
            url=url or f"https://{retailer}.example/p/{normalise(name).replace(' ', '-')}",
            ean=ean,
            category=category,
            pack_size=quantity.amount,
            pack_unit=quantity.unit,
            item_key=item_key,
            tier=tier,
            pickup_available=pickup,
        )
        session.add(product)
        await session.flush()
        if price_cents is not None:
            await record_observation(
                session,
                product,
                price_cents=price_cents,
                in_stock=in_stock,
                source="test",
                observed_at=observed_at or utcnow() - timedelta(hours=1),
            )
        return product.id
