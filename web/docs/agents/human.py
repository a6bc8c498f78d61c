"""People on a document's PACT paths (PACT v2.0.3 §7.1 "PACT Live"), under /api/tap/{docId}/… and its alias
/api/pact/{docId}/…: a joined agent asks the document's people a question and reads the answer
(`ask-human`, `human-responses`), a person of the organisation answers it or resolves an escalation
(`respond`, `resolve`; reviewers also answer at the hub's review desk), and agents read their escalations
with the resolutions."""

from __future__ import annotations

from aiohttp import web

from domain.consensus.escalations import EscalationKind
from domain.documents import human as people
from domain.review import human
from web.docs.agents.paths import doc_id, document_route
from web.docs.auth import caller
from web.kernel.access import Service
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
route = document_route(routes)

PERSON = {403: "The key or person lacks the scope tap:write, or a service key (a person answers: sign in)"}


@route(
    "POST",
    "/ask-human",
    summary="Ask the document's people a question and wait for the answer until timeoutAt (PACT ask-human)",
    body=AskHumanBody,
    response=HumanQuery,
    status=201,
    errors={
        409: "sectionId names a section of a document still being converted",
        422: "The document's conversion failed: it has no sections",
    },
    access=Service("tap:write"),
)
async def ask_human(request: web.Request, body: AskHumanBody) -> Answer:
    who = caller(request)
    async with runtime(request).db.transaction() as session:
        found = await people.ask(
            session,
            who,
            doc_id(request),
            question=body.question,
            section_id=body.sectionId or None,
            context=body.context or None,
            timeout_seconds=body.timeoutSeconds,
        )
    return HumanQuery.of(found)


@route(
    "GET",
    "/human-responses",
    summary="Your questions to the document's people with their status and answers (the owner's key and "
    "the organisation's people: everyone's)",
    query=HumanQueriesQuery,
    response=HumanQueryList,
    access=Service("tap:read"),
)
async def human_responses(request: web.Request, query: HumanQueriesQuery) -> Answer:
    who = caller(request)
    async with runtime(request).db.read() as session:
        found = await people.listing(
            session,
            who,
            doc_id(request),
            kind=EscalationKind.QUESTION,
            state=query_state_of(query.status),
            limit=query.limit,
            offset=query.offset,
        )
    return HumanQueryList.of(found)


@route(
    "POST",
    "/human-responses/{queryId}/respond",
    summary="A person of the organisation answers an agent's question (once; not after it timed out)",
    body=RespondBody,
    response=HumanQuery,
    errors={
        **PERSON,
        409: "The question was already answered (already_answered) or timed out (timed_out)",
    },
    access=Service("tap:write"),
)
async def respond(request: web.Request, body: RespondBody) -> Answer:
    who = caller(request)
    async with runtime(request).db.transaction() as session:
        found = await human.respond_on_document(
            session, who, doc_id(request), request.match_info["queryId"], text=body.answer
        )
    return HumanQuery.of(found)


@route(
    "POST",
    "/resolve",
    summary="A person of the organisation resolves an escalation with a binding decision (PACT resolve); it "
    "may decide the proposal the escalation names",
    body=ResolveBody,
    response=Resolved,
    errors={
        **PERSON,
        409: "Already answered, a question (answer it with respond), a section or proposal that is not the "
        "escalation's, or its proposal is no longer pending or objected",
    },
    access=Service("tap:write"),
)
async def resolve(request: web.Request, body: ResolveBody) -> Answer:
    who = caller(request)
    async with runtime(request).db.transaction() as session:
        found = await human.resolve_on_document(session, who, doc_id(request), body.request())
    return Resolved.of(found)


@route(
    "GET",
    "/escalations",
    summary="Your escalations on the document with their status and resolution (the owner's key and the "
    "organisation's people: everyone's)",
    query=EscalationsQuery,
    response=AgentEscalationList,
    access=Service("tap:read"),
)
async def list_escalations(request: web.Request, query: EscalationsQuery) -> Answer:
    who = caller(request)
    async with runtime(request).db.read() as session:
        found = await people.listing(
            session,
            who,
            doc_id(request),
            kind=EscalationKind.ESCALATION,
            state=state_of(query.status),
            limit=query.limit,
            offset=query.offset,
        )
    return AgentEscalationList.of(found)
