"""Pydantic models of the market endpoints (requests, and responses for /openapi.json)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from web.hub.schemas import Model as HubModel


class Model(HubModel):
    @field_validator("*", mode="after")
    @classmethod
    def _printable(cls, value: Any) -> Any:
        # PostgreSQL cannot store or compare NUL in text: refuse it as bad input, never a 500 later.
        if isinstance(value, str) and "\x00" in value:
            raise ValueError("must not contain NUL (\\u0000) characters")
        if isinstance(value, list) and any(isinstance(v, str) and "\x00" in v for v in value):
            raise ValueError("must not contain NUL (\\u0000) characters")
        return value


class ProductSearchQuery(Model):
    query: str = Field(min_length=1, max_length=200, description="Words that must all appear (required).")
    category: str | None = Field(default=None, max_length=40, description="Category filter, e.g. paint.")
    limit: int = Field(default=20, ge=1, le=100, description="1 to 100 (default 20).")


class CompareQuery(Model):
    productId: str = Field(min_length=1, max_length=36, description="Product to compare across retailers.")
    includeDelivery: bool = Field(default=False, description="Add each retailer's delivery fee.")


class ProductHistoryQuery(Model):
    productId: str = Field(min_length=1, max_length=36)
    days: int = Field(default=30, ge=1, le=365, description="1 to 365 (default 30).")


class CartItem(Model):
    query: str = Field(min_length=1, max_length=200)
    quantity: int = Field(ge=1, le=1000)


class CartBody(Model):
    items: list[CartItem] = Field(min_length=1, max_length=100)
    preferPickup: bool = False


class CartResult(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    status: Literal["pending", "done", "failed"]
    url: str


class NearMeQuery(Model):
    latitude: float = Field(ge=-90, le=90, allow_inf_nan=False, description="Required, -90 to 90.")
    longitude: float = Field(ge=-180, le=180, allow_inf_nan=False, description="Required, -180 to 180.")
    fuelType: str | None = Field(default=None, max_length=10, description="Default U91.")
    radiusKm: float = Field(default=10, gt=0, le=200, allow_inf_nan=False, description="Default 10.")
    limit: int = Field(default=20, ge=1, le=100)


class CheapestQuery(Model):
    fuelType: str | None = Field(default=None, max_length=10, description="Default U91.")
    state: str | None = Field(default=None, max_length=3)
    limit: int = Field(default=10, ge=1, le=100)


class FuelSearchQuery(Model):
    fuelType: str | None = Field(default=None, max_length=10)
    state: str | None = Field(default=None, max_length=3)
    suburb: str | None = Field(default=None, max_length=120)
    limit: int = Field(default=20, ge=1, le=100)


class FuelSummaryQuery(Model):
    state: str | None = Field(default=None, max_length=3)


class FuelHistoryQuery(Model):
    stationId: str = Field(min_length=1, max_length=80)
    fuelType: str | None = Field(default=None, max_length=10)
    days: int = Field(default=30, ge=1, le=365)


class QuoteRatesQuery(Model):
    items: str | None = Field(
        default=None, max_length=64 * 81, description="1 to 64 comma-separated item keys (required)."
    )


class QuoteRateObservation(BaseModel):
    model_config = ConfigDict(extra="forbid")
    retailer: str
    retailer_name: str
    rate_aud: float = Field(description="Per-unit rate in AUD for the item key's canonical unit.")
    price_aud: float = Field(description="Raw product price in AUD.")
    product_id: str
    product_name: str
    product_url: str = Field(json_schema_extra={"format": "uri"})
    observed_at: str = Field(json_schema_extra={"format": "date-time"})
    stale: bool = Field(description="True when the observation is older than 7 days.")
    tier: Literal["budget", "standard", "premium"]


class QuoteRateEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    unit: Literal["m²", "lm", "L", "item", "kg"]
    description: str
    category: Literal["tiling", "paint", "timber", "roofing", "plaster", "finishing"]
    cheapest: QuoteRateObservation | None
    observations: list[QuoteRateObservation]


class QuoteRatesResponse(BaseModel):
    model_config = ConfigDict(extra="forbid")
    rates: dict[str, QuoteRateEntry]
    missing: list[str] = Field(description="Item keys with no current observation.")
    generated_at: str = Field(json_schema_extra={"format": "date-time"})
