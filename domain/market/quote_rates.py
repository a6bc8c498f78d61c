"""Quote rates: the current per-unit retail rate of each stable item key, in the spec's exact shape.

Each product mapped to an item key contributes its newest observation. The rate is the pack price
divided by the pack size converted into the key's canonical unit (units.py); a product whose pack
cannot be expressed in that unit contributes nothing. An observation older than 7 days is `stale`;
Out-of-stock products are left out; `cheapest` is the lowest rate among current (not stale)
observations, and `missing` lists the keys that have none.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel.clock import iso, utcnow
from domain.kernel.errors import BadRequest
from domain.kernel.sqlutil import execute_counted
from domain.market import units
from domain.market.catalog import STALE_AFTER, is_stale
from domain.market.models import PriceObservation, Product, ProductTier, QuoteItem, Retailer

MAX_KEYS = 64


def parse_keys(raw: str | None) -> list[str]:
    keys: list[str] = []
    for part in (raw or "").split(","):
        key = part.strip()
        if key and key not in keys:
            keys.append(key)
    if not keys:
        raise BadRequest("items: give 1 to 64 comma-separated item keys", field="items")
    if len(keys) > MAX_KEYS:
        raise BadRequest(
            f"items: {len(keys)} keys given, at most {MAX_KEYS} allowed", field="items", count=len(keys)
        )
    return keys


async def quote_rates(session: AsyncSession, keys: list[str]) -> dict[str, Any]:
    items = {
        i.key: i for i in (await session.scalars(select(QuoteItem).where(QuoteItem.key.in_(keys)))).all()
    }
    unknown = [k for k in keys if k not in items]
    if unknown:
        raise BadRequest(
            f"items: unknown item keys: {', '.join(unknown)}",
            code="unknown_item_keys",
            field="items",
            unknown=unknown,
        )
    rows = (
        await session.execute(
            select(Product, Retailer)
            .join(Retailer, Retailer.slug == Product.retailer_slug)
            .where(Product.item_key.in_(keys), Product.price_cents.is_not(None))
            .order_by(Product.id)
        )
    ).all()
    now = utcnow()
    observations: dict[str, list[dict[str, Any]]] = {k: [] for k in keys}
    current: dict[str, list[dict[str, Any]]] = {k: [] for k in keys}
    for product, retailer in rows:
        item = items[product.item_key or ""]
        try:
            rate = units.rate_per_unit(
                product.price_cents or 0, units.Quantity(product.pack_size, product.pack_unit), item.unit
            )
        except units.UnitError:
            continue  # never guess a rate across dimensions
        if not product.in_stock:
            continue  # an unavailable product is no rate anyone can buy at
        stale = is_stale(product.observed_at, now)
        obs = {
            "retailer": retailer.slug,
            "retailer_name": retailer.name,
            "rate_aud": round(rate / 100, 4),
            "price_aud": round((product.price_cents or 0) / 100, 2),
            "product_id": product.id,
            "product_name": product.name,
            "product_url": product.url,
            "observed_at": iso(product.observed_at),
            "stale": stale,
            "tier": product.tier if product.tier in set(ProductTier) else ProductTier.STANDARD.value,
            # Where the price came from: "crowd" for a price an agent submitted, else scrape, demo, …
            "source": product.price_source,
        }
        observations[item.key].append(obs)
        if not stale:
            current[item.key].append(obs)
    rates: dict[str, Any] = {}
    missing: list[str] = []
    for key in keys:
        item = items[key]
        obs_list = sorted(observations[key], key=_order)
        cheapest = min(current[key], key=_order, default=None)
        if cheapest is None:
            missing.append(key)
        rates[key] = {
            "unit": item.unit,
            "description": item.description,
            "category": item.category,
            "cheapest": cheapest,
            "observations": obs_list,
        }
    return {"rates": rates, "missing": missing, "generated_at": iso(now)}


def _order(obs: dict[str, Any]) -> tuple[float, str, str]:
    return obs["rate_aud"], obs["retailer"], obs["product_id"]


async def list_items(session: AsyncSession) -> list[dict[str, Any]]:
    rows = (await session.scalars(select(QuoteItem).order_by(QuoteItem.category, QuoteItem.key))).all()
    return [
        {"key": i.key, "unit": i.unit, "description": i.description, "category": i.category} for i in rows
    ]


async def mark_stale(session: AsyncSession) -> int:
    """Keep the stored stale flags true: observations older than 7 days are marked stale."""
    return await execute_counted(
        session,
        update(PriceObservation)
        .where(PriceObservation.stale.is_(False), PriceObservation.observed_at < utcnow() - STALE_AFTER)
        .values(stale=True),
    )
