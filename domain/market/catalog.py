"""The product catalogue: search, cross-retailer comparison, price history, stats, and recording a
price observation (the one write every price source goes through)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel.clock import utcnow
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


@dataclass(frozen=True)
class UnitRate:
    """A price per unit of measure, in AUD."""

    price: float
    unit: str


@dataclass(frozen=True)
class Listing:
    """A product at its retailer as the catalogue shows it: its price per canonical unit of the pack (None
    before the first price), whether it can be picked up (the product and its retailer both offer it) and
    whether its newest price is stale."""

    product: Product
    retailer: Retailer
    unit_price: UnitRate | None
    pickup_available: bool
    stale: bool


def listing(product: Product, retailer: Retailer) -> Listing:
    up = None
    if product.price_cents is not None:
        rate, unit = unit_price(product, product.price_cents)
        up = UnitRate(round(rate / 100, 4), unit)
    pickup = bool(product.pickup_available and retailer.pickup_available)
    return Listing(product, retailer, up, pickup, is_stale(product.observed_at))


@dataclass(frozen=True)
class SearchResults:
    query: str
    category: str | None
    total: int
    listings: list[Listing]


@dataclass(frozen=True)
class Offer:
    """One retailer's offer of a compared product: how it was matched (self, ean or name_pack) and, when
    delivery is included, the retailer's delivery fee for it and the total with it (AUD)."""

    listing: Listing
    matched_by: str
    delivery_fee: float | None = None
    total_with_delivery: float | None = None


@dataclass(frozen=True)
class Comparison:
    """A product across retailers: the offers in stock first, then the cheapest (by the total with delivery
    when it is included), the cheapest in stock, and what buying it saves against the product's own offer."""

    listing: Listing
    include_delivery: bool
    offers: list[Offer]
    cheapest: Offer | None
    saving: float | None


@dataclass(frozen=True)
class Observed:
    """A price observation, stale when it is old or was recorded as stale."""

    observation: PriceObservation
    stale: bool


@dataclass(frozen=True)
class PriceHistory:
    """A product's observations over the last `days`, oldest first, and their minimum, maximum and
    average price (AUD; None without observations)."""

    listing: Listing
    days: int
    observations: list[Observed]
    min: float | None
    max: float | None
    average: float | None


@dataclass(frozen=True)
class RetailerCount:
    slug: str
    name: str
    products: int
    demo: bool


@dataclass(frozen=True)
class CatalogStats:
    retailers: int
    products: int
    priced_products: int
    stale_products: int
    observations: int
    quote_item_keys: int
    last_observed_at: datetime | None
    demo_products: int
    by_retailer: list[RetailerCount]
    by_category: list[tuple[str, int]]
    generated_at: datetime


async def search(session: AsyncSession, *, query: str, category: str | None, limit: int) -> SearchResults:
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
    return SearchResults(query, category, total or 0, [listing(p, r) for p, r in rows])


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


async def compare(session: AsyncSession, product_id: str, *, include_delivery: bool) -> Comparison:
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
    offers: list[Offer] = []
    seen: set[str] = set()
    for p, r in rows:
        if p.id in seen:
            continue
        seen.add(p.id)
        matched = (
            "self" if p.id == product.id else "ean" if product.ean and p.ean == product.ean else "name_pack"
        )
        if include_delivery:
            fee = delivery_fee(r, p.price_cents or 0)
            offers.append(Offer(listing(p, r), matched, cents(fee), cents((p.price_cents or 0) + fee)))
        else:
            offers.append(Offer(listing(p, r), matched))

    def cost(o: Offer) -> float:
        found = o.total_with_delivery if include_delivery else cents(o.listing.product.price_cents)
        return found or 0.0  # every offer is priced

    offers.sort(key=lambda o: (not o.listing.product.in_stock, cost(o), o.listing.retailer.slug))
    cheapest = next((o for o in offers if o.listing.product.in_stock), None)
    mine = (
        next(o for o in offers if o.listing.product.id == product.id)
        if product.price_cents is not None
        else None
    )
    # What buying the cheapest offer saves against this product's own offer.
    saving = round(cost(mine) - cost(cheapest), 2) if mine and cheapest else None
    return Comparison(listing(product, retailer), include_delivery, offers, cheapest, saving)


async def history(session: AsyncSession, product_id: str, *, days: int) -> PriceHistory:
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
    return PriceHistory(
        listing(product, retailer),
        days,
        [Observed(o, is_stale(o.observed_at) or o.stale) for o in obs],
        cents(min(prices)) if prices else None,
        cents(max(prices)) if prices else None,
        cents(sum(prices) / len(prices)) if prices else None,
    )


async def stats(session: AsyncSession) -> CatalogStats:
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
    return CatalogStats(
        retailers=len(per_retailer),
        products=products,
        priced_products=priced,
        stale_products=stale,
        observations=observations,
        quote_item_keys=keys,
        last_observed_at=latest,
        demo_products=demo,
        by_retailer=[
            RetailerCount(slug, name, count, bool(is_demo)) for slug, name, is_demo, count in per_retailer
        ],
        by_category=[(c, n) for c, n in per_category],
        generated_at=now,
    )


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
