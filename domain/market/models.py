"""Market data: retailers, products, price observations, quote-rate item keys, cart optimisations and
fuel stations with their prices."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import (
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from domain.kernel.clock import utcnow
from domain.kernel.db import Base, BigId, JSONType, UTCDateTime
from domain.kernel.ids import new_id
from domain.market.units import QuoteUnit


class Retailer(Base):
    __tablename__ = "market_retailers"

    slug: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    domain: Mapped[str] = mapped_column(String(253))
    # Fulfilment terms, in cents: delivery fee waived at or above free_delivery_over (when set).
    delivery_fee_cents: Mapped[int] = mapped_column(Integer, default=0)
    free_delivery_over_cents: Mapped[int | None] = mapped_column(Integer)
    pickup_available: Mapped[bool] = mapped_column(Boolean, default=False)
    pickup_fee_cents: Mapped[int] = mapped_column(Integer, default=0)
    demo: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class QuoteCategory(StrEnum):
    """The trade a quote-rate item belongs to."""

    TILING = "tiling"
    PAINT = "paint"
    TIMBER = "timber"
    ROOFING = "roofing"
    PLASTER = "plaster"
    FINISHING = "finishing"


class ProductTier(StrEnum):
    """A product's price tier among those that fill the same quote item."""

    BUDGET = "budget"
    STANDARD = "standard"
    PREMIUM = "premium"


class QuoteItem(Base):
    """A stable quote-rate item key: what a consumer asks a rate for, in one canonical unit."""

    __tablename__ = "market_quote_items"

    key: Mapped[str] = mapped_column(String(80), primary_key=True)
    unit: Mapped[str] = mapped_column(String(8))  # units.QuoteUnit
    description: Mapped[str] = mapped_column(String(300))
    category: Mapped[str] = mapped_column(String(20))  # QuoteCategory


class Product(Base):
    __tablename__ = "market_products"
    __table_args__ = (
        UniqueConstraint("retailer_slug", "sku", name="uq_market_products_retailer_sku"),
        Index("ix_market_products_ean", "ean"),
        Index("ix_market_products_item_key", "item_key"),
        Index("ix_market_products_norm_name", "norm_name"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    retailer_slug: Mapped[str] = mapped_column(ForeignKey("market_retailers.slug", ondelete="CASCADE"))
    sku: Mapped[str] = mapped_column(String(120))
    name: Mapped[str] = mapped_column(String(300))
    norm_name: Mapped[str] = mapped_column(String(300))
    brand: Mapped[str | None] = mapped_column(String(120))
    url: Mapped[str] = mapped_column(String(2000))
    ean: Mapped[str | None] = mapped_column(String(14))
    category: Mapped[str] = mapped_column(String(40))
    pack_size: Mapped[float] = mapped_column(Float, default=1.0)
    pack_unit: Mapped[str] = mapped_column(String(16), default=QuoteUnit.ITEM.value)
    item_key: Mapped[str | None] = mapped_column(ForeignKey("market_quote_items.key", ondelete="SET NULL"))
    tier: Mapped[str] = mapped_column(String(10), default=ProductTier.STANDARD.value)
    pickup_available: Mapped[bool] = mapped_column(Boolean, default=True)
    demo: Mapped[bool] = mapped_column(Boolean, default=False)
    # Latest observation, denormalised so search and optimisation read one row per product.
    price_cents: Mapped[int | None] = mapped_column(Integer)
    in_stock: Mapped[bool] = mapped_column(Boolean, default=True)
    observed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # The source of that newest observation (scrape, demo, import, crowd, …); "crowd" marks a price an
    # agent submitted through the work economy.
    price_source: Mapped[str | None] = mapped_column(String(20))
    # Scraper state: when it last ran and what happened (ok, no_price, http_404, timeout, …).
    scrape_enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    last_scraped_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    scrape_status: Mapped[str | None] = mapped_column(String(40))
    scrape_error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class PriceObservation(Base):
    __tablename__ = "market_price_observations"
    __table_args__ = (
        Index("ix_market_price_observations_product_time", "product_id", "observed_at"),
        Index("ix_market_price_observations_stale", "stale", "observed_at"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    product_id: Mapped[str] = mapped_column(ForeignKey("market_products.id", ondelete="CASCADE"))
    price_cents: Mapped[int] = mapped_column(Integer)
    # Per canonical unit of the product's item key (or per pack unit), in cents; None if not derivable.
    unit_price_cents: Mapped[float | None] = mapped_column(Float)
    unit: Mapped[str | None] = mapped_column(String(8))
    in_stock: Mapped[bool] = mapped_column(Boolean, default=True)
    source: Mapped[str] = mapped_column(String(20))  # scrape, demo, crowd (accepted work), import
    # The public id of a crowd-sourced observation (a work submission's priceObservationId).
    ref: Mapped[str | None] = mapped_column(String(36), unique=True)
    observed_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # Kept true by the staleness sweep once the observation is older than 7 days.
    stale: Mapped[bool] = mapped_column(Boolean, default=False)


class CartOptimisation(Base):
    __tablename__ = "market_cart_optimisations"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    status: Mapped[str] = mapped_column(String(12), default="pending")  # pending, done, failed
    request: Mapped[dict[str, Any]] = mapped_column(JSONType)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class FuelStation(Base):
    __tablename__ = "market_fuel_stations"
    __table_args__ = (
        Index("ix_market_fuel_stations_state", "state"),
        Index("ix_market_fuel_stations_lat_lon", "latitude", "longitude"),
    )

    id: Mapped[str] = mapped_column(String(80), primary_key=True)  # e.g. nsw-1-1234, wa-<hash>
    source: Mapped[str] = mapped_column(String(16))  # nsw, wa, demo
    brand: Mapped[str | None] = mapped_column(String(120))
    name: Mapped[str] = mapped_column(String(300))
    address: Mapped[str | None] = mapped_column(String(500))
    suburb: Mapped[str | None] = mapped_column(String(120))
    state: Mapped[str] = mapped_column(String(3))
    postcode: Mapped[str | None] = mapped_column(String(8))
    latitude: Mapped[float] = mapped_column(Float)
    longitude: Mapped[float] = mapped_column(Float)
    demo: Mapped[bool] = mapped_column(Boolean, default=False)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class FuelPrice(Base):
    """Every price a feed reported; (station, fuel, time) is unique so re-ingesting adds nothing."""

    __tablename__ = "market_fuel_prices"
    __table_args__ = (
        UniqueConstraint("station_id", "fuel_type", "priced_at", name="uq_market_fuel_prices_point"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    station_id: Mapped[str] = mapped_column(ForeignKey("market_fuel_stations.id", ondelete="CASCADE"))
    fuel_type: Mapped[str] = mapped_column(String(10))
    cents_per_litre: Mapped[float] = mapped_column(Float)
    priced_at: Mapped[datetime] = mapped_column(UTCDateTime)
    source: Mapped[str] = mapped_column(String(16))


class FuelCurrentPrice(Base):
    """The newest price per station and fuel type (updated only by a newer price)."""

    __tablename__ = "market_fuel_current"
    __table_args__ = (Index("ix_market_fuel_current_fuel_price", "fuel_type", "cents_per_litre"),)

    station_id: Mapped[str] = mapped_column(
        ForeignKey("market_fuel_stations.id", ondelete="CASCADE"), primary_key=True
    )
    fuel_type: Mapped[str] = mapped_column(String(10), primary_key=True)
    cents_per_litre: Mapped[float] = mapped_column(Float)
    priced_at: Mapped[datetime] = mapped_column(UTCDateTime)
    source: Mapped[str] = mapped_column(String(16))
