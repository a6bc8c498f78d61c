"""Objections to an intent on a document (PACT §7.1 `intent.object`, §10.2), under /api/tap/{docId}/… and
/api/pact/{docId}/…"""

from __future__ import annotations

from aiohttp import web

from domain.documents import records
from web.docs.agents.paths import doc_id, document_route
from web.docs.auth import caller
from web.docs.schemas import IntentOut
from web.kernel.access import Service
from web.kernel.collaboration import IntentObjectionBody
from web.kernel.replies import Answer
from web.kernel.request import runtime
from web.kernel.routing import Routes

routes = Routes()
route = document_route(routes)


@route(
    "POST",
    "/intents/{id}/object",
    summary="Object to another agent's intent while it is proposed: it becomes objected",
    body=IntentObjectionBody,
    response=IntentOut,
    errors={
        403: "Not joined, or an observer",
        404: "No such document or intent",
        409: "Your own intent (own_intent), objected to already by you (already_objected), or accepted or "
        "superseded (intent_closed)",
    },
    access=Service("tap:write"),
)
async def object_to_intent(request: web.Request, body: IntentObjectionBody) -> Answer:
    who = caller(request)
    async with runtime(request).db.transaction() as session:
        intent = await records.object_to_intent(
            session, who, doc_id(request), request.match_info["id"], reason=body.reason
        )
    return IntentOut.of(intent)
