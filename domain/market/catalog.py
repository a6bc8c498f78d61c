"""The product catalogue: search, cross-retailer comparison, price history, stats, and recording a
price observation (the one write every price source goes through)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel.clock import iso, utcnow
from domain.kernel.errors import BadRequest, NotFound
from domain.kernel.ids import canonical_id
from domain.market import units
from domain.market.models import PriceObservation, Product, QuoteItem, Retailer

STALE_AFTER = timedelta(days=7)
WORD = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?")


def normalise(name: str) -> str:
    """Lower-case words only, so "Full Cream Milk 2L" and "full-cream milk 2 L" compare equal."""
    return " ".join(WORD.findall(name.lower()))


def terms(query: str) -> list[str]:
    found = WORD.findall(query.lower())
    if not found:
        raise BadRequest("query: must contain at least one letter or digit", field="query")
    return found[:12]


def _like(term: str) -> str:
    return "%" + term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def match_clause(query: str) -> Any:
    """Every query word must appear in the product's name, brand or category."""
    clauses = []
    for term in terms(query):
        like = _like(term)
        clauses.append(
            or_(
                Product.norm_name.like(like, escape="\\"),
                func.lower(func.coalesce(Product.brand, "")).like(like, escape="\\"),
                func.lower(Product.category).like(like, escape="\\"),
            )
        )
    return clauses


def cents(value: int | float | None) -> float | None:
    return None if value is None else round(value / 100, 2)


def is_stale(observed_at: datetime | None, now: datetime | None = None) -> bool:
    return observed_at is None or (now or utcnow()) - observed_at > STALE_AFTER


def unit_price(product: Product, price_cents: int, item_unit: str | None = None) -> tuple[float, str]:
    """Cents per canonical unit of the pack (or of the item key's unit when given)."""
    pack = units.Quantity(product.pack_size, product.pack_unit)
    return units.rate_per_unit(price_cents, pack, item_unit or product.pack_unit), item_unit or pack.unit


def product_dict(product: Product, retailer: Retailer) -> dict[str, Any]:
    up = None
    if product.price_cents is not None:
        rate, unit = unit_price(product, product.price_cents)
        up = {"price": round(rate / 100, 4), "unit": unit}
    return {
        "id": product.id,
        "name": product.name,
        "brand": product.brand,
        "category": product.category,
        "ean": product.ean,
        "url": product.url,
        "packSize": product.pack_size,
        "packUnit": product.pack_unit,
        "itemKey": product.item_key,
        "tier": product.tier,
        "retailer": retailer.slug,
        "retailerName": retailer.name,
        "price": cents(product.price_cents),
        "unitPrice": up,
        "inStock": product.in_stock,
        "pickupAvailable": bool(product.pickup_available and retailer.pickup_available),
        "observedAt": iso(product.observed_at),
        "priceSource": product.price_source,
        "stale": is_stale(product.observed_at),
        "demo": product.demo,
        "scrape": {
            "enabled": product.scrape_enabled,
            "status": product.scrape_status,
            "error": product.scrape_error,
            "lastScrapedAt": iso(product.last_scraped_at),
        },
    }


async def search(session: AsyncSession, *, query: str, category: str | None, limit: int) -> dict[str, Any]:
    stmt = (
        select(Product, Retailer)
        .join(Retailer, Retailer.slug == Product.retailer_slug)
        .where(*match_clause(query), Product.price_cents.is_not(None))
    )
    if category:
        stmt = stmt.where(func.lower(Product.category) == category.strip().lower())
    total = await session.scalar(select(func.count()).select_from(stmt.subquery()))
    rows = (
        # In stock first (what can be bought now), then the cheapest.
        await session.execute(
            stmt.order_by(Product.in_stock.desc(), Product.price_cents, Product.name, Product.id).limit(limit)
        )
    ).all()
    return {
        "query": query,
        "category": category,
        "total": total or 0,
        "results": [product_dict(p, r) for p, r in rows],
    }


async def _load(session: AsyncSession, product_id: str) -> tuple[Product, Retailer]:
    key = canonical_id(product_id)
    row = (
        (
            await session.execute(
                select(Product, Retailer)
                .join(Retailer, Retailer.slug == Product.retailer_slug)
                .where(Product.id == key)
            )
        ).first()
        if key
        else None
    )
    if row is None:
        raise NotFound(f"product {product_id!r} not found", code="product_not_found")
    return row[0], row[1]


def delivery_fee(retailer: Retailer, subtotal_cents: int) -> int:
    if retailer.free_delivery_over_cents is not None and subtotal_cents >= retailer.free_delivery_over_cents:
        return 0
    return retailer.delivery_fee_cents


