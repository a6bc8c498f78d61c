"""Claiming work: the pool of open assignments (made by a sweep from the quote-rate item keys that lack a
current observation), leases that run out, and the agent's own list.

An assignment is leased to one agent at a time. Claiming locks the row (SKIP LOCKED on PostgreSQL, so two
agents claiming at once get different assignments instead of waiting on each other); an expired lease
is as good as open, so a lapsed claim frees the work at once, and the sweep tidies the rows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Annotated, Any

from sqlalchemy import and_, delete, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel import audit
from domain.kernel.clock import utcnow
from domain.kernel.context import Context
from domain.kernel.errors import BadRequest, Conflict
from domain.kernel.sqlutil import execute_counted, for_update
from domain.kernel.vocabulary import SpeltOut
from domain.market.models import Product, QuoteItem
from domain.work import work_events
from domain.work.models import WorkAssignment
from domain.work.settings import get_work_settings


class WorkType(StrEnum):
    """The work this server hands out."""

    PRICE_OBSERVATION_MINING = "price_observation_mining"
    APPLICABILITY_SPOTCHECK = "applicability_spotcheck"


class AssignmentStatus(StrEnum):
    OPEN = "open"
    CLAIMED = "claimed"
    SUBMITTED = "submitted"
    RESOLVED = "resolved"


AssignmentStatusField = Annotated[AssignmentStatus, SpeltOut(AssignmentStatus)]
PRICE = WorkType.PRICE_OBSERVATION_MINING
SPOTCHECK = WorkType.APPLICABILITY_SPOTCHECK
SUPPORTED = tuple(WorkType)
# Work types of the public hub that this server does not hand out.
UNSUPPORTED = ("scrape", "qa_spot_check", "dependency_proposal")
LIST_LIMIT = 200


def reward_of(work_type: str) -> int:
    cfg = get_work_settings()
    return cfg.price_reward_credits if work_type == PRICE else cfg.spotcheck_reward_credits


@dataclass(frozen=True)
class Claim:
    """The assignment a claim leased, and whether it was the caller's own live claim reused."""

    assignment: WorkAssignment
    reused: bool


@dataclass(frozen=True)
class Listed:
    """An assignment as a list shows it: `lapsed` when its lease ran out, so the work is free again (open,
    nobody's) though the sweep has not tidied the row yet."""

    assignment: WorkAssignment
    lapsed: bool = False


@dataclass(frozen=True)
class AssignmentList:
    """The assignments a list found (at most LIST_LIMIT), with the status asked for."""

    items: list[Listed]
    status: str | None


def _check_type(work_type: str) -> None:
    if work_type in SUPPORTED:
        return
    known = (
        " (a work type of the public hub this server does not hand out)" if work_type in UNSUPPORTED else ""
    )
    raise BadRequest(
        f"workType: {work_type!r} is not supported{known}; supported: {', '.join(SUPPORTED)}",
        code="unsupported_work_type",
        field="workType",
        supported=list(SUPPORTED),
    )


async def _item(session: AsyncSession, key: object) -> QuoteItem:
    if not isinstance(key, str):
        raise BadRequest(
            "payload.itemKey: must be a string", code="validation_error", field="payload.itemKey"
        )
    item = await session.get(QuoteItem, key)
    if item is None:
        raise BadRequest(
            f"payload.itemKey: unknown item key {key!r}", code="unknown_item_key", field="payload.itemKey"
        )
    return item


async def claim(
    session: AsyncSession,
    ctx: Context,
    *,
    work_type: str,
    payload: dict[str, Any] | None,
    item_key: object = None,
    expires_in_minutes: int,
) -> Claim:
    """Lease work of the type to the caller. A price observation's `item_key` (the payload's, as the client
    sent it) claims work for that quote-rate item only; the stored payload then carries the item."""
    actor = ctx.require_actor()
    _check_type(work_type)
    payload = dict(payload or {})
    now = utcnow()
    lease = now + timedelta(minutes=expires_in_minutes)
    wanted: str | None = None
    if work_type == PRICE and item_key is not None:
        item = await _item(session, item_key)
        payload = {**payload, **work_events.item_payload(item)}
        wanted = item.key

    # The caller's own live claim of this type is reused (and its lease extended to what was asked).
    own_stmt = select(WorkAssignment).where(
        WorkAssignment.agent_id == actor.id,
        WorkAssignment.work_type == work_type,
        WorkAssignment.status == "claimed",
        WorkAssignment.expires_at > now,
    )
    if wanted is not None:
        own_stmt = own_stmt.where(WorkAssignment.item_key == wanted)
    own = await session.scalar(for_update(own_stmt.order_by(WorkAssignment.claimed_at).limit(1)))
    if own is not None:
        own.expires_at = max(own.expires_at, lease)
        return await _claimed(session, ctx, own, reused=True)

    if work_type == PRICE:
        pool = select(WorkAssignment).where(
            WorkAssignment.work_type == PRICE,
            or_(
                WorkAssignment.status == "open",
                and_(WorkAssignment.status == "claimed", WorkAssignment.expires_at <= now),
            ),
        )
        if wanted is not None:
            pool = pool.where(WorkAssignment.item_key == wanted)
        # SKIP LOCKED: two agents claiming at once get different assignments instead of waiting.
        taken = await session.scalar(
            for_update(pool.order_by(WorkAssignment.created_at, WorkAssignment.id).limit(1), skip_locked=True)
        )
        if taken is not None:
            taken.status, taken.agent_id, taken.claimed_at, taken.expires_at = "claimed", actor.id, now, lease
            return await _claimed(session, ctx, taken, reused=False)
        if wanted is None:
            raise Conflict(
                "no price-observation work is open: every item key has a current observation or is being "
                "worked on; claim a specific key with payload.itemKey, or try again later",
                code="no_work_available",
            )
    row = WorkAssignment(
        work_type=work_type,
        payload=payload,
        item_key=wanted,
        reward_credits=reward_of(work_type),
        status="claimed",
        agent_id=actor.id,
        created_at=now,
        claimed_at=now,
        expires_at=lease,
    )
    session.add(row)
    await session.flush()
    return await _claimed(session, ctx, row, reused=False)


