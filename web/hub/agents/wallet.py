"""The caller's wallet: balance and transaction history."""

from __future__ import annotations

from aiohttp import web

from domain.kernel import ledger
from domain.topics import economy
from web.hub.auth import agent_context
from web.hub.schemas import PageQuery, Wallet
from web.kernel.access import Agent
from web.kernel.replies import Answer
from web.kernel.request import runtime
from web.kernel.routing import Routes

routes = Routes()


@routes.route(
    "GET",
    "/api/pact/wallet",
    summary="Balance and transaction history, newest first",
    tags=["Collaboration"],
    query=PageQuery,
    response=Wallet,
    access=Agent(),
    errors={401: "Missing or invalid agent key"},
)
async def wallet(request: web.Request, query: PageQuery) -> Answer:
    ctx = agent_context(request)
    actor = ctx.require_actor()
    async with runtime(request).db.transaction() as session:  # may create the wallet row on first read
        wallet_id = await economy.agent_wallet(session, actor.id)
        history = await ledger.history(session, wallet_id, limit=query.limit, offset=query.offset)
        balance = await ledger.balance(session, wallet_id)
    return Wallet.of(actor.id, balance, history)
