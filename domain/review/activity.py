"""What a person reads of one topic or document before she steps in (PACT v2.0.3 §9.3: a summary instead of
every protocol event): the agents active on it, the proposals still open there (each for her to decide,
PACT §9.2), the sections where open proposals compete, what merged in the last hour, the escalations
waiting, and when a person last acted on it."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import BindParameter, ColumnElement, bindparam, case, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus.escalations import EscalationStatus
from domain.consensus.models import Escalation, Proposal
from domain.consensus.policies import Approval
from domain.kernel import events
from domain.kernel.clock import utcnow
from domain.kernel.event_record import ActorKind
from domain.kernel.models import Event
from domain.review import resources
from domain.review.proposals import DECIDABLE, MERGED
from domain.review.queue import PAGE_SIZE, Page, ResourceType
from domain.topics import leaving
from domain.topics.leaving import RemovedAgent

RECENT = timedelta(hours=1)  # "merged in the last hour"
# A person's own acts on a resource's stream (a reviewer's decision or answer), written inline so that the
# database proves the partial index ix_events_person applies (a bound value would not, in a generic plan).
PERSON: BindParameter[str] = bindparam("person", ActorKind.INDIVIDUAL.value, literal_execute=True)


@dataclass(frozen=True)
class OpenProposal:
    """A proposal still open on the resource, as the summary lists it."""

    proposal_id: str
    status: str
    section_id: str
    summary: str
    author: str
    approvals: int
    rejections: int
    objections: int
    created_at: datetime


@dataclass(frozen=True)
class Contest:
    """A section where more than one proposal is open: only one of them can stand."""

    section_id: str
    proposals: int
    authors: tuple[str, ...]


@dataclass(frozen=True)
class Activity:
    resource_type: str
    resource_id: str
    title: str | None
    version: int | None
    approval: Approval  # the approval policy its proposals follow
    members: tuple[AgentRef, ...]  # the active agents, in the order they joined
    removed: tuple[RemovedAgent, ...]  # a topic's agents a reviewer removed (PACT §9.2), latest first
    open_total: int  # every open proposal (pending or objected)
    objected_total: int  # of those, the ones an objection paused
    open_proposals: tuple[OpenProposal, ...]  # the oldest SHOWN, oldest first
    contested: tuple[Contest, ...]  # by section id, at most CONTESTS_SHOWN
    merged_recently: int
    open_escalations: int
    last_person_at: datetime | None

    @property
    def agents(self) -> tuple[str, ...]:
        """The active agents' names, in the order they joined."""
        return tuple(m.name for m in self.members)


@dataclass(frozen=True)
class AgentRef:
    id: str
    name: str


# What one summary lists at most (its counts cover everything): a topic may hold thousands of proposals.
SHOWN = 200
CONTESTS_SHOWN = 50


async def activity(session: AsyncSession, resource_type: str, resource_id: str) -> Activity:
    """The summary of one topic or document (404 when there is no such resource)."""
    found = await resources.standing(session, resource_type, resource_id)
    rid = found.fabric.resource_id
    is_open = (
        Proposal.resource_type == resource_type,
        Proposal.resource_id == rid,
        Proposal.status.in_(DECIDABLE),
    )
    counted = select(Proposal.status, func.count()).where(*is_open).group_by(Proposal.status)
    by_status = dict((await session.execute(counted)).tuples().all())
    rows = (
        await session.scalars(
            select(Proposal).where(*is_open).order_by(Proposal.created_at, Proposal.id).limit(SHOWN)
        )
    ).all()
    merged = await session.scalar(
        select(func.count())
        .select_from(Proposal)
        .where(
            Proposal.resource_type == resource_type,
            Proposal.resource_id == rid,
            Proposal.status.in_(MERGED),
            Proposal.resolved_at >= utcnow() - RECENT,
        )
    )
    waiting = await session.scalar(
        select(func.count())
        .select_from(Escalation)
        .where(
            Escalation.resource_type == resource_type,
            Escalation.resource_id == rid,
            Escalation.status == EscalationStatus.OPEN.value,
        )
    )
    last_person = await session.scalar(
        select(Event.created_at)
        .where(Event.stream == events.stream_of(resource_type, rid), Event.actor_kind == PERSON)
        .order_by(Event.seq.desc())
        .limit(1)
    )
    return Activity(
        resource_type=resource_type,
        resource_id=rid,
        title=found.title,
        version=found.version,
        approval=found.approval,
        members=tuple(AgentRef(m.id, m.name) for m in found.fabric.members),
        removed=await leaving.removed_agents(session, rid) if resource_type == ResourceType.TOPIC else (),
        open_total=sum(by_status.values()),
        objected_total=by_status.get("objected", 0),
        open_proposals=tuple(_open(p) for p in rows),
        contested=await _contests(session, is_open),
        merged_recently=int(merged or 0),
        open_escalations=int(waiting or 0),
        last_person_at=last_person,
    )


