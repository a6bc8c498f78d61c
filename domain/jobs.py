"""Imports every module that registers a background job handler, so workers see all of them."""

<<<<<<< HEAD
from domain import (  # noqa: F401,E402 - proposal TTL and stability sweeps
    escalations,  # noqa: F401
    topic_consensus,
    topic_lifecycle,
)
=======
from domain import escalations  # noqa: F401
from domain.market import registry as market_registry  # noqa: F401
>>>>>>> main
