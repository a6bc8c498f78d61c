"""Imports every module that registers a background job handler, so workers see all of them."""

from domain import escalations, topic_consensus, topic_lifecycle  # noqa: F401
from domain.documents import library, tap  # noqa: F401 - conversion job, lock sweep
from domain.market import registry as market_registry  # noqa: F401
