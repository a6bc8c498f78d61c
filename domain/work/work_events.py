"""The work economy's stored formats, built here and nowhere else: the data of the work feed's events
(appended to each agent's `work` stream, so hashed into its chain), the `before`/`after` of the area's audit
entries, and the payload a price-observation assignment stores.

A key's name, its order and its value's format are part of the stored record, so they never change: old
chains must verify and old rows read the same. The wire models (web/hub/work/schemas.py) read assignments,
submissions and defects from their rows, not from here."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from domain.kernel.clock import iso
from domain.market.models import QuoteItem
from domain.work.models import WorkAssignment, WorkDefect, WorkSubmission


def item_payload(item: QuoteItem) -> dict[str, Any]:
    """Stored format: a price-observation assignment's payload (JSON column) for one item key."""
    return {
        "itemKey": item.key,
        "unit": item.unit,
        "description": item.description,
        "category": item.category,
    }


def offered_payload(item: QuoteItem, last_observed_at: datetime | None) -> dict[str, Any]:
    """Stored format: the payload of an assignment the creation sweep offers, with the key's newest price."""
    return {**item_payload(item), "lastObservedAt": iso(last_observed_at)}


def claimed(row: WorkAssignment) -> dict[str, Any]:
    """Stored format: the audit `after` of work.claim."""
    return {"expiresAt": iso(row.expires_at)}


def submitted(row: WorkAssignment, sub: WorkSubmission) -> dict[str, Any]:
    """Stored format: the audit `after` of work.submit."""
    return {"assignmentId": row.id, "workType": row.work_type, "status": sub.status}


def decided(sub: WorkSubmission) -> dict[str, Any]:
    """Stored format: the data of work.submission.accepted / .deferred / .rejected on the agent's feed."""
    return {
        "submissionId": sub.id,
        "assignmentId": sub.assignment_id,
        "status": sub.status,
        "creditsAwarded": sub.credits_awarded,
        "notes": sub.notes,
        "decidedBy": sub.decided_by,
        "priceObservationId": sub.price_observation_id,
        "priceDefectId": sub.price_defect_id,
    }


def validated(sub: WorkSubmission, status: str) -> dict[str, Any]:
    """Stored format: the audit `after` of work.validate.accepted / .deferred / .rejected."""
    return {"status": status, "checks": sub.checks, "creditsAwarded": sub.credits_awarded}


def reviewed(sub: WorkSubmission, note: str) -> dict[str, Any]:
    """Stored format: the audit `after` of work.review.accept / .reject."""
    return {"status": sub.status, "note": note, "creditsAwarded": sub.credits_awarded}


def defect_resolved(defect: WorkDefect, status: str, note: str | None) -> dict[str, Any]:
    """Stored format: the data of work.defect.resolved on the agent's feed."""
    return {"defectId": defect.id, "submissionId": defect.submission_id, "status": status, "note": note}
