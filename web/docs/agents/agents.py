"""Agents on a document: /api/tap/{docId}/… with the example paths /api/pact/{docId}/… as aliases."""

from __future__ import annotations

from aiohttp import web

from domain.documents import agents as tap
from domain.documents import locks, records
from web.docs.agents.paths import AUTH, NOT_FOUND, TAGS, doc_id, document_route
from web.docs.auth import caller
from web.docs.schemas import (
    ConstraintBody,
    ConstraintList,
    ConstraintOut,
    ConstraintQuery,
    DocumentAgents,
    DocumentContent,
    DocumentSections,
    EscalateBody,
    Escalation,
    IntentBody,
    IntentList,
    IntentOut,
    JoinBody,
    Joined,
    JoinRequest,
    LeaveBody,
    Left,
    LockBody,
    RemoveAgentBody,
    Removed,
    SalienceBody,
    SalienceMap,
    SalienceOut,
    SectionQuery,
    SectionsQuery,
)
from web.kernel import sse
from web.kernel.access import Service
from web.kernel.events import (
    STREAM_ERRORS,
    STREAM_SUMMARY,
    EventPage,
    EventsQuery,
    Poll,
    PollQuery,
    StreamQuery,
)
from web.kernel.locks import Lock, Unlocked
from web.kernel.replies import Answer
from web.kernel.request import runtime
from web.kernel.routing import Routes

# A section is looked up in the converted Markdown: none while converting (409), nor after a failure.
CONVERSION_FAILED = {422: "The document's conversion failed: it has no sections"}
routes = Routes()
route = document_route(routes)


@route(
    "POST",
    "/join",
    summary="Join the document as an agent",
    body=JoinRequest,
    response=Joined,
    status=201,
    errors={409: "Already joined"},
    access=Service("tap:write"),
)
async def join(request: web.Request, body: JoinBody) -> Answer:
    who = caller(request)
    async with runtime(request).db.transaction() as session:
        agent = await tap.join(session, who, doc_id(request), body.request())
    return Joined.of(agent)


@route(
    "DELETE",
    "/leave",
    summary="Leave the document (releases the agent's locks); the body is optional",
    body=LeaveBody,
    body_optional=True,
    response=Left,
    access=Service("tap:write"),
)
async def leave(request: web.Request, body: LeaveBody) -> Answer:
    who = caller(request)
    async with runtime(request).db.transaction() as session:
        departed = await tap.leave(session, who, doc_id(request), body.agentId)
    return Left.of(departed)


@route(
    "DELETE",
    "/agents/{agentId}",
    summary="Remove an agent from the document (the organisation: PACT's human override, a forced leave): "
    "its locks are released and a key an invite minted for it is revoked; the body is optional",
    body=RemoveAgentBody,
    body_optional=True,
    response=Removed,
    errors={404: "No active agent with that id on the document (agent.not_found)"},
    access=Service("documents:write"),
)
async def remove(request: web.Request, body: RemoveAgentBody) -> Answer:
    who = caller(request)
    async with runtime(request).db.transaction() as session:
        departed = await tap.remove(
            session, who, doc_id(request), request.match_info["agentId"], reason=body.reason
        )
    return Removed.of(departed)


@routes.route(
    "GET",
    "/api/tap/{docId}/agents",
    summary="Active agents on the document (/api/pact/{docId}/agents answers them as a bare array)",
    tags=TAGS,
    response=DocumentAgents,
    access=Service("tap:read"),
    errors={**AUTH, **NOT_FOUND},
)
async def agents(request: web.Request) -> Answer:
    who = caller(request)
    async with runtime(request).db.read() as session:
        found = await tap.agents(session, who, doc_id(request))
    return DocumentAgents.of(found)


@route(
    "GET",
    "/content",
    summary="The document as Markdown",
    response=DocumentContent,
    errors={409: "Still converting", 422: "Failed"},
    access=Service("tap:read"),
)
async def content(request: web.Request) -> Answer:
    who = caller(request)
    async with runtime(request).db.read() as session:
        found = await tap.content(session, who, doc_id(request))
    return DocumentContent.answer(found)


@route(
    "GET",
    "/sections",
    summary="The section tree (paged for a document of more than 1000 sections: limit, cursor)",
    query=SectionsQuery,
    response=DocumentSections,
    errors={409: "Still converting, or the cursor's section is gone (the document changed)", 422: "Failed"},
    access=Service("tap:read"),
)
async def section_tree(request: web.Request, query: SectionsQuery) -> Answer:
    who = caller(request)
    async with runtime(request).db.read() as session:
        found = await tap.section_tree(
            session, who, doc_id(request), limit=query.limit or tap.SECTIONS_PAGE, cursor=query.cursor
        )
    return DocumentSections.answer(found)


@route(
    "POST",
    "/intents",
    summary="Declare an intent on a section",
    body=IntentBody,
    response=IntentOut,
    status=201,
    access=Service("tap:write"),
)
async def declare_intent(request: web.Request, body: IntentBody) -> Answer:
    who = caller(request)
    async with runtime(request).db.transaction() as session:
        intent = await records.declare_intent(
            session, who, doc_id(request), section_id=body.sectionId, goal=body.goal, category=body.category
        )
    return IntentOut.of(intent)


