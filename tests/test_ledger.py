"""The ledger, wallet and bounty: double entry, conservation, 402 on overspend, payout on consensus."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from domain.kernel import ledger
from domain.kernel.models import LedgerEntry, Wallet
from tests.consensus_helpers import balance, open_topic, propose, vote


async def _supply(runtime: Any) -> int:
    async with runtime.db.read() as session:
        return await ledger.total_supply(session)


async def test_every_balance_is_the_sum_of_its_entries(hub: Any, register: Any, runtime: Any):
    topic_id, (a, b, c) = await open_topic(hub, register)
    proposal = await propose(hub, topic_id, a)
    await vote(hub, topic_id, proposal["id"], b, "approve")
    await vote(hub, topic_id, proposal["id"], c, "object", reason="needs a source")
    await hub.post(f"/api/pact/{topic_id}/bounty", headers=b["headers"], json={"amount": 50})
    assert await _supply(runtime) == 0  # the system mint's negative balance equals all tokens issued
    async with runtime.db.read() as session:
        for wallet in (await session.scalars(select(Wallet))).all():
            if wallet.kind == "system":  # append-only: its balance is derived from its entries, never stored
                assert wallet.balance == 0
                assert await ledger.balance(session, wallet.id) < 0
                continue
            incoming = await session.scalar(
                select(func.coalesce(func.sum(LedgerEntry.amount), 0)).where(
                    LedgerEntry.to_wallet == wallet.id
                )
            )
            outgoing = await session.scalar(
                select(func.coalesce(func.sum(LedgerEntry.amount), 0)).where(
                    LedgerEntry.from_wallet == wallet.id
                )
            )
            assert wallet.balance == incoming - outgoing
            assert wallet.kind == "system" or wallet.balance >= 0


async def test_wallet_history_newest_first_and_paged(hub: Any, register: Any):
    topic_id, (a, b, _c) = await open_topic(hub, register)
    await propose(hub, topic_id, a)
    body = await (await hub.get("/api/pact/wallet", headers=a["headers"])).json()
    reasons = [t["reason"] for t in body["transactions"]]
    assert reasons[:3] == ["proposal.stake", "topic.create", "registration"]
    assert body["balance"] == 1000 + 5 - 5
    assert body["transactions"][0]["direction"] == "out"
    page = await (
        await hub.get("/api/pact/wallet", headers=a["headers"], params={"limit": "1", "offset": "1"})
    ).json()
    assert [t["reason"] for t in page["transactions"]] == ["topic.create"]
    assert page["total"] == 3
    assert (await hub.get("/api/pact/wallet")).status == 401


async def test_bounty_validation_and_insufficient_balance(hub: Any, register: Any):
    topic_id, (a, _b, _c) = await open_topic(hub, register)
    url = f"/api/pact/{topic_id}/bounty"
    for bad in (0, -5, 9, 10.5, 100_001, "ten", None, True):
        resp = await hub.post(url, headers=a["headers"], json={"amount": bad})
        assert resp.status == 400, (bad, await resp.text())
    resp = await hub.post(url, headers=a["headers"], json={"amount": 5000})
    assert resp.status == 402
    body = await resp.json()
    assert body["error"] == "insufficient_balance"
    assert body["balance"] == 1005
    resp = await hub.post(url, headers=a["headers"], json={"amount": 100})
    assert resp.status == 200
    pool = await (await hub.get(url)).json()
    assert pool["escrow"] == 100
    assert pool["contributors"] == [
        {
            "agentId": a["agentId"],
            "agentName": a["agentName"],
            "amount": 100,
            "firstFundedAt": pool["contributors"][0]["firstFundedAt"],
        }
    ]
    assert await balance(hub, a) == 905
    assert (await hub.get("/api/pact/00000000-0000-4000-8000-000000000000/bounty")).status == 404


async def test_bounty_is_paid_out_on_consensus_by_the_split(hub: Any, register: Any, runtime: Any):
    topic_id, (a, b, c) = await open_topic(hub, register)
    await hub.post(f"/api/pact/{topic_id}/bounty", headers=b["headers"], json={"amount": 100})
    proposal = await propose(hub, topic_id, a)
    await vote(hub, topic_id, proposal["id"], b, "approve")
    await vote(hub, topic_id, proposal["id"], c, "approve")
    before = {x["agentId"]: await balance(hub, x) for x in (a, b, c)}
    for agent in (a, b, c):  # aligned in this order: harmonic weights 1, 1/2, 1/3
        await hub.post(f"/api/pact/{topic_id}/done", headers=agent["headers"], json={"status": "aligned"})
    assert (await (await hub.get(f"/api/pact/{topic_id}")).json())["status"] == "consensus"
    after = {x["agentId"]: await balance(hub, x) for x in (a, b, c)}
    gained = {k: after[k] - before[k] - 2 for k in after}  # minus the +2 aligned reward
    # 40 to the merged author; 60 shared 32/16/10 with the 2 tokens of rounding dust to the first aligned
    assert gained == {a["agentId"]: 40 + 34, b["agentId"]: 16, c["agentId"]: 10}
    pool = await (await hub.get(f"/api/pact/{topic_id}/bounty")).json()
    assert pool["escrow"] == 0
    assert pool["paid"] == 100
    assert await _supply(runtime) == 0


async def test_odd_bounty_amounts_are_refused_cleanly(hub: Any, register: Any):
    topic_id, (a, _b, _c) = await open_topic(hub, register)
    url = f"/api/pact/{topic_id}/bounty"
    for raw in ('{"amount": "50"}', '{"amount": 1e400}', '{"amount": NaN}', '{"amount": [50]}', "{}", "50"):
        resp = await hub.post(url, headers={**a["headers"], "Content-Type": "application/json"}, data=raw)
        assert resp.status == 400, (raw, resp.status, await resp.text())
        body = await resp.json()
        assert "amount" in (body.get("field") or "") + body["detail"] or raw == "50", body
    assert await balance(hub, a) == 1005
    assert (await hub.post(url, json={"amount": 50})).status == 401


async def test_supply_is_conserved_by_every_operation(hub: Any, register: Any, runtime: Any):
    """Every operation that moves tokens keeps the sum over all wallets and every agent balance >= 0,
    including a payout whose dependency share lands in another topic's escrow."""

    async def check() -> None:
        assert await _supply(runtime) == 0
        async with runtime.db.read() as session:
            low = await session.scalar(select(func.min(Wallet.balance)).where(Wallet.kind != "system"))
        assert low is None or low >= 0

    t1, (a, b, c) = await open_topic(hub, register)
    await check()
    t2, _ = await open_topic(hub, register)
    await check()
    resp = await hub.post(
        f"/api/pact/{t1}/dependencies",
        headers=a["headers"],
        json={"dependsOn": t2, "relationship": "assumes", "justification": "Uses its definition"},
    )
    assert resp.status == 201, await resp.text()
    await hub.post(f"/api/pact/{t1}/bounty", headers=b["headers"], json={"amount": 100})
    await check()
    proposal = await propose(hub, t1, a)
    await check()
    await vote(hub, t1, proposal["id"], b, "approve")
    await check()
    await vote(hub, t1, proposal["id"], c, "approve")
    await check()
    before = {x["agentId"]: await balance(hub, x) for x in (a, b, c)}
    for agent in (a, b, c):
        await hub.post(f"/api/pact/{t1}/done", headers=agent["headers"], json={"status": "aligned"})
        await check()
    gained = {x["agentId"]: await balance(hub, x) - before[x["agentId"]] - 2 for x in (a, b, c)}
    # 40 to the author, 20 to the assumed topic's escrow, 40 shared 21/10/7 + 2 dust to the first aligned
    assert gained == {a["agentId"]: 40 + 23, b["agentId"]: 10, c["agentId"]: 7}
    assert (await (await hub.get(f"/api/pact/{t2}/bounty")).json())["escrow"] == 20
    await hub.post(f"/api/pact/{t1}/verify", headers=c["headers"], json={"status": "amended"})
    await check()
    await hub.post(
        f"/api/pact/{t2}/vote",
        headers=c["headers"],
        json={"vote": "need_info", "reason": "x", "dependencyTitle": "Some other question"},
    )
    await check()


async def test_wallet_paging_is_validated(hub: Any, register: Any):
    agent = await register()
    for params in ({"limit": "0"}, {"limit": "abc"}, {"offset": "-1"}, {"limit": "100000"}):
        resp = await hub.get("/api/pact/wallet", headers=agent["headers"], params=params)
        assert resp.status == 400, params
    body = await (await hub.get("/api/pact/wallet", headers=agent["headers"])).json()
    assert (body["balance"], body["total"]) == (1000, 1)
    assert body["transactions"][0]["reason"] == "registration"
    assert body["transactions"][0]["direction"] == "in"
