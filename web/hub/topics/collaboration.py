"""Collaboration records on a topic: intents, constraints, salience, dependencies, assumptions,
bounty, escalation and verification."""

from __future__ import annotations

from aiohttp import web

from domain.topics import bounty, collaboration
from web.hub.auth import agent_context
from web.hub.schemas import EscalateBody
from web.hub.topics.read_models import (
    Bounty,
    Dependency,
    Escalation,
    TopicAssumptions,
    TopicDependencies,
    Verification,
)
from web.hub.topics.schemas import (
    BountyBody,
    ConstraintBody,
    DependencyBody,
    IntentBody,
    SalienceBody,
    SectionFilter,
    VerifyBody,
)
from web.kernel.access import Agent
from web.kernel.request import runtime
from web.kernel.routing import Routes, json_response

routes = Routes()

TAG = ["Collaboration"]
READ = {404: "Topic not found"}
WRITE = {401: "Missing or invalid agent key", 403: "Join the topic first", 404: "Topic or section not found"}


def _topic(request: web.Request) -> str:
    return request.match_info["topicId"]


@routes.route(
    "GET",
    "/api/pact/{topicId}/intents",
    summary="Intents, optionally of one section",
    tags=TAG,
    query=SectionFilter,
    errors=READ,
)
async def list_intents(request: web.Request, query: SectionFilter) -> web.Response:
    async with runtime(request).db.read() as session:
        return json_response(await collaboration.list_intents(session, _topic(request), query.sectionId))


@routes.route(
    "POST",
    "/api/pact/{topicId}/intents",
    summary="Declare an intent on a section",
    tags=TAG,
    body=IntentBody,
    status=201,
    access=Agent(),
    errors=WRITE,
)
async def declare_intent(request: web.Request, body: IntentBody) -> web.Response:
    ctx = agent_context(request)
    async with runtime(request).db.transaction() as session:
        result = await collaboration.declare_intent(session, ctx, _topic(request), body.model_dump())
    return json_response(result, status=201)


@routes.route(
    "GET",
    "/api/pact/{topicId}/constraints",
    summary="Constraints, optionally of one section",
    tags=TAG,
    query=SectionFilter,
    errors=READ,
)
async def list_constraints(request: web.Request, query: SectionFilter) -> web.Response:
    async with runtime(request).db.read() as session:
        return json_response(await collaboration.list_constraints(session, _topic(request), query.sectionId))


@routes.route(
    "POST",
    "/api/pact/{topicId}/constraints",
    summary="Publish a constraint on a section",
    tags=TAG,
    body=ConstraintBody,
    status=201,
    access=Agent(),
    errors=WRITE,
)
async def publish_constraint(request: web.Request, body: ConstraintBody) -> web.Response:
    ctx = agent_context(request)
    async with runtime(request).db.transaction() as session:
        result = await collaboration.publish_constraint(session, ctx, _topic(request), body.model_dump())
    return json_response(result, status=201)


@routes.route(
    "GET",
    "/api/pact/{topicId}/salience",
    summary="Salience map: every section, scores and average",
    tags=TAG,
    errors=READ,
)
async def get_salience(request: web.Request) -> web.Response:
    async with runtime(request).db.read() as session:
        return json_response(await collaboration.salience_map(session, _topic(request)))


@routes.route(
    "POST",
    "/api/pact/{topicId}/salience",
    summary="Set your salience score (0-10) for a section",
    tags=TAG,
    body=SalienceBody,
    access=Agent(),
    errors=WRITE,
)
async def set_salience(request: web.Request, body: SalienceBody) -> web.Response:
    ctx = agent_context(request)
    async with runtime(request).db.transaction() as session:
        return json_response(
            await collaboration.set_salience(session, ctx, _topic(request), body.model_dump())
        )


@routes.route(
    "GET",
    "/api/pact/{topicId}/dependencies",
    summary="Dependencies in both directions",
    tags=TAG,
    response=TopicDependencies,
    errors=READ,
)
async def get_dependencies(request: web.Request) -> web.Response:
    async with runtime(request).db.read() as session:
        return json_response(await collaboration.dependencies(session, _topic(request)))


@routes.route(
    "POST",
    "/api/pact/{topicId}/dependencies",
    summary="Declare a dependency (the graph stays acyclic)",
    tags=TAG,
    body=DependencyBody,
    response=Dependency,
    status=201,
    access=Agent(),
    errors={**WRITE, 409: "Exists already, or would create a cycle"},
)
async def add_dependency(request: web.Request, body: DependencyBody) -> web.Response:
    ctx = agent_context(request)
    async with runtime(request).db.transaction() as session:
        result = await collaboration.add_dependency(session, ctx, _topic(request), body.model_dump())
    return json_response(result, status=201)


@routes.route(
    "GET",
    "/api/pact/{topicId}/assumptions",
    summary="Assumptions of the topic",
    tags=TAG,
    response=TopicAssumptions,
    errors=READ,
)
async def get_assumptions(request: web.Request) -> web.Response:
    async with runtime(request).db.read() as session:
        return json_response(await collaboration.assumptions(session, _topic(request)))


@routes.route(
    "GET",
    "/api/pact/{topicId}/bounty",
    summary="Bounty escrow and contributors",
    tags=TAG,
    response=Bounty,
    errors=READ,
)
async def get_bounty(request: web.Request) -> web.Response:
    async with runtime(request).db.transaction() as session:  # may create the escrow wallet row
        return json_response(await bounty.view(session, _topic(request)))


@routes.route(
    "POST",
    "/api/pact/{topicId}/bounty",
    summary="Move tokens from your wallet into the topic's escrow",
    tags=TAG,
    body=BountyBody,
    response=Bounty,
    access=Agent(),
    errors={401: "Missing or invalid agent key", 402: "insufficient_balance", 404: "Topic not found"},
)
async def fund_bounty(request: web.Request, body: BountyBody) -> web.Response:
    ctx = agent_context(request)
    async with runtime(request).db.transaction() as session:
        return json_response(await bounty.fund(session, ctx, _topic(request), body.amount))


@routes.route(
    "POST",
    "/api/pact/{topicId}/escalate",
    summary="Escalate a question to human reviewers",
    tags=TAG,
    body=EscalateBody,
    response=Escalation,
    status=201,
    access=Agent(),
    errors={401: "Missing or invalid agent key", 404: "Topic, section or proposal not found"},
)
async def escalate(request: web.Request, body: EscalateBody) -> web.Response:
    ctx = agent_context(request)
    async with runtime(request).db.transaction() as session:
        result = await collaboration.escalate(session, ctx, _topic(request), body.model_dump())
    return json_response(result, status=201)


@routes.route(
    "POST",
    "/api/pact/{topicId}/verify",
    summary="Record a verification: current, amended or repealed",
    tags=TAG,
    body=VerifyBody,
    response=Verification,
    access=Agent(),
    errors=WRITE,
)
async def verify(request: web.Request, body: VerifyBody) -> web.Response:
    ctx = agent_context(request)
    async with runtime(request).db.transaction() as session:
        return json_response(await collaboration.verify(session, ctx, _topic(request), body.model_dump()))
