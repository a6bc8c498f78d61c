"""The price observation submission (spec: "Price observation submission") and every rule of its table,
checked before anything is written: a violation is a 400 naming the field, and the assignment stays as
it was. Rules that need the database (the item key and retailer exist, the unit is the item key's) are
checked by `check` after the shape."""

from __future__ import annotations

from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
)
from sqlalchemy.ext.asyncio import AsyncSession
from stdnum import ean as gtin

from domain.kernel.errors import BadRequest
from domain.market.models import QuoteItem, Retailer

# The wire names of the canonical quote units (the spec writes m2 where the quote rates say m²).
WIRE_UNITS = {"m2": "m²", "lm": "lm", "L": "L", "item": "item", "kg": "kg"}
MAX_CENTS = 100_000_000  # a million dollars: beyond any retail product, and well inside an int column


Key = Annotated[StrictStr, Field(min_length=1, max_length=80)]
Slug = Annotated[StrictStr, Field(min_length=1, max_length=64)]
Name = Annotated[StrictStr, Field(min_length=5, max_length=250)]
Url = Annotated[StrictStr, Field(min_length=1, max_length=2000)]


class PriceObservationSubmission(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    itemKey: Key
    retailerSlug: Slug
    productName: Name
    productUrl: Url
    ean: StrictStr | None = None
    priceCents: StrictInt = Field(ge=1, le=MAX_CENTS)
    unitPriceCents: StrictInt = Field(ge=1, le=MAX_CENTS)
    unitPriceUnit: Literal["m2", "lm", "L", "item", "kg"]
    inStock: StrictBool = True

    @field_validator("productUrl")
    @classmethod
    def _http_url(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
            raise ValueError("must be an http(s) URL of the public product page")
        if parts.username or parts.password:
            raise ValueError("must not carry a user name or password")
        try:
            parts.port  # noqa: B018 - raises on a malformed port
        except ValueError:
            raise ValueError("has a malformed port") from None
        return value

    @field_validator("ean")
    @classmethod
    def _gtin(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        digits = value.replace(" ", "").replace("-", "")
        if not digits.isdigit() or len(digits) not in (8, 12, 13, 14):
            raise ValueError("must be a GTIN of 8, 12, 13 or 14 digits")
        if not gtin.is_valid(digits):
            raise ValueError("check digit does not match: not a valid GTIN")
        return digits.zfill(14)  # one form for every length, so de-duplication compares like with like

    @property
    def unit(self) -> str:
        return WIRE_UNITS[self.unitPriceUnit]


def parse(submission: Any) -> PriceObservationSubmission:
    if not isinstance(submission, dict):
        raise BadRequest(
            "submission: a price observation must be a JSON object",
            code="validation_error",
            field="submission",
        )
    try:
        return PriceObservationSubmission.model_validate(submission)
    except ValidationError as exc:
        errors = exc.errors()
        where = [f"submission.{'.'.join(str(p) for p in e['loc'])}" for e in errors]
        detail = "; ".join(f"{loc}: {e['msg']}" for loc, e in zip(where, errors, strict=True))
        raise BadRequest(detail, code="validation_error", field=where[0], fields=where) from None


async def check(
    session: AsyncSession, obs: PriceObservationSubmission, *, assigned_key: str | None
) -> tuple[QuoteItem, Retailer]:
    """The rules that read reference data; returns the item key and retailer the observation names."""
    item = await session.get(QuoteItem, obs.itemKey)
    if item is None:
        raise BadRequest(
            f"submission.itemKey: unknown item key {obs.itemKey!r} (GET /api/market/quote-rates lists them)",
            code="unknown_item_key",
            field="submission.itemKey",
        )
    if assigned_key is not None and obs.itemKey != assigned_key:
        raise BadRequest(
            f"submission.itemKey: this assignment is for {assigned_key!r}, not {obs.itemKey!r}",
            code="wrong_item_key",
            field="submission.itemKey",
        )
    retailer = await session.get(Retailer, obs.retailerSlug)
    if retailer is None:
        raise BadRequest(
            f"submission.retailerSlug: unknown retailer {obs.retailerSlug!r}",
            code="unknown_retailer",
            field="submission.retailerSlug",
        )
    if obs.unit != item.unit:
        wire = next(k for k, v in WIRE_UNITS.items() if v == item.unit)
        raise BadRequest(
            f"submission.unitPriceUnit: item key {item.key} is priced per {wire}, not {obs.unitPriceUnit}",
            code="unit_mismatch",
            field="submission.unitPriceUnit",
        )
    return item, retailer
