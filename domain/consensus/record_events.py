"""The stored data of the collaboration records' and locks' events, and of a policy change, one function per
event type, for topics and documents alike.

An event's data is hashed into its stream's chain (domain/kernel/events.py): a key's name, its order and its
value's format are part of the stored record, so they never change, or old events would not verify. The
APIs' wire models read the typed results (records.Constraint, records.Score, locks.Lock), not these."""

from __future__ import annotations

from typing import Any

from domain.consensus.models import SectionConstraint, SectionLock, SectionSalience
from domain.consensus.policies import Approval
from domain.kernel.clock import iso


def constraint_published(row: SectionConstraint, kind_field: str) -> dict[str, Any]:
    """The vocabulary's constraint-published event; `kind_field` names the kind (a topic's `category`, a
    document's `type`)."""
    return {
        "constraintId": row.id,
        "sectionId": row.section_id,
        "boundary": row.boundary,
        kind_field: row.kind,
        "agentId": row.agent_id,
        "agentName": row.agent_name,
        "createdAt": iso(row.created_at),
    }


def constraint_withdrawn(row: SectionConstraint, kind_field: str) -> dict[str, Any]:
    """pact.constraint.withdrawn"""
    return {
        "constraintId": row.id,
        "sectionId": row.section_id,
        "boundary": row.boundary,
        kind_field: row.kind,
        "agentId": row.agent_id,
        "agentName": row.agent_name,
        "withdrawnAt": iso(row.withdrawn_at),
    }


def salience_set(row: SectionSalience, previous: int | None) -> dict[str, Any]:
    """The vocabulary's salience-set event: the score and the one it replaced."""
    return {
        "sectionId": row.section_id,
        "agentId": row.agent_id,
        "agentName": row.agent_name,
        "score": row.score,
        "previous": previous,
        "createdAt": iso(row.created_at),
        "updatedAt": iso(row.updated_at),
    }


def section_locked(row: SectionLock) -> dict[str, Any]:
    """pact.section.locked (taken or renewed)"""
    return {
        "sectionId": row.section_id,
        "lockedBy": row.agent_id,
        "lockedByName": row.agent_name,
        "ttlSeconds": row.ttl_seconds,
        "expiresAt": iso(row.expires_at),
    }


def section_unlocked(section_id: str, reason: str, holder: str | None) -> dict[str, Any]:
    """pact.section.unlocked; an expired lock's also names its holder (the system ended it)."""
    data: dict[str, Any] = {"sectionId": section_id, "reason": reason}
    if holder is not None:
        data["lockedBy"] = holder
    return data


def policy_changed(after: Approval, before: Approval) -> dict[str, Any]:
    """pact.policy.changed"""
    return {
        "approvalPolicy": after.policy.value,
        "allowSelfApproval": after.allow_self_approval,
        "previousApprovalPolicy": before.policy.value,
        "previousAllowSelfApproval": before.allow_self_approval,
    }


def salience_auto_demoted(
    proposal_id: str, agent_id: str, agent_name: str, original: int, new: int
) -> dict[str, Any]:
    """pact.salience.auto-demoted: a critical agent that let a proposal's time pass is counted as not
    critical for it."""
    return {
        "proposalId": proposal_id,
        "agentId": agent_id,
        "agentName": agent_name,
        "originalScore": original,
        "newScore": new,
    }
