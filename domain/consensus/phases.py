"""The phase vocabulary of a resource's negotiation (PACT v2.0.3 §4.4.1), which `_status`, `manifest` and
`/done` answer; how a resource's state maps onto it is domain/consensus/sessions.py `phase_of`."""

from __future__ import annotations

from enum import StrEnum


class Phase(StrEnum):
    """Where a resource's negotiation stands (§4.4.1)."""

    FORMING = "forming"  # nothing proposed or settled yet
    NEGOTIATING = "negotiating"  # proposals pending or intents open
    CONVERGED = "converged"  # nothing pending, and something settled (or the topic reached consensus)
    ESCALATED = "escalated"  # a question or an objected proposal waits for a person
    CLOSED = "closed"  # the resource takes no more proposals
