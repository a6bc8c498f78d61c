"""Invite tokens on a document (PACT §4.1, Extended): the owner's `…/invites` (issue, list, revoke) and the
anonymous `…/join-token` an invited agent joins with, under /api/tap/{docId}/… and /api/pact/{docId}/…"""

from __future__ import annotations

from typing import Literal

from aiohttp import web
from pydantic import Field

from domain.documents import invites
from domain.documents.membership import DocumentRole
from domain.kernel.invites import InviteView
from web.docs.agents.paths import TAGS, doc_id, document_route, paths
from web.docs.auth import caller
from web.docs.schemas import Joined, Out, Role
from web.kernel.access import Service
from web.kernel.invites import JOIN_TOKEN_ERRORS, TOKEN_TEXT, InviteCreate, InviteFields, JoinTokenBody
from web.kernel.replies import Answer
from web.kernel.request import client_address, context, rate_limits, runtime
from web.kernel.routing import Routes

routes = Routes()
route = document_route(routes)


class InviteBody(InviteCreate):
    role: Role = Field(
        default=DocumentRole.EDITOR, description="The role an agent joining with the invite gets."
    )


class Invite(InviteFields, Out):
    documentId: str
    role: Role

    @classmethod
    def of(cls, found: InviteView) -> Invite:
        role = found.role if found.role in ("editor", "reviewer", "observer") else invites.DEFAULT_ROLE
        return cls.model_validate({**cls.fields_of(found), "documentId": found.resource_id, "role": role})


class IssuedInvite(Invite):
    token: str = Field(description=TOKEN_TEXT)


class InviteList(Out):
    documentId: str
    invites: list[Invite] = Field(description="Newest first, revoked, expired and used-up ones included")


class TokenJoined(Joined):
    contextMode: Literal["scoped"] = Field(
        description="The key works on this one document's agent paths only (PACT §4.1)"
    )
    apiKey: str = Field(description="A service key limited to this document, shown this once")
    allowedSections: list[str] | None = Field(
        description="Sections the key is limited to; null: every section of the document"
    )


@route(
    "POST",
    "/invites",
    summary="Issue an invite token to the document (owner)",
    body=InviteBody,
    response=IssuedInvite,
    status=201,
    access=Service("documents:write"),
)
async def issue(request: web.Request, body: InviteBody) -> Answer:
    who = caller(request)
    async with runtime(request).db.transaction() as session:
        issued = await invites.issue(
            session,
            who,
            doc_id(request),
            ttl_seconds=body.expiresInSeconds,
            max_uses=body.maxUses,
            role=body.role,
            label=body.label,
        )
    shown = Invite.of(issued.invite).model_dump()
    return IssuedInvite.model_validate({**shown, "token": issued.token})


@route(
    "GET",
    "/invites",
    summary="The document's invites (owner; never their tokens)",
    response=InviteList,
    access=Service("documents:write"),
)
async def listed(request: web.Request) -> Answer:
    who = caller(request)
    async with runtime(request).db.read() as session:
        found = await invites.listed(session, who, doc_id(request))
    return InviteList(documentId=doc_id(request), invites=[Invite.of(i) for i in found])


@route(
    "DELETE",
    "/invites/{inviteId}",
    summary="Revoke an invite (owner); agents that joined with it stay",
    response=Invite,
    access=Service("documents:write"),
)
async def revoke(request: web.Request) -> Answer:
    who = caller(request)
    async with runtime(request).db.transaction() as session:
        found = await invites.revoke(session, who, doc_id(request), request.match_info["inviteId"])
    return Invite.of(found)


_JOIN_PATH, _JOIN_ALIASES = paths("/join-token")


@routes.route(
    "POST",
    _JOIN_PATH,
    aliases=_JOIN_ALIASES,
    tags=TAGS,
    summary="Join the document with an invite token, without an account (PACT BYOK)",
    body=JoinTokenBody,
    response=TokenJoined,
    errors=JOIN_TOKEN_ERRORS,
)
async def join_token(request: web.Request, body: JoinTokenBody) -> Answer:
    rt = runtime(request)
    await rate_limits(request).hit("join-token", rt.settings.rate_limit_register, client_address(request))
    async with rt.db.transaction() as session:
        joined = await invites.join_with_token(
            session, context(request, None), doc_id(request), agent_name=body.agentName, token=body.token
        )
    agent = Joined.of(joined.agent).model_dump()
    return TokenJoined(**agent, contextMode="scoped", apiKey=joined.api_key, allowedSections=None)
