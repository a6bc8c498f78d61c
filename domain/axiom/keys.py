"""Commercial (Axiom) keys: creation, authentication, metering and usage.

Metering is one conditional UPDATE per call: it spends a credit of the current billing period (a UTC
calendar month) only while credits remain, and starts a new period when the month has turned, so two
concurrent calls can never both spend the last credit and no count is ever lost. Per-day counts are
an atomic upsert (INSERT … ON CONFLICT DO UPDATE) on both databases.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy import case, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from domain.axiom.models import AxiomKey, AxiomUsageDay
from domain.kernel import audit, keys, sqlutil
from domain.kernel.clock import iso, utcnow
from domain.kernel.context import Actor, Context
from domain.kernel.errors import BadRequest, NotFound, PaymentRequired, Unauthorized
from domain.kernel.ids import new_id
from domain.kernel.sqlutil import for_update

AXIOM_KEY_PREFIX = "pact_ax_"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


# Self-service keys get the free tier; the operator moves a key to another (`concord axiom keys set-tier`):
# same meter, the tier's monthly credits.
@dataclass(frozen=True)
class Tier:
    name: str
    monthly_credits: int
    price_aud_per_month: int | None  # None: priced by agreement
    self_service: bool


TIERS: dict[str, Tier] = {
    t.name: t
    for t in (
        Tier("free", 1000, 0, True),
        Tier("standard", 100_000, None, False),
        Tier("enterprise", 5_000_000, None, False),
    )
}
CREDIT_COST = {
    "GET /api/axiom/facts": 1,
    "GET /api/axiom/facts/{factId}": 1,
    "GET /api/axiom/legislation": 1,
    "GET /api/axiom/legislation/search": 1,
    "GET /api/axiom/legislation/{docId}": 1,
    "GET /api/axiom/usage": 0,
    "GET /api/axiom/resolve": 0,
}


@dataclass(frozen=True)
class NewKey:
    """A key just created, with its secret (shown this once)."""

    key: AxiomKey
    secret: str


@dataclass(frozen=True)
class Usage:
    """A key's usage in the current billing period, day by day."""

    key: AxiomKey
    period: str
    start: date
    end: date
    queries: int
    queries_today: int
    daily: list[tuple[date, int]]

    @property
    def credits_remaining(self) -> int:
        return max(0, self.key.monthly_credits - self.queries)


@dataclass(frozen=True)
class TierChange:
    """A key's standing before and after `set_tier`, as the audit trail stores it (`snapshot`)."""

    before: dict[str, Any]
    after: dict[str, Any]


def period_of(now: datetime) -> str:
    return now.astimezone(UTC).strftime("%Y-%m")


def _period_bounds(period: str) -> tuple[date, date]:
    start = date(int(period[:4]), int(period[5:7]), 1)
    end = date(start.year + (start.month == 12), start.month % 12 + 1, 1) - timedelta(days=1)
    return start, end


def clean_owner(name: str) -> str:
    name = _CONTROL.sub("", name).strip()
    if not any(ch.isalnum() for ch in name):
        raise BadRequest(
            "ownerName must contain a letter or digit",
            code="invalid_field",
            field="ownerName",
        )
    return name


async def create(session: AsyncSession, ctx: Context, *, owner_name: str) -> NewKey:
    owner = clean_owner(owner_name)
    secret = keys.generate(AXIOM_KEY_PREFIX)
    now = utcnow()
    tier = TIERS["free"]
    key = AxiomKey(
        id=new_id(),
        owner_name=owner,
        key_hash=keys.hash_key(secret),
        tier="free",
        monthly_credits=tier.monthly_credits,
        period=period_of(now),
        period_queries=0,
        total_queries=0,
        created_at=now,
    )
    session.add(key)
    await session.flush()
    actor_ctx = Context(
        actor=Actor(key.id, owner, key.key_hash, kind="commercial"),
        request_id=ctx.request_id,
        country=ctx.country,
    )
    audit.record(
        session,
        actor_ctx,
        "axiom.key.create",
        "axiom_key",
        key.id,
        after={"keyId": key.id, "ownerName": owner, "tier": key.tier},
    )
    return NewKey(key, secret)


async def authenticate(session: AsyncSession, api_key: str | None) -> AxiomKey:
    """The key row for a commercial key, or 401 (agent and staff keys are refused here)."""
    if not api_key:
        raise Unauthorized("missing commercial key: send 'Authorization: Bearer pact_ax_…'")
    if not api_key.startswith(AXIOM_KEY_PREFIX):
        raise Unauthorized("this endpoint needs a commercial key (pact_ax_…); other keys are not accepted")
    key = await session.scalar(select(AxiomKey).where(AxiomKey.key_hash == keys.hash_key(api_key)))
    if key is None:
        raise Unauthorized("invalid commercial key")
    return key


