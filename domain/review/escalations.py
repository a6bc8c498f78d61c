"""Reviewers answer the questions agents escalate from topics and documents: the queue with each
question's context (the resource, the section as it reads now, the proposal in question), and one answer
per escalation, optionally with a decision on the proposal it names. An answer is audited, lands on the
resource's event stream and is posted to the escalation webhook when one is set.

Questions agents ask and wait on (`ask-human`, kind `question`) are in the same queue and get the same one
answer, until their time is up; the answer is `pact.human.responded` on the stream, an escalation's
`pact.human.resolved`. `settle` is that one answer, whichever way it comes: the review API, the review
desk's form, or the PACT paths of the resource (`.../human-responses/{id}/respond`, `.../resolve`).

On the wire the stored status `resolved` reads `answered`. An escalation a policy raised for a proposal that
its author then withdrew is `closed` (domain/consensus/escalations.py): nothing is left to answer."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus import escalations as raised
from domain.consensus.escalations import EscalationKind, EscalationStatus
from domain.consensus.models import Escalation, Proposal
from domain.kernel import audit, events, outbox, webhooks
from domain.kernel.clock import iso, utcnow
from domain.kernel.context import Context
from domain.kernel.db import Database
from domain.kernel.errors import Conflict, NotFound
from domain.kernel.ids import canonical_id
from domain.kernel.outbox import Job
from domain.kernel.settings import get_settings
from domain.kernel.sqlutil import for_update
from domain.kernel.vocabulary import SpeltOut
from domain.review import answer_events, resources
from domain.review import queue as queue_

log = logging.getLogger("concord.review")


class ReviewStatus(StrEnum):
    """An escalation or question in the reviewers' queue."""

    OPEN = "open"
    ANSWERED = "answered"
    CLOSED = "closed"  # the proposal it was raised for was withdrawn
    TIMED_OUT = "timed-out"  # a question nobody answered in time


class Decision(StrEnum):
    """What a person's answer decides on the proposal an escalation names."""

    APPROVE = "approve"  # merges it
    REJECT = "reject"


DecisionField = Annotated[Decision, SpeltOut(Decision)]


_WIRE = {
    EscalationStatus.OPEN: ReviewStatus.OPEN,
    EscalationStatus.RESOLVED: ReviewStatus.ANSWERED,
    EscalationStatus.CLOSED: ReviewStatus.CLOSED,
    EscalationStatus.TIMED_OUT: ReviewStatus.TIMED_OUT,
}


def wire_status(state: EscalationStatus) -> ReviewStatus:
    return _WIRE[state]


@dataclass(frozen=True)
class InQueue:
    """An escalation or question as a reviewer reads it: the row, its status at the time of reading, its
    resource (None when gone), the section's body as it reads now (None when the section is gone) and the
    proposal it names (None when it names none)."""

    escalation: Escalation
    state: EscalationStatus
    resource: resources.Info | None
    section_text: str | None
    proposal: Proposal | None

    @property
    def status(self) -> ReviewStatus:
        return wire_status(self.state)

    @property
    def answered(self) -> bool:
        """Whether it carries an answer (a person's, or why it closed)."""
        return self.state in (EscalationStatus.RESOLVED, EscalationStatus.CLOSED)


@dataclass(frozen=True)
class QueuePage:
    """One page of the reviewers' queue, with the filters that chose it."""

    items: list[InQueue]
    total: int
    limit: int
    offset: int
    filters: queue_.Filters


@dataclass(frozen=True)
class Answered:
    """An answer just recorded through the review API or desk: the escalation with its context, the decision
    on its proposal (if any), the answer event's sequence number and, after a decision, the resource's
    version."""

    item: InQueue
    decision: str | None
    event_sequence: int
    resource_version: int | None


async def queue(session: AsyncSession, filters: queue_.Filters, *, limit: int, offset: int) -> QueuePage:
    """A page of the reviewers' queue (domain/review/queue.py, the desk's own query), each item with its
    context."""
    page = await queue_.escalations(session, filters, offset=offset, limit=limit)
    rows = page.items
    found = await resources.infos(session, {(e.resource_type, e.resource_id) for e in rows})
    proposal_ids = {e.proposal_id for e in rows if e.proposal_id}
    proposals = (
        {
            p.id: p
            for p in (await session.scalars(select(Proposal).where(Proposal.id.in_(proposal_ids)))).all()
        }
        if proposal_ids
        else {}
    )
    items = [
        _item(e, found.get((e.resource_type, e.resource_id)), proposals.get(e.proposal_id or ""))
        for e in rows
    ]
    return QueuePage(items, page.total, limit, offset, filters)


def _item(esc: Escalation, info: resources.Info | None, proposal: Proposal | None) -> InQueue:
    text = resources.section_text(info.markdown if info else None, esc.section_id)
    return InQueue(esc, raised.state_at(esc, utcnow()), info, text, proposal)


def _missing(escalation_id: str) -> NotFound:
    return NotFound(f"escalation {escalation_id!r} not found", code="escalation_not_found")


async def item(session: AsyncSession, escalation_id: str) -> InQueue:
    key = canonical_id(escalation_id)
    esc = await session.get(Escalation, key) if key else None
    if esc is None:
        raise _missing(escalation_id)
    return await _context(session, esc)


async def _context(session: AsyncSession, esc: Escalation) -> InQueue:
    found = await resources.infos(session, {(esc.resource_type, esc.resource_id)})
    proposal = await session.get(Proposal, esc.proposal_id) if esc.proposal_id else None
    return _item(esc, found.get((esc.resource_type, esc.resource_id)), proposal)


