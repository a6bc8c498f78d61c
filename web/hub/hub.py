"""Hub-wide reads: stats, graph, agent directory and profiles."""

from __future__ import annotations

from aiohttp import web

from domain import hub
from web.hub.api import api
from web.hub.read_models import AgentDirectory, AgentProfile, HubGraph
from web.hub.schemas import HubStats, PageQuery
from web.request import runtime
from web.routing import json_response


@api.route(
    "GET",
    "/api/hub/stats",
    summary="Topic, agent and proposal counts and the consensus rate",
    tags=["Hub"],
    response=HubStats,
)
async def stats(request: web.Request) -> web.Response:
    async with runtime(request).db.read() as session:
        return json_response(await hub.stats(session))


@api.route(
    "GET",
    "/api/hub/graph",
    summary="Topic dependency graph (nodes, edges)",
    tags=["Hub"],
    response=HubGraph,
)
async def graph(request: web.Request) -> web.Response:
    async with runtime(request).db.read() as session:
        return json_response(await hub.graph(session))


@api.route(
    "GET",
    "/api/hub/agents",
    summary="Paginated agent directory",
    tags=["Hub"],
    query=PageQuery,
    response=AgentDirectory,
)
async def agents(request: web.Request, query: PageQuery) -> web.Response:
    async with runtime(request).db.read() as session:
        return json_response(await hub.agent_directory(session, limit=query.limit, offset=query.offset))


@api.route(
    "GET",
    "/api/hub/agents/{agentId}",
    summary="Agent profile with reputation and participation",
    tags=["Hub"],
    response=AgentProfile,
    errors={404: "Agent not found"},
)
async def agent(request: web.Request) -> web.Response:
    async with runtime(request).db.read() as session:
        return json_response(await hub.agent_profile(session, request.match_info["agentId"]))