def _open(p: Proposal) -> OpenProposal:
    return OpenProposal(
        proposal_id=p.id,
        status=p.status,
        section_id=p.section_id,
        summary=p.summary,
        author=p.author_name or p.author_id,
        approvals=p.approve_count,
        rejections=p.reject_count,
        objections=p.object_count,
        created_at=p.created_at,
    )


async def _contests(session: AsyncSession, is_open: tuple[ColumnElement[bool], ...]) -> tuple[Contest, ...]:
    """The sections with more than one open proposal, and their authors (each once, oldest first)."""
    counted = (
        (
            await session.execute(
                select(Proposal.section_id, func.count())
                .where(*is_open)
                .group_by(Proposal.section_id)
                .having(func.count() > 1)
                .order_by(Proposal.section_id)
                .limit(CONTESTS_SHOWN)
            )
        )
        .tuples()
        .all()
    )
    if not counted:
        return ()
    authors: dict[str, dict[str, None]] = defaultdict(dict)
    named = await session.execute(
        select(Proposal.section_id, Proposal.author_name, Proposal.author_id)
        .where(*is_open, Proposal.section_id.in_([section for section, _n in counted]))
        .order_by(Proposal.created_at, Proposal.id)
    )
    for section, name, author_id in named.tuples():
        authors[section][name or author_id] = None
    return tuple(Contest(section, n, tuple(authors[section])) for section, n in counted)


@dataclass(frozen=True)
class OpenResource:
    """A topic or document with proposals still open: how many, how many an objection paused, and since
    when the oldest has been open."""

    resource_type: str
    resource_id: str
    title: str | None
    open: int
    objected: int
    oldest: datetime


async def where_open(
    session: AsyncSession, resource: ResourceType, *, offset: int, limit: int = PAGE_SIZE
) -> Page[OpenResource]:
    """The topics and documents where proposals are open, the one whose oldest has waited longest first."""
    oldest = func.min(Proposal.created_at)
    grouped = (
        select(
            Proposal.resource_type,
            Proposal.resource_id,
            func.count().label("open"),
            func.sum(case((Proposal.status == "objected", 1), else_=0)).label("objected"),
            oldest.label("oldest"),
        )
        .where(Proposal.status.in_(DECIDABLE), Proposal.resource_type.in_(resource.types()))
        .group_by(Proposal.resource_type, Proposal.resource_id)
    )
    total = int(await session.scalar(select(func.count()).select_from(grouped.subquery())) or 0)
    rows = (
        await session.execute(
            grouped.order_by(oldest, Proposal.resource_type, Proposal.resource_id).limit(limit).offset(offset)
        )
    ).all()
    infos = await resources.infos(session, {(rt, rid) for rt, rid, *_rest in rows})
    items = tuple(
        OpenResource(rt, rid, info.title if (info := infos.get((rt, rid))) else None, n, int(o or 0), at)
        for rt, rid, n, o, at in rows
    )
    return Page(items, total, offset, limit)
