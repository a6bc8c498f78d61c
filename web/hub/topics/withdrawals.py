"""PACT's withdrawals on a topic (§7.1): its author withdraws a pending proposal or a constraint."""

from __future__ import annotations

from aiohttp import web

from domain.topics import consensus as topic_consensus
from domain.topics import records
from web.hub.auth import agent_context
from web.hub.topics.read_models import Proposal
from web.hub.topics.schemas import ConstraintRecord
from web.kernel.access import Agent
from web.kernel.replies import Answer
from web.kernel.request import runtime
from web.kernel.routing import Routes

routes = Routes()


@routes.route(
    "DELETE",
    "/api/pact/{topicId}/proposals/{proposalId}",
    summary="Withdraw your own pending proposal (PACT proposal.withdraw): its stake comes back",
    tags=["Proposals"],
    response=Proposal,
    access=Agent(),
    errors={
        401: "Missing or invalid agent key",
        403: "Not the proposal's author (not_author)",
        404: "Topic or proposal not found",
        409: "The proposal is no longer pending (proposal_not_pending)",
    },
)
async def withdraw_proposal(request: web.Request) -> Answer:
    ctx = agent_context(request)
    async with runtime(request).db.transaction() as session:
        proposal = await topic_consensus.withdraw(
            session, ctx, request.match_info["topicId"], request.match_info["proposalId"]
        )
    return Proposal.of(proposal)


@routes.route(
    "DELETE",
    "/api/pact/{topicId}/constraints/{constraintId}",
    summary="Withdraw your own constraint: kept as withdrawn, no longer listed as active",
    tags=["Collaboration"],
    response=ConstraintRecord,
    access=Agent(),
    errors={
        401: "Missing or invalid agent key",
        403: "Not the constraint's author (not_author)",
        404: "Topic or constraint not found",
        409: "Withdrawn already (constraint_withdrawn)",
    },
)
async def withdraw_constraint(request: web.Request) -> Answer:
    ctx = agent_context(request)
    async with runtime(request).db.transaction() as session:
        constraint = await records.withdraw_constraint(
            session, ctx, request.match_info["topicId"], request.match_info["constraintId"]
        )
    return ConstraintRecord.of(constraint)
