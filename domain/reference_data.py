"""Imports every module that registers a reference-data seeder (legislation, market, …)."""
