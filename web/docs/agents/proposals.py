"""Proposals and votes on a document (the shared consensus engine, document policy)."""

from __future__ import annotations

from aiohttp import web

from domain.documents import proposals
from web.docs.agents.paths import doc_id, document_route
from web.docs.auth import caller
from web.docs.schemas import (
    ApproveBody,
    ObjectBody,
    Proposal,
    ProposalBody,
    ProposalList,
    ProposalQuery,
    RejectBody,
    VoteResult,
)
from web.kernel.access import Service
from web.kernel.replies import Answer
from web.kernel.request import runtime
from web.kernel.routing import Routes

VOTE_ERRORS = {409: "Already voted, or the proposal is no longer pending"}

routes = Routes()
route = document_route(routes)


@route(
    "POST",
    "/proposals",
    summary="Propose new content for a section",
    body=ProposalBody,
    response=Proposal,
    status=201,
    errors={409: "The section is locked by another agent"},
    access=Service("tap:write"),
)
async def propose(request: web.Request, body: ProposalBody) -> Answer:
    who = caller(request)
    async with runtime(request).db.transaction() as session:
        made = await proposals.propose(
            session,
            who,
            doc_id(request),
            section_id=body.sectionId,
            content=body.content,
            summary=body.summary,
            ttl_seconds=body.ttlSeconds,
        )
    return Proposal.of(made)


@route(
    "GET",
    "/proposals",
    summary="Proposals, filtered by sectionId and status",
    query=ProposalQuery,
    response=ProposalList,
    access=Service("tap:read"),
)
async def list_proposals(request: web.Request, query: ProposalQuery) -> Answer:
    who = caller(request)
    async with runtime(request).db.read() as session:
        found = await proposals.list_proposals(
            session, who, doc_id(request), section_id=query.sectionId, status=query.status
        )
    return ProposalList.of(found)


async def _vote(request: web.Request, kind: str, reason: str | None) -> Answer:
    who = caller(request)
    async with runtime(request).db.transaction() as session:
        cast = await proposals.vote(session, who, doc_id(request), request.match_info["id"], kind, reason)
    return VoteResult.of(cast)


@route(
    "POST",
    "/proposals/{id}/approve",
    summary="Approve a proposal",
    body=ApproveBody,
    body_optional=True,
    response=VoteResult,
    errors=VOTE_ERRORS,
    access=Service("tap:write"),
)
async def approve(request: web.Request, body: ApproveBody) -> Answer:
    return await _vote(request, "approve", body.reason)


@route(
    "POST",
    "/proposals/{id}/reject",
    summary="Reject a proposal (reason required)",
    body=RejectBody,
    response=VoteResult,
    errors=VOTE_ERRORS,
    access=Service("tap:write"),
)
async def reject(request: web.Request, body: RejectBody) -> Answer:
    return await _vote(request, "reject", body.reason)


@route(
    "POST",
    "/proposals/{id}/object",
    summary="Object: pauses the proposal for human review",
    body=ObjectBody,
    body_optional=True,
    response=VoteResult,
    errors=VOTE_ERRORS,
    access=Service("tap:write"),
)
async def object_(request: web.Request, body: ObjectBody) -> Answer:
    return await _vote(request, "object", body.reason)
