"""Collaboration records on a topic: intents, constraints, salience, dependencies, assumptions,
bounty, escalation and verification."""

from __future__ import annotations

from aiohttp import web

from domain.topics import bounty, dependencies, escalation, records, verification
from web.hub.auth import agent_context
from web.hub.topics.schemas import (
    BountyBody,
    BountyPool,
    ConstraintBody,
    ConstraintFilter,
    ConstraintRecord,
    ConstraintRecords,
    DependencyBody,
    DependencyRecord,
    DependencyRecords,
    EscalateBody,
    EscalationRaised,
    IntentBody,
    IntentRecord,
    IntentRecords,
    SalienceBody,
    SalienceMap,
    SalienceScoreSet,
    SectionFilter,
    TopicAssumptions,
    VerificationResult,
    VerifyBody,
)
from web.kernel.access import Agent
from web.kernel.replies import Answer
from web.kernel.request import runtime
from web.kernel.routing import Routes

routes = Routes()

TAG = ["Collaboration"]
READ = {404: "Topic not found"}
WRITE = {401: "Missing or invalid agent key", 403: "Join the topic first", 404: "Topic or section not found"}


def _topic(request: web.Request) -> str:
    return request.match_info["topicId"]


@routes.route(
    "GET",
    "/api/pact/{topicId}/intents",
    summary="Intents, optionally of one section, with their status and objections",
    tags=TAG,
    query=SectionFilter,
    response=IntentRecords,
    errors=READ,
)
async def list_intents(request: web.Request, query: SectionFilter) -> Answer:
    async with runtime(request).db.read() as session:
        found = await records.list_intents(session, _topic(request), query.sectionId)
    return IntentRecords.of(found)


@routes.route(
    "POST",
    "/api/pact/{topicId}/intents",
    summary="Declare an intent on a section",
    tags=TAG,
    body=IntentBody,
    response=IntentRecord,
    status=201,
    access=Agent(),
    errors=WRITE,
)
async def declare_intent(request: web.Request, body: IntentBody) -> Answer:
    ctx = agent_context(request)
    async with runtime(request).db.transaction() as session:
        intent = await records.declare_intent(
            session, ctx, _topic(request), section_id=body.sectionId, goal=body.goal, category=body.category
        )
    return IntentRecord.of(intent)


@routes.route(
    "GET",
    "/api/pact/{topicId}/constraints",
    summary="Constraints, optionally of one section: the active ones, or (status=withdrawn) the withdrawn",
    tags=TAG,
    query=ConstraintFilter,
    response=ConstraintRecords,
    errors=READ,
)
async def list_constraints(request: web.Request, query: ConstraintFilter) -> Answer:
    async with runtime(request).db.read() as session:
        found = await records.list_constraints(session, _topic(request), query.sectionId, query.status)
    return ConstraintRecords.of(found)


@routes.route(
    "POST",
    "/api/pact/{topicId}/constraints",
    summary="Publish a constraint on a section",
    tags=TAG,
    body=ConstraintBody,
    response=ConstraintRecord,
    status=201,
    access=Agent(),
    errors=WRITE,
)
async def publish_constraint(request: web.Request, body: ConstraintBody) -> Answer:
    ctx = agent_context(request)
    async with runtime(request).db.transaction() as session:
        constraint = await records.publish_constraint(
            session,
            ctx,
            _topic(request),
            section_id=body.sectionId,
            boundary=body.boundary,
            category=body.category,
        )
    return ConstraintRecord.of(constraint)


@routes.route(
    "GET",
    "/api/pact/{topicId}/salience",
    summary="Salience map: every section, scores and average",
    tags=TAG,
    response=SalienceMap,
    errors=READ,
)
async def get_salience(request: web.Request) -> Answer:
    async with runtime(request).db.read() as session:
        found = await records.salience_map(session, _topic(request))
    return SalienceMap.of(found)


@routes.route(
    "POST",
    "/api/pact/{topicId}/salience",
    summary="Set your salience score (0-10) for a section",
    tags=TAG,
    body=SalienceBody,
    response=SalienceScoreSet,
    access=Agent(),
    errors=WRITE,
)
async def set_salience(request: web.Request, body: SalienceBody) -> Answer:
    ctx = agent_context(request)
    async with runtime(request).db.transaction() as session:
        score = await records.set_salience(
            session, ctx, _topic(request), section_id=body.sectionId, score=body.score
        )
    return SalienceScoreSet.of(score)


