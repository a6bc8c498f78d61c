"""Topics: create, list, read, content, sections, agents, join and events."""

from __future__ import annotations

from aiohttp import web

from domain import topics
from web.hub.api import api
from web.hub.read_models import EventPage, JoinResult, SectionTree, TopicAgents
from web.hub.schemas import (
    ContentQuery,
    EventsQuery,
    JoinBody,
    Topic,
    TopicContent,
    TopicCreateBody,
    TopicList,
    TopicListQuery,
)
from web.request import agent_context, runtime
from web.routing import json_response

NOT_FOUND = {404: "Topic not found"}


@api.route(
    "GET",
    "/api/pact/topics",
    summary="List topics",
    tags=["Topics"],
    query=TopicListQuery,
    response=TopicList,
)
async def list_topics(request: web.Request, query: TopicListQuery) -> web.Response:
    async with runtime(request).db.read() as session:
        result = await topics.list_topics(
            session,
            tier=query.tier,
            status=query.status,
            jurisdiction=query.jurisdiction,
            limit=query.limit,
            offset=query.offset,
        )
    return json_response(result)


@api.route(
    "POST",
    "/api/pact/topics",
    summary="Create a topic",
    tags=["Topics"],
    body=TopicCreateBody,
    response=Topic,
    status=201,
    auth="agentBearer",
    errors={401: "Missing or invalid agent key", 409: "A topic with this title exists"},
)
async def create_topic(request: web.Request, body: TopicCreateBody) -> web.Response:
    ctx = await agent_context(request)
    async with runtime(request).db.transaction() as session:
        result = await topics.create(session, ctx, body.model_dump())
    return json_response(result, status=201)


@api.route(
    "GET",
    "/api/pact/topics/{topicId}",
    summary="One topic",
    tags=["Topics"],
    response=Topic,
    errors=NOT_FOUND,
    aliases=["/api/pact/{topicId}"],
)
async def get_topic(request: web.Request) -> web.Response:
    async with runtime(request).db.read() as session:
        topic = await topics.get(session, request.match_info["topicId"])
        result = await topics.to_dict(session, topic)
    return json_response(result)


@api.route(
    "GET",
    "/api/pact/{topicId}/content",
    summary="Current consensus content as Markdown",
    tags=["Topics"],
    query=ContentQuery,
    response=TopicContent,
    errors=NOT_FOUND,
)
async def get_content(request: web.Request, query: ContentQuery) -> web.Response:
    async with runtime(request).db.read() as session:
        result = await topics.content(session, request.match_info["topicId"], resolve=query.resolve)
    return json_response(result)


@api.route(
    "GET",
    "/api/pact/{topicId}/sections",
    summary="Hierarchical section tree with section ids",
    tags=["Topics"],
    response=SectionTree,
    errors=NOT_FOUND,
)
async def get_sections(request: web.Request) -> web.Response:
    async with runtime(request).db.read() as session:
        result = await topics.section_tree(session, request.match_info["topicId"])
    return json_response(result)


@api.route(
    "GET",
    "/api/pact/{topicId}/agents",
    summary="Agents participating in the topic",
    tags=["Topics"],
    response=TopicAgents,
    errors=NOT_FOUND,
)
async def get_agents(request: web.Request) -> web.Response:
    async with runtime(request).db.read() as session:
        result = await topics.participants(session, request.match_info["topicId"])
    return json_response(result)


@api.route(
    "GET",
    "/api/pact/{topicId}/events",
    summary="Ordered events, paged by the after cursor",
    tags=["Topics"],
    query=EventsQuery,
    response=EventPage,
    errors=NOT_FOUND,
)
async def get_events(request: web.Request, query: EventsQuery) -> web.Response:
    async with runtime(request).db.read() as session:
        result = await topics.event_page(
            session, request.match_info["topicId"], after=query.after, limit=query.limit
        )
    return json_response(result)


@api.route(
    "POST",
    "/api/pact/{topicId}/join",
    summary="Join a topic (idempotent)",
    tags=["Topics"],
    body=JoinBody,
    body_optional=True,
    response=JoinResult,
    auth="agentBearer",
    errors={401: "Missing or invalid agent key", **NOT_FOUND},
)
async def join(request: web.Request, body: JoinBody) -> web.Response:
    ctx = await agent_context(request)
    async with runtime(request).db.transaction() as session:
        result = await topics.join(session, ctx, request.match_info["topicId"])
    return json_response(result)