async def locked(session: AsyncSession, escalation_id: str) -> Escalation:
    """The escalation, its row locked for the answer (404 when there is none)."""
    key = canonical_id(escalation_id)
    esc: Escalation | None = (
        await session.scalar(for_update(select(Escalation).where(Escalation.id == key))) if key else None
    )
    if esc is None:
        raise _missing(escalation_id)
    return esc


@dataclass(frozen=True)
class Settled:
    """An answer just recorded: the escalation, the proposal it decided (if any), the resource's version
    after that decision, and the sequence number of the answer's event."""

    escalation: Escalation
    proposal: Proposal | None
    version: int | None
    event_sequence: int


async def settle(
    session: AsyncSession,
    ctx: Context,
    esc: Escalation,
    *,
    text: str,
    decision: str | None,
    is_override: bool = False,
) -> Settled:
    """Record the one answer to an open escalation or question (its row locked: `locked`); with a decision,
    approve or reject the proposal it names (pending or objected) through the consensus engine in the same
    transaction. A second answer, or one after a question's time, is a 409."""
    reviewer = ctx.require_actor()
    state = raised.state_at(esc, utcnow())
    if state is EscalationStatus.CLOSED:
        raise Conflict(
            f"escalation {esc.id} is closed, nothing is left to answer: {esc.resolution}",
            code="escalation_closed",
            closedBy=esc.resolved_by,
            closedAt=iso(esc.resolved_at),
        )
    if state is EscalationStatus.RESOLVED:
        raise Conflict(
            f"escalation {esc.id} was already answered by {esc.resolved_by}",
            code="already_answered",
            answeredBy=esc.resolved_by,
            answeredAt=iso(esc.resolved_at),
        )
    if state is EscalationStatus.TIMED_OUT:
        raise Conflict(
            f"question {esc.id} timed out at {iso(esc.timeout_at)}: the agent no longer waits for an answer",
            code="timed_out",
            timeoutAt=iso(esc.timeout_at),
        )
    decided: Proposal | None = None
    new_version: int | None = None
    if decision is not None:
        if not esc.proposal_id:
            raise Conflict(
                "this escalation names no proposal: answer it without a decision",
                code="no_proposal",
                field="decision",
            )
        proposal = await session.get(Proposal, esc.proposal_id)
        if proposal is None:  # pragma: no cover - escalations are checked against their proposal
            raise NotFound(f"proposal {esc.proposal_id} not found", code="proposal_not_found")
        decided, new_version = await resources.decide(session, ctx, proposal, approve=decision == "approve")
    esc.status = EscalationStatus.RESOLVED
    esc.resolution = text
    esc.resolved_by = reviewer.name
    esc.resolved_by_id = reviewer.id
    esc.resolved_at = utcnow()
    esc.decision = decision
    esc.is_override = is_override
    if esc.kind == EscalationKind.QUESTION:
        seq = await events.append_numbered(
            session,
            events.stream_of(esc.resource_type, esc.resource_id),
            raised.RESPONDED_EVENT,
            ctx,
            section_id=esc.section_id,
            data=answer_events.responded(esc, reviewer, text),
            correlation_id=esc.id,  # as the question's own event
            in_response_to=esc.id,
        )
        op = "human.respond"
    else:
        seq = await resources.resolved_event(
            session,
            ctx,
            esc.resource_type,
            esc.resource_id,
            section_id=esc.section_id,
            data=answer_events.resolved(
                esc, reviewer, text=text, decision=decision, decided=decided, is_override=is_override
            ),
            correlation_id=esc.proposal_id or esc.id,  # as the escalation's own event
            in_response_to=esc.id,
        )
        op = "review.escalation.answer"
    audit.record(
        session,
        ctx,
        op,
        "escalation",
        esc.id,
        before={"status": "open"},
        after=answer_events.answered_audit(
            esc, text=text, decision=decision, decided=decided, is_override=is_override
        ),
    )
    outbox.enqueue(session, ANSWER_JOB, {"escalation_id": esc.id})
    return Settled(esc, decided, new_version, seq)


async def answer(
    session: AsyncSession, ctx: Context, escalation_id: str, *, text: str, decision: str | None
) -> Answered:
    """The review API's and the review desk's answer: `settle`, then the escalation with its context."""
    done = await settle(session, ctx, await locked(session, escalation_id), text=text, decision=decision)
    return Answered(await _context(session, done.escalation), decision, done.event_sequence, done.version)


async def notify_answer(db: Database, payload: dict[str, Any]) -> None:
    """Post the answer to the escalation webhook (when configured), as escalations themselves are: read in
    a short transaction, posted with none open (it changes nothing in the database)."""
    url = get_settings().escalation_webhook_url
    if not url:
        return
    async with db.read() as session:
        esc = await session.get(Escalation, payload["escalation_id"])
        if esc is None:
            return
        body = answer_events.answer_webhook(esc, wire_status(raised.state_at(esc, utcnow())))
    try:
        # DeliveryFailed is raised: the job is retried
        await webhooks.post_json(url, body, idempotency_key=f"escalation.answered:{esc.id}")
    except webhooks.Refused as exc:
        # Retrying cannot help until the settings change; the escalation's own delivery already shows the
        # refusal, so the answer's is logged rather than retried into a failed job.
        log.warning("answer to escalation %s not posted: %s", esc.id, exc)


ANSWER_JOB = Job(
    "review.answer_notify", standalone=notify_answer, lease_seconds=webhooks.LIMITS.timeout_seconds + 10
)
