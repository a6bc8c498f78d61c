"""Fixtures of the reviewers' review tests, defined in tests/review/fixtures.py so other suites (the
review pages) use them too."""

from tests.review.fixtures import reviewer, team, webhook  # noqa: F401
