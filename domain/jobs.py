"""Imports every module that registers a background job handler or sweep, so workers and the scheduler
see all of them."""

from domain import escalations, topic_consensus, topic_lifecycle  # noqa: F401
from domain.documents import library, proposals, tap  # noqa: F401 - conversion job, lock and TTL sweeps
from domain.market import registry as market_registry  # noqa: F401
