"""What a submission's outcome does, whoever decides it (the validator, a curator, the spot-check rule):
accepted pays the credits once and turns a price observation into market data; deferred holds the credits
for a curator; rejected records a defect. Callers hold the submission's row lock and have checked its
status, so each outcome is applied once; the ledger's unique reference backs that up for the credits."""

from __future__ import annotations

import hashlib

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel import ledger
from domain.kernel.clock import utcnow
from domain.kernel.context import SYSTEM, Context
from domain.kernel.ids import new_id
from domain.kernel.models import LedgerEntry
from domain.market.catalog import normalise, record_observation
from domain.market.models import Product, QuoteItem
from domain.market.units import QuoteUnit
from domain.work import feed, observation_stored, work_events
from domain.work.models import DefectKind, WorkAssignment, WorkDefect, WorkSubmission
from domain.work.observations import Observation


async def pay(session: AsyncSession, sub: WorkSubmission) -> int:
    """Move the submission's reward from the mint to the agent, at most once (ledger ref)."""
    if sub.reward_credits <= 0:
        return 0
    await ledger.write_entries(session)
    paid = await session.scalar(select(LedgerEntry.id).where(LedgerEntry.ref == sub.ledger_ref))
    if paid is None:
        await ledger.transfer(
            session,
            await ledger.system_wallet(session),
            await ledger.wallet_id(session, "agent", sub.agent_id),
            sub.reward_credits,
            f"work:{sub.work_type}",
            ref=sub.ledger_ref,
        )
    sub.credits_awarded = sub.reward_credits
    return sub.reward_credits


async def _product_for(session: AsyncSession, sub: WorkSubmission, obs: Observation) -> Product:
    """The catalogue product the observation is of: the retailer's product with that GTIN, else with that
    URL, else a new crowd-sourced product whose pack size follows from the two prices."""
    found = None
    if obs.ean:
        found = await session.scalar(
            select(Product)
            .where(Product.retailer_slug == sub.retailer_slug, Product.ean.in_(ean_forms(obs.ean)))
            .order_by(Product.created_at)
            .limit(1)
        )
    if found is None:
        found = await session.scalar(
            select(Product)
            .where(Product.retailer_slug == sub.retailer_slug, Product.url == obs.product_url)
            .order_by(Product.created_at)
            .limit(1)
        )
    if found is not None:
        if found.item_key is None:
            found.item_key = sub.item_key
        return found
    item = await session.get(QuoteItem, sub.item_key)
    digest = hashlib.sha256(obs.product_url.encode()).hexdigest()[:24]
    product = Product(
        retailer_slug=sub.retailer_slug,
        sku=f"crowd:{obs.ean or digest}",
        name=obs.product_name,
        norm_name=normalise(obs.product_name),
        url=obs.product_url,
        ean=obs.ean,
        category=item.category if item else "other",
        pack_size=obs.price_cents / obs.unit_price_cents,
        pack_unit=item.unit if item else QuoteUnit.ITEM,
        item_key=sub.item_key,
        tier="standard",
        scrape_enabled=False,  # its price comes from the crowd; the scraper's extractors may not fit it
        created_at=utcnow(),
    )
    session.add(product)
    await session.flush()
    return product


def ean_forms(ean: str) -> list[str]:
    """A GTIN is stored zero-padded to 14 digits by submissions, as printed (8, 12 or 13) elsewhere."""
    bare = ean.lstrip("0")
    return sorted({ean, *(bare.zfill(n) for n in (8, 12, 13, 14) if len(bare) <= n)})


async def record_market(session: AsyncSession, sub: WorkSubmission) -> str:
    obs = observation_stored.read(sub.submission)
    product = await _product_for(session, sub, obs)
    row = await record_observation(
        session, product, price_cents=obs.price_cents, in_stock=obs.in_stock, source="crowd"
    )
    row.ref = new_id()
    await session.flush()
    return row.ref


def _resolve(assignment: WorkAssignment) -> None:
    assignment.status = "resolved"
    assignment.resolved_at = utcnow()


def _decided(sub: WorkSubmission, status: str, by: str, notes: str) -> None:
    sub.status = status
    sub.decided_by = by
    sub.decided_at = utcnow()
    sub.notes = notes


async def accept(
    session: AsyncSession,
    sub: WorkSubmission,
    assignment: WorkAssignment,
    *,
    by: str,
    notes: str,
    ctx: Context = SYSTEM,
) -> None:
    if sub.work_type == "price_observation_mining":
        sub.price_observation_id = await record_market(session, sub)
    await pay(session, sub)
    _decided(sub, "accepted", by, notes)
    _resolve(assignment)
    await feed.notify(session, sub.agent_id, "work.submission.accepted", work_events.decided(sub), ctx)


async def defer(session: AsyncSession, sub: WorkSubmission, *, by: str, notes: str) -> None:
    _decided(sub, "deferred", by, notes)
    await feed.notify(session, sub.agent_id, "work.submission.deferred", work_events.decided(sub))


async def reject(
    session: AsyncSession,
    sub: WorkSubmission,
    assignment: WorkAssignment,
    *,
    by: str,
    reason: str,
    notes: str,
    defect_status: str = "open",
    ctx: Context = SYSTEM,
) -> WorkDefect:
    now = utcnow()
    defect = WorkDefect(
        kind=DefectKind.PRICE,
        submission_id=sub.id,
        assignment_id=assignment.id,
        agent_id=sub.agent_id,
        agent_name=sub.agent_name,
        reason=reason,
        detail=notes,
        scenario=sub.item_key,
        cluster=sub.retailer_slug,
        data={"submission": sub.submission, "checks": sub.checks},
        status=defect_status,
        created_at=now,
        resolved_at=now if defect_status != "open" else None,
        resolved_by=by if defect_status != "open" else None,
    )
    session.add(defect)
    await session.flush()
    sub.price_defect_id = defect.id
    _decided(sub, "rejected", by, notes)
    _resolve(assignment)
    await feed.notify(session, sub.agent_id, "work.submission.rejected", work_events.decided(sub), ctx)
    return defect
