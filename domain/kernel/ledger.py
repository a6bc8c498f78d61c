"""Double-entry token ledger: every balance change is a transfer between two wallets.

Debits are a single conditional UPDATE (balance >= amount), so concurrent spends can never take a
wallet below zero, and the sum over all wallets (the system mint included) never changes.

Lock order: one unit of work may make several transfers (a review reward, then a merge reward, then a
bounty payout), so sorting the two wallets of each transfer is not enough to rule out deadlocks between
transactions on PostgreSQL. Every transfer therefore first locks the system mint's row: a transaction
takes wallet row locks only while it holds that lock, which serialises ledger writes (cheap: they are a
few single-row UPDATEs) and makes a wait cycle over wallets impossible. On SQLite BEGIN IMMEDIATE already
serialises writers.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel.clock import iso, new_id, utcnow
from domain.kernel.errors import BadRequest, PaymentRequired
from domain.kernel.models import LedgerEntry, Wallet
from domain.kernel.sqlutil import for_update, insert_ignore

SYSTEM_OWNER = "hub-protocol"


async def wallet_id(session: AsyncSession, kind: str, owner_id: str) -> str:
    """The id of a wallet, creating it empty on first use."""
    found = await session.scalar(select(Wallet.id).where(Wallet.kind == kind, Wallet.owner_id == owner_id))
    if found:
        return found
    await insert_ignore(
        session,
        Wallet,
        {"id": new_id(), "kind": kind, "owner_id": owner_id, "balance": 0, "created_at": utcnow()},
    )
    return (
        await session.scalars(select(Wallet.id).where(Wallet.kind == kind, Wallet.owner_id == owner_id))
    ).one()


async def system_wallet(session: AsyncSession) -> str:
    return await wallet_id(session, "system", SYSTEM_OWNER)


async def balance(session: AsyncSession, wallet: str) -> int:
    return int(await session.scalar(select(Wallet.balance).where(Wallet.id == wallet)) or 0)


async def transfer(
    session: AsyncSession,
    from_wallet: str,
    to_wallet: str,
    amount: int,
    reason: str,
    *,
    topic_id: str | None = None,
    ref: str | None = None,
) -> LedgerEntry:
    if not isinstance(amount, int) or amount <= 0:
        raise BadRequest("amount must be a positive whole number of tokens", code="invalid_amount")
    if from_wallet == to_wallet:
        raise BadRequest("cannot transfer to the same wallet", code="invalid_transfer")
    await session.execute(
        for_update(select(Wallet.id).where(Wallet.kind == "system", Wallet.owner_id == SYSTEM_OWNER))
    )
    # Touch both rows in id order so two opposite transfers cannot deadlock.
    for wid in sorted((from_wallet, to_wallet)):
        if wid == from_wallet:
            debited = await session.execute(
                update(Wallet)
                .where(
                    Wallet.id == wid,
                    or_(Wallet.kind == "system", Wallet.balance >= amount),
                )
                .values(balance=Wallet.balance - amount)
                .returning(Wallet.balance)
            )
            if debited.first() is None:
                have = await balance(session, wid)
                raise PaymentRequired(
                    f"balance {have} is less than the {amount} tokens needed",
                    balance=have,
                    required=amount,
                )
        else:
            await session.execute(
                update(Wallet).where(Wallet.id == wid).values(balance=Wallet.balance + amount)
            )
    entry = LedgerEntry(
        from_wallet=from_wallet,
        to_wallet=to_wallet,
        amount=amount,
        reason=reason,
        topic_id=topic_id,
        ref=ref,
        created_at=utcnow(),
    )
    session.add(entry)
    await session.flush()
    return entry


async def history(session: AsyncSession, wallet: str, *, limit: int, offset: int) -> dict[str, Any]:
    cond = or_(LedgerEntry.from_wallet == wallet, LedgerEntry.to_wallet == wallet)
    total = int(await session.scalar(select(func.count(LedgerEntry.id)).where(cond)) or 0)
    rows = (
        await session.scalars(
            select(LedgerEntry).where(cond).order_by(LedgerEntry.id.desc()).limit(limit).offset(offset)
        )
    ).all()
    return {
        "transactions": [
            {
                "id": r.id,
                "fromWallet": r.from_wallet,
                "toWallet": r.to_wallet,
                "amount": r.amount,
                "direction": "in" if r.to_wallet == wallet else "out",
                "reason": r.reason,
                "topicId": r.topic_id,
                "ref": r.ref,
                "createdAt": iso(r.created_at),
            }
            for r in rows
        ],
        "total": total,
        "limit": limit,
        "offset": offset,
    }


async def total_supply(session: AsyncSession) -> int:
    return int(await session.scalar(select(func.coalesce(func.sum(Wallet.balance), 0))) or 0)
