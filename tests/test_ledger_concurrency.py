"""The ledger under concurrent units of work: transfers in opposite orders never deadlock, supply and
balances stay exact, and no row is locked by every transfer (SQLite serialises writers by design;
PostgreSQL must not)."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest
from sqlalchemy import text

from domain.kernel import ledger
from domain.topics import economy
from tests.conftest import PG_ADMIN_URL
from tests.consensus_helpers import balance, open_topic, propose, vote


async def _post(hub: Any, seen: Counter, path: str, agent: dict, body: Any = None) -> int:
    resp = await hub.post(path, headers=agent["headers"], json=body)
    text_ = await resp.text()
    seen[resp.status] += 1
    assert resp.status < 500, text_
    return resp.status


async def test_transfers_in_opposite_orders_at_once_keep_every_balance_exact(
    hub: Any, register: Any, runtime: Any
) -> None:
    """Two topics whose author and reviewer swap roles: the merging approval on one pays the reviewer P then
    the author Q, on the other the reviewer Q then the author P, at the same moment, with each funding a
    bounty on the other's topic (each debits one and credits the other's escrow) in the same instant."""
    t1, (p, q, r) = await open_topic(hub, register)
    t2 = (await open_topic(hub, register))[0]
    for agent in (p, q, r):
        await hub.post(f"/api/pact/{t2}/join", headers=agent["headers"])
    start = {a["agentId"]: await balance(hub, a) for a in (p, q, r)}
    seen: Counter = Counter()
    rounds = 6
    for n in range(rounds):
        one = await propose(hub, t1, q, newContent=f"Q's round {n}.")
        two = await propose(hub, t2, p, newContent=f"P's round {n}.")
        await vote(hub, t1, one["id"], r, "approve")
        await vote(hub, t2, two["id"], r, "approve")
        await asyncio.gather(
            _post(hub, seen, f"/api/pact/{t1}/proposals/{one['id']}/approve", p),  # pays P, then Q
            _post(hub, seen, f"/api/pact/{t2}/proposals/{two['id']}/approve", q),  # pays Q, then P
            _post(hub, seen, f"/api/pact/{t2}/bounty", p, {"amount": 10}),
            _post(hub, seen, f"/api/pact/{t1}/bounty", q, {"amount": 10}),
        )
    assert seen == {200: 4 * rounds}
    # each round: stake -5 and merge +10 as author, review +1, bounty -10
    each = rounds * (-economy.PROPOSAL_STAKE + economy.MERGE_REWARD + economy.REVIEW_REWARD - 10)
    assert await balance(hub, p) == start[p["agentId"]] + each
    assert await balance(hub, q) == start[q["agentId"]] + each
    assert await balance(hub, r) == start[r["agentId"]] + 2 * rounds * economy.REVIEW_REWARD
    for topic_id in (t1, t2):
        assert (await (await hub.get(f"/api/pact/{topic_id}/bounty")).json())["escrow"] == 10 * rounds
    async with runtime.db.read() as session:
        assert await ledger.total_supply(session) == 0


@pytest.mark.skipif(not PG_ADMIN_URL, reason="PostgreSQL only: SQLite serialises every writer by design")
async def test_no_row_is_locked_by_every_transfer(hub: Any, register: Any, runtime: Any) -> None:
    """While another transaction holds the mint's wallet row (as every transfer once did) and an agent's,
    registrations, stakes, rewards and merges of other agents go through: nothing serialises them all."""
    t1, (a, b, c) = await open_topic(hub, register)
    outsider = await register()
    async with runtime.db.engine.connect() as holder:
        await holder.exec_driver_sql("BEGIN")
        await holder.execute(
            text("SELECT id FROM wallets WHERE kind = 'system' OR owner_id = :agent FOR NO KEY UPDATE"),
            {"agent": outsider["agentId"]},
        )

        async def work() -> None:
            late = await register()
            await hub.post(f"/api/pact/{t1}/join", headers=late["headers"])
            made = await propose(hub, t1, a, newContent="Merged while the mint is held.")
            await vote(hub, t1, made["id"], b, "approve")
            merged = await vote(hub, t1, made["id"], c, "approve")
            assert merged["status"] == "merged"

        try:
            # A generous bound: it only tells a wait (the old global lock: forever) from no wait.
            await asyncio.wait_for(work(), timeout=60)
        finally:
            await holder.exec_driver_sql("ROLLBACK")
    async with runtime.db.read() as session:
        assert await ledger.total_supply(session) == 0
