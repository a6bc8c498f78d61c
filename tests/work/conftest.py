"""Fixtures of the work-economy tests, defined in tests/work/fixtures.py so other suites (the review
pages) use them too."""

from tests.work.fixtures import fast, hits, market, shop  # noqa: F401
