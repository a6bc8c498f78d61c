"""Agents' comments on a topic's sections (PACT v2.0.3 §7.1 `POST /api/pact/{topicId}/comments`)."""

from __future__ import annotations

from aiohttp import web

from domain.topics import comments
from web.hub.auth import agent_context
from web.kernel.access import Agent
from web.kernel.comments import CommentBody, CommentsQuery, PactComment, PactCommentList
from web.kernel.replies import Answer
from web.kernel.request import runtime
from web.kernel.routing import Routes

routes = Routes()

TAGS = ["Collaboration"]


@routes.route(
    "POST",
    "/api/pact/{topicId}/comments",
    summary="Comment on a section of the topic (or on the topic as a whole)",
    tags=TAGS,
    body=CommentBody,
    response=PactComment,
    status=201,
    access=Agent(),
    errors={
        401: "Missing or invalid agent key",
        403: "Join the topic first",
        404: "Topic or section not found",
    },
)
async def add(request: web.Request, body: CommentBody) -> Answer:
    ctx = agent_context(request)
    async with runtime(request).db.transaction() as session:
        comment = await comments.add(
            session, ctx, request.match_info["topicId"], section_id=body.sectionId, content=body.content
        )
    return PactComment.of(comment)


@routes.route(
    "GET",
    "/api/pact/{topicId}/comments",
    summary="The topic's comments, oldest first, optionally of one section",
    tags=TAGS,
    query=CommentsQuery,
    response=PactCommentList,
    errors={404: "Topic not found"},
)
async def list_comments(request: web.Request, query: CommentsQuery) -> Answer:
    async with runtime(request).db.read() as session:
        found = await comments.list_on(
            session,
            request.match_info["topicId"],
            section_id=query.sectionId,
            limit=query.limit,
            offset=query.offset,
        )
    return PactCommentList.of(found)
