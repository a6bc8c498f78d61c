"""People keep the final word on work: curators decide deferred submissions (accept releases the held
credits once and records the observation; reject records a defect a person confirmed), and staff
resolve defects. Every decision is audited and lands in the agent's work feed."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel import audit
from domain.kernel.clock import utcnow
from domain.kernel.context import Context
from domain.kernel.errors import Conflict, NotFound
from domain.kernel.ids import canonical_id
from domain.kernel.sqlutil import for_update
from domain.kernel.vocabulary import SpeltOut
from domain.market.models import Retailer
from domain.work import feed, outcomes, work_events
from domain.work.models import WorkAssignment, WorkDefect, WorkSubmission


class SubmissionStatus(StrEnum):
    VALIDATING = "validating"
    ACCEPTED = "accepted"
    DEFERRED = "deferred"
    REJECTED = "rejected"


class DefectStatus(StrEnum):
    OPEN = "open"
    ACCEPTED = "accepted"
    DISMISSED = "dismissed"


SubmissionStatusField = Annotated[SubmissionStatus, SpeltOut(SubmissionStatus)]
DefectStatusField = Annotated[DefectStatus, SpeltOut(DefectStatus)]


@dataclass(frozen=True)
class Reviewed:
    """A submission as a curator reads it, with the retailer it names (None when it names none or it is
    gone)."""

    submission: WorkSubmission
    retailer: Retailer | None


@dataclass(frozen=True)
class ReviewPage:
    """One page of submissions for curators, with the filter that chose them."""

    items: list[Reviewed]
    total: int
    limit: int
    offset: int
    status: str


@dataclass(frozen=True)
class DefectList:
    """The defects a filter found (newest first), with the filter."""

    defects: list[WorkDefect]
    status: str
    scenario: str | None
    cluster: str | None
    submitted_by: str | None
    limit: int


async def queue(session: AsyncSession, *, status: str, limit: int, offset: int) -> ReviewPage:
    """Submissions by status (`all` for every one), oldest first, with what a curator needs to judge."""
    stmt = select(WorkSubmission)
    if status != "all":
        stmt = stmt.where(WorkSubmission.status == status)
    total = int(await session.scalar(select(func.count()).select_from(stmt.subquery())) or 0)
    rows = (
        await session.scalars(
            stmt.order_by(WorkSubmission.created_at, WorkSubmission.id).limit(limit).offset(offset)
        )
    ).all()
    retailers = {r.slug: r for r in (await session.scalars(select(Retailer))).all()}
    items = [Reviewed(s, retailers.get(s.retailer_slug or "")) for s in rows]
    return ReviewPage(items, total, limit, offset, status)


async def item(session: AsyncSession, submission_id: str) -> Reviewed:
    key = canonical_id(submission_id)
    sub = await session.get(WorkSubmission, key) if key else None
    if sub is None:
        raise NotFound(f"submission {submission_id!r} not found", code="submission_not_found")
    return await _reviewed(session, sub)


async def _reviewed(session: AsyncSession, sub: WorkSubmission) -> Reviewed:
    retailer = await session.get(Retailer, sub.retailer_slug) if sub.retailer_slug else None
    return Reviewed(sub, retailer)


async def _locked(session: AsyncSession, submission_id: str) -> tuple[WorkSubmission, WorkAssignment]:
    key = canonical_id(submission_id)
    sub = (
        await session.scalar(for_update(select(WorkSubmission).where(WorkSubmission.id == key)))
        if key
        else None
    )
    if sub is None:
        raise NotFound(f"submission {submission_id!r} not found", code="submission_not_found")
    assignment = await session.scalar(
        for_update(select(WorkAssignment).where(WorkAssignment.id == sub.assignment_id))
    )
    if assignment is None:  # pragma: no cover - the foreign key cascades
        raise NotFound(f"submission {submission_id!r} has no assignment", code="submission_not_found")
    if sub.status != "deferred":
        raise Conflict(
            f"submission {sub.id} is {sub.status}, not deferred: it was already decided"
            if sub.status in ("accepted", "rejected")
            else f"submission {sub.id} is still being validated",
            code="already_decided" if sub.status in ("accepted", "rejected") else "not_deferred",
            submissionStatus=sub.status,
        )
    return sub, assignment


async def decide(
    session: AsyncSession, ctx: Context, submission_id: str, *, decision: str, note: str
) -> Reviewed:
    curator = ctx.require_actor()
    sub, assignment = await _locked(session, submission_id)
    before = sub.status
    sub.decision_note = note
    if decision == "accept":
        await outcomes.accept(
            session,
            sub,
            assignment,
            by=curator.name,
            notes=f"accepted by curator {curator.name}: {note}",
            ctx=ctx,
        )
    else:
        await outcomes.reject(
            session,
            sub,
            assignment,
            by=curator.name,
            reason="curator_rejected",
            notes=f"rejected by curator {curator.name}: {note}",
            defect_status="accepted",
            ctx=ctx,
        )
    audit.record(
        session,
        ctx,
        f"work.review.{decision}",
        "work_submission",
        sub.id,
        before={"status": before},
        after=work_events.reviewed(sub, note),
    )
    return await _reviewed(session, sub)


async def defects(
    session: AsyncSession,
    *,
    status: str,
    scenario: str | None,
    cluster: str | None,
    submitted_by: str | None,
    limit: int,
) -> DefectList:
    stmt = select(WorkDefect)
    if status != "all":
        stmt = stmt.where(WorkDefect.status == status)
    if scenario is not None:
        stmt = stmt.where(WorkDefect.scenario == scenario)
    if cluster is not None:
        stmt = stmt.where(WorkDefect.cluster == cluster)
    if submitted_by is not None:
        stmt = stmt.where(WorkDefect.agent_id == submitted_by)
    rows = (
        await session.scalars(stmt.order_by(WorkDefect.created_at.desc(), WorkDefect.id).limit(limit))
    ).all()
    return DefectList(list(rows), status, scenario, cluster, submitted_by, limit)


async def resolve_defect(
    session: AsyncSession, ctx: Context, defect_id: str, *, status: str, note: str | None
) -> WorkDefect:
    staff = ctx.require_actor()
    key = canonical_id(defect_id)
    defect: WorkDefect | None = (
        await session.scalar(for_update(select(WorkDefect).where(WorkDefect.id == key))) if key else None
    )
    if defect is None:
        raise NotFound(f"defect {defect_id!r} not found", code="defect_not_found")
    if defect.status != "open":
        raise Conflict(
            f"defect {defect.id} is already {defect.status}",
            code="already_resolved",
            defectStatus=defect.status,
        )
    defect.status = status
    defect.resolved_at = utcnow()
    defect.resolved_by = staff.name
    defect.resolution_note = note
    audit.record(
        session,
        ctx,
        "work.defect.resolve",
        "work_defect",
        defect.id,
        before={"status": "open"},
        after={"status": status, "note": note},
    )
    await feed.notify(
        session,
        defect.agent_id,
        "work.defect.resolved",
        work_events.defect_resolved(defect, status, note),
        ctx,
    )
    return defect