async def meter(session: AsyncSession, key: AxiomKey, *, cost: int = 1) -> int:
    """Spend `cost` credits of the authenticated key's current period atomically; 402 when exhausted.
    Returns the credits left."""
    now = utcnow()
    period = period_of(now)
    spent = case((AxiomKey.period == period, AxiomKey.period_queries + cost), else_=cost)
    row = (
        await session.execute(
            update(AxiomKey)
            .where(
                AxiomKey.id == key.id,
                or_(AxiomKey.period != period, AxiomKey.period_queries + cost <= AxiomKey.monthly_credits),
            )
            .values(
                period_queries=spent,
                period=period,
                total_queries=AxiomKey.total_queries + 1,
                last_used_at=now,
            )
            .returning(AxiomKey.period_queries, AxiomKey.monthly_credits)
            .execution_options(synchronize_session=False)
        )
    ).first()
    if row is None:
        raise PaymentRequired(
            f"no credits left in billing period {period}; they renew on the first day of next month",
            creditsRemaining=0,
        )
    await _count_day(session, key.id, now.date())
    remaining: int = row[1] - row[0]
    return remaining


async def _count_day(session: AsyncSession, key_id: str, day: date) -> None:
    stmt = sqlutil.insert(session, AxiomUsageDay).values(key_id=key_id, day=day, queries=1)
    stmt = stmt.on_conflict_do_update(
        index_elements=["key_id", "day"], set_={"queries": AxiomUsageDay.queries + 1}
    )
    await session.execute(stmt)


async def usage(session: AsyncSession, key: AxiomKey) -> Usage:
    now = utcnow()
    period = period_of(now)
    start, end = _period_bounds(period)
    queries = key.period_queries if key.period == period else 0
    days = (
        await session.execute(
            select(AxiomUsageDay.day, AxiomUsageDay.queries)
            .where(AxiomUsageDay.key_id == key.id, AxiomUsageDay.day >= start, AxiomUsageDay.day <= end)
            .order_by(AxiomUsageDay.day)
        )
    ).all()
    today = sum(q for d, q in days if d == now.date())
    return Usage(key, period, start, end, queries, today, [(d, q) for d, q in days])


# ---- the operator's commands (concord axiom keys list|set-tier) ------------------------------------


def snapshot(key: AxiomKey, period: str) -> dict[str, Any]:
    """A key's standing as the audit trail stores it (a stored format: keep it as it is) and as
    `concord axiom keys list` prints it."""
    queries = key.period_queries if key.period == period else 0
    return {
        "keyId": key.id,
        "ownerName": key.owner_name,
        "tier": key.tier,
        "monthlyCredits": key.monthly_credits,
        "billingPeriod": period,
        "queries": queries,
        "creditsRemaining": max(0, key.monthly_credits - queries),
        "totalQueries": key.total_queries,
        "createdAt": iso(key.created_at),
        "lastUsedAt": iso(key.last_used_at),
    }


async def list_keys(session: AsyncSession) -> list[dict[str, Any]]:
    """Every commercial key with its tier and this period's usage, oldest first (never a secret)."""
    period = period_of(utcnow())
    rows = (await session.scalars(select(AxiomKey).order_by(AxiomKey.created_at, AxiomKey.id))).all()
    return [snapshot(k, period) for k in rows]


async def set_tier(session: AsyncSession, ctx: Context, key_id: str, tier: str) -> TierChange:
    """Move a key to a tier: its monthly credits become the tier's at once, for the current period too. The
    period's queries so far still count, so an upgrade adds the difference and a downgrade below what was
    already used leaves no credits (402) until the next period. Audited with the before and after."""
    if tier not in TIERS:
        raise BadRequest(
            f"unknown tier {tier!r}; tiers: {', '.join(TIERS)}", code="invalid_field", field="tier"
        )
    key = await session.scalar(for_update(select(AxiomKey).where(AxiomKey.id == key_id)))
    if key is None:
        raise NotFound(f"no commercial key {key_id!r} (see `concord axiom keys list`)", code="key_not_found")
    period = period_of(utcnow())
    before = snapshot(key, period)
    key.tier = tier
    key.monthly_credits = TIERS[tier].monthly_credits
    await session.flush()
    after = snapshot(key, period)
    if (before["tier"], before["monthlyCredits"]) != (after["tier"], after["monthlyCredits"]):
        audit.record(session, ctx, "axiom.key.set_tier", "axiom_key", key.id, before=before, after=after)
    return TierChange(before, after)
