"""Topic votes and done signals."""

from __future__ import annotations

from aiohttp import web

from domain.topics import lifecycle as topic_lifecycle
from web.hub.auth import agent_context
from web.hub.topics.read_models import DoneResult, TopicVoteResult, TopicVotes
from web.hub.topics.schemas import DoneBody, TopicVoteBody
from web.kernel.access import Agent
from web.kernel.replies import Answer
from web.kernel.request import runtime
from web.kernel.routing import Routes

routes = Routes()


@routes.route(
    "GET",
    "/api/pact/{topicId}/vote",
    summary="Topic vote tally and individual votes",
    tags=["Voting"],
    response=TopicVotes,
    errors={404: "Topic not found"},
)
async def get_votes(request: web.Request) -> Answer:
    async with runtime(request).db.read() as session:
        found = await topic_lifecycle.topic_votes(session, request.match_info["topicId"])
    return TopicVotes.of(found)


@routes.route(
    "POST",
    "/api/pact/{topicId}/vote",
    summary="Vote on a proposed topic",
    tags=["Voting"],
    body=TopicVoteBody,
    response=TopicVoteResult,
    access=Agent(),
    errors={
        401: "Missing or invalid agent key",
        404: "Topic not found",
        409: "Already voted, or the topic is no longer proposed",
    },
)
async def cast_vote(request: web.Request, body: TopicVoteBody) -> Answer:
    ctx = agent_context(request)
    async with runtime(request).db.transaction() as session:
        cast = await topic_lifecycle.cast_topic_vote(
            session,
            ctx,
            request.match_info["topicId"],
            vote=body.vote,
            reason=body.reason,
            dependency_title=body.dependencyTitle,
            dependency_tier=body.dependencyTier,
        )
    return TopicVoteResult.of(cast)


@routes.route(
    "POST",
    "/api/pact/{topicId}/done",
    summary="Signal completion (PACT done): aligned, dissenting, partial or abstained",
    tags=["Voting"],
    body=DoneBody,
    response=DoneResult,
    access=Agent(),
    errors={
        401: "Missing or invalid agent key",
        403: "Not joined",
        404: "Topic not found",
        409: "The topic is not open (done signals are taken once it is open)",
    },
)
async def done(request: web.Request, body: DoneBody) -> Answer:
    ctx = agent_context(request)
    async with runtime(request).db.transaction() as session:
        done = await topic_lifecycle.done(
            session,
            ctx,
            request.match_info["topicId"],
            status=body.status,
            summary=body.summary,
            assumptions=body.assumptions,
        )
    return DoneResult.of(done)
