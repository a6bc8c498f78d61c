"""Escalations to human reviewers, and the background job that notifies them.

Two kinds share one table, one queue and one answer (domain/review/escalations.py): an escalation (`POST
.../escalate`, or raised by an approval policy for a proposal: open until answered, or closed when its
proposal is withdrawn) and a question an agent asks and waits on (`POST .../ask-human`, PACT v2.0.3 §7.1:
pending until answered or until its `timeout_at`, when it is timed out). A question past its time reads as
timed out at once (`state_at`); the sweep `expire_questions` then records it, with `pact.human.timed-out`
on the resource's stream."""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from sqlalchemy import ColumnElement, and_, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus import escalation_events
from domain.consensus.models import Escalation, EscalationPriority, stored_priority
from domain.kernel import audit, events, outbox, webhooks
from domain.kernel.clock import utcnow
from domain.kernel.context import SYSTEM, Context
from domain.kernel.db import Database, table_of
from domain.kernel.errors import BadRequest
from domain.kernel.outbox import Job
from domain.kernel.settings import get_settings
from domain.kernel.sqlutil import for_update

log = logging.getLogger("concord.escalations")
PRIORITIES = ("low", "normal", "high", "urgent")
_ESCALATIONS = table_of(Escalation)

ASKED_EVENT = "pact.human.asked"  # PACT §7.2 OnHumanAsked
RESPONDED_EVENT = "pact.human.responded"  # OnHumanResponded
TIMED_OUT_EVENT = "pact.human.timed-out"  # a question nobody answered in time
# A question's time to wait (PACT's ask-human-request: at least 10 s, 60 s unless the agent says); the most
# an agent may ask for on the wire; the operator's CONCORD_HUMAN_QUERY_MAX_SECONDS cuts it shorter.
MIN_TIMEOUT_SECONDS = 10
DEFAULT_TIMEOUT_SECONDS = 60
WIRE_MAX_TIMEOUT_SECONDS = 86_400
EXPIRE_BATCH = 500


class EscalationStatus(StrEnum):
    """Where an escalation stands, as stored (the review API says `answered` for resolved). A question past
    its time reads TIMED_OUT before the sweep records it (`state_at`)."""

    OPEN = "open"
    RESOLVED = "resolved"  # a person answered it
    CLOSED = "closed"  # nothing is left to answer: the proposal it was raised for was withdrawn
    TIMED_OUT = "timed-out"  # a question nobody answered by its timeout


class EscalationOrigin(StrEnum):
    """Who raised an escalation."""

    AGENT = "agent"  # an agent's question (escalate, ask-human)
    POLICY = "policy"  # an approval policy, for a proposal a person has to decide (human-only, objection)


class EscalationKind(StrEnum):
    ESCALATION = "escalation"  # POST .../escalate, or a policy's: open until a person answers
    QUESTION = "question"  # POST .../ask-human: the agent waits until timeout_at


class HumanQueryStatus(StrEnum):
    """A question as the agents read it (`GET .../human-responses`)."""

    PENDING = "pending"
    ANSWERED = "answered"
    TIMED_OUT = "timed-out"


class AgentEscalationStatus(StrEnum):
    """An escalation as the agents read it (`GET .../escalations`)."""

    OPEN = "open"
    ANSWERED = "answered"
    CLOSED = "closed"  # its proposal was withdrawn


# Questions are never closed (only a policy's escalations are).
QUERY_STATUS = {
    EscalationStatus.OPEN: HumanQueryStatus.PENDING,
    EscalationStatus.RESOLVED: HumanQueryStatus.ANSWERED,
    EscalationStatus.TIMED_OUT: HumanQueryStatus.TIMED_OUT,
}
AGENT_STATUS = {
    EscalationStatus.OPEN: AgentEscalationStatus.OPEN,
    EscalationStatus.RESOLVED: AgentEscalationStatus.ANSWERED,
    EscalationStatus.CLOSED: AgentEscalationStatus.CLOSED,
}


def state_at(esc: Escalation, now: datetime) -> EscalationStatus:
    """The escalation's status at `now`: an open question whose time is up is timed out, recorded or not."""
    if esc.status == EscalationStatus.OPEN and esc.timeout_at is not None and esc.timeout_at <= now:
        return EscalationStatus.TIMED_OUT
    return EscalationStatus(esc.status)


