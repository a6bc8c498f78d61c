"""GET /api/audit/me: the caller's own audit trail, keyset-paginated."""

from __future__ import annotations

from aiohttp import web

from domain.kernel import audit
from web.hub.auth import agent_context
from web.hub.schemas import AuditPage, AuditQuery
from web.kernel.access import Agent
from web.kernel.replies import Answer
from web.kernel.request import runtime
from web.kernel.routing import Routes

routes = Routes()


@routes.route(
    "GET",
    "/api/audit/me",
    summary="The caller's audit entries, newest first",
    tags=["Audit"],
    query=AuditQuery,
    response=AuditPage,
    access=Agent(),
    errors={401: "Missing or invalid x-source-agent-key / agent bearer key"},
)
async def audit_me(request: web.Request, query: AuditQuery) -> Answer:
    ctx = agent_context(request)
    async with runtime(request).db.read() as session:
        result = await audit.list_for_key(
            session, ctx.require_actor().key_hash, limit=query.limit, cursor=query.cursor
        )
    return result
