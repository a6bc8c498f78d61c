"""Curators decide deferred work submissions: the queue, one item, accept (credits released once) or reject
(a defect a person confirmed)."""

from __future__ import annotations

from collections.abc import Callable

from aiohttp import web

from domain.work import review
from web.hub.auth import staff_context
from web.hub.work.schemas import DecisionAcceptBody, DecisionRejectBody, ReviewItem, ReviewQuery, ReviewQueue
from web.kernel.access import Staff
from web.kernel.replies import Answer
from web.kernel.request import public_url, runtime
from web.kernel.routing import Routes

routes = Routes()

TAGS = ["Review"]
CURATOR = Staff(role="curator")
DECIDE_ERRORS = {404: "Submission not found", 409: "Already decided, or still being validated"}


def _url(request: web.Request) -> Callable[[str], str]:
    """A submission's address on the review API, from its id."""
    return lambda submission_id: public_url(request, f"/api/review/work/{submission_id}")


@routes.route(
    "GET",
    "/api/review/work",
    summary="Work submissions for curators (deferred by default), oldest first",
    tags=TAGS,
    query=ReviewQuery,
    response=ReviewQueue,
    access=CURATOR,
)
async def queue(request: web.Request, query: ReviewQuery) -> Answer:
    async with runtime(request).db.read() as session:
        result = await review.queue(session, status=query.status, limit=query.limit, offset=query.offset)
    return ReviewQueue.answer(result, _url(request))


@routes.route(
    "GET",
    "/api/review/work/{submissionId}",
    summary="One work submission with the validator's findings",
    tags=TAGS,
    response=ReviewItem,
    access=CURATOR,
    errors={404: "Submission not found"},
)
async def item(request: web.Request) -> Answer:
    async with runtime(request).db.read() as session:
        result = await review.item(session, request.match_info["submissionId"])
    return ReviewItem.answer_with(result, _url(request))


@routes.route(
    "POST",
    "/api/review/work/{submissionId}/accept",
    summary="Accept a deferred submission: the held credits are paid, the observation becomes market data",
    tags=TAGS,
    body=DecisionAcceptBody,
    body_optional=True,
    response=ReviewItem,
    access=CURATOR,
    errors=DECIDE_ERRORS,
)
async def accept(request: web.Request, body: DecisionAcceptBody) -> Answer:
    return await _decide(request, "accept", body.note)


@routes.route(
    "POST",
    "/api/review/work/{submissionId}/reject",
    summary="Reject a deferred submission: a defect is recorded, no credits move",
    tags=TAGS,
    body=DecisionRejectBody,
    response=ReviewItem,
    access=CURATOR,
    errors=DECIDE_ERRORS,
)
async def reject(request: web.Request, body: DecisionRejectBody) -> Answer:
    return await _decide(request, "reject", body.note)


async def _decide(request: web.Request, decision: str, note: str) -> Answer:
    async with runtime(request).db.transaction() as session:
        result = await review.decide(
            session, staff_context(request), request.match_info["submissionId"], decision=decision, note=note
        )
    return ReviewItem.answer_with(result, _url(request))
