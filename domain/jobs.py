"""Imports every module that registers a background job handler, so workers see all of them."""

from domain import (  # noqa: F401,E402 - proposal TTL and stability sweeps
    escalations,  # noqa: F401
    topic_consensus,
    topic_lifecycle,
)
from domain.documents import library, proposals, tap  # noqa: F401 - conversion job, sweeps
