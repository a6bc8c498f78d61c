"""Imports every module that registers a reference-data seeder (legislation, market, …)."""

from domain.market import seed as market_seed  # noqa: F401
