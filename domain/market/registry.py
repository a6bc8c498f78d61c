"""Imports every market module that registers a job handler or a sweep (see domain/jobs.py)."""

from domain.market import cart, fuel_ingest, quote_rates, scrape  # noqa: F401
