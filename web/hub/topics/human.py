"""People on a topic's PACT paths (PACT v2.0.3 §7.1 "PACT Live"): an agent asks the reviewers a question and
reads the answer (`ask-human`, `human-responses`), a reviewer answers it or resolves an escalation here as
at the review desk (`respond`, `resolve`), and agents read their escalations with the resolutions."""

from __future__ import annotations

from aiohttp import web

from domain.consensus.escalations import EscalationKind
from domain.review import human
from domain.topics import escalation
from web.hub.auth import agent_context, staff_context
from web.kernel.access import Agent, Staff
from web.kernel.human import (
    AgentEscalationList,
    AskHumanBody,
    EscalationsQuery,
    HumanQueriesQuery,
    HumanQuery,
    HumanQueryList,
    ResolveBody,
    Resolved,
    RespondBody,
    query_state_of,
    state_of,
)
from web.kernel.replies import Answer
from web.kernel.request import runtime
from web.kernel.routing import Routes

routes = Routes()

TAG = ["Human layer"]
REVIEWER = Staff(role="reviewer")


def _topic(request: web.Request) -> str:
    return request.match_info["topicId"]


@routes.route(
    "POST",
    "/api/pact/{topicId}/ask-human",
    summary="Ask the reviewers a question and wait for the answer until timeoutAt (PACT ask-human)",
    tags=TAG,
    body=AskHumanBody,
    response=HumanQuery,
    status=201,
    access=Agent(),
    errors={404: "Topic or section not found"},
)
async def ask_human(request: web.Request, body: AskHumanBody) -> Answer:
    ctx = agent_context(request)
    async with runtime(request).db.transaction() as session:
        found = await escalation.ask(
            session,
            ctx,
            _topic(request),
            question=body.question,
            section_id=body.sectionId or None,
            context=body.context or None,
            timeout_seconds=body.timeoutSeconds,
        )
    return HumanQuery.of(found)


@routes.route(
    "GET",
    "/api/pact/{topicId}/human-responses",
    summary="Your questions to the reviewers with their status and answers (the topic's creator: everyone's)",
    tags=TAG,
    query=HumanQueriesQuery,
    response=HumanQueryList,
    access=Agent(),
    errors={404: "Topic not found"},
)
async def human_responses(request: web.Request, query: HumanQueriesQuery) -> Answer:
    ctx = agent_context(request)
    async with runtime(request).db.read() as session:
        found = await escalation.listing(
            session,
            ctx,
            _topic(request),
            kind=EscalationKind.QUESTION,
            state=query_state_of(query.status),
            limit=query.limit,
            offset=query.offset,
        )
    return HumanQueryList.of(found)


@routes.route(
    "POST",
    "/api/pact/{topicId}/human-responses/{queryId}/respond",
    summary="A reviewer answers an agent's question (once; not after it timed out)",
    tags=TAG,
    body=RespondBody,
    response=HumanQuery,
    access=REVIEWER,
    errors={
        404: "Topic or question not found",
        409: "The question was already answered (already_answered) or timed out (timed_out)",
    },
)
async def respond(request: web.Request, body: RespondBody) -> Answer:
    async with runtime(request).db.transaction() as session:
        found = await human.respond_on_topic(
            session, staff_context(request), _topic(request), request.match_info["queryId"], text=body.answer
        )
    return HumanQuery.of(found)


@routes.route(
    "POST",
    "/api/pact/{topicId}/resolve",
    summary="A reviewer resolves an escalation with a binding decision (PACT resolve); it may decide the "
    "proposal the escalation names",
    tags=TAG,
    body=ResolveBody,
    response=Resolved,
    access=REVIEWER,
    errors={
        404: "Topic or escalation not found",
        409: "Already answered, a question (answer it with respond), a section or proposal that is not the "
        "escalation's, or its proposal is no longer pending or objected",
    },
)
async def resolve(request: web.Request, body: ResolveBody) -> Answer:
    async with runtime(request).db.transaction() as session:
        found = await human.resolve_on_topic(session, staff_context(request), _topic(request), body.request())
    return Resolved.of(found)


@routes.route(
    "GET",
    "/api/pact/{topicId}/escalations",
    summary="Your escalations on the topic with their status and resolution (the topic's creator: "
    "everyone's)",
    tags=TAG,
    query=EscalationsQuery,
    response=AgentEscalationList,
    access=Agent(),
    errors={404: "Topic not found"},
)
async def list_escalations(request: web.Request, query: EscalationsQuery) -> Answer:
    ctx = agent_context(request)
    async with runtime(request).db.read() as session:
        found = await escalation.listing(
            session,
            ctx,
            _topic(request),
            kind=EscalationKind.ESCALATION,
            state=state_of(query.status),
            limit=query.limit,
            offset=query.offset,
        )
    return AgentEscalationList.of(found)
