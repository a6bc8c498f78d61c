"""Imports every module that registers a reference-data seeder (legislation, market, …)."""

import domain.legislation_seed  # noqa: F401 - legislation sample
from domain.market import seed as market_seed  # noqa: F401
