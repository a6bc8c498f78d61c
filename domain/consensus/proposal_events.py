"""The stored data of a proposal's events (`pact.proposal.*`), each built here and nowhere else.

An event's data is hashed into its stream's chain (domain/kernel/events.py): a key's name, its order and
its value's format are part of the stored record, so they never change, or old events would not verify
(`concord events verify`). The wire models of the APIs read proposals from the typed rows, not from here."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from domain.consensus.models import Proposal
from domain.kernel.clock import iso

SECTION_GONE = "section no longer exists"


def counts(p: Proposal) -> dict[str, int]:
    return {"approveCount": p.approve_count, "rejectCount": p.reject_count, "objectCount": p.object_count}


def created(p: Proposal) -> dict[str, Any]:
    """pact.proposal.created"""
    return {"proposalId": p.id, "summary": p.summary, "ttl": p.ttl_seconds, "baseVersion": p.base_version}


def voted(p: Proposal, kind: str, reason: str | None, needed: int) -> dict[str, Any]:
    """pact.proposal.vote.<kind>: the counts after the vote."""
    return {"proposalId": p.id, "vote": kind, "reason": reason, **counts(p), "needed": needed}


def decided_by_votes(p: Proposal, needed: int) -> dict[str, Any]:
    """pact.proposal.rejected or .objected, as a vote decided it."""
    return {"proposalId": p.id, **counts(p), "needed": needed}


def rejected_by_a_person(p: Proposal) -> dict[str, Any]:
    """pact.proposal.rejected, as a reviewer decided it."""
    return {"proposalId": p.id, "byHuman": True}


def merged(p: Proposal, new_version: int) -> dict[str, Any]:
    """pact.proposal.merged or .auto-merged."""
    return {"proposalId": p.id, "newVersion": new_version, **counts(p)}


def section_gone(p: Proposal) -> dict[str, Any]:
    """pact.proposal.superseded: its section vanished before it could merge."""
    return {"proposalId": p.id, "reason": SECTION_GONE}


def superseded(rival_id: str, by: Proposal) -> dict[str, Any]:
    """pact.proposal.superseded: a rival on the same section merged first."""
    return {"proposalId": rival_id, "supersededBy": by.id}


def closed(p: Proposal) -> dict[str, Any]:
    """pact.proposal.expired or .withdrawn: the counts it ended with."""
    return {"proposalId": p.id, **counts(p)}


# ---- the audit entries of a proposal's supersession and TTL hold (stored formats as well) -----------


def superseded_audit(winner: Proposal) -> dict[str, Any]:
    """The `proposal.supersede` audit entry's `after` for a rival the merged `winner` superseded."""
    return {"status": "superseded", "supersededBy": winner.id}


def held_audit(
    snapshot: dict[str, Any], expires_at: datetime, awaiting: list[str] | None = None
) -> dict[str, Any]:
    """A `proposal.hold` audit entry's `before` (the TTL it had) or `after` (the deadline it waits for, and
    the critical agents awaited): the proposal's audit snapshot with those."""
    held = {**snapshot, "expiresAt": iso(expires_at)}
    if awaiting is not None:
        held["awaiting"] = awaiting
    return held
