"""The reviewers' queue of escalations and questions, one query for the review desk (domain/review/desk.py)
and the review API (domain/review/escalations.py): waiting items by priority, then oldest first; answered
ones newest answer first. The filters (kind, priority, resource, status) and the page are applied in the
database, reading the indexes behind those orders (ix_escalations_status_priority_created,
ix_escalations_priority_created, ix_escalations_status_resolved), so a new urgent item is never out of reach
behind a cap."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Generic, TypeVar

from sqlalchemy import ColumnElement, and_, func, select, true
from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus import escalations as raised
from domain.consensus.escalations import EscalationStatus
from domain.consensus.models import Escalation, EscalationPriority, priority_rank
from domain.kernel.clock import utcnow

PAGE_SIZE = 25
T = TypeVar("T")


class DeskStatus(StrEnum):
    """Which items a list shows: waiting for a person, answered (decisions included), decided (a decision on
    a proposal or on work was taken), or all of them; the review API also lists the closed escalations (their
    proposal withdrawn) and the timed-out questions on their own."""

    OPEN = "open"
    ANSWERED = "answered"
    DECIDED = "decided"
    ALL = "all"
    CLOSED = "closed"
    TIMED_OUT = "timed-out"


# What the desk's pages offer (closed and timed-out items are only on the review API).
DESK_STATUSES = (DeskStatus.OPEN, DeskStatus.ANSWERED, DeskStatus.DECIDED, DeskStatus.ALL)
# Lists of what people did, newest first.
_ANSWERED_ORDER = (DeskStatus.ANSWERED, DeskStatus.DECIDED, DeskStatus.CLOSED)


class DeskKind(StrEnum):
    """What kind of item a list shows."""

    ALL = "all"
    ESCALATION = "escalation"
    QUESTION = "question"
    PROPOSAL = "proposal"
    WORK = "work"


class ResourceType(StrEnum):
    """Where an item comes from."""

    ALL = "all"
    TOPIC = "topic"
    DOCUMENT = "document"

    def types(self) -> tuple[str, ...]:
        """The stored resource types this filter selects."""
        if self is ResourceType.ALL:
            return tuple(t.value for t in ResourceType if t is not ResourceType.ALL)
        return (self.value,)


@dataclass(frozen=True)
class Filters:
    kind: DeskKind = DeskKind.ALL
    priority: EscalationPriority | None = None
    resource: ResourceType = ResourceType.ALL
    status: DeskStatus = DeskStatus.OPEN


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a list: its items, how many there are in all, and where this page starts."""

    items: tuple[T, ...]
    total: int
    offset: int
    limit: int

    @property
    def number(self) -> int:
        return self.offset // self.limit + 1

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.limit))


_STATE = {
    DeskStatus.OPEN: EscalationStatus.OPEN,
    DeskStatus.ANSWERED: EscalationStatus.RESOLVED,
    DeskStatus.CLOSED: EscalationStatus.CLOSED,
    DeskStatus.TIMED_OUT: EscalationStatus.TIMED_OUT,
}


def _where(filters: Filters) -> ColumnElement[bool]:
    conds: list[ColumnElement[bool]] = []
    if filters.kind in (DeskKind.ESCALATION, DeskKind.QUESTION):
        conds.append(Escalation.kind == filters.kind.value)
    if filters.priority is not None:
        conds.append(Escalation.priority == filters.priority.value)
    if filters.resource is not ResourceType.ALL:
        conds.append(Escalation.resource_type == filters.resource.value)
    if filters.status is DeskStatus.DECIDED:
        conds.append(and_(Escalation.status == EscalationStatus.RESOLVED, Escalation.decision.is_not(None)))
    elif filters.status in _STATE:
        conds.append(raised.state_filter(_STATE[filters.status], utcnow()))
    return and_(*conds) if conds else true()


async def escalations(
    session: AsyncSession, filters: Filters, *, offset: int, limit: int = PAGE_SIZE
) -> Page[Escalation]:
    """One page of escalations and questions: waiting ones (and `all`) by priority then age; answered,
    decided and closed ones newest answer first."""
    where = _where(filters)
    total = int(await session.scalar(select(func.count()).select_from(Escalation).where(where)) or 0)
    stmt = select(Escalation).where(where)
    if filters.status in _ANSWERED_ORDER:
        stmt = stmt.order_by(Escalation.resolved_at.desc(), Escalation.id.desc())
    else:
        stmt = stmt.order_by(priority_rank(Escalation.priority), Escalation.created_at, Escalation.id)
    rows = (await session.scalars(stmt.limit(limit).offset(offset))).all()
    return Page(tuple(rows), total, offset, limit)
