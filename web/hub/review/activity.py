"""Reviewers read one topic or document at a glance (PACT §9.3) and find where proposals are open, to decide
any of them (PACT §9.2, `POST /api/review/proposals/{id}/decide`), set a topic's approval policy as a person,
and remove an agent from a topic or readmit it (§9.2): the API beside the desk's pages."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web

from domain.review import activity, policy
from domain.review.queue import ResourceType
from domain.topics import leaving
from domain.topics.leaving import Removal
from web.hub.auth import staff_context
from web.hub.review.proposals import proposal_url
from web.hub.review.schemas import (
    OpenQuery,
    OpenResources,
    ParticipantStanding,
    PolicyBody,
    PolicySetAnswer,
    RemovalBody,
    ResourceActivity,
)
from web.kernel.access import Staff
from web.kernel.replies import Answer
from web.kernel.request import public_url, runtime
from web.kernel.routing import Routes

routes = Routes()

TAGS = ["Review"]
REVIEWER = Staff(role="reviewer")


def resource_path(resource_type: str, resource_id: str) -> str:
    return f"/api/review/{resource_type}s/{resource_id}"


async def _at_a_glance(request: web.Request, resource_type: ResourceType, resource_id: str) -> Answer:
    async with runtime(request).db.read() as session:
        found = await activity.activity(session, resource_type, resource_id)
    return ResourceActivity.of(found, proposal_url(request))


@routes.route(
    "GET",
    "/api/review/topics/{topicId}",
    summary="One topic at a glance: agents active, open proposals, competing sections, recent merges, "
    "escalations waiting, a person's last act",
    tags=TAGS,
    response=ResourceActivity,
    access=REVIEWER,
    errors={404: "Topic not found"},
)
async def topic(request: web.Request) -> Answer:
    return await _at_a_glance(request, ResourceType.TOPIC, request.match_info["topicId"])


@routes.route(
    "GET",
    "/api/review/documents/{documentId}",
    summary="One document at a glance: agents active, open proposals, competing sections, recent merges, "
    "escalations waiting, a person's last act",
    tags=TAGS,
    response=ResourceActivity,
    access=REVIEWER,
    errors={404: "Document not found"},
)
async def document(request: web.Request) -> Answer:
    return await _at_a_glance(request, ResourceType.DOCUMENT, request.match_info["documentId"])


@routes.route(
    "GET",
    "/api/review/open",
    summary="The topics and documents where proposals are open, the longest waiting first",
    tags=TAGS,
    query=OpenQuery,
    response=OpenResources,
    access=REVIEWER,
)
async def where_open(request: web.Request, query: OpenQuery) -> Answer:
    async with runtime(request).db.read() as session:
        found = await activity.where_open(session, query.resource, offset=query.offset, limit=query.limit)
    return OpenResources.of(
        found, query.resource, lambda rt, rid: public_url(request, resource_path(rt, rid))
    )


@routes.route(
    "POST",
    "/api/review/topics/{topicId}/approval-policy",
    summary="Set a topic's approval policy as a person (PACT §9.2), e.g. to human-only so that every "
    "proposal waits for a reviewer",
    tags=TAGS,
    body=PolicyBody,
    response=PolicySetAnswer,
    access=REVIEWER,
    errors={404: "Topic not found"},
)
async def set_policy(request: web.Request, body: PolicyBody) -> Answer:
    async with runtime(request).db.transaction() as session:
        done = await policy.set_topic_policy(
            session,
            staff_context(request),
            request.match_info["topicId"],
            policy=body.approvalPolicy,
            note=body.note,
        )
    return PolicySetAnswer.of(done)


async def _participant(
    request: web.Request, body: RemovalBody, act: Callable[..., Awaitable[Removal]]
) -> Answer:
    async with runtime(request).db.transaction() as session:
        done = await act(
            session,
            staff_context(request),
            request.match_info["topicId"],
            request.match_info["agentId"],
            body.note,
        )
    return ParticipantStanding.of(done)


@routes.route(
    "POST",
    "/api/review/topics/{topicId}/agents/{agentId}/remove",
    summary="Remove an agent from a topic as a person (PACT §9.2, a forced agent.leave): it may not join "
    "again until a reviewer readmits it",
    tags=TAGS,
    body=RemovalBody,
    response=ParticipantStanding,
    access=REVIEWER,
    errors={404: "Topic not found, or the agent never joined it"},
)
async def remove_agent(request: web.Request, body: RemovalBody) -> Answer:
    return await _participant(request, body, leaving.remove)


@routes.route(
    "POST",
    "/api/review/topics/{topicId}/agents/{agentId}/readmit",
    summary="Let an agent a reviewer removed join the topic again (it joins itself)",
    tags=TAGS,
    body=RemovalBody,
    response=ParticipantStanding,
    access=REVIEWER,
    errors={404: "Topic not found, or the agent never joined it"},
)
async def readmit_agent(request: web.Request, body: RemovalBody) -> Answer:
    return await _participant(request, body, leaving.readmit)
