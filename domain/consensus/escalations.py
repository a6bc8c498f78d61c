"""Escalations to human reviewers, and the background job that notifies them."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus.models import Escalation
from domain.kernel import audit, events, outbox, webhooks
from domain.kernel.clock import iso, utcnow
from domain.kernel.context import Context
from domain.kernel.db import Database, table_of
from domain.kernel.errors import BadRequest
from domain.kernel.outbox import Job
from domain.kernel.settings import get_settings

log = logging.getLogger("concord.escalations")
PRIORITIES = ("low", "normal", "high", "urgent")
_ESCALATIONS = table_of(Escalation)


class EscalationStatus(StrEnum):
    """Where an escalation stands, as stored (the review API says `answered` for resolved)."""

    OPEN = "open"
    RESOLVED = "resolved"  # a reviewer answered it
    CLOSED = "closed"  # nothing is left to answer: the proposal it was raised for was withdrawn


class EscalationOrigin(StrEnum):
    """Who raised an escalation."""

    AGENT = "agent"  # an agent's question (escalate)
    POLICY = "policy"  # an approval policy, for a proposal a person has to decide (human-only, objection)


def question_of(question: str | None, message: str | None) -> str:
    """The text of an escalation: both APIs take it as `question` (the spec's name) or `message` (the PACT
    CLI's); either one will do, both only when they agree, so no request is read differently than meant."""
    if question and message and question != message:
        raise BadRequest(
            "question and message are two names for the same text: give one of them (or both equal)",
            field="question",
            fields=["question", "message"],
        )
    text = question or message
    if not text:
        raise BadRequest(
            "question (or message) is required: the text for the human reviewers", field="question"
        )
    return text


@dataclass(frozen=True)
class Raised:
    """An escalation as just raised (its notification to reviewers is still to be delivered)."""

    id: str
    resource_type: str
    resource_id: str
    section_id: str | None
    proposal_id: str | None
    message: str
    priority: str
    status: str
    raised_by_name: str | None
    delivery_status: str
    delivery_attempts: int
    created_at: datetime


async def create(
    session: AsyncSession,
    ctx: Context,
    *,
    resource_type: str,
    resource_id: str,
    message: str,
    section_id: str | None = None,
    proposal_id: str | None = None,
    priority: str = "normal",
    origin: EscalationOrigin = EscalationOrigin.AGENT,
) -> Raised:
    actor = ctx.require_actor()
    esc = Escalation(
        resource_type=resource_type,
        resource_id=resource_id,
        section_id=section_id,
        proposal_id=proposal_id,
        message=message,
        priority=priority,
        raised_by=actor.id,
        raised_by_name=actor.name,
        status=EscalationStatus.OPEN.value,
        origin=origin.value,
        delivery_status="pending",
        delivery_attempts=0,
        created_at=utcnow(),
    )
    session.add(esc)
    await session.flush()
    await events.append(
        session,
        events.stream_of(resource_type, resource_id),
        "pact.escalation.created" if resource_type == "topic" else "pact.escalation.human",
        ctx,
        section_id=section_id,
        data={"escalationId": esc.id, "message": message, "priority": priority, "proposalId": proposal_id},
        # Part of its proposal's story when it names one; the answer links to it by the escalation's id.
        correlation_id=proposal_id or esc.id,
    )
    await audit.record(session, ctx, "escalation.create", "escalation", esc.id, after=to_dict(esc))
    outbox.enqueue(session, NOTIFY_JOB, {"escalation_id": esc.id})
    return Raised(
        id=esc.id,
        resource_type=esc.resource_type,
        resource_id=esc.resource_id,
        section_id=esc.section_id,
        proposal_id=esc.proposal_id,
        message=esc.message,
        priority=esc.priority,
        status=esc.status,
        raised_by_name=esc.raised_by_name,
        delivery_status=esc.delivery_status,
        delivery_attempts=esc.delivery_attempts,
        created_at=esc.created_at,
    )


async def lock_raised_for(
    session: AsyncSession, resource_type: str, resource_id: str, proposal_id: str
) -> None:
    """Lock the open escalations a policy raised for a proposal. A reviewer answering one locks it before
    the resource, so whoever closes them takes them in that order too, before the resource's lock."""
    await session.execute(
        select(Escalation.id)
        .where(*_raised_for(resource_type, resource_id, proposal_id))
        .order_by(Escalation.id)
        .with_for_update(key_share=True)
    )


def _raised_for(resource_type: str, resource_id: str, proposal_id: str) -> tuple[Any, ...]:
    return (
        Escalation.resource_type == resource_type,
        Escalation.resource_id == resource_id,
        Escalation.proposal_id == proposal_id,
        Escalation.status == EscalationStatus.OPEN.value,
        Escalation.origin == EscalationOrigin.POLICY.value,
    )


async def close_raised_for(
    session: AsyncSession,
    ctx: Context,
    *,
    resource_type: str,
    resource_id: str,
    proposal_id: str,
    reason: str,
) -> list[str]:
    """Close the open escalations a policy raised for a proposal that no longer needs a person (its author
    withdrew it): one conditional UPDATE, so an answer that got in first keeps its escalation answered.
    Each closure is an event on the resource's stream (`pact.escalation.closed`), an audit entry and a
    notice to the reviewers' webhook. The ids of the escalations closed."""
    actor = ctx.require_actor()
    now = utcnow()
    t = _ESCALATIONS
    # The ones lock_raised_for locked are this transaction's; one raised since (the owner switching to
    # human-only in between) that a reviewer is answering right now is skipped rather than waited for, which
    # could deadlock with that answer: the answer then finds the proposal withdrawn and is refused.
    closable = (
        select(Escalation.id)
        .where(*_raised_for(resource_type, resource_id, proposal_id))
        .with_for_update(key_share=True, skip_locked=True)
    )
    closed = (
        await session.execute(
            update(t)
            .where(t.c.id.in_(closable.scalar_subquery()), t.c.status == EscalationStatus.OPEN.value)
            .values(
                status=EscalationStatus.CLOSED.value,
                resolution=reason,
                resolved_by=actor.name,
                resolved_at=now,
            )
            .returning(t.c.id, t.c.section_id)
        )
    ).all()
    for escalation_id, section_id in sorted(closed):
        await events.append(
            session,
            events.stream_of(resource_type, resource_id),
            "pact.escalation.closed",
            ctx,
            section_id=section_id,
            data={"escalationId": escalation_id, "proposalId": proposal_id, "reason": reason},
            correlation_id=proposal_id,
            in_response_to=escalation_id,
        )
        await audit.record(
            session,
            ctx,
            "escalation.close",
            "escalation",
            escalation_id,
            before={"status": EscalationStatus.OPEN.value},
            after={"status": EscalationStatus.CLOSED.value, "reason": reason, "proposalId": proposal_id},
        )
        outbox.enqueue(session, CLOSED_JOB, {"escalation_id": escalation_id})
    return sorted(escalation_id for escalation_id, _section in closed)


def to_dict(esc: Escalation) -> dict[str, Any]:
    """The escalation as the reviewers' webhook receives it."""
    return {
        "escalationId": esc.id,
        "id": esc.id,
        "resourceType": esc.resource_type,
        "resourceId": esc.resource_id,
        "sectionId": esc.section_id,
        "proposalId": esc.proposal_id,
        "message": esc.message,
        "question": esc.message,
        "priority": esc.priority,
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


async def mark_failed(session: AsyncSession, payload: dict[str, Any], reason: str) -> None:
    esc = await session.get(Escalation, payload["escalation_id"])
    if esc is not None and esc.delivery_status != "delivered":
        esc.delivery_status = "failed"
        esc.delivery_error = reason


async def notify(db: Database, payload: dict[str, Any]) -> None:
    """Deliver the escalation to the webhook (when configured) and put it on the reviewers' queue.

    Never inside an open transaction: the attempt is recorded and committed first, then the webhook is
    posted, then the outcome recorded. A failed post (DeliveryFailed) records its error and is raised for
    the job to be retried; a retry posts again (the receiver tells repeats apart by the `Idempotency-Key`
    header, the same for every attempt) but repeats nothing in the database."""
    escalation_id = payload["escalation_id"]
    async with db.transaction() as session:
        esc = await session.get(Escalation, escalation_id, with_for_update=True)
        if esc is None or esc.delivery_status == "delivered":
            return
        esc.delivery_attempts += 1
        url = get_settings().escalation_webhook_url
        body = {"event": "escalation.created", "escalation": to_dict(esc)}
    outcome: str | None = None  # None: delivered
    if url:
        try:
            await webhooks.post_json(url, body, idempotency_key=f"escalation.created:{escalation_id}")
        except webhooks.Refused as exc:  # only a change of settings helps: failed now, not after retries
            outcome = str(exc)
        except webhooks.DeliveryFailed as exc:
            async with db.transaction() as session:
                esc = await session.get(Escalation, escalation_id, with_for_update=True)
                if esc is not None and esc.delivery_status != "delivered":
                    esc.delivery_error = str(exc)  # this attempt's; the job is retried
            raise
    async with db.transaction() as session:
        esc = await session.get(Escalation, escalation_id, with_for_update=True)
        if esc is None or esc.delivery_status == "delivered":
            return
        if outcome is None:
            esc.delivery_status = "delivered"
            esc.delivery_error = None
            esc.delivered_at = utcnow()
        else:
            esc.delivery_status = "failed"
            esc.delivery_error = outcome


# A run posts once, bounded by the webhook's timeout: the lease outlasts it with room to spare.
NOTIFY_JOB = Job(
    "escalation.notify",
    standalone=notify,
    on_failure=mark_failed,
    lease_seconds=webhooks.LIMITS.timeout_seconds + 10,
)


async def notify_closed(db: Database, payload: dict[str, Any]) -> None:
    """Tell the reviewers' webhook (when configured) that an escalation closed without an answer, so a queue
    kept outside Concord drops it: read in a short transaction, posted with none open."""
    url = get_settings().escalation_webhook_url
    if not url:
        return
    async with db.read() as session:
        esc = await session.get(Escalation, payload["escalation_id"])
        if esc is None or esc.status != EscalationStatus.CLOSED.value:
            return
        body = {
            "event": "escalation.closed",
            "escalation": {
                **to_dict(esc),
                "reason": esc.resolution,
                "closedBy": esc.resolved_by,
                "closedAt": iso(esc.resolved_at),
            },
        }
    try:
        # DeliveryFailed is raised: the job is retried
        await webhooks.post_json(url, body, idempotency_key=f"escalation.closed:{esc.id}")
    except webhooks.Refused as exc:
        # Only a change of settings helps; the escalation's own delivery already shows the refusal.
        log.warning("closing of escalation %s not posted: %s", esc.id, exc)


CLOSED_JOB = Job(
    "escalation.closed_notify", standalone=notify_closed, lease_seconds=webhooks.LIMITS.timeout_seconds + 10
)
