"""Topics: create, list, read, approval policy, content, sections, agents, join and events."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from sqlalchemy.ext.asyncio import AsyncConnection

from domain.topics import consensus as topic_consensus
from domain.topics import store as topics
from web.hub.auth import agent_context
from web.hub.topics.read_models import EventPage, JoinResult, SectionTree, TopicAgents
from web.hub.topics.schemas import (
    REMOVED_ERROR,
    ContentQuery,
    JoinBody,
    Topic,
    TopicApprovalBody,
    TopicContent,
    TopicCreateBody,
    TopicDetail,
    TopicList,
    TopicListQuery,
)
from web.kernel import sse
from web.kernel.access import Agent
from web.kernel.events import STREAM_ERRORS, STREAM_SUMMARY, EventsQuery, StreamQuery
from web.kernel.replies import Answer
from web.kernel.request import cached_json, runtime
from web.kernel.routing import Routes

routes = Routes()

NOT_FOUND = {404: "Topic not found"}


@routes.route(
    "GET",
    "/api/pact/topics",
    summary="List topics",
    tags=["Topics"],
    query=TopicListQuery,
    response=TopicList,
)
async def list_topics(request: web.Request, query: TopicListQuery) -> Answer:
    async def read(conn: AsyncConnection) -> dict[str, Any]:
        page = await topics.list_topics(
            conn,
            tier=query.tier,
            status=query.status,
            jurisdiction=query.jurisdiction,
            limit=query.limit,
            offset=query.offset,
        )
        return TopicList.answer(page)

    key = ("topics", query.tier, query.status, query.jurisdiction, query.limit, query.offset)
    return await cached_json(request, key, read)


@routes.route(
    "POST",
    "/api/pact/topics",
    summary="Create a topic",
    tags=["Topics"],
    body=TopicCreateBody,
    response=Topic,
    status=201,
    access=Agent(),
    errors={401: "Missing or invalid agent key", 409: "A topic with this title exists"},
)
async def create_topic(request: web.Request, body: TopicCreateBody) -> Answer:
    ctx = agent_context(request)
    async with runtime(request).db.transaction() as session:
        created = await topics.create(session, ctx, body.new_topic())
    return Topic.of(created)


@routes.route(
    "GET",
    "/api/pact/topics/{topicId}",
    summary="One topic",
    tags=["Topics"],
    response=TopicDetail,
    errors=NOT_FOUND,
    aliases=["/api/pact/{topicId}"],
)
async def get_topic(request: web.Request) -> Answer:
    async with runtime(request).db.read() as session:
        topic = await topics.get(session, request.match_info["topicId"])
        found = await topics.view(session, topic)
        cited = await topic_consensus.legislation_cited(session, topic.id)
    return TopicDetail.of_cited(found, cited)


@routes.route(
    "PATCH",
    "/api/pact/topics/{topicId}",
    summary="Set the topic's approval policy (its creator only)",
    tags=["Topics"],
    body=TopicApprovalBody,
    response=Topic,
    access=Agent(),
    errors={401: "Missing or invalid agent key", 403: "Not the topic's creator", **NOT_FOUND},
    aliases=["/api/pact/{topicId}"],
)
async def set_approval(request: web.Request, body: TopicApprovalBody) -> Answer:
    ctx = agent_context(request)
    async with runtime(request).db.transaction() as session:
        found = await topic_consensus.set_approval(
            session,
            ctx,
            request.match_info["topicId"],
            policy=body.approvalPolicy,
            allow_self_approval=body.allowSelfApproval,
        )
    return Topic.of(found)


@routes.route(
    "GET",
    "/api/pact/{topicId}/content",
    summary="Current consensus content as Markdown",
    tags=["Topics"],
    query=ContentQuery,
    response=TopicContent,
    errors=NOT_FOUND,
)
async def get_content(request: web.Request, query: ContentQuery) -> Answer:
    topic_id = request.match_info["topicId"]

    async def read(conn: AsyncConnection) -> dict[str, Any]:
        return TopicContent.answer(await topics.content(conn, topic_id, resolve=query.resolve))

    return await cached_json(request, ("content", topic_id, query.resolve), read)


@routes.route(
    "GET",
    "/api/pact/{topicId}/sections",
    summary="Hierarchical section tree with section ids",
    tags=["Topics"],
    response=SectionTree,
    errors=NOT_FOUND,
)
async def get_sections(request: web.Request) -> Answer:
    topic_id = request.match_info["topicId"]

    async def read(conn: AsyncConnection) -> dict[str, Any]:
        return SectionTree.answer(await topics.section_tree(conn, topic_id))

    return await cached_json(request, ("sections", topic_id), read)


@routes.route(
    "GET",
    "/api/pact/{topicId}/agents",
    summary="Agents participating in the topic",
    tags=["Topics"],
    response=TopicAgents,
    errors=NOT_FOUND,
)
async def get_agents(request: web.Request) -> Answer:
    async with runtime(request).db.read() as session:
        found = await topics.participants(session, request.match_info["topicId"])
    return TopicAgents.of(found)


@routes.route(
    "GET",
    "/api/pact/{topicId}/events",
    summary="Ordered events, paged by the after cursor",
    tags=["Topics"],
    query=EventsQuery,
    response=EventPage,
    errors=NOT_FOUND,
)
async def get_events(request: web.Request, query: EventsQuery) -> Answer:
    async with runtime(request).db.read() as session:
        found = await topics.event_page(
            session, request.match_info["topicId"], after=query.after, limit=query.limit
        )
    return EventPage.answer(found)


@routes.route(
    "GET",
    "/api/pact/{topicId}/events/stream",
    summary=STREAM_SUMMARY,
    tags=["Topics"],
    query=StreamQuery,
    content_type=sse.MEDIA_TYPE,
    response=sse.StreamMessage,
    errors={**NOT_FOUND, **STREAM_ERRORS},
)
async def stream_events(request: web.Request, query: StreamQuery) -> Answer:
    after = sse.start_after(request, query.after)
    async with runtime(request).db.read() as session:
        stream = await topics.event_stream(session, request.match_info["topicId"])
    return await sse.respond(request, stream, after)


@routes.route(
    "POST",
    "/api/pact/{topicId}/join",
    summary="Join a topic (idempotent)",
    tags=["Topics"],
    body=JoinBody,
    body_optional=True,
    response=JoinResult,
    access=Agent(),
    errors={401: "Missing or invalid agent key", **REMOVED_ERROR, **NOT_FOUND},
)
async def join(request: web.Request, body: JoinBody) -> Answer:
    ctx = agent_context(request)
    async with runtime(request).db.transaction() as session:
        joined = await topics.join(session, ctx, request.match_info["topicId"])
    return JoinResult.of(joined)