async def _claimed(session: AsyncSession, ctx: Context, row: WorkAssignment, *, reused: bool) -> Claim:
    audit.record(session, ctx, "work.claim", "work_assignment", row.id, after=work_events.claimed(row))
    return Claim(row, reused)


async def assignments(session: AsyncSession, ctx: Context, *, status: str | None) -> AssignmentList:
    """Open work is everyone's to see; other statuses are the caller's own assignments."""
    actor = ctx.require_actor()
    now = utcnow()
    stmt = select(WorkAssignment)
    if status == "open":
        stmt = stmt.where(
            or_(
                WorkAssignment.status == "open",
                and_(WorkAssignment.status == "claimed", WorkAssignment.expires_at <= now),
            )
        )
    else:
        stmt = stmt.where(WorkAssignment.agent_id == actor.id)
        if status == "claimed":
            stmt = stmt.where(WorkAssignment.status == "claimed", WorkAssignment.expires_at > now)
        elif status is not None:
            stmt = stmt.where(WorkAssignment.status == status)
    rows = (
        await session.scalars(
            stmt.order_by(WorkAssignment.created_at.desc(), WorkAssignment.id).limit(LIST_LIMIT)
        )
    ).all()
    return AssignmentList([Listed(row, lapsed=_lapsed(row, now)) for row in rows], status)


def _lapsed(row: WorkAssignment, now: datetime) -> bool:
    return row.status == "claimed" and row.expires_at <= now


async def expire_leases(session: AsyncSession) -> int:
    """Sweep: claims whose lease ran out become open again (with a fresh TTL); open assignments nobody
    claimed within their TTL are removed (the next creation sweep remakes any still needed)."""
    now = utcnow()
    ttl = timedelta(hours=get_work_settings().assignment_ttl_hours)
    lapsed = (
        await session.scalars(
            for_update(
                select(WorkAssignment).where(
                    WorkAssignment.status == "claimed", WorkAssignment.expires_at <= now
                )
            ).limit(500)
        )
    ).all()
    for row in lapsed:
        row.status, row.agent_id, row.claimed_at, row.expires_at = "open", None, None, now + ttl
    removed = await execute_counted(
        session,
        delete(WorkAssignment).where(WorkAssignment.status == "open", WorkAssignment.expires_at <= now),
    )
    return len(lapsed) + removed


async def create_price_assignments(session: AsyncSession) -> int:
    """Sweep: one open price-observation assignment for each item key whose newest in-stock observation
    is missing or older than the stale window, unless one is already open, claimed or submitted;
    at most a batch per run, the keys that have waited longest first."""
    cfg = get_work_settings()
    now = utcnow()
    cutoff = now - timedelta(hours=cfg.assignment_stale_hours)
    newest = (
        select(Product.item_key, func.max(Product.observed_at).label("newest"))
        .where(Product.item_key.is_not(None), Product.in_stock.is_(True), Product.price_cents.is_not(None))
        .group_by(Product.item_key)
        .subquery()
    )
    busy = select(WorkAssignment.item_key).where(
        WorkAssignment.work_type == PRICE,
        WorkAssignment.item_key.is_not(None),
        WorkAssignment.status.in_(("open", "claimed", "submitted")),
    )
    rows = (
        await session.execute(
            select(QuoteItem, newest.c.newest)
            .outerjoin(newest, newest.c.item_key == QuoteItem.key)
            .where(or_(newest.c.newest.is_(None), newest.c.newest < cutoff), QuoteItem.key.not_in(busy))
            .order_by(newest.c.newest.is_not(None), newest.c.newest, QuoteItem.key)
            .limit(cfg.assignment_batch)
        )
    ).all()
    for item, last in rows:
        session.add(
            WorkAssignment(
                work_type=PRICE,
                payload=work_events.offered_payload(item, last),
                item_key=item.key,
                reward_credits=cfg.price_reward_credits,
                status="open",
                created_at=now,
                expires_at=now + timedelta(hours=cfg.assignment_ttl_hours),
            )
        )
    return len(rows)
