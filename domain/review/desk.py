"""The review desk's queues and history: escalations and questions ordered by priority then age (oldest
first within a priority), objected document proposals by age, and what people answered or decided,
newest first, with who did it and what they decided. Filters (kind, priority, resource type, status) and
paging are applied in the database, so a new urgent item is never out of reach behind a cap. Also what a
person deciding a proposal sees: the proposal with its votes, objections, citations and the comparison of
its section now and proposed (domain/review/diff.py)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from sqlalchemy import ColumnElement, and_, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus import escalations as raised
from domain.consensus import sections
from domain.consensus.escalations import EscalationStatus
from domain.consensus.models import Escalation, EscalationPriority, Proposal, ProposalVote, stored_priority
from domain.kernel.clock import utcnow
from domain.kernel.ids import canonical_id
from domain.kernel.models import AuditEntry
from domain.people.models import StaffKey
from domain.review import queue, resources
from domain.review.diff import SectionDiff, section_diff
from domain.review.escalations import InQueue, ReviewStatus, wire_status
from domain.review.queue import PAGE_SIZE, DeskKind, DeskStatus, Filters, Page, ResourceType
from domain.work import observation_stored
from domain.work.models import WorkSubmission

PROPOSAL_DECISION_OPS = ("review.proposal.approve", "review.proposal.reject", "share_link.decide")


@dataclass(frozen=True)
class EscalationRow:
    escalation_id: str
    kind: str  # escalation | question
    status: ReviewStatus
    priority: EscalationPriority
    resource_type: str
    resource_id: str
    resource_title: str | None
    section_id: str | None
    question: str
    raised_by: str | None
    created_at: datetime
    timeout_at: datetime | None
    proposal_id: str | None
    proposal_status: str | None
    answer: str | None
    answered_by: str | None
    answered_at: datetime | None
    decision: str | None


@dataclass(frozen=True)
class ProposalRow:
    proposal_id: str
    status: str
    resource_type: str
    resource_id: str
    resource_title: str | None
    section_id: str
    summary: str
    author: str
    objections: int
    created_at: datetime
    decision: str | None = None
    decided_by: str | None = None
    decided_at: datetime | None = None
    note: str | None = None


def shows_escalations(filters: Filters) -> bool:
    return filters.kind in (DeskKind.ALL, DeskKind.ESCALATION, DeskKind.QUESTION)


def shows_proposals(filters: Filters) -> bool:
    """Proposals have no priority; the ones waiting are document proposals (a topic's proposal reaches the
    desk as an escalation), the decided ones are of either resource."""
    return (
        filters.kind in (DeskKind.ALL, DeskKind.PROPOSAL)
        and filters.priority is None
        and not (filters.resource is ResourceType.TOPIC and filters.status is DeskStatus.OPEN)
    )


def shows_work(filters: Filters) -> bool:
    return (
        filters.kind in (DeskKind.ALL, DeskKind.WORK)
        and filters.priority is None
        and filters.resource is ResourceType.ALL
    )


async def escalation_page(
    session: AsyncSession, filters: Filters, *, offset: int, limit: int = PAGE_SIZE
) -> Page[EscalationRow]:
    """Escalations and questions (queue.escalations), with their resources' titles and proposals' states."""
    found = await queue.escalations(session, filters, offset=offset, limit=limit)
    rows = found.items
    now = utcnow()
    titles = await resources.infos(session, {(e.resource_type, e.resource_id) for e in rows})
    proposal_ids = {e.proposal_id for e in rows if e.proposal_id}
    statuses = (
        {
            pid: status
            for pid, status in (
                await session.execute(
                    select(Proposal.id, Proposal.status).where(Proposal.id.in_(proposal_ids))
                )
            ).tuples()
        }
        if proposal_ids
        else {}
    )
    items = []
    for e in rows:
        info = titles.get((e.resource_type, e.resource_id))
        state = raised.state_at(e, now)
        answered = state in (EscalationStatus.RESOLVED, EscalationStatus.CLOSED)
        items.append(
            EscalationRow(
                escalation_id=e.id,
                kind=e.kind,
                status=wire_status(state),
                priority=stored_priority(e.priority),
                resource_type=e.resource_type,
                resource_id=e.resource_id,
                resource_title=info.title if info else None,
                section_id=e.section_id,
                question=e.message,
                raised_by=e.raised_by_name or e.raised_by,
                created_at=e.created_at,
                timeout_at=e.timeout_at,
                proposal_id=e.proposal_id,
                proposal_status=statuses.get(e.proposal_id) if e.proposal_id else None,
                answer=e.resolution if answered else None,
                answered_by=e.resolved_by if answered else None,
                answered_at=e.resolved_at if answered else None,
                decision=e.decision if answered else None,
            )
        )
    return Page(tuple(items), found.total, offset, limit)


async def _objection_counts(session: AsyncSession, ids: Sequence[str]) -> dict[str, int]:
    if not ids:
        return {}
    counted = await session.execute(
        select(ProposalVote.proposal_id, func.count())
        .where(ProposalVote.proposal_id.in_(ids), ProposalVote.kind == "object")
        .group_by(ProposalVote.proposal_id)
    )
    return {pid: int(n) for pid, n in counted.tuples()}


async def proposal_page(
    session: AsyncSession, filters: Filters, *, offset: int, limit: int = PAGE_SIZE
) -> Page[ProposalRow]:
    """Objected document proposals oldest first; proposals of topics and documents people decided (on the
    desk, through the review API or a share link) newest decision first."""
    if filters.status is DeskStatus.OPEN:
        return await _objected(session, filters.resource, offset, limit)
    if filters.status is DeskStatus.ALL:
        # Everything a person may have to do with: the objected ones, then the decided ones.
        objected = await _objected(session, filters.resource, offset, limit)
        decided_total = await _decided_total(session, filters.resource)
        if len(objected.items) == limit:
            return Page(objected.items, objected.total + decided_total, offset, limit)
        rest = await _decided(
            session,
            filters.resource,
            max(0, offset - objected.total),
            limit - len(objected.items),
            total=decided_total,
        )
        return Page(objected.items + rest.items, objected.total + decided_total, offset, limit)
    return await _decided(session, filters.resource, offset, limit)


async def _objected(
    session: AsyncSession, resource: ResourceType, offset: int, limit: int
) -> Page[ProposalRow]:
    types = [t for t in resource.types() if t == ResourceType.DOCUMENT]  # topics' reach it as escalations
    if not types:
        return Page((), 0, offset, limit)
    where = and_(Proposal.resource_type.in_(types), Proposal.status == "objected")
    total = int(await session.scalar(select(func.count()).select_from(Proposal).where(where)) or 0)
    rows = (
        await session.scalars(
            select(Proposal)
            .where(where)
            .order_by(Proposal.created_at, Proposal.id)
            .limit(limit)
            .offset(offset)
        )
    ).all()
    titles = await resources.infos(session, {(p.resource_type, p.resource_id) for p in rows})
    counts = await _objection_counts(session, [p.id for p in rows])
    items = tuple(_proposal_row(p, titles, counts) for p in rows)
    return Page(items, total, offset, limit)


def _proposal_row(
    p: Proposal, titles: dict[tuple[str, str], resources.Info], counts: dict[str, int]
) -> ProposalRow:
    info = titles.get((p.resource_type, p.resource_id))
    return ProposalRow(
        proposal_id=p.id,
        status=p.status,
        resource_type=p.resource_type,
        resource_id=p.resource_id,
        resource_title=info.title if info else None,
        section_id=p.section_id,
        summary=p.summary,
        author=p.author_name or p.author_id,
        objections=counts.get(p.id, 0),
        created_at=p.created_at,
    )


def _decisions(resource: ResourceType) -> ColumnElement[bool]:
    return and_(
        AuditEntry.entity_type == "proposal",
        AuditEntry.op.in_(PROPOSAL_DECISION_OPS),
        Proposal.resource_type.in_(resource.types()),
    )


async def _decided_total(session: AsyncSession, resource: ResourceType) -> int:
    stmt = (
        select(func.count())
        .select_from(AuditEntry)
        .join(Proposal, Proposal.id == AuditEntry.entity_id)
        .where(_decisions(resource))
    )
    return int(await session.scalar(stmt) or 0)


async def _decided(
    session: AsyncSession, resource: ResourceType, offset: int, limit: int, *, total: int | None = None
) -> Page[ProposalRow]:
    """Decided proposals, newest decision first; `total`: their count when the caller has it already."""
    if total is None:
        total = await _decided_total(session, resource)
    rows = (
        (
            await session.execute(
                select(Proposal, AuditEntry, StaffKey.name)
                .join(AuditEntry, AuditEntry.entity_id == Proposal.id)
                .outerjoin(StaffKey, StaffKey.id == AuditEntry.actor_id)
                .where(_decisions(resource))
                .order_by(AuditEntry.id.desc())
                .limit(limit)
                .offset(offset)
            )
        )
        .tuples()
        .all()
    )
    titles = await resources.infos(session, {(p.resource_type, p.resource_id) for p, _a, _n in rows})
    counts = await _objection_counts(session, [p.id for p, _a, _n in rows])
    items = []
    for p, entry, staff_name in rows:
        after = _json(entry.after_json)
        decision = after.get("decision") or entry.op.rsplit(".", 1)[-1]
        by = staff_name or after.get("reviewer") or after.get("decidedBy")
        items.append(
            replace(
                _proposal_row(p, titles, counts),
                decision=str(decision),
                decided_by=str(by) if by else None,
                decided_at=entry.created_at,
                note=str(after["note"]) if after.get("note") else None,
            )
        )
    return Page(tuple(items), total, offset, limit)


def _json(text: str | None) -> dict[str, object]:
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class WorkRow:
    """A work submission a curator decided."""

    submission_id: str
    product: str
    agent: str
    status: str  # accepted | rejected
    decided_by: str | None
    decided_at: datetime | None
    note: str | None


async def work_history(session: AsyncSession, *, offset: int, limit: int = PAGE_SIZE) -> Page[WorkRow]:
    """Submissions a curator decided (audited as work.review.accept or .reject), latest decision first."""
    where = and_(
        WorkSubmission.status.in_(("accepted", "rejected")),
        WorkSubmission.id.in_(
            select(AuditEntry.entity_id).where(
                AuditEntry.op.in_(("work.review.accept", "work.review.reject"))
            )
        ),
    )
    total = int(await session.scalar(select(func.count()).select_from(WorkSubmission).where(where)) or 0)
    rows = (
        await session.scalars(
            select(WorkSubmission)
            .where(where)
            .order_by(WorkSubmission.decided_at.desc(), WorkSubmission.id)
            .limit(limit)
            .offset(offset)
        )
    ).all()
    items = tuple(
        WorkRow(
            submission_id=w.id,
            product=observation_stored.product_name(w.submission) or w.id,
            agent=w.agent_name,
            status=w.status,
            decided_by=w.decided_by,
            decided_at=w.decided_at,
            note=w.decision_note,
        )
        for w in rows
    )
    return Page(items, total, offset, limit)


@dataclass(frozen=True)
class Counts:
    """What waits for a person, for the navigation."""

    escalations: int
    proposals: int


async def waiting(session: AsyncSession) -> Counts:
    now = utcnow()
    open_escalations = await session.scalar(
        select(func.count()).select_from(Escalation).where(raised.state_filter(EscalationStatus.OPEN, now))
    )
    objected = await session.scalar(
        select(func.count())
        .select_from(Proposal)
        .where(Proposal.resource_type == "document", Proposal.status == "objected")
    )
    return Counts(int(open_escalations or 0), int(objected or 0))


# --- what a person deciding a proposal sees ---------------------------------------------------------------


@dataclass(frozen=True)
class Vote:
    agent: str  # the agent's name, its id when it has none
    kind: str  # approve | reject | object
    reason: str | None
    at: datetime
    agent_id: str


@dataclass(frozen=True)
class ProposedChange:
    """A proposal as the person deciding it reads it: what it changes, why the agents disagree, and who
    proposed it with what support."""

    proposal_id: str
    status: str
    resource_type: str
    resource_id: str
    resource_title: str | None
    resource_version: int | None
    base_version: int
    section_id: str
    section_title: str | None
    summary: str
    author: str  # the agent's name, its id when it has none
    author_id: str
    citations: tuple[str, ...]
    approvals: int
    rejections: int
    objection_count: int
    votes: tuple[Vote, ...]
    before: str | None
    after: str
    diff: SectionDiff
    created_at: datetime

    @property
    def objections(self) -> tuple[Vote, ...]:
        return tuple(v for v in self.votes if v.kind == "object")


async def proposed_change(session: AsyncSession, proposal_id: str) -> ProposedChange | None:
    """The proposal `proposal_id` (of a topic or a document) with its section now and the comparison, or None
    when there is none."""
    key = canonical_id(proposal_id)
    p = await session.get(Proposal, key) if key else None
    if p is None:
        return None
    info = (await resources.infos(session, {(p.resource_type, p.resource_id)})).get(
        (p.resource_type, p.resource_id)
    )
    votes = (
        await session.scalars(
            select(ProposalVote).where(ProposalVote.proposal_id == p.id).order_by(ProposalVote.id)
        )
    ).all()
    return _change(p, info, votes)


def _change(p: Proposal, info: resources.Info | None, votes: Sequence[ProposalVote]) -> ProposedChange:
    """The proposal as its decider reads it, from its row, its resource as it reads now and its votes."""
    markdown = info.markdown if info else None
    found = sections.find(markdown, p.section_id) if markdown is not None else None
    before = sections.body(markdown, found) if markdown is not None and found is not None else None
    return ProposedChange(
        proposal_id=p.id,
        status=p.status,
        resource_type=p.resource_type,
        resource_id=p.resource_id,
        resource_title=info.title if info else None,
        resource_version=info.version if info else None,
        base_version=p.base_version,
        section_id=p.section_id,
        section_title=found.title if found is not None and found.title else None,
        summary=p.summary,
        author=p.author_name or p.author_id,
        author_id=p.author_id,
        citations=tuple(str(c) for c in (p.citations or [])),
        approvals=p.approve_count,
        rejections=p.reject_count,
        objection_count=p.object_count,
        votes=tuple(
            Vote(v.agent_name or v.agent_id, v.kind, v.reason, v.created_at, v.agent_id) for v in votes
        ),
        before=before,
        after=p.new_content,
        diff=section_diff(before, p.new_content),
        created_at=p.created_at,
    )


async def open_on_escalated_section(session: AsyncSession, r: InQueue) -> list[ProposedChange]:
    """For an escalation still waiting for an answer that names a section and no proposal, the proposals open
    (pending or objected) on that section, oldest first, each as a person deciding about it sees it (an
    escalation about a section is usually about what is proposed there, and the person answering must see
    it to judge); for any other, none. Two statements whatever their number: the proposals, then all their
    votes; the resource is the one the escalation was read with."""
    esc = r.escalation
    if r.proposal is not None or esc.proposal_id or not esc.section_id or r.status is not ReviewStatus.OPEN:
        return []
    found = (
        await session.scalars(
            select(Proposal)
            .where(
                Proposal.resource_type == esc.resource_type,
                Proposal.resource_id == esc.resource_id,
                Proposal.section_id == esc.section_id,
                Proposal.status.in_(("pending", "objected")),
            )
            .order_by(Proposal.created_at, Proposal.id)
        )
    ).all()
    if not found:
        return []
    votes: dict[str, list[ProposalVote]] = {p.id: [] for p in found}
    for v in await session.scalars(
        select(ProposalVote).where(ProposalVote.proposal_id.in_(votes)).order_by(ProposalVote.id)
    ):
        votes[v.proposal_id].append(v)
    return [_change(p, r.resource, votes[p.id]) for p in found]