def timeout_of(asked: int | None) -> int:
    """The seconds a question waits: what the agent asked for (PACT's default 60 s), at least 10 s, at most
    CONCORD_HUMAN_QUERY_MAX_SECONDS (a longer wait is cut to it; the answer says how long it is)."""
    wanted = DEFAULT_TIMEOUT_SECONDS if asked is None else asked
    if not MIN_TIMEOUT_SECONDS <= wanted <= WIRE_MAX_TIMEOUT_SECONDS:
        raise BadRequest(
            f"timeoutSeconds must be from {MIN_TIMEOUT_SECONDS} to {WIRE_MAX_TIMEOUT_SECONDS}",
            field="timeoutSeconds",
        )
    return min(wanted, get_settings().human_query_max_seconds)


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
    priority: str = EscalationPriority.MEDIUM,
    origin: EscalationOrigin = EscalationOrigin.AGENT,
) -> Raised:
    """Record an escalation, tell the resource's stream and queue the reviewers' notification."""
    esc = await _record(
        session,
        ctx,
        EscalationKind.ESCALATION,
        resource_type=resource_type,
        resource_id=resource_id,
        message=message,
        section_id=section_id,
        proposal_id=proposal_id,
        priority=priority,
        origin=origin,
    )
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


async def ask(
    session: AsyncSession,
    ctx: Context,
    *,
    resource_type: str,
    resource_id: str,
    question: str,
    section_id: str | None,
    context: str | None,
    timeout_seconds: int | None,
    priority: str = EscalationPriority.MEDIUM,
) -> View:
    """Record an agent's question for a person, waiting `timeout_seconds` (see timeout_of): it joins the
    reviewers' queue and notification as an escalation does; `pact.human.asked` on the resource's stream."""
    esc = await _record(
        session,
        ctx,
        EscalationKind.QUESTION,
        resource_type=resource_type,
        resource_id=resource_id,
        message=question,
        section_id=section_id,
        proposal_id=None,
        priority=priority,
        context=context,
        timeout_seconds=timeout_of(timeout_seconds),
    )
    return view(esc)


async def _record(
    session: AsyncSession,
    ctx: Context,
    kind: EscalationKind,
    *,
    resource_type: str,
    resource_id: str,
    message: str,
    section_id: str | None,
    proposal_id: str | None,
    priority: str,
    context: str | None = None,
    timeout_seconds: int | None = None,
    origin: EscalationOrigin = EscalationOrigin.AGENT,
) -> Escalation:
    actor = ctx.require_actor()
    now = utcnow()
    question = kind is EscalationKind.QUESTION
    esc = Escalation(
        kind=kind.value,
        context=context,
        timeout_at=now + timedelta(seconds=timeout_seconds) if timeout_seconds is not None else None,
        resource_type=resource_type,
        resource_id=resource_id,
        section_id=section_id,
        proposal_id=proposal_id,
        message=message,
        priority=EscalationPriority.parse(priority).value,  # either API's spelling, stored as one
        raised_by=actor.id,
        raised_by_name=actor.name,
        status=EscalationStatus.OPEN.value,
        origin=origin.value,
        delivery_status="pending",
        delivery_attempts=0,
        is_override=False,
        created_at=now,
    )
    session.add(esc)
    await session.flush()
    stream = events.stream_of(resource_type, resource_id)
    if question:
        events.append(
            session,
            stream,
            ASKED_EVENT,
            ctx,
            section_id=section_id,
            data=escalation_events.asked(esc, actor),
            correlation_id=esc.id,
        )
    else:
        events.append(
            session,
            stream,
            "pact.escalation.created" if resource_type == "topic" else "pact.escalation.human",
            ctx,
            section_id=section_id,
            data=escalation_events.created(esc),
            # Part of its proposal's story when it names one; the answer links to it by the escalation's id.
            correlation_id=proposal_id or esc.id,
        )
    op = "human.ask" if question else "escalation.create"
    audit.record(session, ctx, op, "escalation", esc.id, after=escalation_events.snapshot(esc))
    outbox.enqueue(session, NOTIFY_JOB, {"escalation_id": esc.id})
    return esc


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


