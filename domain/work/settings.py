"""Work-economy settings (CONCORD_WORK_* environment variables)."""

from __future__ import annotations

from functools import lru_cache

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class WorkSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CONCORD_WORK_", extra="ignore")

    submit_wait_seconds: float = Field(
        default=3.0, ge=0, le=30, description="How long POST /api/work/submit waits for the validator."
    )
    price_reward_credits: int = Field(default=2, ge=0, description="Credits of a price observation.")
    spotcheck_reward_credits: int = Field(default=1, ge=0, description="Credits of a spot-check.")
    assignment_ttl_hours: float = Field(
        default=24.0, gt=0, description="How long an unclaimed swept assignment stays open."
    )
    assignment_batch: int = Field(default=200, ge=1, description="Assignments created per sweep run.")
    assignment_stale_hours: float = Field(
        default=24.0, gt=0, description="An item key whose newest observation is older needs work."
    )
    median_days: int = Field(default=14, ge=1, description="Window of the median a price is held to.")
    median_tolerance: float = Field(
        default=0.10, gt=0, le=1, description="Largest relative distance from the median that passes."
    )
    median_min_observations: int = Field(
        default=3, ge=1, description="Fewer recent observations than this: no median, a curator looks."
    )
    duplicate_hours: float = Field(
        default=24.0, gt=0, description="A second observation of one product within this is a duplicate."
    )


@lru_cache
def get_work_settings() -> WorkSettings:
    return WorkSettings()
