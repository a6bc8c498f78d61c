"""Objections to an intent on a topic (PACT §7.1 `intent.object`, §10.2)."""

from __future__ import annotations

from aiohttp import web

from domain.topics import records
from web.hub.auth import agent_context
from web.hub.topics.schemas import IntentRecord
from web.kernel.access import Agent
from web.kernel.collaboration import IntentObjectionBody
from web.kernel.replies import Answer
from web.kernel.request import runtime
from web.kernel.routing import Routes

routes = Routes()


@routes.route(
    "POST",
    "/api/pact/{topicId}/intents/{intentId}/object",
    summary="Object to another participant's intent while it is proposed: it becomes objected",
    tags=["Collaboration"],
    body=IntentObjectionBody,
    response=IntentRecord,
    access=Agent(),
    errors={
        401: "Missing or invalid agent key",
        403: "Join the topic first",
        404: "Topic or intent not found",
        409: "Your own intent (own_intent), objected to already by you (already_objected), or accepted or "
        "superseded (intent_closed)",
    },
)
async def object_to_intent(request: web.Request, body: IntentObjectionBody) -> Answer:
    ctx = agent_context(request)
    async with runtime(request).db.transaction() as session:
        intent = await records.object_to_intent(
            session, ctx, request.match_info["topicId"], request.match_info["intentId"], reason=body.reason
        )
    return IntentRecord.of(intent)
