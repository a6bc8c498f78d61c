"""The stored data of escalations and questions (domain/consensus/escalations.py), each built here and nowhere
else: the events `pact.human.asked`, `pact.escalation.created` / `.human`, `pact.escalation.closed` and
`pact.human.timed-out`, their audit entries, and the escalation as the reviewers' webhook receives it.

An event's data is hashed into its stream's chain (domain/kernel/events.py): a key's name, its order and its
value's format are part of the stored record, so they never change, or old events would not verify. The audit
entries are stored too, and the webhook's body is a format receivers outside Concord keep. The APIs' wire
models read the escalation's row or the domain's records (web/kernel/human.py, web/hub/review/schemas.py),
not these."""

from __future__ import annotations

from typing import Any

from domain.consensus.models import Escalation, stored_priority
from domain.kernel.clock import iso
from domain.kernel.context import Actor


def asked(esc: Escalation, agent: Actor) -> dict[str, Any]:
    """pact.human.asked: an agent's question for a person."""
    return {
        "queryId": esc.id,
        "agentId": agent.id,
        "agentName": agent.name,
        "question": esc.message,
        "sectionId": esc.section_id,
        "context": esc.context,
        "timeoutAt": iso(esc.timeout_at),
    }


def created(esc: Escalation) -> dict[str, Any]:
    """pact.escalation.created (a topic's) or pact.escalation.human (a document's)."""
    return {
        "escalationId": esc.id,
        "message": esc.message,
        "priority": esc.priority,
        "proposalId": esc.proposal_id,
    }


def closed(escalation_id: str, proposal_id: str | None, reason: str) -> dict[str, Any]:
    """pact.escalation.closed: a policy's escalation whose proposal no longer needs a person."""
    return {"escalationId": escalation_id, "proposalId": proposal_id, "reason": reason}


def closed_audit(status: str, proposal_id: str | None, reason: str) -> dict[str, Any]:
    """The audit entry's `after` of a closure (`status`: closed)."""
    return {"status": status, "reason": reason, "proposalId": proposal_id}


def timed_out(esc: Escalation) -> dict[str, Any]:
    """pact.human.timed-out: a question nobody answered in time."""
    return {
        "queryId": esc.id,
        "agentId": esc.raised_by,
        "agentName": esc.raised_by_name,
        "timeoutAt": iso(esc.timeout_at),
    }


def timed_out_audit(status: str, esc: Escalation) -> dict[str, Any]:
    """The audit entry's `after` of a question timed out (`status`: timed-out)."""
    return {"status": status, "timeoutAt": iso(esc.timeout_at)}


def snapshot(esc: Escalation) -> dict[str, Any]:
    """The escalation as its creation's audit entry stores it and the reviewers' webhook receives it."""
    return {
        "escalationId": esc.id,
        "id": esc.id,
        "kind": esc.kind,
        "resourceType": esc.resource_type,
        "resourceId": esc.resource_id,
        "sectionId": esc.section_id,
        "proposalId": esc.proposal_id,
        "message": esc.message,
        "question": esc.message,
        "context": esc.context,
        "timeoutAt": iso(esc.timeout_at),
        "priority": stored_priority(esc.priority),
        "status": esc.status,
        "raisedBy": esc.raised_by_name,
        "delivery": {
            "status": esc.delivery_status,
            "attempts": esc.delivery_attempts,
            "error": esc.delivery_error,
            "deliveredAt": iso(esc.delivered_at),
        },
        "createdAt": iso(esc.created_at),
    }


def closed_webhook(esc: Escalation) -> dict[str, Any]:
    """The escalation.closed notice to the reviewers' webhook."""
    return {
        "event": "escalation.closed",
        "escalation": {
            **snapshot(esc),
            "reason": esc.resolution,
            "closedBy": esc.resolved_by,
            "closedAt": iso(esc.resolved_at),
        },
    }
