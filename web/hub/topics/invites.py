"""Invite tokens on a topic (PACT §4.1, Extended): the owner's /api/pact/{topicId}/invites (issue, list,
revoke) and the anonymous /api/pact/{topicId}/join-token an invited agent registers and joins with."""

from __future__ import annotations

from typing import Literal

from aiohttp import web
from pydantic import BaseModel, Field

from domain.kernel.invites import InviteView
from domain.topics import invites
from web.hub.auth import agent_context
from web.hub.topics.read_models import JoinResult
from web.kernel.access import Agent
from web.kernel.invites import JOIN_TOKEN_ERRORS, TOKEN_TEXT, InviteCreate, InviteFields, JoinTokenBody
from web.kernel.replies import Answer
from web.kernel.request import client_address, context, rate_limits, runtime
from web.kernel.routing import Routes

routes = Routes()
TAGS = ["Topics"]
OWNER_ERRORS = {
    401: "Missing or invalid agent key",
    403: "Only the topic's owner manages its invites",
    404: "Topic (or invite) not found",
}


class TopicInvite(InviteFields):
    topicId: str

    @classmethod
    def of(cls, found: InviteView) -> TopicInvite:
        return cls.model_validate({**cls.fields_of(found), "topicId": found.resource_id})


class IssuedTopicInvite(TopicInvite):
    token: str = Field(description=TOKEN_TEXT)


class TopicInviteList(BaseModel):
    topicId: str
    invites: list[TopicInvite] = Field(description="Newest first, revoked, expired and used-up ones included")


class TopicTokenJoined(JoinResult):
    registrationId: str = Field(description="The new agent's id (the same as agentId)")
    contextMode: Literal["scoped"] = Field(description="The key works on this one topic only (PACT §4.1)")
    apiKey: str = Field(description="An agent key limited to this topic, shown this once")
    allowedSections: list[str] | None = Field(description="null: every section of the topic")


@routes.route(
    "POST",
    "/api/pact/{topicId}/invites",
    summary="Issue an invite token to the topic (its owner)",
    tags=TAGS,
    body=InviteCreate,
    response=IssuedTopicInvite,
    status=201,
    access=Agent(),
    errors=OWNER_ERRORS,
)
async def issue(request: web.Request, body: InviteCreate) -> Answer:
    ctx = agent_context(request)
    async with runtime(request).db.transaction() as session:
        issued = await invites.issue(
            session,
            ctx,
            request.match_info["topicId"],
            ttl_seconds=body.expiresInSeconds,
            max_uses=body.maxUses,
            label=body.label,
        )
    shown = TopicInvite.of(issued.invite).model_dump()
    return IssuedTopicInvite.model_validate({**shown, "token": issued.token})


@routes.route(
    "GET",
    "/api/pact/{topicId}/invites",
    summary="The topic's invites (its owner; never their tokens)",
    tags=TAGS,
    response=TopicInviteList,
    access=Agent(),
    errors=OWNER_ERRORS,
)
async def listed(request: web.Request) -> Answer:
    ctx = agent_context(request)
    async with runtime(request).db.read() as session:
        found = await invites.listed(session, ctx, request.match_info["topicId"])
    topic_id = found[0].resource_id if found else request.match_info["topicId"].strip().lower()
    return TopicInviteList(topicId=topic_id, invites=[TopicInvite.of(i) for i in found])


@routes.route(
    "DELETE",
    "/api/pact/{topicId}/invites/{inviteId}",
    summary="Revoke an invite (its owner); agents that joined with it stay",
    tags=TAGS,
    response=TopicInvite,
    access=Agent(),
    errors=OWNER_ERRORS,
)
async def revoke(request: web.Request) -> Answer:
    ctx = agent_context(request)
    async with runtime(request).db.transaction() as session:
        found = await invites.revoke(
            session, ctx, request.match_info["topicId"], request.match_info["inviteId"]
        )
    return TopicInvite.of(found)


@routes.route(
    "POST",
    "/api/pact/{topicId}/join-token",
    summary="Register an agent and join the topic with an invite token, without a key (PACT BYOK)",
    tags=TAGS,
    body=JoinTokenBody,
    response=TopicTokenJoined,
    errors=JOIN_TOKEN_ERRORS,
)
async def join_token(request: web.Request, body: JoinTokenBody) -> Answer:
    rt = runtime(request)
    await rate_limits(request).hit("register", rt.settings.rate_limit_register, client_address(request))
    async with rt.db.transaction() as session:
        made = await invites.join_with_token(
            session,
            context(request, None),
            request.match_info["topicId"],
            agent_name=body.agentName,
            token=body.token,
            starting_balance=rt.settings.starting_balance,
        )
    return TopicTokenJoined.model_validate(
        {
            **JoinResult.fields(made.joined),
            "registrationId": made.agent_id,
            "contextMode": "scoped",
            "apiKey": made.api_key,
            "allowedSections": None,
        }
    )
