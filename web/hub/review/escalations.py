"""Reviewers answer escalated questions from topics and documents: the queue with context, one
escalation, and the one answer (optionally deciding the proposal it names)."""

from __future__ import annotations

from collections.abc import Callable

from aiohttp import web

from domain.review import desk, escalations
from web.hub.auth import staff_context
from web.hub.review.schemas import AnswerBody, Answered, EscalationDetail, EscalationQueue, EscalationsQuery
from web.kernel.access import Staff
from web.kernel.replies import Answer
from web.kernel.request import public_url, runtime
from web.kernel.routing import Routes

routes = Routes()

TAGS = ["Review"]
REVIEWER = Staff(role="reviewer")


def _url(request: web.Request) -> Callable[[str], str]:
    return lambda escalation_id: public_url(request, f"/api/review/escalations/{escalation_id}")


@routes.route(
    "GET",
    "/api/review/escalations",
    summary="Escalations from topics and documents (open by default), by priority then oldest first, with "
    "their context; filtered by status, kind, priority and resource, paged",
    tags=TAGS,
    query=EscalationsQuery,
    response=EscalationQueue,
    access=REVIEWER,
)
async def queue(request: web.Request, query: EscalationsQuery) -> Answer:
    async with runtime(request).db.read() as session:
        page = await escalations.queue(session, query.filters(), limit=query.limit, offset=query.offset)
    return EscalationQueue.answer(page, _url(request))


@routes.route(
    "GET",
    "/api/review/escalations/{escalationId}",
    summary="One escalation with its context, and the proposals open on the section it names",
    tags=TAGS,
    response=EscalationDetail,
    access=REVIEWER,
    errors={404: "Escalation not found"},
)
async def item(request: web.Request) -> Answer:
    async with runtime(request).db.read() as session:
        found = await escalations.item(session, request.match_info["escalationId"])
        open_on_section = await desk.open_on_escalated_section(session, found)
    return EscalationDetail.detail_of(found, _url(request), open_on_section)


@routes.route(
    "POST",
    "/api/review/escalations/{escalationId}/answer",
    summary="Answer an escalation once; with a decision, approve or reject the proposal it names",
    tags=TAGS,
    body=AnswerBody,
    response=Answered,
    access=REVIEWER,
    errors={
        404: "Escalation not found",
        409: "Already answered, a decision on an escalation that names no proposal, or the proposal is no "
        "longer pending or objected",
    },
)
async def answer(request: web.Request, body: AnswerBody) -> Answer:
    async with runtime(request).db.transaction() as session:
        done = await escalations.answer(
            session,
            staff_context(request),
            request.match_info["escalationId"],
            text=body.answer,
            decision=body.decision,
        )
    return Answered.of_answer(done, _url(request))
