"""A price observation (spec: "Price observation submission") as the work economy's rules read it, and the
rules of its table that read reference data: the item key and retailer exist, the unit is the item key's.
The submission's shape and its other rules are its request model's (web/hub/work/schemas.py,
`PriceObservationSubmission`), checked before anything is written: a violation is a 400 naming the field,
and the assignment stays as it was. Its stored JSON is read and written in observation_stored.py."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel.errors import BadRequest
from domain.market.models import QuoteItem, Retailer
from domain.market.units import QuoteUnit


class PriceUnit(StrEnum):
    """The unit a submitted unit price is per: the canonical quote units as the spec spells them on the wire
    (m2 where the quote rates say m²). Each member is named as its `QuoteUnit` is."""

    SQUARE_METRE = "m2"
    LINEAL_METRE = "lm"
    LITRE = "L"
    ITEM = "item"
    KILOGRAM = "kg"

    @property
    def quote_unit(self) -> QuoteUnit:
        return QuoteUnit[self.name]

    @classmethod
    def of(cls, unit: str) -> PriceUnit:
        """The wire spelling of a canonical quote unit."""
        return cls[QuoteUnit(unit).name]


MAX_CENTS = 100_000_000  # a million dollars: beyond any retail product, and well inside an int column


@dataclass(frozen=True)
class Observation:
    """A price observation: as submitted once checked (GTIN zero-padded to 14 digits), or as stored."""

    item_key: str
    retailer_slug: str
    product_name: str
    product_url: str
    ean: str | None
    price_cents: int
    unit_price_cents: int
    unit_price_unit: str  # a PriceUnit when submitted; a stored one is read as it was stored
    in_stock: bool = True

    @property
    def unit(self) -> QuoteUnit:
        return PriceUnit(self.unit_price_unit).quote_unit


async def check(
    session: AsyncSession, obs: Observation, *, assigned_key: str | None
) -> tuple[QuoteItem, Retailer]:
    """The rules that read reference data; returns the item key and retailer the observation names."""
    item = await session.get(QuoteItem, obs.item_key)
    if item is None:
        raise BadRequest(
            f"submission.itemKey: unknown item key {obs.item_key!r} (GET /api/market/quote-rates lists them)",
            code="unknown_item_key",
            field="submission.itemKey",
        )
    if assigned_key is not None and obs.item_key != assigned_key:
        raise BadRequest(
            f"submission.itemKey: this assignment is for {assigned_key!r}, not {obs.item_key!r}",
            code="wrong_item_key",
            field="submission.itemKey",
        )
    retailer = await session.get(Retailer, obs.retailer_slug)
    if retailer is None:
        raise BadRequest(
            f"submission.retailerSlug: unknown retailer {obs.retailer_slug!r}",
            code="unknown_retailer",
            field="submission.retailerSlug",
        )
    if obs.unit != item.unit:
        wire = PriceUnit.of(item.unit)
        raise BadRequest(
            f"submission.unitPriceUnit: item key {item.key} is priced per {wire}, not {obs.unit_price_unit}",
            code="unit_mismatch",
            field="submission.unitPriceUnit",
        )
    return item, retailer
