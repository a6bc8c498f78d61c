"""Double-entry token ledger: every balance change is a transfer between two wallets.

No global serialisation. The system mint is append-only: a transfer to or from it writes its ledger entry and
never touches its wallet row, whose balance is derived from its entries (`balance`). Every other wallet's
balance is stored, and a unit of work's transfers are not applied one by one: they are summed per wallet
and applied just before the unit of work commits, in wallet-id order, after every other write of the
transaction (domain/kernel/journal.py). So:

- a transaction locks only the wallets it moves tokens in or out of, and holds those locks only for its
  last few statements;
- wallets are the last rows any transaction locks, always in one global order, so transactions making
  several transfers in different orders (a review reward, a merge reward, a bounty payout) cannot deadlock
  on wallets, nor on a wallet and a resource locked earlier;
- a debit is a conditional UPDATE (balance + change >= 0) on the locked row, so concurrent spends can never
  take a wallet below zero; a unit of work whose net change would overdraw fails with 402 and rolls back
  whole (on SQLite BEGIN IMMEDIATE serialises writers anyway);
- the sum over all wallets, the mint's derived balance included, never changes (`total_supply` is 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Row, bindparam, case, func, or_, select, union_all
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from domain.kernel import journal
from domain.kernel.clock import utcnow
from domain.kernel.db import after_commit, shared, table_of, unit_state
from domain.kernel.errors import BadRequest
from domain.kernel.ids import new_id
from domain.kernel.models import LedgerEntry, Wallet

SYSTEM_OWNER = "hub-protocol"
_WALLETS = table_of(Wallet)
_ENTRIES = table_of(LedgerEntry)
_SEEN = "concord_ledger_seen"
_CACHE_LIMIT = 100_000
# Built once and executed with parameters (no per-call statement building or cache key).
_FIND = select(_WALLETS.c.id).where(
    _WALLETS.c.kind == bindparam("kind"), _WALLETS.c.owner_id == bindparam("owner")
)
_CREATE = {
    name: dialect.insert(_WALLETS).on_conflict_do_nothing()
    for name, dialect in (("postgresql", postgresql), ("sqlite", sqlite))
}


def _seen(session: AsyncSession | Session) -> dict[tuple[str, str], str]:
    """Wallet ids looked up or created in this unit of work (remembered by the process once it commits)."""
    state = unit_state(session)
    found = state.get(_SEEN)
    if found is None:
        found = state[_SEEN] = {}
        after_commit(session, "ledger", _remember_wallets)
    assert isinstance(found, dict)
    return found


def _cache(session: AsyncSession | Session) -> dict[tuple[str, str], str]:
    cache: dict[tuple[str, str], str] = shared(session).setdefault("wallet_ids", {})
    return cache


async def wallet_id(session: AsyncSession, kind: str, owner_id: str) -> str:
    """The id of a wallet, creating it empty on first use. Ids never change, so a process remembers the
    ones it has seen committed."""
    key = (kind, owner_id)
    cached = _cache(session).get(key)
    if cached:
        return cached
    seen = _seen(session)
    if key in seen:
        return seen[key]
    found: str | None = await session.scalar(_FIND, {"kind": kind, "owner": owner_id})
    if not found:
        await session.execute(
            _CREATE[_dialect(session)],
            {"id": new_id(), "kind": kind, "owner_id": owner_id, "balance": 0, "created_at": utcnow()},
        )
        found = str((await session.scalars(_FIND, {"kind": kind, "owner": owner_id})).one())
    seen[key] = found
    return found


async def new_wallet(session: AsyncSession, kind: str, owner_id: str) -> str:
    """Create the empty wallet of a new owner (one statement: no lookup first); its id."""
    wid = new_id()
    await session.execute(
        _WALLETS.insert(),
        {"id": wid, "kind": kind, "owner_id": owner_id, "balance": 0, "created_at": utcnow()},
    )
    _seen(session)[(kind, owner_id)] = wid
    return wid


def _remember_wallets(session: Session) -> None:
    seen = unit_state(session).get(_SEEN)
    if seen:
        cache = _cache(session)
        if len(cache) > _CACHE_LIMIT:
            cache.clear()
        cache.update(seen)


async def system_wallet(session: AsyncSession) -> str:
    return await wallet_id(session, "system", SYSTEM_OWNER)


async def _mint(session: AsyncSession) -> str | None:
    """The mint's id without creating it (reads)."""
    key = ("system", SYSTEM_OWNER)
    found = _cache(session).get(key) or unit_state(session).get(_SEEN, {}).get(key)
    if found:
        return found
    return await session.scalar(select(Wallet.id).where(Wallet.kind == key[0], Wallet.owner_id == key[1]))


