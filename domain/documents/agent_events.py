"""The stored data of a document agent's events (`pact.agent.joined`, `pact.agent.left`) and of the
registration an onboarding stores (`pact.fabric.onboarded`, its audit entry), each built here and nowhere
else.

An event's data is hashed into its stream's chain (domain/kernel/events.py): a key's name, its order and
its value's format are part of the stored record, so they never change, or old events would not verify. The
document API's wire models read agents from their rows (web/docs/schemas.py `DocumentAgent.of`), not from
here."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from domain.documents.membership import capabilities
from domain.documents.models import DocumentAgent
from domain.kernel.clock import iso

if TYPE_CHECKING:
    from domain.documents.agents import Departure


def agent(a: DocumentAgent) -> dict[str, Any]:
    """The agent as its events have always carried it."""
    return {
        "agentId": a.id,
        "agentName": a.agent_name,
        "role": a.role,
        "capabilities": capabilities(a),
        "status": a.status,
        "isActive": a.status == "active",
        "joinedAt": iso(a.joined_at),
        "leftAt": iso(a.left_at),
    }


def joined(a: DocumentAgent) -> dict[str, Any]:
    """pact.agent.joined"""
    return agent(a)


def registration(a: DocumentAgent) -> dict[str, Any]:
    """The registration an onboarding stores in pact.fabric.onboarded and its audit entry (the join's answer
    as it was when first stored)."""
    return {**agent(a), "documentId": a.document_id, "registrationId": a.id}


def left(a: DocumentAgent, departed: Departure) -> dict[str, Any]:
    """pact.agent.left, by leaving or removed (then naming who removed it and why)."""
    data = {**agent(a), "locksReleased": departed.locks_released, "keyRevoked": departed.key_revoked}
    if departed.removed_by is not None:
        data |= {"removedBy": departed.removed_by, "reason": departed.reason}
    return data