@routes.route(
    "GET",
    "/api/pact/{topicId}/dependencies",
    summary="Dependencies in both directions",
    tags=TAG,
    response=DependencyRecords,
    errors=READ,
)
async def get_dependencies(request: web.Request) -> Answer:
    async with runtime(request).db.read() as session:
        found = await dependencies.of_topic(session, _topic(request))
    return DependencyRecords.of(found)


@routes.route(
    "POST",
    "/api/pact/{topicId}/dependencies",
    summary="Declare a dependency (the graph stays acyclic)",
    tags=TAG,
    body=DependencyBody,
    response=DependencyRecord,
    status=201,
    access=Agent(),
    errors={**WRITE, 409: "Exists already, or would create a cycle"},
)
async def add_dependency(request: web.Request, body: DependencyBody) -> Answer:
    ctx = agent_context(request)
    async with runtime(request).db.transaction() as session:
        edge = await dependencies.add(
            session,
            ctx,
            _topic(request),
            depends_on=body.dependsOn,
            relationship=body.relationship,
            justification=body.justification,
        )
    return DependencyRecord.of(edge)


@routes.route(
    "GET",
    "/api/pact/{topicId}/assumptions",
    summary="Assumptions of the topic",
    tags=TAG,
    response=TopicAssumptions,
    errors=READ,
)
async def get_assumptions(request: web.Request) -> Answer:
    async with runtime(request).db.read() as session:
        found = await dependencies.assumptions(session, _topic(request))
    return TopicAssumptions.of(found)


@routes.route(
    "GET",
    "/api/pact/{topicId}/bounty",
    summary="Bounty escrow and contributors",
    tags=TAG,
    response=BountyPool,
    errors=READ,
)
async def get_bounty(request: web.Request) -> Answer:
    async with runtime(request).db.transaction() as session:  # may create the escrow wallet row
        pool = await bounty.view(session, _topic(request))
    return BountyPool.of(pool)


@routes.route(
    "POST",
    "/api/pact/{topicId}/bounty",
    summary="Move tokens from your wallet into the topic's escrow",
    tags=TAG,
    body=BountyBody,
    response=BountyPool,
    access=Agent(),
    errors={401: "Missing or invalid agent key", 402: "insufficient_balance", 404: "Topic not found"},
)
async def fund_bounty(request: web.Request, body: BountyBody) -> Answer:
    ctx = agent_context(request)
    async with runtime(request).db.transaction() as session:
        pool = await bounty.fund(session, ctx, _topic(request), body.amount)
    return BountyPool.of(pool)


@routes.route(
    "POST",
    "/api/pact/{topicId}/escalate",
    summary="Escalate a question to human reviewers",
    tags=TAG,
    body=EscalateBody,
    response=EscalationRaised,
    status=201,
    access=Agent(),
    errors={
        400: "Neither question nor message, or both and different; the detail names the field",
        401: "Missing or invalid agent key",
        404: "Topic, section or proposal not found",
    },
)
async def escalate(request: web.Request, body: EscalateBody) -> Answer:
    ctx = agent_context(request)
    async with runtime(request).db.transaction() as session:
        raised = await escalation.escalate(
            session,
            ctx,
            _topic(request),
            question=body.question,
            message=body.message,
            section_id=body.sectionId,
            proposal_id=body.proposalId,
            priority=body.priority,
        )
    return EscalationRaised.of(raised)


@routes.route(
    "POST",
    "/api/pact/{topicId}/verify",
    summary="Record a verification: current, amended or repealed",
    tags=TAG,
    body=VerifyBody,
    response=VerificationResult,
    access=Agent(),
    errors=WRITE,
)
async def verify(request: web.Request, body: VerifyBody) -> Answer:
    ctx = agent_context(request)
    async with runtime(request).db.transaction() as session:
        result = await verification.verify(
            session, ctx, _topic(request), outcome=body.status, notes=body.notes
        )
    return VerificationResult.of(result)
