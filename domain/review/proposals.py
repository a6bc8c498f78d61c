"""Reviewers decide document proposals paused by an objection: the queue with the section as it reads
now beside the proposed text and the objections, and one decision per proposal (approve merges through
the consensus engine, reject rejects). A decision is audited and lands on the document's event stream
(the engine's `pact.proposal.merged`/`rejected`, then `pact.human.resolved` with the reviewer's note)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus.models import Proposal, ProposalVote
from domain.kernel import audit
from domain.kernel.context import Context
from domain.kernel.errors import Conflict, NotFound
from domain.kernel.ids import canonical_ref
from domain.review import answer_events, resources

STATUSES = ("objected", "pending", "approved", "rejected", "expired", "superseded", "withdrawn", "all")
DECIDED = ("approved", "rejected", "expired", "superseded", "merged", "withdrawn")


@dataclass(frozen=True)
class Reviewed:
    """A document proposal as a reviewer reads it: the row, its document (None when gone), the section's body
    as it reads now (None when the section is gone) and the objections, oldest first."""

    proposal: Proposal
    document: resources.Info | None
    current_text: str | None
    objections: tuple[ProposalVote, ...]


@dataclass(frozen=True)
class Queue:
    """One page of the reviewers' document proposals, with the filter that chose them."""

    items: list[Reviewed]
    total: int
    limit: int
    offset: int
    status: str


@dataclass(frozen=True)
class Decided:
    """An objected proposal a reviewer decided, and the sequence of its pact.human.resolved event."""

    item: Reviewed
    decision: str
    note: str
    decided_by: str
    event_sequence: int


async def queue(session: AsyncSession, *, status: str, limit: int, offset: int) -> Queue:
    """Document proposals by status (objected by default), oldest first, with their context."""
    stmt = select(Proposal).where(Proposal.resource_type == "document")
    if status != "all":
        stmt = stmt.where(Proposal.status == status)
    total = int(await session.scalar(select(func.count()).select_from(stmt.subquery())) or 0)
    rows = (
        await session.scalars(stmt.order_by(Proposal.created_at, Proposal.id).limit(limit).offset(offset))
    ).all()
    return Queue(await _items(session, rows), total, limit, offset, status)


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
    if proposal is None or proposal.resource_type != "document":
        raise NotFound(f"document proposal {proposal_id!r} not found", code="proposal_not_found")
    return proposal


async def item(session: AsyncSession, proposal_id: str) -> Reviewed:
    return (await _items(session, [await _find(session, proposal_id)]))[0]


async def decide(
    session: AsyncSession, ctx: Context, proposal_id: str, *, decision: str, note: str
) -> Decided:
    """Approve (merge) or reject an objected document proposal, once."""
    reviewer = ctx.require_actor()
    _resource, proposal = await resources.lock_proposal(session, await _find(session, proposal_id))
    if proposal.status != "objected":
        decided = proposal.status in DECIDED
        raise Conflict(
            f"proposal {proposal.id} is {proposal.status}: it was already decided"
            if decided
            else f"proposal {proposal.id} is {proposal.status}; reviewers decide objected proposals",
            code="already_decided" if decided else "not_objected",
            proposalStatus=proposal.status,
        )
    decided_proposal, version = await resources.decide(session, ctx, proposal, approve=decision == "approve")
    seq = await resources.resolved_event(
        session,
        ctx,
        "document",
        decided_proposal.resource_id,
        section_id=decided_proposal.section_id,
        data=answer_events.proposal_resolved(
            decided_proposal, reviewer, decision=decision, note=note, version=version
        ),
        correlation_id=decided_proposal.id,
    )
    audit.record(
        session,
        ctx,
        f"review.proposal.{decision}",
        "proposal",
        decided_proposal.id,
        before={"status": "objected"},
        after=answer_events.proposal_decided_audit(decided_proposal, note=note, version=version),
    )
    result = (await _items(session, [decided_proposal]))[0]
    return Decided(result, decision, note, reviewer.name, seq)
