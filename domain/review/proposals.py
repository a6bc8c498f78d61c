"""Reviewers decide proposals as people (PACT v2.0.3 §9.2: a person may approve or reject any proposal,
overriding the agents' votes). Document proposals paused by an objection are what the queue shows by default;
a reviewer may also list and decide any open (pending or objected) proposal of a topic or a document: the
section as it reads now beside the proposed text and the objections, and one decision per proposal (approve
merges through the consensus engine, reject rejects). A decision is audited and lands on the resource's event
stream (the engine's `pact.proposal.merged`/`rejected`, then `pact.human.resolved` with the reviewer's note);
the escalations an approval policy raised for that proposal are closed, nothing being left to decide."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus import escalations
from domain.consensus.models import Proposal, ProposalVote
from domain.kernel import audit
from domain.kernel.context import Context
from domain.kernel.errors import Conflict, NotFound
from domain.kernel.ids import canonical_ref
from domain.review import answer_events, resources
from domain.review.queue import ResourceType


class ProposalFilter(StrEnum):
    """Which proposals the reviewers' list shows: by stored status, `open` (what a person may still decide:
    pending or objected), `approved` (merged: a document's proposal reads approved, a topic's merged; `merged`
    is the same filter) or all of them."""

    OBJECTED = "objected"
    PENDING = "pending"
    OPEN = "open"
    APPROVED = "approved"
    MERGED = "merged"
    REJECTED = "rejected"
    EXPIRED = "expired"
    SUPERSEDED = "superseded"
    WITHDRAWN = "withdrawn"
    ALL = "all"


# The stored statuses each filter stands for (`all` filters nothing).
_MATCHES: dict[ProposalFilter, tuple[str, ...]] = {
    ProposalFilter.OPEN: ("pending", "objected"),
    ProposalFilter.APPROVED: ("approved", "merged"),
    ProposalFilter.MERGED: ("approved", "merged"),
}
DECIDABLE = _MATCHES[ProposalFilter.OPEN]  # what a person may still decide
MERGED = _MATCHES[ProposalFilter.MERGED]


@dataclass(frozen=True)
class Reviewed:
    """A proposal as a reviewer reads it: the row, its topic or document (None when gone), the section's body
    as it reads now (None when the section is gone) and the objections, oldest first."""

    proposal: Proposal
    resource: resources.Info | None
    current_text: str | None
    objections: tuple[ProposalVote, ...]


@dataclass(frozen=True)
class Queue:
    """One page of the reviewers' proposals, with the filters that chose them."""

    items: list[Reviewed]
    total: int
    limit: int
    offset: int
    status: ProposalFilter
    resource: ResourceType
    resource_id: str | None


@dataclass(frozen=True)
class Decided:
    """A proposal a reviewer decided, the status it had before, and the sequence of its pact.human.resolved
    event."""

    item: Reviewed
    decision: str
    note: str
    decided_by: str
    event_sequence: int
    status_before: str


async def queue(
    session: AsyncSession,
    *,
    status: ProposalFilter = ProposalFilter.OBJECTED,
    resource: ResourceType = ResourceType.DOCUMENT,
    resource_id: str | None = None,
    limit: int,
    offset: int,
) -> Queue:
    """Proposals by status (objected by default) and resource type (documents by default: the proposals an
    objection paused for a person), optionally of one topic or document, oldest first, with their context."""
    stmt = select(Proposal).where(Proposal.resource_type.in_(resource.types()))
    if resource_id is not None:
        stmt = stmt.where(Proposal.resource_id == resource_id)
    if status is not ProposalFilter.ALL:
        stmt = stmt.where(Proposal.status.in_(_MATCHES.get(status, (status.value,))))
    total = int(await session.scalar(select(func.count()).select_from(stmt.subquery())) or 0)
    rows = (
        await session.scalars(stmt.order_by(Proposal.created_at, Proposal.id).limit(limit).offset(offset))
    ).all()
    return Queue(await _items(session, rows), total, limit, offset, status, resource, resource_id)


async def _items(session: AsyncSession, rows: Any) -> list[Reviewed]:
    rows = list(rows)
    found = await resources.infos(session, {(p.resource_type, p.resource_id) for p in rows})
    objections: dict[str, list[ProposalVote]] = {p.id: [] for p in rows}
    if rows:
        votes = await session.scalars(
            select(ProposalVote)
            .where(ProposalVote.proposal_id.in_(list(objections)), ProposalVote.kind == "object")
            .order_by(ProposalVote.id)
        )
        for v in votes.all():
            objections[v.proposal_id].append(v)
    return [_item(p, found.get((p.resource_type, p.resource_id)), objections[p.id]) for p in rows]


def _item(p: Proposal, info: resources.Info | None, objections: list[ProposalVote]) -> Reviewed:
    current = resources.section_text(info.markdown if info else None, p.section_id)
    return Reviewed(p, info, current, tuple(objections))


async def _find(session: AsyncSession, proposal_id: str) -> Proposal:
    key = canonical_ref(proposal_id)
    proposal = await session.get(Proposal, key) if key else None
    if proposal is None or proposal.resource_type not in resources.SOURCES:
        raise NotFound(f"proposal {proposal_id!r} not found", code="proposal_not_found")
    return proposal


async def item(session: AsyncSession, proposal_id: str) -> Reviewed:
    return (await _items(session, [await _find(session, proposal_id)]))[0]


async def decide(
    session: AsyncSession, ctx: Context, proposal_id: str, *, decision: str, note: str
) -> Decided:
    """Approve (merge) or reject an open (pending or objected) proposal of a topic or a document, once; the
    person's decision overrides the agents' votes (PACT §9.2)."""
    reviewer = ctx.require_actor()
    found = await _find(session, proposal_id)
    rt, rid = found.resource_type, found.resource_id
    # A reviewer answering an escalation raised for it locks that escalation before the resource: same order.
    await escalations.lock_raised_for(session, rt, rid, found.id)
    _resource, proposal = await resources.lock_proposal(session, found)
    before = proposal.status
    if before not in DECIDABLE:
        raise Conflict(
            f"proposal {proposal.id} is {before}: it was already decided",
            code="already_decided",
            proposalStatus=before,
        )
    decided_proposal, version = await resources.decide(session, ctx, proposal, approve=decision == "approve")
    seq = await resources.resolved_event(
        session,
        ctx,
        rt,
        rid,
        section_id=decided_proposal.section_id,
        data=answer_events.proposal_resolved(
            decided_proposal, reviewer, decision=decision, note=note, version=version
        ),
        correlation_id=decided_proposal.id,
    )
    await escalations.close_raised_for(
        session,
        ctx,
        resource_type=rt,
        resource_id=rid,
        proposal_ids=[decided_proposal.id],
        reason=f"proposal {decided_proposal.id} was {decided_proposal.status} by {reviewer.name}, a "
        "reviewer: there is nothing left to decide",
    )
    audit.record(
        session,
        ctx,
        f"review.proposal.{decision}",
        "proposal",
        decided_proposal.id,
        before={"status": before},
        after=answer_events.proposal_decided_audit(decided_proposal, note=note, version=version),
    )
    result = (await _items(session, [decided_proposal]))[0]
    return Decided(result, decision, note, reviewer.name, seq, before)
