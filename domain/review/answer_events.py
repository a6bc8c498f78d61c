"""The stored data of a person's answers and decisions (domain/review/escalations.py, proposals.py), each
built here and nowhere else: `pact.human.responded` and `pact.human.resolved` events, their audit entries,
and the answer as the escalation webhook receives it.

An event's data is hashed into its stream's chain (domain/kernel/events.py): a key's name, its order and its
value's format are part of the stored record, so they never change, or old events would not verify. The audit
entries are stored too, and the webhook's body is a format receivers outside Concord keep. The review API's
wire models read the escalation's row (web/hub/review/schemas.py), not these."""

from __future__ import annotations

from typing import Any

from domain.consensus.models import Escalation, Proposal
from domain.kernel.clock import iso
from domain.kernel.context import Actor


def responded(esc: Escalation, reviewer: Actor, text: str) -> dict[str, Any]:
    """pact.human.responded: a question's answer."""
    return {
        "queryId": esc.id,
        "responderId": reviewer.id,
        "responderName": reviewer.name,
        "agentId": esc.raised_by,
        "agentName": esc.raised_by_name,
        "answer": text,
    }


def resolved(
    esc: Escalation,
    reviewer: Actor,
    *,
    text: str,
    decision: str | None,
    decided: Proposal | None,
    is_override: bool,
) -> dict[str, Any]:
    """pact.human.resolved: an escalation's answer, with the decision on its proposal (if any)."""
    return {
        "escalationId": esc.id,
        "resolutionId": esc.id,
        "answer": text,
        "decision": decision,
        "proposalId": esc.proposal_id,
        "proposalStatus": decided.status if decided is not None else None,
        "resolvedProposalIds": [decided.id] if decided is not None else [],
        "isOverride": is_override,
        "answeredBy": reviewer.name,
    }


def answered_audit(
    esc: Escalation, *, text: str, decision: str | None, decided: Proposal | None, is_override: bool
) -> dict[str, Any]:
    """The audit entry's `after` of an answer (a question's or an escalation's)."""
    return {
        "status": "answered",
        "answer": text,
        "decision": decision,
        "isOverride": is_override,
        "proposalId": esc.proposal_id,
        "proposalStatus": decided.status if decided is not None else None,
    }


def answer_webhook(esc: Escalation, status: str) -> dict[str, Any]:
    """The answer as the escalation webhook receives it (`status`: the escalation's, as the review API says
    it)."""
    return {
        "event": "escalation.answered",
        "escalation": {
            "escalationId": esc.id,
            "kind": esc.kind,
            "resourceType": esc.resource_type,
            "resourceId": esc.resource_id,
            "sectionId": esc.section_id,
            "proposalId": esc.proposal_id,
            "question": esc.message,
            "status": status,
            "answer": esc.resolution,
            "decision": esc.decision,
            "answeredBy": esc.resolved_by,
            "answeredAt": iso(esc.resolved_at),
        },
    }


def proposal_resolved(
    decided: Proposal, reviewer: Actor, *, decision: str, note: str, version: int | None
) -> dict[str, Any]:
    """pact.human.resolved: a reviewer's decision on an objected document proposal."""
    return {
        "proposalId": decided.id,
        "decision": decision,
        "note": note,
        "proposalStatus": decided.status,
        "resolvedProposalIds": [decided.id],
        "isOverride": decision == "approve",  # approving overrides the objection
        "decidedBy": reviewer.name,
        "newVersion": version if decided.status == "approved" else None,
    }


def proposal_decided_audit(decided: Proposal, *, note: str, version: int | None) -> dict[str, Any]:
    """The audit entry's `after` of a reviewer's decision on a document proposal."""
    return {"status": decided.status, "note": note, "documentVersion": version}
