"""PACT's withdrawals on a document (§7.1): its author withdraws a pending proposal or a constraint, under
/api/tap/{docId}/… and /api/pact/{docId}/…"""

from __future__ import annotations

from aiohttp import web

from domain.documents import proposals, records
from web.docs.agents.paths import doc_id, document_route
from web.docs.auth import caller
from web.docs.schemas import ConstraintOut, Proposal
from web.kernel.access import Service
from web.kernel.replies import Answer
from web.kernel.request import runtime
from web.kernel.routing import Routes

routes = Routes()
route = document_route(routes)


@route(
    "DELETE",
    "/proposals/{id}",
    summary="Withdraw your own pending proposal (PACT proposal.withdraw)",
    response=Proposal,
    errors={
        403: "Not joined, or not the proposal's author (not_author)",
        404: "No such document or proposal",
        409: "The proposal is no longer pending (proposal_not_pending)",
    },
    access=Service("tap:write"),
)
async def withdraw_proposal(request: web.Request) -> Answer:
    who = caller(request)
    async with runtime(request).db.transaction() as session:
        withdrawn = await proposals.withdraw(session, who, doc_id(request), request.match_info["id"])
    return Proposal.of(withdrawn)


@route(
    "DELETE",
    "/constraints/{id}",
    summary="Withdraw your own constraint: kept as withdrawn, no longer listed as active",
    response=ConstraintOut,
    errors={
        403: "Not joined, or not the constraint's author (not_author)",
        404: "No such document or constraint",
        409: "Withdrawn already (constraint_withdrawn)",
    },
    access=Service("tap:write"),
)
async def withdraw_constraint(request: web.Request) -> Answer:
    who = caller(request)
    async with runtime(request).db.transaction() as session:
        constraint = await records.withdraw_constraint(
            session, who, doc_id(request), request.match_info["id"]
        )
    return ConstraintOut.of(constraint)