async def balance(session: AsyncSession, wallet: str) -> int:
    """A wallet's balance as this unit of work sees it (its own transfers included)."""
    mint = await _mint(session)
    if wallet == mint:
        await write_entries(session)
        signed = case((_ENTRIES.c.to_wallet == mint, _ENTRIES.c.amount), else_=-_ENTRIES.c.amount)
        return int(
            await session.scalar(
                select(func.coalesce(func.sum(signed), 0)).where(
                    or_(_ENTRIES.c.to_wallet == mint, _ENTRIES.c.from_wallet == mint)
                )
            )
            or 0
        )
    stored = int(await session.scalar(select(Wallet.balance).where(Wallet.id == wallet)) or 0)
    pending = journal.queued(session)
    return stored + (pending.changes.get(wallet, 0) if pending is not None else 0)


async def transfer(
    session: AsyncSession,
    from_wallet: str,
    to_wallet: str,
    amount: int,
    reason: str,
    *,
    topic_id: str | None = None,
    ref: str | None = None,
) -> None:
    """Move `amount` tokens. Written with the unit of work's commit; a debit that would take a wallet below
    zero makes the commit fail with 402 insufficient_balance (nothing of the unit of work is kept)."""
    if not isinstance(amount, int) or isinstance(amount, bool) or amount <= 0:
        raise BadRequest("amount must be a positive whole number of tokens", code="invalid_amount")
    if from_wallet == to_wallet:
        raise BadRequest("cannot transfer to the same wallet", code="invalid_transfer")
    mint = await system_wallet(session)
    pending = journal.of(session)
    for wid, change in ((from_wallet, -amount), (to_wallet, amount)):
        if wid != mint:
            pending.changes[wid] = pending.changes.get(wid, 0) + change
    pending.entries.append(
        {
            "from_wallet": from_wallet,
            "to_wallet": to_wallet,
            "amount": amount,
            "reason": reason,
            "topic_id": topic_id,
            "ref": ref,
            "created_at": utcnow(),
        }
    )


async def write_entries(session: AsyncSession) -> None:
    """Write the unit of work's ledger entries now, for a read of them before the commit (they take no
    lock: the balances are still applied at commit)."""
    pending = journal.queued(session)
    if pending is not None and pending.entries:
        await session.run_sync(journal.write_entries)


def _dialect(session: AsyncSession | Session) -> str:
    bind = session.get_bind() if isinstance(session, Session) else session.bind
    return bind.dialect.name if bind is not None else "sqlite"


@dataclass(frozen=True)
class History:
    """A page of a wallet's ledger entries, newest first (each a row of the entry's columns), and how many it
    has in all."""

    wallet: str
    entries: list[Row[Any]]
    total: int
    limit: int
    offset: int


async def history(session: AsyncSession, wallet: str, *, limit: int, offset: int) -> History:
    # One index range per side (ix_ledger_entries_from / _to, both ending in id), each cut at the page's end,
    # then merged: an OR of the two would make the database collect and sort every entry of the wallet.
    entries = table_of(LedgerEntry)
    out = entries.c.from_wallet == wallet
    in_ = (entries.c.to_wallet == wallet) & (entries.c.from_wallet != wallet)
    total = 0
    for side in (out, in_):
        total += int(await session.scalar(select(func.count()).select_from(entries).where(side)) or 0)
    cut = offset + limit
    sides = [
        select(entries).where(side).order_by(entries.c.id.desc()).limit(cut).subquery() for side in (out, in_)
    ]
    merged = union_all(*(select(side) for side in sides)).subquery()
    rows = (
        await session.execute(select(merged).order_by(merged.c.id.desc()).limit(limit).offset(offset))
    ).all()
    return History(wallet, list(rows), total, limit, offset)


async def total_supply(session: AsyncSession) -> int:
    """The sum over every wallet, the mint's derived balance included: 0 while the ledger is sound."""
    others = int(
        await session.scalar(
            select(func.coalesce(func.sum(Wallet.balance), 0)).where(Wallet.kind != "system")
        )
        or 0
    )
    mint = await _mint(session)
    return others + (await balance(session, mint) if mint else 0)
