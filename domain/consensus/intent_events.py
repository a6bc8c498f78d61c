"""The stored data of an intent's events (declared, objected, accepted, superseded), each built here and
nowhere else. An event's data is hashed into its stream's chain (domain/kernel/events.py): a key's name, its
order and its value's format are part of the stored record and never change, or old events would not verify
(`concord events verify`). The audit trail stores the same data for the declaration and the supersession."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from domain.kernel.clock import iso

if TYPE_CHECKING:  # records imports intents, which builds the accepted and superseded data
    from domain.consensus.records import Intent


def declared(intent: Intent) -> dict[str, Any]:
    return {
        "intentId": intent.id,
        "sectionId": intent.section_id,
        "goal": intent.goal,
        "category": intent.category,
        "agentId": intent.agent_id,
        "agentName": intent.agent_name,
        "createdAt": iso(intent.created_at),
        "expiresAt": iso(intent.expires_at),
    }


def objected(intent: Intent, agent_id: str, agent_name: str, reason: str) -> dict[str, Any]:
    """By the agent named, with the objections the intent has now."""
    return {
        "intentId": intent.id,
        "sectionId": intent.section_id,
        "agentId": agent_id,
        "agentName": agent_name,
        "reason": reason,
        "intentAgentId": intent.agent_id,
        "objectionCount": len(intent.objections),
    }


def accepted(intent_id: str, section_id: str, agent_id: str, agent_name: str, at: datetime) -> dict[str, Any]:
    """Its window for objections ran out with none (`at`: the window's end)."""
    return {
        "intentId": intent_id,
        "sectionId": section_id,
        "agentId": agent_id,
        "agentName": agent_name,
        "acceptedAt": iso(at),
    }


def superseded(intent_id: str, section_id: str, by: str) -> dict[str, Any]:
    """Its author declared a newer intent (`by`) on the same section."""
    return {"intentId": intent_id, "sectionId": section_id, "supersededBy": by}
