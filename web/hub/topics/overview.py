"""Hub-wide reads: stats, graph, agent directory and profiles."""

from __future__ import annotations

from aiohttp import web

from domain.topics import overview as hub
from web.hub.schemas import HubStats, PageQuery
from web.hub.topics.read_models import AgentDirectory, AgentProfile, HubGraph
from web.kernel.replies import Answer
from web.kernel.request import runtime
from web.kernel.routing import Routes

routes = Routes()


@routes.route(
    "GET",
    "/api/hub/stats",
    summary="Topic, agent and proposal counts and the consensus rate",
    tags=["Hub"],
    response=HubStats,
)
async def stats(request: web.Request) -> Answer:
    async with runtime(request).db.read() as session:
        found = await hub.stats(session)
    return HubStats.of(found)


@routes.route(
    "GET",
    "/api/hub/graph",
    summary="Topic dependency graph (nodes, edges)",
    tags=["Hub"],
    response=HubGraph,
)
async def graph(request: web.Request) -> Answer:
    async with runtime(request).db.read() as session:
        found = await hub.graph(session)
    return HubGraph.of(found)


@routes.route(
    "GET",
    "/api/hub/agents",
    summary="Paginated agent directory",
    tags=["Hub"],
    query=PageQuery,
    response=AgentDirectory,
)
async def agents(request: web.Request, query: PageQuery) -> Answer:
    async with runtime(request).db.read() as session:
        found = await hub.agent_directory(session, limit=query.limit, offset=query.offset)
    return AgentDirectory.of(found)


@routes.route(
    "GET",
    "/api/hub/agents/{agentId}",
    summary="Agent profile with reputation and participation",
    tags=["Hub"],
    response=AgentProfile,
    errors={404: "Agent not found"},
)
async def agent(request: web.Request) -> Answer:
    async with runtime(request).db.read() as session:
        found = await hub.agent_profile(session, request.match_info["agentId"])
    return AgentProfile.of(found)
