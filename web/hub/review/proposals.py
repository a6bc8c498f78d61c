"""Reviewers decide proposals (PACT §9.2): the queue (document proposals paused by an objection by default;
any status, topics too, on request) with the current and proposed text side by side, one proposal, and the one
decision on an open proposal (approve merges, reject refuses)."""

from __future__ import annotations

from collections.abc import Callable

from aiohttp import web

from domain.review import proposals
from web.hub.auth import staff_context
from web.hub.review.schemas import DecideBody, Decided, ProposalItem, ProposalQueue, ProposalsQuery
from web.kernel.access import Staff
from web.kernel.replies import Answer
from web.kernel.request import public_url, runtime
from web.kernel.routing import Routes

routes = Routes()

TAGS = ["Review"]
REVIEWER = Staff(role="reviewer")


def proposal_url(request: web.Request) -> Callable[[str], str]:
    """A proposal's address on the review API, from its id."""
    return lambda proposal_id: public_url(request, f"/api/review/proposals/{proposal_id}")


@routes.route(
    "GET",
    "/api/review/proposals",
    summary="Proposals for reviewers (objected document ones by default), oldest first, with their context",
    tags=TAGS,
    query=ProposalsQuery,
    response=ProposalQueue,
    access=REVIEWER,
)
async def queue(request: web.Request, query: ProposalsQuery) -> Answer:
    async with runtime(request).db.read() as session:
        found = await proposals.queue(
            session,
            status=query.status,
            resource=query.resource,
            resource_id=str(query.resourceId) if query.resourceId else None,
            limit=query.limit,
            offset=query.offset,
        )
    return ProposalQueue.of(found, proposal_url(request))


@routes.route(
    "GET",
    "/api/review/proposals/{proposalId}",
    summary="One proposal of a topic or a document with the section's current text and the objections",
    tags=TAGS,
    response=ProposalItem,
    access=REVIEWER,
    errors={404: "Proposal not found"},
)
async def item(request: web.Request) -> Answer:
    async with runtime(request).db.read() as session:
        found = await proposals.item(session, request.match_info["proposalId"])
    return ProposalItem.of(found, proposal_url(request))


@routes.route(
    "POST",
    "/api/review/proposals/{proposalId}/decide",
    summary="Decide an open (pending or objected) proposal once, overriding the agents' votes: approve "
    "merges it, reject refuses it",
    tags=TAGS,
    body=DecideBody,
    response=Decided,
    access=REVIEWER,
    errors={404: "Proposal not found", 409: "Already decided"},
)
async def decide(request: web.Request, body: DecideBody) -> Answer:
    async with runtime(request).db.transaction() as session:
        result = await proposals.decide(
            session,
            staff_context(request),
            request.match_info["proposalId"],
            decision=body.decision,
            note=body.note,
        )
    return Decided.of_decision(result, proposal_url(request))
