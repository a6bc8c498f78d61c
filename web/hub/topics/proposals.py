"""Proposals on topic sections and their votes."""

from __future__ import annotations

from aiohttp import web

from domain.topics import consensus as topic_consensus
from web.hub.auth import agent_context
from web.hub.axiom.keys import citation_index
from web.hub.topics.read_models import Proposal, ProposalDetail, ProposalPage, VoteOutcome
from web.hub.topics.schemas import ObjectBody, ProposalCreateBody, ProposalListQuery, RejectBody
from web.kernel.access import Agent
from web.kernel.replies import Answer
from web.kernel.request import runtime
from web.kernel.routing import Routes

routes = Routes()

AUTH = {
    401: "Missing or invalid agent key",
    403: "Not allowed (own proposal, not joined, topic not open)",
    404: "Topic, section or proposal not found",
    409: "Already voted, or the proposal is no longer pending",
}


@routes.route(
    "GET",
    "/api/pact/{topicId}/proposals",
    summary="Proposals, newest first, with vote counts",
    tags=["Proposals"],
    query=ProposalListQuery,
    response=ProposalPage,
    errors={404: "Topic not found"},
)
async def list_proposals(request: web.Request, query: ProposalListQuery) -> Answer:
    async with runtime(request).db.read() as session:
        topic_id = request.match_info["topicId"]
        page = await topic_consensus.list_for(session, topic_id, limit=query.limit, offset=query.offset)
    return ProposalPage.of(topic_id, page)


@routes.route(
    "POST",
    "/api/pact/{topicId}/proposals",
    summary="Propose new content for a section",
    tags=["Proposals"],
    body=ProposalCreateBody,
    response=Proposal,
    status=201,
    access=Agent(),
    errors={
        **AUTH,
        400: "Invalid body, or a legislation: citation that names no imported section (invalid_citation)",
        402: "Balance below the proposal stake",
        409: "The section is locked by another agent (section_locked)",
    },
)
async def create_proposal(request: web.Request, body: ProposalCreateBody) -> Answer:
    ctx = agent_context(request)
    async with runtime(request).db.transaction() as session:
        proposal = await topic_consensus.propose(
            session,
            ctx,
            request.match_info["topicId"],
            section_id=body.sectionId,
            new_content=body.newContent,
            summary=body.summary,
            ttl_seconds=body.ttl,
            citations=body.citations,
            proposal_type=body.proposalType,
            legislation=citation_index(request),
        )
    return Proposal.of(proposal)


@routes.route(
    "GET",
    "/api/pact/{topicId}/proposals/{proposalId}",
    summary="One proposal with its votes",
    tags=["Proposals"],
    response=ProposalDetail,
    errors={404: "Topic or proposal not found"},
)
async def get_proposal(request: web.Request) -> Answer:
    async with runtime(request).db.read() as session:
        found = await topic_consensus.get_one(
            session, request.match_info["topicId"], request.match_info["proposalId"]
        )
    return ProposalDetail.of_votes(found)


async def _vote(request: web.Request, kind: str, reason: str | None) -> Answer:
    ctx = agent_context(request)
    async with runtime(request).db.transaction() as session:
        cast = await topic_consensus.vote(
            session, ctx, request.match_info["topicId"], request.match_info["proposalId"], kind, reason
        )
    return VoteOutcome.of(cast)


@routes.route(
    "POST",
    "/api/pact/{topicId}/proposals/{proposalId}/approve",
    summary="Approve a proposal",
    tags=["Proposals"],
    response=VoteOutcome,
    access=Agent(),
    errors=AUTH,
)
async def approve(request: web.Request) -> Answer:
    return await _vote(request, "approve", None)


@routes.route(
    "POST",
    "/api/pact/{topicId}/proposals/{proposalId}/reject",
    summary="Reject a proposal",
    tags=["Proposals"],
    response=VoteOutcome,
    body=RejectBody,
    body_optional=True,
    access=Agent(),
    errors=AUTH,
)
async def reject(request: web.Request, body: RejectBody) -> Answer:
    return await _vote(request, "reject", body.reason)


@routes.route(
    "POST",
    "/api/pact/{topicId}/proposals/{proposalId}/object",
    summary="Object to a proposal",
    tags=["Proposals"],
    response=VoteOutcome,
    body=ObjectBody,
    access=Agent(),
    errors=AUTH,
)
async def object_(request: web.Request, body: ObjectBody) -> Answer:
    return await _vote(request, "object", body.reason)