@route(
    "GET",
    "/intents",
    summary="Intents, optionally of one section, with their status and objections",
    query=SectionQuery,
    response=IntentList,
    access=Service("tap:read"),
)
async def list_intents(request: web.Request, query: SectionQuery) -> Answer:
    who = caller(request)
    async with runtime(request).db.read() as session:
        found = await records.list_intents(session, who, doc_id(request), query.sectionId)
    return IntentList.of(found)


@route(
    "POST",
    "/constraints",
    summary="Publish a constraint on a section",
    body=ConstraintBody,
    response=ConstraintOut,
    status=201,
    access=Service("tap:write"),
)
async def publish_constraint(request: web.Request, body: ConstraintBody) -> Answer:
    who = caller(request)
    async with runtime(request).db.transaction() as session:
        constraint = await records.publish_constraint(
            session, who, doc_id(request), section_id=body.sectionId, boundary=body.boundary, type_=body.type
        )
    return ConstraintOut.of(constraint)


@route(
    "GET",
    "/constraints",
    summary="Constraints, optionally of one section: the active ones, or (status=withdrawn) the withdrawn",
    query=ConstraintQuery,
    response=ConstraintList,
    access=Service("tap:read"),
)
async def list_constraints(request: web.Request, query: ConstraintQuery) -> Answer:
    who = caller(request)
    async with runtime(request).db.read() as session:
        found = await records.list_constraints(session, who, doc_id(request), query.sectionId, query.status)
    return ConstraintList.of(found)


@route(
    "POST",
    "/salience",
    summary="Score a section's salience (0-10) for this agent",
    body=SalienceBody,
    response=SalienceOut,
    access=Service("tap:write"),
)
async def set_salience(request: web.Request, body: SalienceBody) -> Answer:
    who = caller(request)
    async with runtime(request).db.transaction() as session:
        score = await records.set_salience(
            session, who, doc_id(request), section_id=body.sectionId, score=body.score
        )
    return SalienceOut.of(score)


@route(
    "GET",
    "/salience",
    summary="Salience per section, aggregated across agents",
    response=SalienceMap,
    access=Service("tap:read"),
)
async def salience(request: web.Request) -> Answer:
    who = caller(request)
    async with runtime(request).db.read() as session:
        found = await records.salience_map(session, who, doc_id(request))
    return SalienceMap.of(found)


@route(
    "POST",
    "/sections/{sectionId}/lock",
    summary="Lock a section (ttlSeconds, default 300)",
    body=LockBody,
    body_optional=True,
    response=Lock,
    errors={409: "Locked by another agent, or the document is still being converted", **CONVERSION_FAILED},
    access=Service("tap:write"),
)
async def lock(request: web.Request, body: LockBody) -> Answer:
    who = caller(request)
    async with runtime(request).db.transaction() as session:
        lock = await locks.lock_section(
            session, who, doc_id(request), request.match_info["sectionId"], body.ttlSeconds
        )
    return Lock.of(lock)


@route(
    "DELETE",
    "/sections/{sectionId}/lock",
    summary="Release a section lock (holder only)",
    response=Unlocked,
    access=Service("tap:write"),
)
async def unlock(request: web.Request) -> Answer:
    who = caller(request)
    async with runtime(request).db.transaction() as session:
        released = await locks.unlock_section(session, who, doc_id(request), request.match_info["sectionId"])
    return Unlocked.of(released)


@route(
    "POST",
    "/escalate",
    summary="Escalate to a human reviewer",
    body=EscalateBody,
    response=Escalation,
    status=201,
    errors={409: "sectionId names a section of a document still being converted", **CONVERSION_FAILED},
    access=Service("tap:write"),
)
async def escalate(request: web.Request, body: EscalateBody) -> Answer:
    who = caller(request)
    async with runtime(request).db.transaction() as session:
        raised = await tap.escalate(
            session,
            who,
            doc_id(request),
            question=body.question,
            message=body.message,
            section_id=body.sectionId,
            proposal_id=body.proposalId,
            priority=body.priority,
        )
    return Escalation.answer(raised)


@route(
    "GET",
    "/events",
    summary="The document's events in order, paged by after",
    query=EventsQuery,
    response=EventPage,
    access=Service("tap:read"),
)
async def event_page(request: web.Request, query: EventsQuery) -> Answer:
    who = caller(request)
    async with runtime(request).db.read() as session:
        result = await tap.event_page(session, who, doc_id(request), after=query.after, limit=query.limit)
    return EventPage.fields(result)


@route(
    "GET",
    "/events/stream",
    summary=STREAM_SUMMARY,
    query=StreamQuery,
    content_type=sse.MEDIA_TYPE,
    response=sse.StreamMessage,
    errors=STREAM_ERRORS,
    access=Service("tap:read"),
)
async def stream_events(request: web.Request, query: StreamQuery) -> Answer:
    who = caller(request)
    after = sse.start_after(request, query.after)
    async with runtime(request).db.read() as session:
        stream = await tap.event_stream(session, who, doc_id(request))
    return await sse.respond(request, stream, after)


@route(
    "GET",
    "/poll",
    summary="Changes since a cursor: {since, changes, cursor}",
    query=PollQuery,
    response=Poll,
    access=Service("tap:read"),
)
async def poll(request: web.Request, query: PollQuery) -> Answer:
    who = caller(request)
    async with runtime(request).db.read() as session:
        page = await tap.poll(
            session, who, doc_id(request), since=query.since, section_id=query.sectionId, limit=query.limit
        )
    return Poll.of(page)