async def compare(session: AsyncSession, product_id: str, *, include_delivery: bool) -> dict[str, Any]:
    """The same product at every retailer: matched by EAN, else by normalised name and pack size."""
    product, retailer = await _load(session, product_id)
    conds: list[ColumnElement[bool]] = [
        (Product.norm_name == product.norm_name)
        & (Product.pack_size == product.pack_size)
        & (Product.pack_unit == product.pack_unit)
    ]
    if product.ean:
        conds.append(Product.ean == product.ean)
    rows = (
        await session.execute(
            select(Product, Retailer)
            .join(Retailer, Retailer.slug == Product.retailer_slug)
            .where(or_(*conds), Product.price_cents.is_not(None))
        )
    ).all()
    offers = []
    seen: set[str] = set()
    for p, r in rows:
        if p.id in seen:
            continue
        seen.add(p.id)
        offer = product_dict(p, r)
        offer["matchedBy"] = (
            "self" if p.id == product.id else "ean" if product.ean and p.ean == product.ean else "name_pack"
        )
        if include_delivery:
            fee = delivery_fee(r, p.price_cents or 0)
            offer["deliveryFee"] = cents(fee)
            offer["totalWithDelivery"] = cents((p.price_cents or 0) + fee)
        offers.append(offer)
    key = "totalWithDelivery" if include_delivery else "price"
    offers.sort(key=lambda o: (not o["inStock"], o[key], o["retailer"]))
    cheapest = next((o for o in offers if o["inStock"]), None)
    mine = next(o for o in offers if o["id"] == product.id) if product.price_cents is not None else None
    return {
        "product": product_dict(product, retailer),
        "includeDelivery": include_delivery,
        "offers": offers,
        "cheapest": cheapest,
        # What buying the cheapest offer saves against this product's own offer.
        "saving": round(mine[key] - cheapest[key], 2) if mine and cheapest else None,
    }


async def history(session: AsyncSession, product_id: str, *, days: int) -> dict[str, Any]:
    product, retailer = await _load(session, product_id)
    since = utcnow() - timedelta(days=days)
    obs = (
        await session.scalars(
            select(PriceObservation)
            .where(PriceObservation.product_id == product.id, PriceObservation.observed_at >= since)
            .order_by(PriceObservation.observed_at, PriceObservation.id)
        )
    ).all()
    prices = [o.price_cents for o in obs]
    return {
        "product": product_dict(product, retailer),
        "days": days,
        "observations": [
            {
                "price": cents(o.price_cents),
                "unitPrice": None if o.unit_price_cents is None else round(o.unit_price_cents / 100, 4),
                "unit": o.unit,
                "inStock": o.in_stock,
                "source": o.source,
                "observedAt": iso(o.observed_at),
                "stale": is_stale(o.observed_at) or o.stale,
            }
            for o in obs
        ],
        "min": cents(min(prices)) if prices else None,
        "max": cents(max(prices)) if prices else None,
        "average": cents(sum(prices) / len(prices)) if prices else None,
    }


async def stats(session: AsyncSession) -> dict[str, Any]:
    now = utcnow()
    per_retailer = (
        await session.execute(
            select(Retailer.slug, Retailer.name, Retailer.demo, func.count(Product.id))
            .outerjoin(Product, Product.retailer_slug == Retailer.slug)
            .group_by(Retailer.slug, Retailer.name, Retailer.demo)
            .order_by(Retailer.slug)
        )
    ).all()
    per_category = (
        await session.execute(
            select(Product.category, func.count()).group_by(Product.category).order_by(Product.category)
        )
    ).all()
    products = await session.scalar(select(func.count()).select_from(Product)) or 0
    priced = await session.scalar(select(func.count()).where(Product.price_cents.is_not(None))) or 0
    stale = (
        await session.scalar(
            select(func.count()).where(
                Product.price_cents.is_not(None), Product.observed_at < now - STALE_AFTER
            )
        )
        or 0
    )
    observations = await session.scalar(select(func.count()).select_from(PriceObservation)) or 0
    latest = await session.scalar(select(func.max(PriceObservation.observed_at)))
    keys = await session.scalar(select(func.count()).select_from(QuoteItem)) or 0
    demo = await session.scalar(select(func.count()).where(Product.demo.is_(True))) or 0
    return {
        "retailers": len(per_retailer),
        "products": products,
        "pricedProducts": priced,
        "staleProducts": stale,
        "observations": observations,
        "quoteItemKeys": keys,
        "lastObservedAt": iso(latest),
        "demoProducts": demo,
        "byRetailer": [
            {"retailer": slug, "name": name, "products": count, "demo": bool(is_demo)}
            for slug, name, is_demo, count in per_retailer
        ],
        "byCategory": [{"category": c, "products": n} for c, n in per_category],
        "generatedAt": iso(now),
    }


async def record_observation(
    session: AsyncSession,
    product: Product,
    *,
    price_cents: int,
    in_stock: bool,
    source: str,
    observed_at: datetime | None = None,
) -> PriceObservation:
    """Append an observation and move the product's current price forward (never backwards in time)."""
    when = observed_at or utcnow()
    item_unit = None
    if product.item_key:
        item = await session.get(QuoteItem, product.item_key)
        item_unit = item.unit if item else None
    try:
        rate, unit = unit_price(product, price_cents, item_unit)
    except units.UnitError:
        rate, unit = None, None
    obs = PriceObservation(
        product_id=product.id,
        price_cents=price_cents,
        unit_price_cents=rate,
        unit=unit,
        in_stock=in_stock,
        source=source,
        observed_at=when,
        stale=is_stale(when),
    )
    session.add(obs)
    if product.observed_at is None or when >= product.observed_at:
        product.price_cents = price_cents
        product.in_stock = in_stock
        product.observed_at = when
        product.price_source = source
    return obs
