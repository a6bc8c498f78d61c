"""Invite tokens on a document (PACT §4.1, Extended): the owner's `…/invites` (issue, list, revoke) and the
anonymous `…/join-token` an invited agent joins with, under /api/tap/{docId}/… and /api/pact/{docId}/…"""

from __future__ import annotations

from typing import Annotated, Literal

from aiohttp import web
from pydantic import Field

from domain.documents import invites
from domain.kernel import invites as kernel_invites
from domain.kernel.clock import iso
from domain.kernel.invites import InviteStatus, InviteView
from web.docs.auth import caller
from web.docs.paths import TAGS, doc_id, document_route, paths
from web.docs.schemas import Joined, Model, Out, Role
from web.kernel.access import Service
from web.kernel.request import client_address, context, rate_limits, runtime
from web.kernel.routing import Routes, model_response
from web.kernel.wire import HAS_LETTER_OR_DIGIT, Timestamp

routes = Routes()
route = document_route(routes)


class InviteBody(Model):
    role: Role = Field(default="editor", description="The role an agent joining with the invite gets.")
    expiresInSeconds: int = Field(
        default=kernel_invites.DEFAULT_TTL_SECONDS,
        ge=60,
        le=kernel_invites.MAX_TTL_SECONDS,
        description="How long the invite can be used, in seconds (default 7 days, at most 90).",
    )
    maxUses: int = Field(
        default=1,
        ge=1,
        le=kernel_invites.MAX_USES,
        description="How many agents may join with it (default 1: single use).",
    )
    label: str | None = Field(default=None, max_length=200, description="A note for the owner's list.")


class Invite(Out):
    id: str
    documentId: str
    role: Role
    label: str | None
    status: InviteStatus
    maxUses: int
    uses: int
    createdAt: Timestamp
    expiresAt: Timestamp
    revokedAt: Timestamp | None

    @classmethod
    def of(cls, found: InviteView) -> Invite:
        return cls(
            id=found.id,
            documentId=found.resource_id,
            role=found.role or invites.DEFAULT_ROLE,  # type: ignore[arg-type]
            label=found.label,
            status=found.status,
            maxUses=found.max_uses,
            uses=found.uses,
            createdAt=iso(found.created_at),
            expiresAt=iso(found.expires_at),
            revokedAt=iso(found.revoked_at),
        )


class IssuedInvite(Invite):
    token: str = Field(description="The invite token, shown this once (only its hash is kept)")


class InviteList(Out):
    documentId: str
    invites: list[Invite] = Field(description="Newest first, revoked, expired and used-up ones included")


class JoinTokenBody(Model):
    agentName: Annotated[str, HAS_LETTER_OR_DIGIT] = Field(
        min_length=1, max_length=128, description="Display name on this document; a letter or digit."
    )
    token: str = Field(
        min_length=1, max_length=kernel_invites.MAX_TOKEN_LENGTH, description="The invite token"
    )


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
async def issue(request: web.Request, body: InviteBody) -> web.Response:
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
    return model_response(IssuedInvite(**shown, token=issued.token), status=201)


@route(
    "GET",
    "/invites",
    summary="The document's invites (owner; never their tokens)",
    response=InviteList,
    access=Service("documents:write"),
)
async def listed(request: web.Request) -> web.Response:
    who = caller(request)
    async with runtime(request).db.read() as session:
        found = await invites.listed(session, who, doc_id(request))
    return model_response(InviteList(documentId=doc_id(request), invites=[Invite.of(i) for i in found]))


@route(
    "DELETE",
    "/invites/{inviteId}",
    summary="Revoke an invite (owner); agents that joined with it stay",
    response=Invite,
    access=Service("documents:write"),
)
async def revoke(request: web.Request) -> web.Response:
    who = caller(request)
    async with runtime(request).db.transaction() as session:
        found = await invites.revoke(session, who, doc_id(request), request.match_info["inviteId"])
    return model_response(Invite.of(found))


_JOIN_PATH, _JOIN_ALIASES = paths("/join-token")


@routes.route(
    "POST",
    _JOIN_PATH,
    aliases=_JOIN_ALIASES,
    tags=TAGS,
    summary="Join the document with an invite token, without an account (PACT BYOK)",
    body=JoinTokenBody,
    response=TokenJoined,
    errors={
        403: "The invite token is not valid for this document (unknown, expired, revoked or used up)",
        409: "An agent of that name is already on the document",
        429: "Too many joins from this client (settings.rate_limit_register per minute)",
    },
)
async def join_token(request: web.Request, body: JoinTokenBody) -> web.Response:
    rt = runtime(request)
    await rate_limits(request).hit("join-token", rt.settings.rate_limit_register, client_address(request))
    async with rt.db.transaction() as session:
        joined = await invites.join_with_token(
            session, context(request, None), doc_id(request), agent_name=body.agentName, token=body.token
        )
    return model_response(
        TokenJoined(**joined.agent, contextMode="scoped", apiKey=joined.api_key, allowedSections=None)
    )