def _raised_for(resource_type: str, resource_id: str, *proposal_ids: str) -> tuple[Any, ...]:
    return (
        Escalation.resource_type == resource_type,
        Escalation.resource_id == resource_id,
        Escalation.proposal_id.in_(proposal_ids)
        if len(proposal_ids) > 1
        else Escalation.proposal_id == proposal_ids[0],
        Escalation.status == EscalationStatus.OPEN.value,
        Escalation.origin == EscalationOrigin.POLICY.value,
    )


async def close_raised_for(
    session: AsyncSession,
    ctx: Context,
    *,
    resource_type: str,
    resource_id: str,
    proposal_ids: Sequence[str],
    reason: str,
) -> list[str]:
    """Close the open escalations a policy raised for proposals that no longer need a person (the author
    withdrew one, or a merge on their section superseded them): one conditional UPDATE, so an answer that got
    in first keeps its escalation answered.
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
        .where(*_raised_for(resource_type, resource_id, *proposal_ids))
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
                resolved_by_id=actor.id,
                resolved_at=now,
            )
            .returning(t.c.id, t.c.section_id, t.c.proposal_id)
        )
    ).all()
    for escalation_id, section_id, proposal_id in sorted(closed):
        events.append(
            session,
            events.stream_of(resource_type, resource_id),
            "pact.escalation.closed",
            ctx,
            section_id=section_id,
            data=escalation_events.closed(escalation_id, proposal_id, reason),
            correlation_id=proposal_id,
            in_response_to=escalation_id,
        )
        audit.record(
            session,
            ctx,
            "escalation.close",
            "escalation",
            escalation_id,
            before={"status": EscalationStatus.OPEN.value},
            after=escalation_events.closed_audit(EscalationStatus.CLOSED.value, proposal_id, reason),
        )
        outbox.enqueue(session, CLOSED_JOB, {"escalation_id": escalation_id})
    return sorted(escalation_id for escalation_id, _section, _proposal in closed)


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
        body = {"event": "escalation.created", "escalation": escalation_events.snapshot(esc)}
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
        body = escalation_events.closed_webhook(esc)
    try:
        # DeliveryFailed is raised: the job is retried
        await webhooks.post_json(url, body, idempotency_key=f"escalation.closed:{esc.id}")
    except webhooks.Refused as exc:
        # Only a change of settings helps; the escalation's own delivery already shows the refusal.
        log.warning("closing of escalation %s not posted: %s", esc.id, exc)


CLOSED_JOB = Job(
    "escalation.closed_notify", standalone=notify_closed, lease_seconds=webhooks.LIMITS.timeout_seconds + 10
)


# ---- what the agents read: their questions and escalations, with the answers -----------------------------


@dataclass(frozen=True)
class Answer:
    """A person's answer (or resolution) of an escalation or question; for a closed escalation, why it
    closed and who closed it."""

    text: str
    by_id: str | None
    by_name: str | None
    at: datetime | None
    decision: str | None  # what it decided on the proposal the escalation names: approve | reject
    is_override: bool


@dataclass(frozen=True)
class View:
    """An escalation or question as the agents read it, with its status at the time of reading."""

    id: str
    kind: EscalationKind
    resource_type: str
    resource_id: str
    section_id: str | None
    proposal_id: str | None
    question: str
    context: str | None
    priority: EscalationPriority
    raised_by: str | None
    raised_by_name: str | None
    state: EscalationStatus
    timeout_at: datetime | None
    created_at: datetime
    answer: Answer | None

    @property
    def timeout_seconds(self) -> int | None:
        if self.timeout_at is None:
            return None
        return round((self.timeout_at - self.created_at).total_seconds())


def view(esc: Escalation, now: datetime | None = None) -> View:
    state = state_at(esc, now or utcnow())
    return View(
        id=esc.id,
        kind=EscalationKind(esc.kind),
        resource_type=esc.resource_type,
        resource_id=esc.resource_id,
        section_id=esc.section_id,
        proposal_id=esc.proposal_id,
        question=esc.message,
        context=esc.context,
        priority=stored_priority(esc.priority),
        raised_by=esc.raised_by,
        raised_by_name=esc.raised_by_name,
        state=state,
        timeout_at=esc.timeout_at,
        created_at=esc.created_at,
        answer=Answer(
            text=esc.resolution or "",
            by_id=esc.resolved_by_id,
            by_name=esc.resolved_by,
            at=esc.resolved_at,
            decision=esc.decision,
            is_override=bool(esc.is_override),
        )
        if state in (EscalationStatus.RESOLVED, EscalationStatus.CLOSED)
        else None,
    )


@dataclass(frozen=True)
class Listing:
    """A page of a resource's escalations or questions, newest first. `everyone`: the caller sees every
    agent's (the resource's owner, a person), not only its own."""

    items: list[View]
    total: int
    limit: int
    offset: int
    everyone: bool


def state_filter(state: EscalationStatus, now: datetime) -> ColumnElement[bool]:
    """Rows in `state` at `now`, an open question past its time counted as timed out."""
    open_ = Escalation.status == EscalationStatus.OPEN
    due = and_(Escalation.timeout_at.is_not(None), Escalation.timeout_at <= now)
    if state is EscalationStatus.OPEN:
        return and_(open_, or_(Escalation.timeout_at.is_(None), Escalation.timeout_at > now))
    if state is EscalationStatus.TIMED_OUT:
        return or_(Escalation.status == EscalationStatus.TIMED_OUT, and_(open_, due))
    return Escalation.status == state


async def listing(
    session: AsyncSession,
    *,
    resource_type: str,
    resource_id: str,
    kind: EscalationKind,
    raised_by: Collection[str] | None,
    state: EscalationStatus | None,
    limit: int,
    offset: int,
) -> Listing:
    """The resource's escalations (or questions) raised by the agents `raised_by` (None: by anyone), newest
    first."""
    now = utcnow()
    stmt = select(Escalation).where(
        Escalation.resource_type == resource_type,
        Escalation.resource_id == resource_id,
        Escalation.kind == kind,
    )
    if raised_by is not None:
        stmt = stmt.where(Escalation.raised_by.in_(list(raised_by) or [""]))
    if state is not None:
        stmt = stmt.where(state_filter(state, now))
    total = int(await session.scalar(select(func.count()).select_from(stmt.subquery())) or 0)
    rows = (
        await session.scalars(
            stmt.order_by(Escalation.created_at.desc(), Escalation.id.desc()).limit(limit).offset(offset)
        )
    ).all()
    return Listing(
        items=[view(e, now) for e in rows],
        total=total,
        limit=limit,
        offset=offset,
        everyone=raised_by is None,
    )


async def expire_questions(session: AsyncSession) -> int:
    """Questions nobody answered by their timeout are timed out: recorded, and told on the resource's stream
    (`pact.human.timed-out`) for the agent that waits. A row an answer holds is waited for (answers are short
    transactions, and one after the time is refused anyway); one it answered meanwhile no longer matches
    (PostgreSQL re-checks the condition on the row it locked), so an answer is never overwritten."""
    now = utcnow()
    due = (
        await session.scalars(
            for_update(
                select(Escalation)
                .where(Escalation.status == EscalationStatus.OPEN, Escalation.timeout_at <= now)
                .order_by(Escalation.timeout_at, Escalation.id)
                .limit(EXPIRE_BATCH)
            )
        )
    ).all()
    for esc in due:
        esc.status = EscalationStatus.TIMED_OUT
        events.append(
            session,
            events.stream_of(esc.resource_type, esc.resource_id),
            TIMED_OUT_EVENT,
            SYSTEM,
            section_id=esc.section_id,
            data=escalation_events.timed_out(esc),
            correlation_id=esc.id,
            in_response_to=esc.id,
        )
        audit.record(
            session,
            SYSTEM,
            "human.timeout",
            "escalation",
            esc.id,
            before={"status": EscalationStatus.OPEN.value},
            after=escalation_events.timed_out_audit(EscalationStatus.TIMED_OUT.value, esc),
        )
    return len(due)
