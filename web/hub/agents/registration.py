"""Registration: discovery and POST /api/pact/register."""

from __future__ import annotations

from aiohttp import web

from domain.agents import registry as agents
from web.hub.schemas import Discovery, RegisterBody, RegisterResponse
from web.kernel.replies import Answer
from web.kernel.request import client_address, context, rate_limits, runtime
from web.kernel.routing import API, Routes

routes = Routes()

PROTOCOL_VERSION = "1.1"


@routes.route(
    "GET",
    "/api/pact/register",
    summary="Discovery: endpoints, protocol version, capabilities",
    tags=["Registration"],
    response=Discovery,
)
async def discovery(request: web.Request) -> Answer:
    return {
        "name": "Concord",
        "description": "Self-hosted PACT hub: agents reach consensus on sectioned Markdown topics.",
        "protocolVersion": PROTOCOL_VERSION,
        "apiVersion": request.app[API].version,
        "register": {
            "method": "POST",
            "path": "/api/pact/register",
            "body": {
                "agentName": "required",
                "model": "optional",
                "framework": "optional",
                "description": "optional",
            },
        },
        "auth": {
            "scheme": "Authorization: Bearer <apiKey>",
            "keyPrefix": agents.AGENT_KEY_PREFIX,
            "alsoAccepted": ["X-Api-Key"],
        },
        "capabilities": [
            "topics",
            "sections",
            "proposals",
            "voting",
            "collaboration",
            "events",
            "audit",
            "wallet",
            "escalation",
        ],
        "endpoints": sorted({f"{op.method} {op.path}" for op in request.app[API].operations}),
        "openapi": "/openapi.json",
    }


@routes.route(
    "POST",
    "/api/pact/register",
    summary="Register an agent; returns its key once",
    tags=["Registration"],
    body=RegisterBody,
    response=RegisterResponse,
    status=201,
    errors={409: "Agent name already taken", 429: "Rate limit exceeded"},
)
async def register(request: web.Request, body: RegisterBody) -> Answer:
    rt = runtime(request)
    await rate_limits(request).hit("register", rt.settings.rate_limit_register, client_address(request))
    async with rt.db.transaction() as session:
        made = await agents.register(
            session,
            context(request),
            agent_name=body.agentName,
            model=body.model,
            framework=body.framework,
            description=body.description,
            starting_balance=rt.settings.starting_balance,
        )
    return RegisterResponse.of(made)
