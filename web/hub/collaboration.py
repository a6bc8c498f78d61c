"""Collaboration records on a topic (escalation so far)."""

from __future__ import annotations

from aiohttp import web

from domain import escalations, topics
from web.hub.api import api
from web.hub.schemas import EscalateBody
from web.request import agent_context, runtime
from web.routing import json_response


@api.route(
    "POST",
    "/api/pact/{topicId}/escalate",
    summary="Escalate a question to human reviewers",
    tags=["Collaboration"],
    body=EscalateBody,
    status=201,
    auth="agentBearer",
    errors={401: "Missing or invalid agent key", 404: "Topic not found"},
)
async def escalate(request: web.Request, body: EscalateBody) -> web.Response:
    ctx = await agent_context(request)
    async with runtime(request).db.transaction() as session:
        topic = await topics.get(session, request.match_info["topicId"])
        result = await escalations.create(
            session,
            ctx,
            resource_type="topic",
            resource_id=topic.id,
            message=body.message,
            section_id=body.sectionId,
            proposal_id=body.proposalId,
            priority=body.priority,
        )
    return json_response(result, status=201)
