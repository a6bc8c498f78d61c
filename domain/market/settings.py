"""Market settings (CONCORD_MARKET_* environment variables), kept apart from the core settings."""

from __future__ import annotations

from functools import lru_cache

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class MarketSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CONCORD_MARKET_", extra="ignore")

    scrape_timeout_seconds: float = Field(default=10.0, gt=0, le=60, description="Per-request timeout.")
    scrape_max_bytes: int = Field(default=2_000_000, ge=10_000, description="Largest page read.")
    scrape_max_redirects: int = Field(default=5, ge=0, le=10, description="Redirects followed.")
    scrape_stale_hours: float = Field(
        default=24.0, gt=0, description="A product whose newest price is older than this is re-scraped."
    )
    scrape_batch: int = Field(default=50, ge=1, description="Scrape jobs enqueued per sweep run.")
    user_agent: str = Field(
        default="ConcordPriceBot/1.0 (+self-hosted Concord market data; respects robots and rate limits)",
        description="User-Agent of every outgoing market request.",
    )
    cart_wait_seconds: float = Field(
        default=2.0, ge=0, le=10, description="How long POST /cart/optimise waits before answering 202."
    )
    rate_limit_cart: int = Field(
        default=60, ge=1, description="Cart optimisations per minute per client address."
    )
    fuel_nsw_url: str | None = Field(default=None, description="NSW FuelCheck prices feed for the sweep.")
    fuel_wa_url: str | None = Field(default=None, description="WA FuelWatch RSS feed for the sweep.")
    fuel_ingest_minutes: float = Field(default=30.0, gt=0, description="Interval of the fuel sweep.")


@lru_cache
def get_market_settings() -> MarketSettings:
    return MarketSettings()
